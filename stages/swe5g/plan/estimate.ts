/**
 * The arithmetic of `telebench plan`: a seeded random sample of one project's kept candidates,
 * taken through the stages after mining, projected to all of the project's candidates. Pure (no
 * store, no I/O); `outcomes.ts` reads what the sample did, `render.ts` prints the result.
 *
 * - yields (resolved, with a fail-to-pass test, built, validated, kept by the audit; each loss
 *   reason, a weak test counted as the audit's loss `weak_f2p_test`): k of the n
 *   sampled, projected to N candidates as N k / n with the exact Clopper-Pearson interval of k / n
 *   (jStat's beta quantile) times N. At k = 0 the interval is [0, N (1 - (alpha/2)^(1/n))], never
 *   the point 0. Binomial, so conservative for a sample drawn without replacement; when the sample
 *   is the whole population (n = N) the count is exact.
 * - time: each sampled candidate's seconds per stage divided by that stage's concurrency, summed
 *   (its share of wall time, stages one after another); the mean over the sample times N, with a
 *   Student t interval of the mean (jStat's t quantile, finite-population correction
 *   sqrt((N - n) / (N - 1))). Environment builds are shared by every instance of a configure
 *   state: their seconds are counted once per projected environment image (build concurrency).
 * - images: environment images between the distinct ones the sample built (`low`) and one per
 *   projected built instance (`high`), the point the sample's ratio of distinct environments to
 *   built instances times the projected built instances; instance images = built instances.
 *   Disk = environment images x the sample's mean environment layer + instance images x its mean
 *   instance layer + the base images the sample used (counted as seen).
 */
import jstat from 'jstat';

// jStat is a CommonJS bundle: its one export object holds `jStat`
const { jStat } = jstat;

/** The stages a sampled candidate goes through after mining, in order. */
export const SAMPLE_STAGES = ['resolve', 'testgen', 'build', 'validate', 'audit'] as const;
export type SampleStage = (typeof SAMPLE_STAGES)[number];

/**
 * How far the sample goes: test generation only (no Docker), through validation, or through the
 * fail-to-pass audit (issue 30: the instances a default release keeps, not only the validated).
 */
export type Depth = 'testgen' | 'validate' | 'audit';
export const DEPTHS = ['testgen', 'validate', 'audit'] as const satisfies readonly Depth[];

/** The stages a sample of `depth` runs. */
export function stagesOf(depth: Depth): SampleStage[] {
  return SAMPLE_STAGES.slice(0, SAMPLE_STAGES.indexOf(depth) + 1);
}

/** Interval level of every projection. */
export const PLAN_LEVEL = 0.95;

/** What one sampled candidate did (read from the store by `outcomes.ts`). */
export interface SampledOutcome {
  instance_id: string;
  /** The stages it finished, in order. */
  done: SampleStage[];
  /** The stage that dropped it and why: its skip reason, or `failed:<error code>`. */
  lost?: { stage: SampleStage; reason: string };
  /** Seconds of its item per stage that ran (build: without the env and base builds). */
  seconds: Partial<Record<SampleStage, number>>;
  /** Its images when built: tags, layer sizes in bytes, the env and base build seconds. */
  build?: {
    base_image: string;
    base_bytes: number;
    env_image: string;
    env_bytes: number;
    env_seconds: number;
    instance_bytes: number;
  };
}

/** The mining funnel of one project (exact counts, from the store). */
export interface ProjectFunnel {
  project: string;
  /** Registry entries mined. */
  repos: string[];
  mined: number;
  linked: number;
  kept: number;
  incomplete: number;
  /** Filter rejections by reason. */
  rejected: Record<string, number>;
}

/** A count projected to the population: `k` of `n` sampled, its point and interval ends. */
export interface Projected {
  k: number;
  n: number;
  point: number;
  low: number;
  high: number;
}

/** A projected quantity with an interval (or bounds, where the doc comment says so). */
export interface Span {
  point: number;
  low: number;
  high: number;
}

