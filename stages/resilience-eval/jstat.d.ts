/**
 * The part of jStat (npm `jstat`, MIT; it ships no types) that the repository uses: the beta
 * quantile and the binomial CDF (resilience-eval/intervals.ts, swe5g/plan/estimate.ts), the
 * Student t quantile (swe5g/plan/estimate.ts).
 */
declare module 'jstat' {
  const jstat: {
    jStat: JStat;
  };
  export default jstat;
  interface JStat {
    beta: {
      /** Quantile of Beta(a, b) at probability p. */
      inv(p: number, a: number, b: number): number;
    };
    studentt: {
      /** Quantile of Student's t with `dof` degrees of freedom at probability p. */
      inv(p: number, dof: number): number;
    };
    binomial: {
      /** P(X <= k) for X ~ Binomial(n, p). */
      cdf(k: number, n: number, p: number): number;
    };
  }
}
