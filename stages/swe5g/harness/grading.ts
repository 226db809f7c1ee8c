/**
 * Grading, pure over parsed or stored logs: whether a run resolves an instance (SWE-bench's
 * `get_eval_report` rule: every FAIL_TO_PASS and every PASS_TO_PASS test passes; paper, "Task
 * formulation"). {@link gradeStoredLogs} rebuilds a verdict from the stored log texts alone, so a
 * report is rebuilt without any container, as SWE-bench rebuilds its reports from `test_output.txt`.
 */
import type { ParsedRun, TestStatus } from './parsers.js';
import { parseRuns } from './parse.js';
import type { TestSpec } from './spec.js';
import { readStepLog } from './step-log.js';

/** Per-test statuses of the hidden tests and the verdict. */
export interface TestVerdict {
  resolved: boolean;
  FAIL_TO_PASS: Record<string, TestStatus | 'absent'>;
  PASS_TO_PASS: Record<string, TestStatus | 'absent'>;
  /** The tests that did not pass (FAIL_TO_PASS first), in the instance's order. */
  not_passing: string[];
}

/**
 * Grades one parsed run. A test that did not run is `absent` and not passing; so is a test the log
 * reported more often than it ran (`conflicts`). A run that timed out or disagreed with its exit
 * code (`ambiguous`) resolves nothing.
 */
export function gradeTests(
  parsed: ParsedRun,
  tests: { FAIL_TO_PASS: readonly string[]; PASS_TO_PASS: readonly string[] },
  run: { timedOut?: boolean; ambiguous?: string } = {},
): TestVerdict {
  const twice = new Set(parsed.conflicts ?? []);
  const status = (id: string): TestStatus | 'absent' => parsed.tests[id] ?? 'absent';
  const f2p = Object.fromEntries(tests.FAIL_TO_PASS.map((t) => [t, status(t)]));
  const p2p = Object.fromEntries(tests.PASS_TO_PASS.map((t) => [t, status(t)]));
  const not_passing = [...tests.FAIL_TO_PASS, ...tests.PASS_TO_PASS].filter(
    (id) => status(id) !== 'pass' || twice.has(id),
  );
  return {
    resolved: not_passing.length === 0 && !run.timedOut && !parsed.timed_out && !run.ambiguous,
    FAIL_TO_PASS: f2p,
    PASS_TO_PASS: p2p,
    not_passing,
  };
}

/**
 * Grades a step again from its stored log texts (one per container, as {@link runStep} stored
 * them), with no container: read back, parsed with the spec's parser, graded.
 * @throws TelebenchError `bad_step_log` when a text is not a step log; SkipItem `ambiguous_log`
 *   from a parser that cannot read its file
 */
export function gradeStoredLogs(
  spec: Pick<TestSpec, 'parser' | 'collect' | 'excluded' | 'fresh'>,
  logTexts: readonly string[],
  tests: { FAIL_TO_PASS: readonly string[]; PASS_TO_PASS: readonly string[] },
  expectRuns = 1,
): TestVerdict & { parsed: ParsedRun; ambiguous: string; timed_out: boolean } {
  const stored = logTexts.map(readStepLog);
  const { parsed, ambiguous, each } = parseRuns(spec, stored, expectRuns);
  // killed at the limit: a container, or a run of a multi-process step at its share
  const timedOut = stored.some((r) => r.timedOut) || each.some((e) => e.killed);
  return {
    ...gradeTests(parsed, tests, { timedOut, ambiguous }),
    parsed,
    ambiguous,
    timed_out: timedOut || parsed.timed_out,
  };
}