/** One project's estimate. */
export interface ProjectEstimate {
  project: string;
  /** Kept candidates (the population N). */
  candidates: number;
  sample: string[];
  funnel: ProjectFunnel;
  resolved: Projected;
  tests: Projected;
  /** Null when the sample did not go through build / validation (depth testgen). */
  built: Projected | null;
  validated: Projected | null;
  /**
   * Validated and kept by the audit (not `weak`: no must-reject mutant resolved), what a default
   * release holds; null below depth `audit`.
   */
  audited: Projected | null;
  /** Losses after mining by stage and reason, largest first. */
  losses: { stage: SampleStage; reason: string; projected: Projected }[];
  /** Wall hours at the configured concurrency (stages one after another). */
  hours: Span;
  /** Stages whose time is in `hours`. */
  timed_stages: SampleStage[];
  env_images: Span | null;
  instance_images: Projected | null;
  disk_gib: Span | null;
}

/**
 * k successes of n projected to a population of `N`: N k / n with the Clopper-Pearson interval
 * (all zero for an empty population, whose sample is empty).
 * @throws Error when n < 1, k is not an integer in 0..n, or N < n
 */
export function projectCount(k: number, n: number, N: number, level = PLAN_LEVEL): Projected {
  if (N === 0 && n === 0) return { k: 0, n: 0, point: 0, low: 0, high: 0 };
  if (!Number.isInteger(n) || n < 1) throw new Error(`projectCount: sample size ${n}`);
  if (!Number.isInteger(k) || k < 0 || k > n) throw new Error(`projectCount: k=${k} of n=${n}`);
  if (N < n) throw new Error(`projectCount: population ${N} smaller than the sample ${n}`);
  if (n === N) return { k, n, point: k, low: k, high: k };
  const a = (1 - level) / 2;
  const lo = k === 0 ? 0 : jStat.beta.inv(a, k, n - k + 1);
  const hi = k === n ? 1 : jStat.beta.inv(1 - a, k + 1, n - k);
  return { k, n, point: (N * k) / n, low: N * lo, high: N * hi };
}

/**
 * The population total of `values` (one per sampled unit) for a population of N: N times the
 * mean, with a Student t interval (finite-population correction), its low end at least 0. With
 * one value there is no spread to measure: the interval is [0, Infinity). An empty population
 * (and sample) totals 0.
 * @throws Error for an empty sample or N smaller than it
 */
export function projectTotal(values: readonly number[], N: number, level = PLAN_LEVEL): Span {
  const n = values.length;
  if (N === 0 && n === 0) return { point: 0, low: 0, high: 0 };
  if (n === 0 || N < n) throw new Error(`projectTotal: ${n} values for a population of ${N}`);
  const mean = values.reduce((s, v) => s + v, 0) / n;
  if (n === N) return { point: N * mean, low: N * mean, high: N * mean };
  if (n === 1) return { point: N * mean, low: 0, high: Infinity };
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
  const fpc = Math.sqrt((N - n) / (N - 1));
  const half = jStat.studentt.inv(1 - (1 - level) / 2, n - 1) * (sd / Math.sqrt(n)) * fpc;
  return { point: N * mean, low: Math.max(0, N * (mean - half)), high: N * (mean + half) };
}

const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? 0 : xs.reduce((s, v) => s + v, 0) / xs.length;

/** The sample's distinct images by tag, each with the largest value seen (sizes, seconds). */
function distinctBy<T>(items: readonly T[], tag: (t: T) => string, value: (t: T) => number) {
  const m = new Map<string, number>();
  for (const t of items) m.set(tag(t), Math.max(m.get(tag(t)) ?? 0, value(t)));
  return m;
}

const GIB = 2 ** 30;

