/**
 * Intervals and paired tests of the TeleResilienceBench rates (paper arXiv:2605.09929 section
 * IV-A reports CFR per sub-benchmark and the macro; its claims compare models on the same
 * instances). Rates and interval ends are percent (0-100).
 *
 * - a subset's CFR (k of n): the exact Clopper-Pearson interval, from the beta quantile
 *   (jStat): at k = 0 it is [0, 100 (1 - (alpha/2)^(1/n))], never the single point [0, 0];
 * - the macro (unweighted mean of the subsets' CFRs): a percentile bootstrap stratified by
 *   subset (each subset's rows resampled with replacement, its size kept), seeded;
 * - two models on the same instances: McNemar's exact test on the discordant pairs (b: only the
 *   first corrected, c: only the second; two-sided binomial p with success 1/2, from jStat's
 *   binomial CDF), and a paired bootstrap interval of the macro difference (instances resampled
 *   within each subset, both models' answers kept together).
 */
import jstat from 'jstat';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

// jStat is a CommonJS bundle: its one export object holds `jStat`
const { jStat } = jstat;

/** Interval level and bootstrap settings (fixed seed: the same interval on every machine). */
export const INTERVALS = { level: 0.95, resamples: 2000, seed: 33 } as const;

/**
 * Clopper-Pearson interval of k successes in n trials, in percent.
 * @returns null for n = 0
 * @throws Error when k is not an integer in 0..n
 */
export function clopperPearson(
  k: number,
  n: number,
  level: number = INTERVALS.level,
): [number, number] | null {
  if (n === 0) return null;
  if (!Number.isInteger(k) || k < 0 || k > n) throw new Error(`clopperPearson: k=${k} of n=${n}`);
  const a = (1 - level) / 2;
  const lo = k === 0 ? 0 : jStat.beta.inv(a, k, n - k + 1);
  const hi = k === n ? 1 : jStat.beta.inv(1 - a, k + 1, n - k);
  return [100 * lo, 100 * hi];
}

/**
 * McNemar's exact test: two-sided p of b against c discordant pairs (Binomial(b + c, 1/2));
 * 1 when there is no discordant pair.
 */
export function mcnemarExact(b: number, c: number): number {
  const m = b + c;
  if (m === 0) return 1;
  return Math.min(1, 2 * jStat.binomial.cdf(Math.min(b, c), m, 0.5));
}

/** Percentile of sorted values (nearest rank). */
const percentile = (sorted: Float64Array, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

/**
 * Stratified percentile bootstrap of a mean of per-stratum means, in percent: `strata[s][i]` is
 * row i of stratum s (a number, 1 = corrected, or a difference of two models' 0/1 on one
 * instance), each stratum resampled with replacement at its own size, the statistic the
 * unweighted mean of the strata's means (the paper's macro).
 * @returns null when a stratum is empty or there is none
 */
export function stratifiedBootstrap(
  strata: readonly (readonly number[])[],
  opts: { level: number; resamples: number; seed: number } = INTERVALS,
): [number, number] | null {
  if (strata.length === 0 || strata.some((s) => s.length === 0)) return null;
  const rng = xoroshiro128plus(opts.seed);
  const stats = new Float64Array(opts.resamples);
  for (let b = 0; b < opts.resamples; b++) {
    let sum = 0;
    for (const s of strata) {
      let t = 0;
      // rng.next() is uniform on 32 bits: scaled to an index (bias under 2^-32 n, none visible)
      for (let i = 0; i < s.length; i++)
        t += s[Math.floor(((rng.next() >>> 0) / 2 ** 32) * s.length)]!;
      sum += t / s.length;
    }
    stats[b] = (100 * sum) / strata.length;
  }
  stats.sort();
  const a = (1 - opts.level) / 2;
  return [percentile(stats, a), percentile(stats, 1 - a)];
}
