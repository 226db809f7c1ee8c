/**
 * Paired comparisons of models scored on the same instances (paper arXiv:2605.09929: its claims
 * compare models, e.g. Qwen3.5 4b -> 27b "no improvement"). Only instances both models scored
 * (same `sample_id`, neither excluded) enter a comparison, so the two rates are on one set.
 *
 * Per discrete subset and pooled over them: McNemar's exact test on the discordant pairs
 * (`b`: only the first model corrected the trace, `c`: only the second). For the macro (the
 * unweighted mean of the subsets' CFRs): the difference with a paired bootstrap interval
 * (intervals.ts). A comparison with a subset under SMALL_SAMPLE shared rows is flagged.
 */
import type { RowScore } from './score.js';
import type { ParseMode } from './parse-modes.js';
import { DISCRETE_SUBSETS, SMALL_SAMPLE } from './metrics.js';
import { INTERVALS, mcnemarExact, stratifiedBootstrap } from './intervals.js';

/** One subset (or the pooled discrete rows) of a comparison; rates in percent. */
export interface PairCell {
  subset: string;
  /** Instances both models scored. */
  n: number;
  cfr_a: number;
  cfr_b: number;
  /** Only the first model corrected. */
  b: number;
  /** Only the second model corrected. */
  c: number;
  /** McNemar exact two-sided p. */
  p: number;
}

/** Model `a` against model `b` in one mode. */
export interface PairComparison {
  mode: ParseMode | 'recorded';
  a: string;
  b: string;
  subsets: PairCell[];
  pooled: PairCell | null;
  /** Macro CFR of each over the shared instances of the subsets both have, and a - b. */
  macro: {
    subsets: number;
    a: number;
    b: number;
    diff: number;
    /** 95% paired bootstrap interval of the difference (percentage points). */
    diff_ci: [number, number] | null;
  } | null;
  /** Some shared subset has fewer than SMALL_SAMPLE instances. */
  small: boolean;
}

type Pair = [number, number];

function cell(subset: string, pairs: readonly Pair[]): PairCell {
  const n = pairs.length;
  const b = pairs.filter(([x, y]) => x === 1 && y === 0).length;
  const c = pairs.filter(([x, y]) => x === 0 && y === 1).length;
  const sum = (k: 0 | 1) => pairs.reduce((s, p) => s + p[k], 0);
  return {
    subset,
    n,
    cfr_a: (100 * sum(0)) / n,
    cfr_b: (100 * sum(1)) / n,
    b,
    c,
    p: mcnemarExact(b, c),
  };
}

/** Paired 0/1 (corrected or not) of two models' rows by subset, on the instances both scored. */
function pairsBySubset(
  a: readonly RowScore[],
  b: readonly RowScore[],
  mode: ParseMode | 'recorded',
): Map<string, Pair[]> {
  const usable = (s: RowScore) => s.outcomes[mode] !== null && s.outcomes[mode] !== 'excluded';
  const hit = (s: RowScore) => (s.outcomes[mode] === 'correct_flip' ? 1 : 0);
  const other = new Map(b.filter(usable).map((s) => [s.sample_id, s]));
  const out = new Map<string, Pair[]>();
  for (const s of a) {
    const t = other.get(s.sample_id);
    if (!t || !usable(s) || !(DISCRETE_SUBSETS as readonly string[]).includes(s.subset)) continue;
    const list = out.get(s.subset) ?? [];
    list.push([hit(s), hit(t)]);
    out.set(s.subset, list);
  }
  return out;
}

/**
 * Every pair of models (in the given order) in one mode. Pure.
 * @param models each model's row scores (from scoreFiles)
 * @returns one comparison per pair; a pair with no shared instance has empty `subsets`
 */
