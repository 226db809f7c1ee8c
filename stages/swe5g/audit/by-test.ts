/**
 * The audit's verdict table per project and kind of fail-to-pass test (issue 30's goals): for
 * each project (`free5gc`, `magma`, `open5gs`) and test kind (Strategy A, Strategy B control,
 * Strategy B text, the PR's shipped tests), how many validated instances there are, how many were
 * audited, how often a no-op (and any must-reject mutant) resolved, how often an equivalent
 * rewrite resolved, how many the audit withholds (`weak`) and what stays for the release; per
 * project, the behavioural share (tests that run the code: Strategy A and shipped tests).
 */
import type { StageContext } from '../../../pipeline/stage.js';
import { projectOfKey } from '../report-counts.js';
import { testgenStage } from '../testgen/testgen.js';
import { validateStage } from '../validate/validate.js';
import type { TestGen, ValidatedInstance } from '../types.js';
import { auditStage, rejectGraded, type AuditOutput } from './audit.js';

/** The kind of an instance's fail-to-pass test, as the table groups them. */
export type TestKind = 'A' | 'B control' | 'B text' | 'shipped';

/** `k` of `n` (graded mutants or instances). */
export interface Ratio {
  k: number;
  n: number;
}

/** One row: a project and test kind, or a project's `all`. */
export interface TestKindRow {
  project: string;
  test: TestKind | 'all';
  /** Validated instances (`swe5g.validate` done). */
  validated: number;
  /** Of them, audited with at least one must-reject mutant graded. */
  audited: number;
  /** No-op mutants that resolved, of those graded (goal: 0). */
  noopAccepted: Ratio;
  /** Must-reject mutants of any kind that resolved, of those graded. */
  rejectAccepted: Ratio;
  /** Equivalent rewrites that resolved, of those graded (goal: >= 90%). */
  rewritesAccepted: Ratio;
  /** Withheld from the release by default (`weak`: a must-reject mutant resolved). */
  weak: number;
  /** Validated minus withheld: what a default release holds. */
  released: number;
  /** Instances whose test runs the code (A, shipped), of the validated (goal: >= 40%). */
  behavioural: Ratio;
}

const KINDS: readonly TestKind[] = ['A', 'B control', 'B text', 'shipped'];
const BEHAVIOURAL = new Set<TestKind>(['A', 'shipped']);

/** The test kind of a validated instance: its strategy, and for B the testgen record's strength. */
function kindOf(strategy: ValidatedInstance['strategy'], tg: TestGen | undefined): TestKind {
  if (strategy === 'B') return tg?.f2p_strength === 'control' ? 'B control' : 'B text';
  return strategy;
}

const empty = (project: string, test: TestKindRow['test']): TestKindRow => ({
  project,
  test,
  validated: 0,
  audited: 0,
  noopAccepted: { k: 0, n: 0 },
  rejectAccepted: { k: 0, n: 0 },
  rewritesAccepted: { k: 0, n: 0 },
  weak: 0,
  released: 0,
  behavioural: { k: 0, n: 0 },
});

function addAudit(r: TestKindRow, out: AuditOutput | undefined): void {
  r.validated++;
  r.released++;
  if (!out) return;
  const a = out.f2p_audit;
  if (rejectGraded(a)) r.audited++;
  if (a.weak) {
    r.weak++;
    r.released--;
  }
  for (const m of a.mutants) {
    if (m.status !== 'graded') continue;
    const into =
      m.expectation === 'resolve'
        ? [r.rewritesAccepted]
        : [r.rejectAccepted].concat(m.kind === 'noop' ? [r.noopAccepted] : []);
    for (const x of into) {
      x.n++;
      if (m.resolved) x.k++;
    }
  }
}

/**
 * Rows per project and test kind, then the project's `all` row (with its behavioural share), for
 * every validated instance of the state; an instance not audited (yet) counts as validated and
 * released, with no mutants.
 * @param ctx the state's store (any stage versions: the latest record of each item is read)
 */
export function auditByTestKind(ctx: Pick<StageContext, 'store'>): TestKindRow[] {
  const tests = new Map<string, TestGen>();
  for (const rec of ctx.store.items(testgenStage))
    if (rec.state === 'done' && rec.output) tests.set(rec.key, rec.output as TestGen);
  const audits = new Map<string, AuditOutput>();
  for (const rec of ctx.store.items(auditStage))
    if (rec.state === 'done' && rec.output) audits.set(rec.key, rec.output as AuditOutput);
  const rows = new Map<string, TestKindRow>();
  const row = (project: string, test: TestKindRow['test']): TestKindRow => {
    const key = `${project}\u0000${test}`;
    let r = rows.get(key);
    if (!r) rows.set(key, (r = empty(project, test)));
    return r;
  };
  for (const rec of ctx.store.items(validateStage)) {
    if (rec.state !== 'done' || !rec.output) continue;
    const v = rec.output as ValidatedInstance;
    const project = projectOfKey(rec.key);
    const kind = kindOf(v.strategy, tests.get(rec.key));
    for (const r of [row(project, kind), row(project, 'all')]) {
      addAudit(r, audits.get(rec.key));
      r.behavioural.n++;
      if (BEHAVIOURAL.has(kind)) r.behavioural.k++;
    }
  }
  const order = (r: TestKindRow) => (r.test === 'all' ? KINDS.length : KINDS.indexOf(r.test));
  return [...rows.values()].sort(
    (a, b) => a.project.localeCompare(b.project) || order(a) - order(b),
  );
}

const ratio = (x: Ratio, pct = false): string =>
  x.n === 0 ? '-' : `${x.k} of ${x.n}${pct ? ` (${Math.round((100 * x.k) / x.n)}%)` : ''}`;

/** Markdown of {@link auditByTestKind}; '' when nothing was validated. */
export function auditByTestKindMarkdown(ctx: Pick<StageContext, 'store'>): string {
  const rows = auditByTestKind(ctx);
  if (rows.length === 0) return '';
  return [
    'Per project and kind of test (goals: no-op accepted 0, rewrites accepted >= 90%, behavioural share >= 40% of validated; behavioural = Strategy A and shipped tests, which run the code):',
    '',
    '| project | test | validated | audited | no-op accepted | must-reject accepted | rewrites accepted | withheld (weak) | after audit | behavioural |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.project} | ${r.test} | ${r.validated} | ${r.audited} | ${ratio(r.noopAccepted)} | ${ratio(r.rejectAccepted)} | ${ratio(r.rewritesAccepted, true)} | ${r.weak} | ${r.released} | ${r.test === 'all' ? ratio(r.behavioural, true) : ''} |`,
    ),
    '',
  ].join('\n');
}
