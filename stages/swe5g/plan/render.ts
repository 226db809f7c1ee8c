/**
 * The printed form of `telebench plan`'s estimate (Markdown tables, readable on a terminal) and
 * the shape of its `--json`.
 */
import {
  sumSpans,
  type Depth,
  type ProjectEstimate,
  type Projected,
  type Span,
} from './estimate.js';
import { environmentReportMarkdown, type EnvironmentReport } from '../report-environments.js';

/** The whole estimate, as `--json` prints it. */
export interface PlanEstimate {
  /** Interval level of every `low`/`high`. */
  level: number;
  depth: Depth;
  /** Sampled candidates per project (`--sample`) and the seed (`--seed`). */
  sample_size: number;
  seed: number;
  /** Items at once per stage, as the configuration runs them. */
  concurrency: Record<string, number>;
  projects: ProjectEstimate[];
  /** Sums over the projects (interval ends summed: conservative). */
  total: {
    candidates: number;
    tests: Span;
    validated: Span | null;
    /** Kept by the audit (depth `audit`), else null. */
    audited: Span | null;
    hours: Span;
    env_images: Span | null;
    instance_images: Span | null;
    disk_gib: Span | null;
  };
  /** Registry entries not mined, by why (`no_mirror`: no mirror of the repository). */
  not_mined: Record<string, string[]>;
  /**
   * `--depth validate` and `audit`: the sampled candidates' environments by project and UTC year
   * of the base commit (counts of the sample itself, not projected; absent at `--depth testgen`).
   */
  environments?: EnvironmentReport;
}

/** The totals over the projects of {@link PlanEstimate}. */
export function totalOf(projects: readonly ProjectEstimate[]): PlanEstimate['total'] {
  const measured = <T>(xs: (T | null)[]): T[] | null =>
    xs.every((x) => x !== null) ? (xs as T[]) : null;
  const sum = (xs: (Span | null)[]): Span | null => {
    const m = measured(xs);
    return m ? sumSpans(m) : null;
  };
  return {
    candidates: projects.reduce((s, p) => s + p.candidates, 0),
    tests: sumSpans(projects.map((p) => p.tests)) ?? { point: 0, low: 0, high: 0 },
    validated: sum(projects.map((p) => p.validated)),
    audited: sum(projects.map((p) => p.audited)),
    hours: sumSpans(projects.map((p) => p.hours)) ?? { point: 0, low: 0, high: 0 },
    env_images: sum(projects.map((p) => p.env_images)),
    instance_images: sum(projects.map((p) => p.instance_images)),
    disk_gib: sum(projects.map((p) => p.disk_gib)),
  };
}

const num = (x: number, digits: number): string =>
  Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits }) : 'inf';

/** `point [low-high]`, or `n/a` (not measured at this depth). */
export function spanText(s: Span | null, digits = 0): string {
  if (!s) return 'n/a';
  if (s.low === s.high) return num(s.point, digits);
  return `${num(s.point, digits)} [${num(s.low, digits)}-${num(s.high, digits)}]`;
}

/** How far a sample of each depth went, as the heading says it. */
const DEPTH_TEXT: Record<Depth, string> = {
  testgen: 'test generation',
  validate: 'validation',
  audit: 'validation and the fail-to-pass audit',
};

/** A projected count with the sample's `k/n`. */
const countText = (p: Projected | null): string => (p ? `${spanText(p)} (${p.k}/${p.n})` : 'n/a');

/** The estimate as Markdown: the projection table, then losses per project, then what is missing. */
export function planMarkdown(e: PlanEstimate): string {
  const pct = Math.round(e.level * 100);
  const out = [
    `## SWE-Bench 5G plan: the whole run projected from a sample of ${e.sample_size} per project (seed ${e.seed}, through ${DEPTH_TEXT[e.depth]})`,
    '',
    `Projected to all kept candidates: point [${pct}% interval]; (k/n) = sampled candidates that got there.`,
    '',
    '| project | kept candidates | resolved | with a fail-to-pass test | validated | kept by the audit | hours | environment images | instance images | disk GiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const p of e.projects)
    out.push(
      `| ${p.project} | ${num(p.candidates, 0)} | ${countText(p.resolved)} | ${countText(p.tests)} | ${countText(p.validated)} | ${countText(p.audited)} | ${spanText(p.hours, 1)} | ${spanText(p.env_images)} | ${spanText(p.instance_images)} | ${spanText(p.disk_gib, 1)} |`,
    );
  const t = e.total;
  out.push(
    `| total | ${num(t.candidates, 0)} | | ${spanText(t.tests)} | ${spanText(t.validated)} | ${spanText(t.audited)} | ${spanText(t.hours, 1)} | ${spanText(t.env_images)} | ${spanText(t.instance_images)} | ${spanText(t.disk_gib, 1)} |`,
    '',
    `Hours: the stages ${[...new Set(e.projects.flatMap((p) => p.timed_stages))].join(', ')} one after another at the configured concurrency (${Object.entries(
      e.concurrency,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )}), environment builds once per projected environment image. Environment images: [distinct ones the sample built - one per built instance]. Totals sum the projects' interval ends.`,
    '',
    '### Losses by reason',
    '',
    '| project | mined | linked | kept | rejected by the filter (exact) | lost after mining (projected) |',
    '|---|---:|---:|---:|---|---|',
  );
  for (const p of e.projects) {
    const rej = Object.entries(p.funnel.rejected)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const lost = p.losses
      .map((l) => `${l.stage}: ${l.reason} ${countText(l.projected)}`)
      .join(', ');
    out.push(
      `| ${p.project} | ${num(p.funnel.mined, 0)} | ${num(p.funnel.linked, 0)} | ${num(p.funnel.kept, 0)} | ${rej || 'none'} | ${lost || 'none'} |`,
    );
  }
  const missing = Object.entries(e.not_mined);
  if (missing.length > 0) {
    out.push('', 'Not mined, so not in the estimate:', '');
    for (const [why, keys] of missing)
      out.push(`- ${why} (${keys.length}): ${[...keys].sort().join(', ')}`);
  }
  const envs = e.environments
    ? environmentReportMarkdown(e.environments, {
        heading: '###',
        scope: 'the sampled candidates with a fail-to-pass test; counts, not projected',
      })
    : '';
  if (envs) out.push('', envs.trimEnd());
  return `${out.join('\n')}\n`;
}