export function compareModels(
  models: readonly { model: string; scores: readonly RowScore[] }[],
  mode: ParseMode | 'recorded',
): PairComparison[] {
  const out: PairComparison[] = [];
  for (let i = 0; i < models.length; i++)
    for (let j = i + 1; j < models.length; j++) {
      const A = models[i]!;
      const B = models[j]!;
      const by = pairsBySubset(A.scores, B.scores, mode);
      const subs = DISCRETE_SUBSETS.filter((s) => by.has(s));
      const subsets = subs.map((s) => cell(s, by.get(s)!));
      const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
      out.push({
        mode,
        a: A.model,
        b: B.model,
        subsets,
        pooled: subs.length
          ? cell(
              'pooled',
              subs.flatMap((s) => by.get(s)!),
            )
          : null,
        macro: subs.length
          ? {
              subsets: subs.length,
              a: mean(subsets.map((c) => c.cfr_a)),
              b: mean(subsets.map((c) => c.cfr_b)),
              diff: mean(subsets.map((c) => c.cfr_a - c.cfr_b)),
              diff_ci: stratifiedBootstrap(subs.map((s) => by.get(s)!.map(([x, y]) => x - y))),
            }
          : null,
        small: subsets.some((c) => c.n < SMALL_SAMPLE),
      });
    }
  return out;
}

/** `p = 0.003`, `p < 0.001`. */
export const fmtP = (p: number): string => (p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(3)}`);

/**
 * The comparisons as table rows (Markdown and HTML share them): pair, shared instances, macro
 * CFR of each, the difference with its interval, the pooled McNemar test, and the subsets where
 * the McNemar p is below 0.05. Pure.
 */
export const COMPARISON_HEADER = [
  'model A vs model B',
  'shared instances',
  'macro CFR A / B',
  'A - B [95% paired bootstrap]',
  'pooled: only A / only B corrected, McNemar exact',
  'subsets with McNemar p < 0.05 (A - B)',
] as const;

/**
 * The table rows of {@link COMPARISON_HEADER}, one per model pair, as printed cells: rates in
 * percent with one decimal, the paired-bootstrap interval in percentage points, McNemar's exact
 * p-value; a pair with a small subset is marked, one with no shared instance gets `n/a` cells.
 * Pure; throws nothing.
 */
export function comparisonRows(cs: readonly PairComparison[]): string[][] {
  return cs.map((c) => {
    const small = c.small ? ' (small sample in a subset)' : '';
    if (!c.macro || !c.pooled)
      return [`${c.a} vs ${c.b}`, '0', 'n/a', 'n/a: no shared instance', 'n/a', 'none'];
    const m = c.macro;
    const ci = m.diff_ci ? ` [${m.diff_ci[0].toFixed(1)}, ${m.diff_ci[1].toFixed(1)}]` : '';
    const sig = c.subsets
      .filter((s) => s.p < 0.05)
      .map((s) => `${s.subset} ${(s.cfr_a - s.cfr_b).toFixed(1)} (${fmtP(s.p)})`);
    return [
      `${c.a} vs ${c.b}`,
      `${c.pooled.n}${small}`,
      `${m.a.toFixed(1)} / ${m.b.toFixed(1)}${m.subsets < DISCRETE_SUBSETS.length ? ` (${m.subsets} of ${DISCRETE_SUBSETS.length} subsets)` : ''}`,
      `${m.diff >= 0 ? '+' : ''}${m.diff.toFixed(1)}${ci}`,
      `${c.pooled.b} / ${c.pooled.c}, ${fmtP(c.pooled.p)}`,
      sig.length ? sig.join('; ') : 'none',
    ];
  });
}

/** What the comparison table means, one paragraph for the reports. */
export const COMPARISON_LEGEND = `Paired comparisons: each pair of models on the instances both scored (same sample_id, neither excluded). A - B is the difference of their macro CFRs in percentage points with a 95% paired bootstrap interval (instances resampled within each subset, both answers kept together; ${INTERVALS.resamples} resamples, fixed seed); an interval that contains 0 is no evidence of a difference. The McNemar exact test counts the discordant instances (only A corrected, only B corrected): p >= 0.05 is no evidence that one corrects more. Subsets under ${SMALL_SAMPLE} shared instances are flagged.`;
