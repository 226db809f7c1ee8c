/**
 * Outcomes and metrics of the TeleResilienceBench evaluation (paper arXiv:2605.09929 section IV-A:
 * CFR, NFR, WFR; Table I macro average; auxiliary TeleMath CR%).
 *
 * Every scored instance has exactly one outcome, none folded into another:
 * - `correct_flip`: the target model's answer is the gold answer;
 * - `no_flip`: it is the generator's wrong answer again;
 * - `wrong_flip`: another wrong answer;
 * - `incorrect`: a wrong answer when the generator's answer is unknown (NFR/WFR unavailable);
 * - `parse_failure`: no answer read (`no_answer`, `ambiguous_answer`, `retracted`, `cut_off`);
 * - `excluded`: not scored (prompt truncated, budget exhausted, provider error), with a reason.
 *
 * Rates are over the scored instances (all but `excluded`): parse failures are in the
 * denominator, counted as not corrected (the paper's rule). A rate that cannot be computed is
 * `null` ("unavailable"), never 0.
 */
import type { ModeParse } from './parse-modes.js';
import { MAIN_SUBSETS } from '../../datasets/teleresiliencebench/schema.js';
import { numbersMatch } from '../resilience/numbers.js';
import { clopperPearson, stratifiedBootstrap } from './intervals.js';

