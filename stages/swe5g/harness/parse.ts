/**
 * The one parser table of the harness, keyed by the spec's parser (itself chosen by recipe:
 * spec.ts `parserOf`), and the parse of a step's stored runs: each fresh run parsed on its own
 * and checked against its own exit code, then the runs combined (a test that passes in one fresh
 * run and fails in another is flaky).
 */
import { SkipItem } from '../../../pipeline/errors.js';
import {
  checkAgreement,
  parseGoTestJson,
  parseMakeResults,
  parseMesonTestLog,
  parsePytestJUnit,
  type ParsedRun,
  type TestStatus,
} from './parsers.js';
import { RUN_MARK, RUN_STOP_MARK, type ParserName, type TestSpec } from './spec.js';
import type { StoredRun } from './step-log.js';

/** What a parser reads of one run: the exit code, stdout and the collected files, in spec order. */
export interface ParserInput {
  exitCode: number | null;
  stdout: string;
  /** Contents of the spec's `collect` files, in order (undefined: not there). */
  files: (string | undefined)[];
}

const noResults = (exitCode: number | null, what: string): ParsedRun => ({
  tests: {},
  build_failures: exitCode !== 0 ? [what] : [],
  package_failures: [],
  timed_out: false,
});

/**
 * The parser table: one function per log format.
 * - `go-test-json`: `go test -json` on stdout ({@link parseGoTestJson});
 * - `junit-xml`: pytest's JUnit XML file (absent: `pytest` as a build failure on a non-zero
 *   exit; exit 5 with no testcase: no tests collected, not a failure);
 * - `meson-testlog`: meson's `testlog.json` with `meson introspect --tests` (absent: `meson`
 *   build failure);
 * - `make-results`: the make step's results file (absent: `build`; exit 97 is the step's own
 *   "build failed").
 * @throws SkipItem `ambiguous_log` from the parsers (malformed JUnit XML, meson introspect)
 */
export const PARSERS: Record<ParserName, (run: ParserInput) => ParsedRun> = {
  'go-test-json': (r) => parseGoTestJson(r.stdout),
  'junit-xml': (r) => {
    const file = r.files[0];
    if (file === undefined) return noResults(r.exitCode, 'pytest');
    const parsed = parsePytestJUnit(file);
    // pytest exit 5: no tests were collected (e.g. the touched folder has none at the parent)
    if (r.exitCode === 5 && Object.keys(parsed.tests).length === 0) parsed.no_tests = true;
    return parsed;
  },
  'meson-testlog': (r) =>
    r.files[0] === undefined
      ? noResults(r.exitCode, 'meson')
      : parseMesonTestLog(r.files[0], r.files[1]),
  'make-results': (r) => {
    if (r.files[0] === undefined) return noResults(r.exitCode, 'build');
    const parsed = parseMakeResults(r.files[0]);
    if (r.exitCode === 97 && parsed.build_failures.length === 0) parsed.build_failures = ['build'];
    return parsed;
  },
};

/** Drops the results of excluded suites (`<suite>::...`): listed in the spec, never failing. */
function withoutExcluded(parsed: ParsedRun, spec: Pick<TestSpec, 'excluded'>): ParsedRun {
  if (spec.excluded.length === 0) return parsed;
  const out = new Set(spec.excluded.map((e) => e.suite));
  const keep = (id: string): boolean => !out.has(id.split('::')[0]!);
  return {
    ...parsed,
    tests: Object.fromEntries(Object.entries(parsed.tests).filter(([id]) => keep(id))),
    ...(parsed.conflicts ? { conflicts: parsed.conflicts.filter(keep) } : {}),
    ...(parsed.flaky ? { flaky: parsed.flaky.filter(keep) } : {}),
  };
}

/**
 * Combines the parses of fresh runs of one step: a test's status is `fail` if any run failed it,
 * else `pass` if any passed, else `skip`; a test that passed in one run and failed in another is
 * `flaky`; build and package failures, conflicts and timeouts add up. One run is returned as is.
 */
export function combineRuns(runs: readonly ParsedRun[]): ParsedRun {
  if (runs.length === 1) return runs[0]!;
  const all = new Map<string, TestStatus[]>();
  for (const r of runs)
    for (const [id, st] of Object.entries(r.tests)) all.set(id, [...(all.get(id) ?? []), st]);
  const tests: Record<string, TestStatus> = {};
  const flaky = new Set(runs.flatMap((r) => r.flaky ?? []));
  for (const [id, list] of all) {
    const fail = list.includes('fail');
    const pass = list.includes('pass');
    tests[id] = fail ? 'fail' : pass ? 'pass' : 'skip';
    if (fail && pass) flaky.add(id);
  }
  const union = (f: (r: ParsedRun) => readonly string[] | undefined): string[] =>
    [...new Set(runs.flatMap((r) => f(r) ?? []))].sort();
  const packages = union((r) => r.packages);
  return {
    tests,
    build_failures: union((r) => r.build_failures),
    package_failures: union((r) => r.package_failures),
    timed_out: runs.some((r) => r.timed_out),
    conflicts: union((r) => r.conflicts),
    flaky: [...flaky].sort(),
    ...(packages.length ? { packages } : {}),
    ...(runs.every((r) => r.no_tests) ? { no_tests: true } : {}),
  };
}

