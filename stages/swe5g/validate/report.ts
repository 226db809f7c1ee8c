/**
 * The validation part of the `swe5g` report: per repository, how many instances were built, how
 * many passed the paper's three-step validation (existing tests pass at the parent, FAIL_TO_PASS
 * fail at the parent, all pass after the fix) and why the others were rejected, with the median
 * wall time of the validation steps.
 */
import type { StageContext } from '../../../pipeline/stage.js';
import type { Validated } from './validate.js';
import { countInto, formatCounts, repoOfInstance } from '../report-counts.js';
import { buildStage } from '../build/build.js';
import { validateStage } from './validate.js';

/** Counts of one repository (or `total`). */
export interface ValidationRow {
  repo: string;
  built: number;
  buildRejected: Record<string, number>;
  validated: number;
  rejected: Record<string, number>;
  failed: number;
  /** Sum over steps of each validated instance's step wall times, seconds (median over instances). */
  medianStepSeconds: number | null;
}

/**
 * The median of `xs` (the mean of the two middle values when their count is even), or null when
 * empty.
 */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * Per-repository build and validation counts from the `swe5g.build` and `swe5g.validate` records
 * in the store (any state), in repository order, then `total`.
 */
export function validationRows(ctx: Pick<StageContext, 'store'>): ValidationRow[] {
  const rows = new Map<string, ValidationRow>();
  const times = new Map<string, number[]>();
  const row = (repo: string): ValidationRow => {
    let r = rows.get(repo);
    if (!r) {
      r = {
        repo,
        built: 0,
        buildRejected: {},
        validated: 0,
        rejected: {},
        failed: 0,
        medianStepSeconds: null,
      };
      rows.set(repo, r);
      times.set(repo, []);
    }
    return r;
  };
  const total = row('total');
  rows.delete('total');
  for (const rec of ctx.store.items(buildStage)) {
    for (const r of [row(repoOfInstance(rec.key)), total]) {
      if (rec.state === 'done') r.built++;
      else if (rec.state === 'skipped') countInto(r.buildRejected, rec.skipReason ?? 'unknown');
      else if (rec.state === 'failed') r.failed++;
    }
  }
  for (const rec of ctx.store.items(validateStage)) {
    const repo = repoOfInstance(rec.key);
    for (const [name, r] of [
      [repo, row(repo)],
      ['total', total],
    ] as const) {
      if (rec.state === 'done') {
        r.validated++;
        const secs = Object.values((rec.output as Validated).step_seconds ?? {}).reduce(
          (a, b) => a + b,
          0,
        );
        times.get(name)!.push(secs);
      } else if (rec.state === 'skipped') countInto(r.rejected, rec.skipReason ?? 'unknown');
      else if (rec.state === 'failed') r.failed++;
    }
  }
  const out = [...rows.values()].sort((a, b) => a.repo.localeCompare(b.repo));
  out.push(total);
  for (const r of out) r.medianStepSeconds = median(times.get(r.repo) ?? []);
  return out;
}

/** Markdown table of {@link validationRows}; '' when nothing was built yet. */
export function validationMarkdown(ctx: Pick<StageContext, 'store'>): string {
  const rows = validationRows(ctx);
  const total = rows.at(-1)!;
  if (total.built === 0 && Object.keys(total.buildRejected).length === 0 && total.failed === 0)
    return '';
  const lines = [
    '## SWE-Bench 5G three-step validation (swe5g.build, swe5g.validate)',
    '',
    '| repository | built | build rejected (reason) | validated | rejected (failed step) | failed | median validation time (s) |',
    '|---|---:|---|---:|---|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.repo} | ${r.built} | ${formatCounts(r.buildRejected)} | ${r.validated} | ${formatCounts(r.rejected)} | ${r.failed} | ${r.medianStepSeconds === null ? '' : r.medianStepSeconds.toFixed(1)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