export const OUTCOMES = [
  'correct_flip',
  'no_flip',
  'wrong_flip',
  'incorrect',
  'parse_failure',
  'excluded',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * The seven discrete-choice subsets of Table I (macro average), in the paper's order: the dataset's
 * one definition (`MAIN_SUBSETS`, paper §3), not a copy.
 */
export const DISCRETE_SUBSETS = MAIN_SUBSETS;

/** TeleMath tolerance (collect_metadata.json: telemath_rel_tol 1e-3, telemath_abs_tol 1e-5). */
export const TELEMATH_TOLERANCE = { rel: 1e-3, abs: 1e-5 } as const;

/**
 * Python's `math.isclose(a, b, rel_tol, abs_tol)` with the TeleMath tolerance by default (paper
 * section V-D): construction's {@link numbersMatch}, so both branches judge numbers alike. Pure.
 */
export function isClose(
  a: number,
  b: number,
  tol: { rel: number; abs: number } = TELEMATH_TOLERANCE,
): boolean {
  return numbersMatch(a, b, tol.rel, tol.abs);
}

/** What is known about one instance to classify an answer. */
export interface OutcomeTarget {
  kind: 'mc' | 'numeric';
  /** 0-based gold option (mc). */
  goldIndex: number | null;
  goldValue: number | null;
  /** The generator's wrong answer: 0-based option (mc) or number; null when unknown. */
  generatorIndex: number | null;
  generatorValue: number | null;
}

/**
 * The outcome of one parsed answer. `excludedReason` (non-null) wins over the parse.
 * @throws Error when an mc target has no gold index or a numeric one no gold value
 */
export function classifyOutcome(
  parse: ModeParse,
  t: OutcomeTarget,
  excludedReason: string | null = null,
): Outcome {
  if (excludedReason) return 'excluded';
  if (parse.status !== 'answer') return 'parse_failure';
  if (t.kind === 'mc') {
    if (t.goldIndex === null) throw new Error('classifyOutcome: mc target without gold index');
    if (parse.index === t.goldIndex) return 'correct_flip';
    if (t.generatorIndex === null) return 'incorrect';
    return parse.index === t.generatorIndex ? 'no_flip' : 'wrong_flip';
  }
  if (t.goldValue === null) throw new Error('classifyOutcome: numeric target without gold value');
  if (isClose(parse.value!, t.goldValue)) return 'correct_flip';
  if (t.generatorValue === null) return 'incorrect';
  return isClose(parse.value!, t.generatorValue) ? 'no_flip' : 'wrong_flip';
}

/** One scored row as metrics see it. */
export interface ScoredRow {
  sample_id: string;
  /** Lower-case subset id (`teleqna`, `3gpp_tsg`): the key of `by_subset`. */
  subset: string;
  outcome: Outcome;
  /** Parse status when not an answer (`no_answer`, `ambiguous_answer`, `retracted`, `cut_off`). */
  parse_status: string;
  output_tokens: number | null;
  difficulty: string | null;
  /** The prompt was cut (prompt_truncated / context_shifted) or the budget ran out. */
  cut: boolean;
}

/** Rates in percent, counts, and the 95% Clopper-Pearson interval of CFR. */
export interface GroupMetrics {
  n: number;
  scored: number;
  /** Scored rows with an answer read (not a parse failure). */
  answered: number;
  counts: Record<Outcome, number>;
  ambiguous: number;
  /** Percent of scored; null = unavailable. */
  cfr: number | null;
  nfr: number | null;
  wfr: number | null;
  parse_failure_rate: number | null;
  /** Exact (Clopper-Pearson) 95% interval of CFR in percent; null when nothing is scored. */
  cfr_ci: [number, number] | null;
  mean_output_tokens: number | null;
  /** Share (percent) of correct flips that came from cut prompts or exhausted budgets. */
  cut_share_of_correct: number | null;
  cut_rows: number;
}

const pct = (a: number, b: number): number | null => (b === 0 ? null : (100 * a) / b);

/** Metrics of a group of rows. Pure. */
export function groupMetrics(rows: readonly ScoredRow[]): GroupMetrics {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of rows) counts[r.outcome]++;
  const scoredRows = rows.filter((r) => r.outcome !== 'excluded');
  const scored = scoredRows.length;
  // NFR/WFR need the generator's answer on every scored row that was answered wrongly, and an
  // answer at all: where every scored row is a parse failure they are not 0, they do not apply
  const answered = scored - counts.parse_failure;
  const attributable = counts.incorrect === 0 && answered > 0;
  const tokens = rows.map((r) => r.output_tokens).filter((t): t is number => t !== null);
  const cutCorrect = scoredRows.filter((r) => r.outcome === 'correct_flip' && r.cut).length;
  return {
    n: rows.length,
    scored,
    answered,
    counts,
    ambiguous: rows.filter((r) => r.parse_status === 'ambiguous_answer').length,
    cfr: pct(counts.correct_flip, scored),
    nfr: attributable ? pct(counts.no_flip, scored) : null,
    wfr: attributable ? pct(counts.wrong_flip, scored) : null,
    parse_failure_rate: pct(counts.parse_failure, scored),
    cfr_ci: clopperPearson(counts.correct_flip, scored),
    mean_output_tokens: tokens.length ? tokens.reduce((a, b) => a + b, 0) / tokens.length : null,
    cut_share_of_correct: pct(cutCorrect, counts.correct_flip),
    cut_rows: rows.filter((r) => r.cut).length,
  };
}

/** Metrics of one model in one parse mode. */
export interface ModeMetrics {
  by_subset: Record<string, GroupMetrics>;
  /** Unweighted mean of the seven discrete subsets' unrounded rates; null when one is missing. */
  macro: {
    cfr: number | null;
    nfr: number | null;
    wfr: number | null;
    subsets: number;
    /** 95% percentile bootstrap of the macro CFR, stratified by subset (intervals.ts); null with no subset. */
    cfr_ci: [number, number] | null;
  };
  /** Over all discrete-choice rows pooled. */
  micro: GroupMetrics;
  /** TeleMath correction rate (auxiliary), when present. */
  telemath: GroupMetrics | null;
  by_difficulty: Record<string, GroupMetrics>;
  /** Mean output tokens over every row with a count (all subsets, TeleMath included); null when none. */
  mean_output_tokens: number | null;
}

const meanTokens = (rows: readonly ScoredRow[]): number | null => {
  const t = rows.map((r) => r.output_tokens).filter((x): x is number => x !== null);
  return t.length ? t.reduce((a, b) => a + b, 0) / t.length : null;
};

/**
 * The paper's sub-benchmark names (Table I, Figure 3) by subset id; other subsets show their id.
 */