/** One fresh run's parse and whether it agreed with its exit code ('' when it did). */
export interface RunParse {
  parsed: ParsedRun;
  /** `ambiguous_log` message ('' when the run agrees with its exit code). */
  ambiguous: string;
  /**
   * The run outlived its share of a multi-process step and was killed (`telebench-run <i>
   * timed-out limit`, spec.ts `stepCommand`): a timeout, like a container killed at its limit.
   */
  killed?: true;
}

/** One run of a step's stdout ({@link splitRuns}). */
export interface RunPart {
  stdout: string;
  exitCode: number | null;
  /** The step stopped after this run, which timed out ({@link RUN_STOP_MARK}: how). */
  stopped?: 'limit' | 'tool';
}

/**
 * Splits the stdout of a multi-process Go step ({@link stepCommand}) into its runs at the
 * `telebench-run <i> exit <c>` lines; a `telebench-run <i> timed-out <how>` line marks the run
 * before it as the one that stopped the step.
 * @returns one entry per run, with that run's exit code; the whole stdout with the step's exit
 *   code when the log has no mark (one run)
 */
export function splitRuns(stdout: string, exitCode: number | null): RunPart[] {
  const out: RunPart[] = [];
  let cur: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = RUN_MARK.exec(line);
    const stop = out.length > 0 && cur.length === 0 ? RUN_STOP_MARK.exec(line) : null;
    if (m) {
      out.push({ stdout: cur.join('\n'), exitCode: Number(m[2]) });
      cur = [];
    } else if (stop) out[out.length - 1]!.stopped = stop[2] as 'limit' | 'tool';
    else cur.push(line);
  }
  if (out.length === 0) return [{ stdout, exitCode }];
  // output after the last mark: the step was cut short in a run that printed no mark
  if (cur.join('').trim() !== '') out.push({ stdout: cur.join('\n'), exitCode });
  return out;
}

/** `checkAgreement`'s message, or '' when the parsed run agrees with the exit code. */
export function disagreement(parsed: ParsedRun, code: number | null, step: string): string {
  try {
    checkAgreement(parsed, code, step);
    return '';
  } catch (err) {
    if (err instanceof SkipItem) return err.message;
    throw err;
  }
}

/**
 * Parses the stored runs of one step: every fresh run (a container, or one process of a
 * multi-process Go step) through the spec's parser, each checked against its own exit code
 * (`ambiguous_log`; a killed run is not checked), excluded suites dropped, then combined.
 * @param runs the step's stored runs (one per container)
 * @param expectRuns fresh runs the step was asked for (a multi-process step with fewer marks than
 *   that was cut short: ambiguous unless it timed out)
 * @returns the combined parse, the first disagreement ('' when none) and the per-run parses
 * @throws SkipItem `ambiguous_log` from a parser (malformed JUnit XML, meson introspect)
 */
export function parseRuns(
  spec: Pick<TestSpec, 'parser' | 'collect' | 'excluded' | 'fresh'>,
  runs: readonly StoredRun[],
  expectRuns = runs.length,
): { parsed: ParsedRun; ambiguous: string; each: RunParse[] } {
  const each: RunParse[] = [];
  const problems: string[] = [];
  for (const run of runs) {
    const parts =
      spec.parser === 'go-test-json' && spec.fresh === 'process'
        ? splitRuns(run.stdout, run.exitCode)
        : [{ stdout: run.stdout, exitCode: run.exitCode }];
    // a step stopped by a run that timed out has fewer runs: that is the timeout, not a gap
    const stopped = parts.some((p) => p.stopped);
    if (
      spec.fresh === 'process' &&
      expectRuns > 1 &&
      parts.length !== expectRuns &&
      !run.timedOut &&
      !stopped
    )
      problems.push(`step ${run.step}: ${parts.length} of ${expectRuns} fresh runs in the log`);
    parts.forEach((p, i) => {
      const killed = run.timedOut || p.stopped === 'limit';
      const parsed = withoutExcluded(
        PARSERS[spec.parser]({
          exitCode: killed ? null : p.exitCode,
          stdout: p.stdout,
          files: spec.collect.map((c) => run.collected[c]),
        }),
        spec,
      );
      const label = parts.length > 1 ? `${run.step} (run ${i + 1})` : run.step;
      const why = killed ? '' : disagreement(parsed, p.exitCode, label);
      if (why) problems.push(why);
      each.push({ parsed, ambiguous: why, ...(p.stopped === 'limit' ? { killed: true } : {}) });
    });
  }
  return {
    parsed: combineRuns(each.map((e) => e.parsed)),
    ambiguous: problems.join('; '),
    each,
  };
}
