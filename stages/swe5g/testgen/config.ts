/**
 * `swe5g.testgen`: settings of the fail-to-pass test generation stage (SWE-Bench 5G paper,
 * "Test strategies"). Composed into the swe5g section by `stages/swe5g/config.ts`.
 */
import { z } from 'zod';
import { llmConfigSchema } from '../../../pipeline/providers/llm/config.js';

export const testgenSchema = z.strictObject({
  /** Try Strategy A (direct call: Go, Python, C in a forked child) before Strategy B. */
  strategy_a: z.boolean().default(true),
  /**
   * Which generated tests testgen runs itself on the host (fail at base_commit, pass at
   * merge_commit) before handing them to validation: `a` only Strategy A (needed to decide the
   * fallback), `all` also Strategy B (an instance whose B test does not flip is skipped).
   */
  verify: z.enum(['a', 'all']).default('a'),
  /** A PR that ships its own test files uses them (strategy `shipped`) instead of generating. */
  prefer_shipped: z.boolean().default(true),
  /**
   * Read a host test run back from the state when the same test patch ran at the same commit
   * with the same toolchain before (run-cache.ts): a new testgen version then repeats no C build
   * or Go/Python run whose inputs it did not change. Killed, timed-out and dependency-failed
   * runs are never kept. False: every check runs anew.
   */
  reuse_host_runs: z.boolean().default(true),
  /** Wall-clock limit of one host test command (seconds), including module downloads. */
  test_timeout_s: z.number().int().min(10).default(900),
  /**
   * Optional: when the rule-based Strategy A gives no flipping test (Go), ask this model to write
   * the direct-call test, with the compile-and-run result fed back, at most `tries` times. A test
   * kept this way is recorded as Strategy A "LLM-written". Absent: no model is called.
   */
  llm: llmConfigSchema
    .extend({
      /** Model name as the server knows it. */
      model: z.string().min(1),
      /** Attempts (K), each with the previous attempt's outcome in the prompt. */
      tries: z.number().int().min(1).max(10).default(3),
      /** Output budget per answer (tokens). */
      max_tokens: z.number().int().min(256).default(4096),
    })
    .optional(),
  /** Instances processed at once. */
  concurrency: z.number().int().min(1).max(16).default(2),
});
export type TestgenSettings = z.output<typeof testgenSchema>;
export const testgenDefaults: TestgenSettings = testgenSchema.parse({});
