/**
 * The fail-to-pass part of the `swe5g` report: per repository, how many instances got a Strategy
 * A, B or shipped test and why the others got none (the paper's Table II gives the distribution of
 * strategies), plus bug categories. The strategy counted is the one actually used: a Python
 * instance whose deferred Strategy A test (`TestGen.deferred_a`) validation used in the instance
 * image counts as A, not as testgen's B fallback (validate/deferred-a.ts).
 */
import type { StageContext } from '../../../pipeline/stage.js';
import type { TestGen } from '../types.js';
import { countInto, formatCounts, repoOfInstance } from '../report-counts.js';
import { testgenStage } from './testgen.js';
import { validateStage, type Validated } from '../validate/validate.js';

/** Counts of one repository (or `total`). */
export interface TestgenRow {
  repo: string;
  A: number;
  B: number;
  shipped: number;
  skipped: Record<string, number>;
  failed: number;
  categories: Record<string, number>;
  /** Records with a deferred Python Strategy A test, and of them the ones validation used. */
  deferred: { used: number; tried: number };
}

const emptyRow = (repo: string): TestgenRow => ({
  repo,
  A: 0,
  B: 0,
  shipped: 0,
  skipped: {},
  failed: 0,
  categories: {},
  deferred: { used: 0, tried: 0 },
});

/**
 * Per-repository strategy counts from the `swe5g.testgen` records in the store (any state), each
 * done record counted under the strategy actually used (a deferred A test validation used in the
 * image is A: the done `swe5g.validate` record's `deferred_a`); the repository is the instance_id
 * without its `-<PR>` suffix (`free5gc__amf`).
 */
export function testgenRows(ctx: Pick<StageContext, 'store'>): TestgenRow[] {
  const rows = new Map<string, TestgenRow>();
  const total = emptyRow('total');
  const usedInImage = new Set<string>();
  for (const rec of ctx.store.items(validateStage))
    if (rec.state === 'done' && (rec.output as Validated | undefined)?.deferred_a?.used)
      usedInImage.add(rec.key);
  for (const rec of ctx.store.items(testgenStage)) {
    const repo = repoOfInstance(rec.key);
    let r = rows.get(repo);
    if (!r) rows.set(repo, (r = emptyRow(repo)));
    for (const row of [r, total]) {
      if (rec.state === 'done') {
        const tg = rec.output as TestGen;
        const used = tg.deferred_a !== undefined && usedInImage.has(rec.key);
        row[used ? 'A' : tg.strategy]++;
        if (tg.deferred_a) row.deferred.tried++;
        if (used) row.deferred.used++;
        countInto(row.categories, tg.bug_category);
      } else if (rec.state === 'skipped') countInto(row.skipped, rec.skipReason ?? 'unknown');
      else if (rec.state === 'failed') row.failed++;
    }
  }
  return [...[...rows.values()].sort((a, b) => a.repo.localeCompare(b.repo)), total];
}

/** Markdown table of {@link testgenRows} ('' when the stage has no records). */
export function testgenMarkdown(ctx: Pick<StageContext, 'store'>): string {
  const rows = testgenRows(ctx);
  if (rows.length === 1) return '';
  return [
    '## SWE-Bench 5G fail-to-pass tests (swe5g.testgen)',
    '',
    '| repository | Strategy A | Strategy B | shipped | no test (reason) | failed | bug categories | A decided in the image (used of deferred) |',
    '|---|---:|---:|---:|---|---:|---|---:|',
    ...rows.map(
      (r) =>
        `| ${r.repo} | ${r.A} | ${r.B} | ${r.shipped} | ${formatCounts(r.skipped)} | ${r.failed} | ${formatCounts(r.categories)} | ${r.deferred.tried ? `${r.deferred.used} of ${r.deferred.tried}` : '-'} |`,
    ),
    '',
  ].join('\n');
}
