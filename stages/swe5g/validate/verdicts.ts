/**
 * The decisions of the three validation steps, pure over the parsed steps (the harness's
 * `ParsedRun`s): which existing tests pass, fail or flake at the parent; whether the fail-to-pass
 * tests fail there; FAIL_TO_PASS and PASS_TO_PASS after the fix. validate.ts runs the steps and
 * turns these into a `Validated` record or a skip.
 */
import type { ParsedRun, TestStatus } from '../harness/parsers.js';
import type { RecipeName } from '../../../pipeline/providers/docker/recipes.js';

/** Environmental causes of a failure at the parent, by output pattern (reported, not guessed at). */
const ENV_REASONS: [RegExp, string][] = [
  [
    /connection refused|dial tcp|no such host|network is unreachable/i,
    'needs a network service (database or peer)',
  ],
  [/mongo|mysql|postgres|redis/i, 'needs a database'],
  [
    /permission denied|operation not permitted|must be (run as )?root/i,
    'needs root or a capability',
  ],
  [/no such device|module .* not found|sctp|netlink|tun\b/i, 'needs a kernel module or device'],
];

/** Why a test probably failed for an environmental reason, from its output; '' when no pattern matches. */
export function environmentalReason(output: string): string {
  for (const [re, why] of ENV_REASONS) if (re.test(output)) return why;
  return '';
}

/**
 * The `Output` of one test's events in a `go test -json` log, concatenated in order (the
 * environmental-reason check here, the solver's `full` feedback in evaluate/prompt.ts).
 * `id` is `<import path>::<TestName>`; non-JSON lines are ignored; '' when the test printed nothing.
 * Never throws.
 */
export function goTestOutput(stdout: string, id: string): string {
  const [pkg, name] = id.split('::');
  let out = '';
  for (const line of stdout.split('\n')) {
    if (!line.includes(`"Test":"${name}"`)) continue;
    try {
      const ev = JSON.parse(line) as { Package?: string; Test?: string; Output?: string };
      if (ev.Package === pkg && ev.Test === name && ev.Output) out += ev.Output;
    } catch {
      continue; // not an event line
    }
  }
  return out;
}

/** Step 1 over its runs (the first and the `parent_reruns` re-runs). */
export interface ParentVerdict {
  /** Passed in one fresh run and failed in another (dropped, listed). */
  flaky: string[];
  /** Failed in every run (never passed). */
  failing: string[];
  /** Passed and are not flaky: the PASS_TO_PASS candidates. */
  passing: string[];
}

/** Tests of the first parent run that never passed and are not flaky (a re-run may still save them). */
export function failedEveryRun(runs: readonly ParsedRun[]): string[] {
  const first = runs[0]!;
  const flaky = (id: string): boolean => runs.some((r) => r.flaky?.includes(id));
  return Object.keys(first.tests).filter(
    (id) => !flaky(id) && runs.every((r) => (r.tests[id] ?? 'absent') !== 'pass'),
  );
}

/** Whether step 1 should run again: some test failed in every run so far (a flake may pass). */
export function parentNeedsRerun(runs: readonly ParsedRun[]): boolean {
  return failedEveryRun(runs).some((id) => runs.some((r) => r.tests[id] === 'fail'));
}

/** The verdict of step 1 over its runs (fresh runs within a run are in each run's `flaky`). */
export function parentVerdict(runs: readonly ParsedRun[]): ParentVerdict {
  const first = runs[0]!;
  const flaky = Object.keys(first.tests)
    .filter(
      (id) =>
        runs.some((r) => r.flaky?.includes(id)) ||
        (runs.some((r) => r.tests[id] === 'fail') && runs.some((r) => r.tests[id] === 'pass')),
    )
    .sort();
  const failing = failedEveryRun(runs).filter((id) => first.tests[id] === 'fail');
  const passing = Object.entries(first.tests)
    .filter(([id, st]) => st === 'pass' && !flaky.includes(id))
    .map(([id]) => id);
  return { flaky, failing, passing };
}

/**
 * Step 2: the given FAIL_TO_PASS tests that do not fail at the parent with the test patches: a
 * pass or skip, or absent from a package (Go) / suite that had no failure (meson: an absent test
 * may be one the build did not produce, so absent is never "not failing" there).
 */
export function notFailingAtParent(
  s2: ParsedRun,
  f2p: readonly string[],
  recipe: RecipeName,
): string[] {
  const broken = new Set([
    ...s2.build_failures,
    ...s2.package_failures,
    ...Object.entries(s2.tests)
      .filter(([, st]) => st === 'fail')
      .map(([id]) => id.split('::')[0]!),
  ]);
  return f2p.filter((id) => {
    const st = s2.tests[id] ?? 'absent';
    return (
      st === 'pass' ||
      st === 'skip' ||
      (st === 'absent' && !broken.has(id.split('::')[0]!) && recipe !== 'c-meson')
    );
  });
}

/** Step 3 over the fix runs: statuses, consistency (one status, never flaky), all-pass. */
export function fixRuns(runs: readonly ParsedRun[]): {
  statusesOf: (id: string) => (TestStatus | 'absent')[];
  consistent: (id: string) => boolean;
  allPass: (id: string) => boolean;
  ever: string[];
} {
  const statusesOf = (id: string): (TestStatus | 'absent')[] =>
    runs.map((r) => r.tests[id] ?? 'absent');
  return {
    statusesOf,
    // one status in every fix run, and never both passing and failing over one run's fresh runs
    consistent: (id) =>
      new Set(statusesOf(id)).size === 1 && !runs.some((r) => r.flaky?.includes(id)),
    allPass: (id) => statusesOf(id).every((x) => x === 'pass'),
    ever: [...new Set(runs.flatMap((r) => Object.keys(r.tests)))],
  };
}

/**
 * Shipped FAIL_TO_PASS (strategy `shipped`, none given): tests failing in step 2, or absent there
 * without having passed at the parent (a panic cut the run short after it, or its package did not
 * build with the new tests), that pass in some fix run (a mixed one is kept so the flaky check
 * names it). Sorted.
 */
export function shippedFailToPass(
  s2: ParsedRun,
  afterFix: ReturnType<typeof fixRuns>,
  passingAtParent: readonly string[],
): string[] {
  const at2 = (id: string): TestStatus | 'absent' => s2.tests[id] ?? 'absent';
  return afterFix.ever
    .filter((id) => at2(id) === 'fail' || (at2(id) === 'absent' && !passingAtParent.includes(id)))
    .filter((id) => afterFix.statusesOf(id).includes('pass'))
    .sort();
}
