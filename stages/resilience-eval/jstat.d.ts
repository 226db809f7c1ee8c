/**
 * The part of jStat (npm `jstat`, MIT; it ships no types) that intervals.ts uses: the beta
 * quantile and the binomial CDF.
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
    binomial: {
      /** P(X <= k) for X ~ Binomial(n, p). */
      cdf(k: number, n: number, p: number): number;
    };
  }
}
