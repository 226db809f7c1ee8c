/**
 * The decisions of the three validation steps, pure over the parsed steps (the harness's
 * `ParsedRun`s), on SWE-bench's convention: the parent ("before") runs hold the test patches, so
 * every test is judged on the test patch's version of it. Which tests pass, fail or flake before;
 * whether the given fail-to-pass tests fail there; FAIL_TO_PASS (failing before, passing after)
 * and PASS_TO_PASS (passing both). validate.ts runs the steps and
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
  /** Packages failing without a failing test in some fix run. */
  packageFailures: string[];
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
    packageFailures: [...new Set(runs.flatMap((r) => r.package_failures))].sort(),
  };
}

/**
 * SWE-bench's split of an instance's tests over its "before" runs (the parent with the test
 * patches: step 1 and its re-runs) and its "after" runs (the fix and the test patches: step 3),
 * every test judged on the test patch's version of it (a test the patch rewrites is judged on its
 * new version, before and after):
 * - FAIL_TO_PASS: failing before (in every before run, or missing from all of them: SWE-bench's
 *   `test_failed` counts a missing test as failing, swebench/harness/grading.py) and passing in
 *   some fix run (a mixed one stays, so the flaky check names it); the `given` tests (testgen's)
 *   first in their order, then the others sorted. A test flaky before is never in it, nor one
 *   missing before whose fix runs differ (`missingFlaky`: dropped as flaky).
 * - PASS_TO_PASS candidates: passing in every before run (not flaky), not in FAIL_TO_PASS.
 * - failing both: failed in every before run and never passed after (nor given): existing tests
 *   that fail at the parent (`p2p_fails_at_parent` or dropped, per the policy).
 * - package failures both: packages failing without a failing test before and after.
 */
export function splitBeforeAfter(
  parentRuns: readonly ParsedRun[],
  afterFix: ReturnType<typeof fixRuns>,
  given: readonly string[],
): {
  parent: ParentVerdict;
  FAIL_TO_PASS: string[];
  p2pCandidates: string[];
  /** Missing before, mixed after the fix: dropped and listed as flaky. */
  missingFlaky: string[];
  failingBoth: string[];
  packageFailuresBoth: string[];
} {
  const parent = parentVerdict(parentRuns);
  const seen = new Set(parentRuns.flatMap((r) => Object.keys(r.tests)));
  const flaky = new Set(parent.flaky);
  const failing = new Set(parent.failing);
  const failedBefore = (id: string): boolean =>
    !flaky.has(id) && (failing.has(id) || !seen.has(id));
  const givenSet = new Set(given);
  const passesAfter = (id: string): boolean => afterFix.statusesOf(id).includes('pass');
  const steady = (id: string): boolean => afterFix.consistent(id) && afterFix.allPass(id);
  const candidates = afterFix.ever.filter(
    (id) => !givenSet.has(id) && failedBefore(id) && passesAfter(id),
  );
  // a test that failed before and is mixed after stays (the flaky check names it); one that was
  // only missing before (its run cut short by another test's panic) and is mixed after is
  // dropped as flaky: nothing says the fix changed it
  const found = candidates.filter((id) => failing.has(id) || steady(id)).sort();
  const missingFlaky = candidates.filter((id) => !failing.has(id) && !steady(id)).sort();
  const FAIL_TO_PASS = [...given, ...found];
  const f2p = new Set(FAIL_TO_PASS);
  const afterPackages = new Set(afterFix.packageFailures);
  return {
    parent,
    FAIL_TO_PASS,
    p2pCandidates: parent.passing.filter((id) => !f2p.has(id)),
    missingFlaky,
    failingBoth: parent.failing.filter((id) => !f2p.has(id)),
    packageFailuresBoth: [
      ...new Set(parentRuns.flatMap((r) => r.package_failures).filter((p) => afterPackages.has(p))),
    ].sort(),
  };
}

/**
 * Whether step 1 should run again, once the fix runs are in: some test failed in every before
 * run so far and does not pass consistently after the fix (nor is it a given FAIL_TO_PASS test,
 * which must fail before). Such a test would reject the instance (`p2p_fails_at_parent`) or, mixed
 * after the fix, be a flaky FAIL_TO_PASS test; a flake passes in a re-run and is dropped instead.
 * A test failing before and passing in every fix run is a FAIL_TO_PASS test: no re-run for it.
 */
export function parentNeedsRerunAfterFix(
  runs: readonly ParsedRun[],
  afterFix: ReturnType<typeof fixRuns>,
  given: readonly string[],
): boolean {
  return failedEveryRun(runs).some(
    (id) =>
      runs.some((r) => r.tests[id] === 'fail') &&
      !given.includes(id) &&
      !(afterFix.consistent(id) && afterFix.allPass(id)),
  );
}

/**
 * The id a run reports for `id`: `id` itself, else the one reported id with the same test name
 * whose file is `id`'s file with leading folders left off, or the other way round (pytest roots
 * its ids at its rootdir, which may be a folder of the repository: Magma's
 * `python/magma/policydb/tests/...` for `lte/gateway/python/magma/policydb/tests/...`).
 * @returns the reported id, or null when none (or more than one) fits
 */
export function reportedId(id: string, reported: readonly string[]): string | null {
  if (reported.includes(id)) return id;
  const [file, ...rest] = id.split('::');
  const name = rest.join('::');
  const fits = reported.filter((r) => {
    const [f, ...n] = r.split('::');
    if (n.join('::') !== name || !f || !file) return false;
    return file.endsWith(`/${f}`) || f.endsWith(`/${file}`);
  });
  return fits.length === 1 ? fits[0]! : null;
}