export const SUB_BENCHMARK_NAMES: Record<string, string> = {
  teleqna: 'TeleQnA',
  teletables: 'TeleTables',
  telelogs: 'TeleLogs',
  '3gpp_tsg': '3GPP_TSG',
  oranbench: 'ORANBench',
  srsranbench: 'srsRANBench',
  sixg_bench: 'SixG_Bench',
  telemath: 'TeleMath',
};

/** The paper's name of a subset (its id when the paper has none). */
export const subBenchmarkName = (subset: string): string => SUB_BENCHMARK_NAMES[subset] ?? subset;

/** Below this many scored rows a rate and its interval say little: reports flag it. */
export const SMALL_SAMPLE = 30;

const mean = (xs: (number | null)[]): number | null =>
  xs.length === 0 || xs.some((x) => x === null)
    ? null
    : xs.reduce<number>((a, b) => a + b!, 0) / xs.length;

/**
 * All metrics of one model in one mode. Macro = unweighted mean over the discrete subsets that
 * have rows (paper Table I: the seven subset percentages, each weighted equally); `subsets` says
 * how many entered it. Pure.
 */
export function modeMetrics(rows: readonly ScoredRow[]): ModeMetrics {
  const bySub = new Map<string, ScoredRow[]>();
  for (const r of rows) {
    const list = bySub.get(r.subset) ?? [];
    list.push(r);
    bySub.set(r.subset, list);
  }
  const by_subset: Record<string, GroupMetrics> = {};
  for (const [s, rs] of [...bySub].sort(([a], [b]) => a.localeCompare(b)))
    by_subset[s] = groupMetrics(rs);
  const discrete = DISCRETE_SUBSETS.filter((s) => by_subset[s] && by_subset[s].scored > 0);
  const discreteRows = rows.filter((r) =>
    (DISCRETE_SUBSETS as readonly string[]).includes(r.subset),
  );
  const byDiff = new Map<string, ScoredRow[]>();
  for (const r of discreteRows) {
    if (r.difficulty === null) continue;
    const list = byDiff.get(r.difficulty) ?? [];
    list.push(r);
    byDiff.set(r.difficulty, list);
  }
  return {
    by_subset,
    macro: {
      cfr: mean(discrete.map((s) => by_subset[s]!.cfr)),
      nfr: mean(discrete.map((s) => by_subset[s]!.nfr)),
      wfr: mean(discrete.map((s) => by_subset[s]!.wfr)),
      subsets: discrete.length,
      cfr_ci: stratifiedBootstrap(
        discrete.map((sub) =>
          bySub
            .get(sub)!
            .filter((r) => r.outcome !== 'excluded')
            .map((r) => (r.outcome === 'correct_flip' ? 1 : 0)),
        ),
      ),
    },
    micro: groupMetrics(discreteRows),
    telemath: by_subset['telemath'] ?? null,
    mean_output_tokens: meanTokens(rows),
    by_difficulty: Object.fromEntries(
      [...byDiff].sort(([a], [b]) => a.localeCompare(b)).map(([d, rs]) => [d, groupMetrics(rs)]),
    ),
  };
}

/**
 * NFR or WFR of a group as a report prints it: the rate, `n/a` when every scored row is a parse
 * failure (no answer can be a no flip or a wrong flip; see {@link NA_LEGEND}), else `unavailable`.
 */
export function fmtFlipRate(g: GroupMetrics, which: 'nfr' | 'wfr'): string {
  if (g[which] === null && g.scored > 0 && g.answered === 0) return 'n/a';
  return fmtRate(g[which]);
}

/** What `n/a` in an NFR or WFR cell means, one sentence for the reports. */
export const NA_LEGEND =
  'n/a (NFR, WFR): every scored row of the cell is a parse failure, so no answer was read that could be a no flip or a wrong flip; those rows still count as not corrected in CFR.';

/** `12.3`, or `unavailable` for null. */
export function fmtRate(x: number | null, digits = 1): string {
  return x === null ? 'unavailable' : x.toFixed(digits);
}