/** Losses of the sample by stage and reason, projected, largest first. */
function lossesOf(sample: readonly SampledOutcome[], N: number) {
  const by = new Map<string, { stage: SampleStage; reason: string; k: number }>();
  for (const o of sample) {
    if (!o.lost) continue;
    const id = `${o.lost.stage}\u0000${o.lost.reason}`;
    const e = by.get(id) ?? { ...o.lost, k: 0 };
    e.k++;
    by.set(id, e);
  }
  return [...by.values()]
    .sort((a, b) => b.k - a.k || a.stage.localeCompare(b.stage) || a.reason.localeCompare(b.reason))
    .map((e) => ({
      stage: e.stage,
      reason: e.reason,
      projected: projectCount(e.k, sample.length, N),
    }));
}

/**
 * Projects one project's sample to its N kept candidates (the rules are in the module comment).
 * @param concurrency items at once per stage (the configuration's, as a run would use)
 * @throws Error when the sample is empty or larger than `funnel.kept`
 */
export function estimateProject(args: {
  funnel: ProjectFunnel;
  sample: readonly SampledOutcome[];
  depth: Depth;
  concurrency: Record<SampleStage, number>;
}): ProjectEstimate {
  const { funnel, sample, depth, concurrency } = args;
  const N = funnel.kept;
  const n = sample.length;
  const count = (stage: SampleStage) =>
    projectCount(sample.filter((o) => o.done.includes(stage)).length, n, N);
  const stages = stagesOf(depth);
  const share = sample.map((o) =>
    stages.reduce((s, st) => s + (o.seconds[st] ?? 0) / concurrency[st], 0),
  );
  const items = projectTotal(share, N);
  const built = depth !== 'testgen' ? count('build') : null;
  const builds = sample.flatMap((o) => (o.build ? [o.build] : []));
  let env_images: Span | null = null;
  let disk_gib: Span | null = null;
  let envSeconds = 0;
  if (built && builds.length > 0) {
    const envBytes = distinctBy(
      builds,
      (b) => b.env_image,
      (b) => b.env_bytes,
    );
    const d = envBytes.size;
    env_images = {
      point: Math.max(d, (d / builds.length) * built.point),
      low: d,
      high: Math.max(d, built.high),
    };
    envSeconds = mean([
      ...distinctBy(
        builds,
        (b) => b.env_image,
        (b) => b.env_seconds,
      ).values(),
    ]);
    const env = mean([...envBytes.values()]);
    const inst = mean(builds.map((b) => b.instance_bytes));
    const base = [
      ...distinctBy(
        builds,
        (b) => b.base_image,
        (b) => b.base_bytes,
      ).values(),
    ];
    const baseBytes = base.reduce((s, v) => s + v, 0);
    const disk = (e: number, i: number): number => (e * env + i * inst + baseBytes) / GIB;
    disk_gib = {
      point: disk(env_images.point, built.point),
      low: disk(env_images.low, built.low),
      high: disk(env_images.high, built.high),
    };
  }
  const envHours = (images: number): number => (images * envSeconds) / concurrency.build / 3600;
  return {
    project: funnel.project,
    candidates: N,
    sample: sample.map((o) => o.instance_id),
    funnel,
    resolved: count('resolve'),
    tests: count('testgen'),
    built,
    validated: depth !== 'testgen' ? count('validate') : null,
    audited: depth === 'audit' ? count('audit') : null,
    losses: lossesOf(sample, N),
    hours: {
      point: items.point / 3600 + envHours(env_images?.point ?? 0),
      low: items.low / 3600 + envHours(env_images?.low ?? 0),
      high: items.high / 3600 + envHours(env_images?.high ?? 0),
    },
    timed_stages: stages,
    env_images,
    instance_images: built,
    disk_gib,
  };
}

/** Sums the projects' spans (ends summed: a conservative interval of the total). */
export function sumSpans(spans: readonly (Span | null)[]): Span | null {
  const real = spans.filter((s): s is Span => s !== null);
  if (real.length === 0) return null;
  return {
    point: real.reduce((s, x) => s + x.point, 0),
    low: real.reduce((s, x) => s + x.low, 0),
    high: real.reduce((s, x) => s + x.high, 0),
  };
}
