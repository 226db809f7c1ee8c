/**
 * Environments by project and year (the registry run's goal: environments that build for the
 * history, at least {@link ENV_GOAL} of the tested candidates per project). A tested candidate is
 * one that reached the environment step: `swe5g.testgen` done (it has a fail-to-pass test) on a
 * `swe5g.resolve` output, which is what `swe5g.build` plans. Each is counted under its project
 * (`free5gc`, `open5gs`, `magma`: the registry's organisation) and the UTC year of its base
 * commit's committer date, with the outcome of its `swe5g.build` record (`build/env-outcome.ts`):
 * built, environment failed (base or env layer), instance layer failed, unattributed (run,
 * infrastructure), or pending.
 *
 * success share = built / (built + environment failed); instance-layer and unattributed losses
 * say nothing about whether the environment builds for that history and are shown apart.
 * {@link environmentReport} is pure over the store and a date map; {@link environmentsMarkdown}
 * reads the base commits' dates from the state's git mirrors (`row-dates.ts`).
 */
import type { StageContext, StoreReader } from '../../pipeline/stage.js';
import { toUtcIso } from '../../datasets/swe-bench-5g/dates.js';
import { addCounts, countInto, formatCounts, projectOf } from './report-counts.js';
import { envOutcome, type EnvOutcomeKind } from './build/env-outcome.js';
import { baseCommitDates } from './row-dates.js';
import { resolveStage } from './resolve/resolve.js';
import { testgenStage } from './testgen/testgen.js';
import { buildStage } from './build/build.js';

/** The share of environments that must build, per project (the registry run's goal). */
export const ENV_GOAL = 0.9;

/** Year of a candidate whose base commit date is unknown (no mirror, commit absent from it). */
export const UNKNOWN_YEAR = 'unknown';

/** Counts of one project and year (or a project's `all` years). */
export interface EnvironmentRow {
  project: string;
  /** `2021` (UTC year of the base commit), {@link UNKNOWN_YEAR}, or `all`. */
  year: string;
  tested: number;
  built: number;
  env_failed: number;
  /** Environment failures by reason code (`dependency_unavailable`, `image_build_failed`). */
  env_reasons: Record<string, number>;
  /** Instance-layer and unattributed losses, by `instance:<code>` / `other:<code>`. */
  not_env: number;
  not_env_reasons: Record<string, number>;
  pending: number;
  /** built / (built + env_failed), 0..1; null when neither happened yet. */
  share: number | null;
}

/** One project's verdict on {@link ENV_GOAL}, from its `all` row. */
export interface EnvironmentGoal {
  project: string;
  share: number | null;
  /** `met`: share >= goal; `not_met`; `not_measured`: nothing built or failed yet. */
  verdict: 'met' | 'not_met' | 'not_measured';
  /** Tested candidates still pending: the verdict may change when they finish. */
  pending: number;
}

/** The whole report, as JSON (`telebench plan --json` carries it as `environments`). */
export interface EnvironmentReport {
  goal: number;
  /** Per project (sorted), its years ascending (`unknown` last), then its `all` row. */
  rows: EnvironmentRow[];
  goals: EnvironmentGoal[];
}

/** One tested candidate: where it counts and what its build did. */
interface Tested {
  key: string;
  project: string;
  year: string;
  kind: EnvOutcomeKind;
  reason?: string;
}

/**
 * The tested candidates in the store: `swe5g.testgen` done (at the reader's versions) with a
 * `swe5g.resolve` output, each with its build record's outcome.
 * @param baseDates base commit sha -> committer date, ISO 8601 with any offset (the year is
 *   taken in UTC: `2021-01-01T03:00:00+08:00` counts under 2020); a missing or unparsable date
 *   counts under {@link UNKNOWN_YEAR}
 * @param only when given, just these instance ids (`telebench plan`'s sample)
 */
export function testedCandidates(
  store: StoreReader,
  baseDates: ReadonlyMap<string, string>,
  only?: ReadonlySet<string>,
): Tested[] {
  const tested = new Set([...store.outputs(testgenStage)].map((o) => o.key));
  const out: Tested[] = [];
  for (const o of store.outputs(resolveStage)) {
    if (!tested.has(o.key) || (only && !only.has(o.key))) continue;
    const utc = toUtcIso(baseDates.get(o.output.base_commit));
    const { kind, reason } = envOutcome(store.item(buildStage, o.key));
    out.push({
      key: o.key,
      project: projectOf(o.output.repo),
      year: utc === '' ? UNKNOWN_YEAR : utc.slice(0, 4),
      kind,
      ...(reason !== undefined ? { reason } : {}),
    });
  }
  return out;
}

const emptyRow = (project: string, year: string): EnvironmentRow => ({
  project,
  year,
  tested: 0,
  built: 0,
  env_failed: 0,
  env_reasons: {},
  not_env: 0,
  not_env_reasons: {},
  pending: 0,
  share: null,
});

/** Adds one tested candidate to `r`. */
function add(r: EnvironmentRow, t: Tested): void {
  r.tested++;
  if (t.kind === 'built') r.built++;
  else if (t.kind === 'pending') r.pending++;
  else if (t.kind === 'env_failed') {
    r.env_failed++;
    countInto(r.env_reasons, t.reason ?? 'unknown');
  } else {
    r.not_env++;
    const where = t.kind === 'instance_failed' ? 'instance' : 'other';
    countInto(r.not_env_reasons, `${where}:${t.reason ?? 'unknown'}`);
  }
}

