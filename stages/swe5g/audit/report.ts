/**
 * The audit part of the `swe5g` report (after the validation table): per repository, how many
 * validated instances were audited, how many tests accepted a must-reject mutant (`weak`: not
 * released by default) and how many rejected an equivalent rewrite (`strict`); then per mutant
 * kind, how often it was graded, resolved, as expected, or did not apply.
 */
import type { StageContext } from '../../../pipeline/stage.js';
import { countInto, formatCounts, repoOfInstance } from '../report-counts.js';
import { AUDIT_KINDS } from './config.js';
import { auditStage, rejectGraded, type AuditOutput } from './audit.js';
import { MUTANT_KINDS } from './mutants.js';
import { auditByTestKindMarkdown } from './by-test.js';
import type { MutantKind } from '../types.js';

/** Counts of one repository (or `total`). */
export interface AuditRow {
  repo: string;
  /** Audited with at least one must-reject mutant graded. */
  audited: number;
  /**
   * Audit items done where no must-reject mutant applied (no fix site a no-op, an emptied guard
   * or dead code can be made from: a refactor, a changed constant): nothing proves their test
   * rejects a no-op, so they are not counted as audited.
   */
  noMutant: number;
  weak: number;
  strict: number;
  /** Items that failed (infrastructure) or were skipped, by reason. */
  notAudited: Record<string, number>;
}

/** Counts of one mutant kind over every audited instance. */
export interface KindRow {
  kind: MutantKind;
  graded: number;
  resolved: number;
  ok: number;
  notApplicable: number;
}

/** Per-repository and per-kind audit counts from the `swe5g.audit` records (any state). */
export function auditCounts(ctx: Pick<StageContext, 'store'>): {
  repos: AuditRow[];
  kinds: KindRow[];
} {
  const rows = new Map<string, AuditRow>();
  const row = (repo: string): AuditRow => {
    let r = rows.get(repo);
    if (!r)
      rows.set(repo, (r = { repo, audited: 0, noMutant: 0, weak: 0, strict: 0, notAudited: {} }));
    return r;
  };
  const total: AuditRow = {
    repo: 'total',
    audited: 0,
    noMutant: 0,
    weak: 0,
    strict: 0,
    notAudited: {},
  };
  const kinds = new Map<MutantKind, KindRow>(
    AUDIT_KINDS.map((k) => [k, { kind: k, graded: 0, resolved: 0, ok: 0, notApplicable: 0 }]),
  );
  for (const rec of ctx.store.items(auditStage)) {
    const out = rec.output as AuditOutput | undefined;
    for (const r of [row(repoOfInstance(rec.key)), total]) {
      if (rec.state === 'done' && out) {
        const a = out.f2p_audit;
        if (!rejectGraded(a)) r.noMutant++;
        else r.audited++;
        if (a.weak) r.weak++;
        if (a.strict) r.strict++;
      } else if (rec.state === 'skipped') countInto(r.notAudited, rec.skipReason ?? 'unknown');
      else if (rec.state === 'failed') countInto(r.notAudited, 'failed');
    }
    if (rec.state !== 'done' || !out) continue;
    for (const m of out.f2p_audit.mutants) {
      const k = kinds.get(m.kind);
      if (!k) continue;
      if (m.status === 'not_applicable') k.notApplicable++;
      else {
        k.graded++;
        if (m.resolved) k.resolved++;
        if (m.ok) k.ok++;
      }
    }
  }
  const repos = [...rows.values()].sort((a, b) => a.repo.localeCompare(b.repo));
  return { repos: [...repos, total], kinds: [...kinds.values()] };
}

/** Markdown of {@link auditCounts}; '' when nothing was audited. */
export function auditMarkdown(ctx: Pick<StageContext, 'store'>): string {
  const { repos, kinds } = auditCounts(ctx);
  const total = repos.at(-1)!;
  if (total.audited + total.noMutant === 0 && Object.keys(total.notAudited).length === 0) return '';
  const lines = [
    '## SWE-Bench 5G fail-to-pass audit (swe5g.audit)',
    '',
    'Mutants of each gold patch graded as predictions: a sound test rejects the no-op, the emptied guard and the guard in dead code, and resolves the equivalent rewrites. `weak`: a must-reject mutant resolved (left out of the release unless `swe5g.audit.release_weak`); `strict`: an equivalent rewrite did not resolve; `no mutant applies`: no must-reject mutant could be made from the gold patch (no guard to empty or bypass), so nothing shows the test rejects a no-op.',
    '',
    '| repository | audited | weak | strict | no mutant applies | not audited |',
    '|---|---:|---:|---:|---:|---|',
    ...repos.map(
      (r) =>
        `| ${r.repo} | ${r.audited} | ${r.weak} | ${r.strict} | ${r.noMutant} | ${formatCounts(r.notAudited)} |`,
    ),
    '',
    '| mutant | expected | graded | resolved | as expected | not applicable |',
    '|---|---|---:|---:|---:|---:|',
    ...kinds.map(
      (k) =>
        `| ${k.kind} | ${MUTANT_KINDS[k.kind]} | ${k.graded} | ${k.resolved} | ${k.ok} | ${k.notApplicable} |`,
    ),
    '',
    auditByTestKindMarkdown(ctx),
  ];
  return `${lines.join('\n')}\n`;
}