const byYear = (a: string, b: string): number =>
  a === UNKNOWN_YEAR ? 1 : b === UNKNOWN_YEAR ? -1 : a.localeCompare(b);

/**
 * The table per project and year over the tested candidates in the store (see the module
 * comment). Pure: reads the store only; the dates come in `baseDates`.
 * @returns rows (per project: years ascending, `unknown` last, then `all`) and the goal verdicts
 */
export function environmentReport(
  store: StoreReader,
  baseDates: ReadonlyMap<string, string>,
  only?: ReadonlySet<string>,
): EnvironmentReport {
  const projects = new Map<string, Map<string, EnvironmentRow>>();
  for (const t of testedCandidates(store, baseDates, only)) {
    let years = projects.get(t.project);
    if (!years) projects.set(t.project, (years = new Map()));
    let r = years.get(t.year);
    if (!r) years.set(t.year, (r = emptyRow(t.project, t.year)));
    add(r, t);
  }
  const rows: EnvironmentRow[] = [];
  const goals: EnvironmentGoal[] = [];
  for (const project of [...projects.keys()].sort()) {
    const years = projects.get(project)!;
    const all = emptyRow(project, 'all');
    for (const year of [...years.keys()].sort(byYear)) {
      const r = years.get(year)!;
      mergeInto(all, r);
      rows.push(r);
    }
    rows.push(all);
    for (const r of [...years.values(), all])
      r.share = r.built + r.env_failed === 0 ? null : r.built / (r.built + r.env_failed);
    goals.push({
      project,
      share: all.share,
      verdict: all.share === null ? 'not_measured' : all.share >= ENV_GOAL ? 'met' : 'not_met',
      pending: all.pending,
    });
  }
  return { goal: ENV_GOAL, rows, goals };
}

/** Adds the counts of `r` to `into`. */
function mergeInto(into: EnvironmentRow, r: EnvironmentRow): void {
  into.tested += r.tested;
  into.built += r.built;
  into.env_failed += r.env_failed;
  into.not_env += r.not_env;
  into.pending += r.pending;
  addCounts(into.env_reasons, r.env_reasons);
  addCounts(into.not_env_reasons, r.not_env_reasons);
}

/**
 * {@link environmentReport} with the base commits' dates read from the state's git mirrors
 * (`<state>/git/<owner>+<name>.git`, as the release reads them).
 */
export function environmentReportOf(
  ctx: Pick<StageContext, 'store' | 'stateDir'>,
  only?: ReadonlySet<string>,
): EnvironmentReport {
  const commits = [...ctx.store.outputs(resolveStage)]
    .filter((o) => !only || only.has(o.key))
    .map((o) => ({ repo: o.output.repo, base_commit: o.output.base_commit }));
  return environmentReport(ctx.store, baseCommitDates(ctx.stateDir, commits), only);
}

const pct = (x: number | null): string => (x === null ? '' : `${(x * 100).toFixed(1)}%`);

/** One goal's line: `- free5gc: met (95.0% >= 90%; 2 pending)`. */
function goalLine(g: EnvironmentGoal, goal: number): string {
  const target = `${Math.round(goal * 100)}%`;
  const pending = g.pending > 0 ? `; ${g.pending} pending, may change` : '';
  if (g.verdict === 'not_measured')
    return `- ${g.project}: not measured (no environment built or failed yet${pending})`;
  const rel = g.verdict === 'met' ? '>=' : '<';
  return `- ${g.project}: ${g.verdict === 'met' ? 'met' : 'not met'} (${pct(g.share)} ${rel} ${target}${pending})`;
}

/**
 * The report as Markdown ("Environments by project and year"): the table, then one goal line per
 * project; '' when no candidate reached the environment step.
 * @param opts `heading` the Markdown heading marks (default `##`); `scope` what was counted
 *   (default every candidate with a fail-to-pass test; `telebench plan` says its sample)
 */
export function environmentReportMarkdown(
  r: EnvironmentReport,
  opts: { heading?: string; scope?: string } = {},
): string {
  if (r.rows.length === 0) return '';
  const lines = [
    `${opts.heading ?? '##'} Environments by project and year (swe5g.build of ${opts.scope ?? 'the candidates with a fail-to-pass test'})`,
    '',
    'Year: UTC year of the base commit. Success share = env built / (env built + env failed); losses of the instance layer or of the run (not the environment) are shown apart and left out of it.',
    '',
    '| project | year | tested | env built | env failed (reason) | not the environment (reason) | pending | success share |',
    '|---|---|---:|---:|---|---|---:|---:|',
  ];
  for (const x of r.rows) {
    const y = x.year === 'all' ? '**all**' : x.year;
    lines.push(
      `| ${x.project} | ${y} | ${x.tested} | ${x.built} | ${x.env_failed}${x.env_failed ? ` (${formatCounts(x.env_reasons)})` : ''} | ${x.not_env}${x.not_env ? ` (${formatCounts(x.not_env_reasons)})` : ''} | ${x.pending} | ${pct(x.share)} |`,
    );
  }
  lines.push('', `Goal: at least ${Math.round(r.goal * 100)}% of environments build, per project:`);
  lines.push('', ...r.goals.map((g) => goalLine(g, r.goal)));
  return `${lines.join('\n')}\n`;
}

/** `telebench report swe5g`'s section: {@link environmentReportOf} as Markdown. */
export function environmentsMarkdown(ctx: Pick<StageContext, 'store' | 'stateDir'>): string {
  return environmentReportMarkdown(environmentReportOf(ctx));
}
