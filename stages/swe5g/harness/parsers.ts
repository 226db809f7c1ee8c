/**
 * Log parsers of the harness, one per log format (`parse.ts` holds the table that picks one per
 * recipe): turn a test run's output into per-test statuses, then check that the statuses agree
 * with the process exit code (SWE-bench rejects runs whose exit code disagrees with the parsed
 * log; so do we, as `ambiguous_log`).
 *
 * Forgery resistance: only structured channels are trusted. Go: the `Action` field of
 * `go test -json` events (the code under test can only produce `output` events; a printed
 * `--- PASS` line stays inside an `Output` string). Python: pytest's JUnit XML file, written by
 * pytest itself. C: meson's `meson-logs/testlog.json`, written by meson itself.
 */
import type * as Fxp from 'fast-xml-parser';
import { SkipItem } from '../../../pipeline/errors.js';
import { lazy } from '../../../pipeline/lazy.js';

/** Status of one test id (`<package-or-file>::<name>`). */
export type TestStatus = 'pass' | 'fail' | 'skip';

/** Per-test statuses of one step plus the failures that are not a single test's. */
export interface ParsedRun {
  /** test id -> status. */
  tests: Record<string, TestStatus>;
  /** Packages/suites that failed to build (Go import paths, meson "build"). */
  build_failures: string[];
  /** Packages/suites that failed without a failing test (panic in init, TestMain, timeout). */
  package_failures: string[];
  /**
   * True when a timeout ended the run, so the tests after it have no result (Go's `panic: test
   * timed out` kills the test binary). Not set for meson's per-test TIMEOUT: meson kills that one
   * test and goes on, so the test is `fail` and the others keep their results (as SWE-bench's
   * parsers count any status but a pass as failing).
   */
  timed_out: boolean;
  /** Tests with contradicting terminal results in one log (forgery or a corrupt log). */
  conflicts?: string[];
  /** Go: packages the log reports on (a package with no test files still appears). */
  packages?: string[];
  /** The framework said it found no tests (pytest exit 5): not a failure. */
  no_tests?: boolean;
  /**
   * Tests run several times in this log (`repeats` > 1) that both passed and failed: flaky. Their
   * status in `tests` is `fail`.
   */
  flaky?: string[];
}

/**
 * Terminal results of one log, per test id, in log order (a test id may be run several times:
 * `go test -count=N`, `meson test --repeat N`, a make target run N times).
 */
type Results = Map<string, TestStatus[]>;

/** Records one terminal result of `id` (every log format goes through here). */
function recordResult(results: Results, id: string, status: TestStatus): void {
  const list = results.get(id);
  if (list) list.push(status);
  else results.set(id, [status]);
}

/**
 * Settles the results of one log run with `repeats` repetitions per test:
 * - more than `repeats` results for one id is a conflict, never a silent merge: each framework
 *   reports each test once per repetition, so an extra result means a forged line or an id rule
 *   that joined two tests (checkAgreement turns conflicts into `ambiguous_log`); so are more
 *   results than `starts` counts starts of the test (Go's `run` events), which catches a result
 *   injected into a run cut short by a panic (one real run, one forged pass, under `repeats`);
 * - a test with both `pass` and `fail` results is flaky (`flaky`), and its status is `fail`
 *   (the framework's exit code says failure too);
 * - otherwise the status is `fail` if any result failed, else `pass` if any passed, else `skip`
 *   (a repeat never turns a failure into a pass).
 */
function settle(
  results: Results,
  repeats: number,
  starts?: Map<string, number>,
): { tests: Record<string, TestStatus>; conflicts: string[]; flaky: string[] } {
  const tests: Record<string, TestStatus> = {};
  const conflicts: string[] = [];
  const flaky: string[] = [];
  for (const [id, list] of results) {
    // `starts` (Go: `run` events): a terminal result no run started was injected into the log
    const conflict =
      list.length > Math.max(1, repeats) || (starts && list.length > (starts.get(id) ?? 0));
    if (conflict) conflicts.push(id);
    const fail = list.includes('fail');
    const pass = list.includes('pass');
    tests[id] = fail ? 'fail' : pass ? 'pass' : 'skip';
    if (fail && pass && !conflict) flaky.push(id);
  }
  return { tests, conflicts: conflicts.sort(), flaky: flaky.sort() };
}

/**
 * Parses `go test -json` output (one JSON event per line; non-JSON lines, e.g. from an old `go`
 * printing build errors on stderr, are ignored). Subtests keep their `/`-path: `pkg::TestX/sub`.
 * A test whose last action is `run` (never finished: panic or timeout) counts as `fail`.
 * @param repeats the `-count` the tests ran with: up to that many terminal results per test id
 *   are expected (more is a conflict); a test that both passed and failed is listed in `flaky`
 */
export function parseGoTestJson(text: string, repeats = 1): ParsedRun {
  const results: Results = new Map();
  const starts = new Map<string, number>();
  const running = new Set<string>();
  const build = new Set<string>();
  const pkgFail = new Set<string>();
  const packages = new Set<string>();
  let timed_out = false;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    let ev: { Action?: unknown; Package?: unknown; Test?: unknown; Output?: unknown };
    try {
      ev = JSON.parse(t) as typeof ev;
    } catch {
      continue; // not an event (the go command's own non-JSON output): ignored on purpose
    }
    const action = typeof ev.Action === 'string' ? ev.Action : '';
    const pkg = typeof ev.Package === 'string' ? ev.Package : '';
    const name = typeof ev.Test === 'string' ? ev.Test : '';
    if (action === 'build-fail') {
      build.add(
        typeof (ev as { ImportPath?: unknown }).ImportPath === 'string'
          ? String((ev as { ImportPath: string }).ImportPath).split(' ')[0]!
          : pkg,
      );
      continue;
    }
    if (action === 'output' && typeof ev.Output === 'string') {
      // the testing package's own timeout panic (attributed to the running test, if any)
      if (ev.Output.startsWith('panic: test timed out after')) timed_out = true;
      if (!name) continue;
    }
    if (!pkg) continue;
    packages.add(pkg);
    const id = `${pkg}::${name}`;
    if (name) {
      if (action === 'run') {
        running.add(id);
        starts.set(id, (starts.get(id) ?? 0) + 1);
      } else if (action === 'pass' || action === 'fail' || action === 'skip') {
        running.delete(id);
        // go emits one terminal action per test and repetition (-count=N); one more can only
        // come from output injected around the go command (e.g. through /proc/<ppid>/fd/1)
        recordResult(results, id, action);
      }
    } else if (action === 'fail') {
      const failedBuild = (ev as { FailedBuild?: unknown }).FailedBuild;
      if (typeof failedBuild === 'string' && failedBuild) build.add(pkg);
      else pkgFail.add(pkg);
    }
  }
  for (const id of running) recordResult(results, id, 'fail');
  const { tests, conflicts, flaky } = settle(results, repeats, starts);
  // A package that failed but has a failing test is explained by that test.
  const failingPkgs = new Set(
    Object.entries(tests)
      .filter(([, s]) => s === 'fail')
      .map(([id]) => id.split('::')[0]!),
  );
  return {
    tests,
    build_failures: [...build].sort(),
    package_failures: [...pkgFail].filter((p) => !failingPkgs.has(p) && !build.has(p)).sort(),
    timed_out,
    conflicts,
    flaky,
    packages: [...packages].sort(),
  };
}

let xmlParser: Fxp.XMLParser | undefined;
/** The JUnit XML parser, created on first use (fast-xml-parser is loaded lazily: pipeline/lazy.ts). */
const xml = (): Fxp.XMLParser =>
  (xmlParser ??= new (lazy<typeof Fxp>('fast-xml-parser')().XMLParser)({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (name) => name === 'testsuite' || name === 'testcase',
  }));

interface JUnitCase {
  classname?: string;
  file?: string;
  name?: string;
  failure?: unknown;
  error?: unknown;
  skipped?: unknown;
}

function isTeardownError(error: unknown): boolean {
  const first: unknown = Array.isArray(error) ? error[0] : error;
  const message = (first as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && message.startsWith('failed on teardown');
}

/**
 * The pytest node id of one JUnit `testcase`. pytest writes `classname` as the node id's parts
 * before the test name joined by `.`, with the file path's `/` turned into `.` and `.py` dropped
 * (`mangle_test_address` in pytest's junitxml plugin), and, in xunit1, the file path in `file`.
 * - With `file`: the classes are exactly what follows the file's dotted module in `classname`, so
 *   nested classes keep every level (`tests/test_dup.py::TestAmf::TestCase::test_decode`) and a
 *   dotted folder name (`tests/v1.2/`) is never taken for a class.
 * - Without `file` (xunit2): the module ends before the first part that starts with an upper-case
 *   letter (pytest's default `python_classes = Test*`); the later parts are classes.
 */
export function pytestNodeId(c: { classname?: unknown; file?: unknown; name?: unknown }): string {
  const name = String(c.name ?? '');
  const classname = String(c.classname ?? '');
  if (c.file !== undefined && String(c.file) !== '') {
    const file = String(c.file);
    const module = file.replace(/\.py$/, '').replaceAll('/', '.');
    let classes: string[];
    if (classname === module) classes = [];
    else if (classname.startsWith(`${module}.`))
      classes = classname.slice(module.length + 1).split('.');
    else {
      // a classname that does not start with the file's module (rootdir outside the file's tree)
      const parts = classname.split('.');
      const at = parts.findIndex((p) => /^[A-Z]/.test(p));
      classes = at >= 0 ? parts.slice(at) : [];
    }
    return [file, ...classes, name].join('::');
  }
  const parts = classname.split('.');
  const clsIdx = parts.findIndex((p) => /^[A-Z]/.test(p));
  const mod = clsIdx >= 0 ? parts.slice(0, clsIdx) : parts;
  const cls = clsIdx >= 0 ? parts.slice(clsIdx) : [];
  return [`${mod.join('/')}.py`, ...cls, name].join('::');
}

/**
 * Parses a pytest JUnit XML report (`pytest --junitxml=FILE -o junit_family=xunit1`) into pytest
 * node ids ({@link pytestNodeId}). Two testcases with one id are a conflict (`conflicts`), never
 * merged.
 * @throws SkipItem `ambiguous_log` when the XML cannot be parsed
 */
export function parsePytestJUnit(text: string): ParsedRun {
  let doc: {
    testsuites?: { testsuite?: { testcase?: JUnitCase[] }[] };
    testsuite?: { testcase?: JUnitCase[] }[];
  };
  try {
    doc = xml().parse(text) as typeof doc;
  } catch (err) {
    throw new SkipItem(
      'ambiguous_log',
      `pytest JUnit XML is not well-formed: ${(err as Error).message}`,
    );
  }
  const suites = doc.testsuites?.testsuite ?? doc.testsuite ?? [];
  const results: Results = new Map();
  const collectionErrors: string[] = [];
  for (const suite of suites) {
    for (const c of suite.testcase ?? []) {
      const name = String(c.name ?? '');
      const status: TestStatus =
        c.failure !== undefined || c.error !== undefined
          ? 'fail'
          : c.skipped !== undefined
            ? 'skip'
            : 'pass';
      if (!name && status === 'fail') {
        collectionErrors.push(String(c.classname ?? ''));
        continue;
      }
      // pytest writes a test that fails in its call and then errors in teardown as two testcases
      // of one id, the second an <error message="failed on teardown with ...">: one failing test.
      const id = pytestNodeId(c);
      const seen = results.get(id);
      if (seen && isTeardownError(c.error)) {
        seen[seen.length - 1] = 'fail';
        continue;
      }
      recordResult(results, id, status);
    }
  }
  const { tests, conflicts } = settle(results, 1);
  return {
    tests,
    build_failures: collectionErrors,
    package_failures: [],
    timed_out: false,
    conflicts,
  };
}

/**
 * Splits the `name` of one meson `testlog.json` entry into the test's own name and the suites
 * meson wrote before it (`project:suite` strings), following meson's `get_pretty_suite`
 * (mesonbuild/mtest.py):
 * - meson before 1.10 (Debian bookworm's 1.0.1): `<project>:<suite>[+<suite>...] / <name>` when
 *   the build has more than one suite, `<project> / <name>` for a test without a suite there,
 *   else the bare `<name>`. The name is everything after the FIRST ` / ` (a test may itself be
 *   called `ngap encode / decode`: `open5gs:unit / ngap encode / decode` is suite `unit`, name
 *   `ngap encode / decode`); the prefix never holds a space.
 * - meson 1.10 and later: `<suite>[+<suite>...] - <project>:<name>`, or `<project>:<name>`.
 * A name that is itself one of the build's test names (`known`, from `meson introspect --tests`)
 * is taken as bare, so a bare `a / b` is not split.
 * @param known test name -> its `project:suite` list (empty when introspect was not read)
 * @returns `suites` as `project:suite` strings (empty when the name carries none)
 */
export function mesonTestName(
  raw: string,
  known: ReadonlyMap<string, readonly string[]> = new Map(),
): { name: string; suites: string[] } {
  if (known.has(raw)) return { name: raw, suites: [] };
  const old = /^([^\s/:]+)(?::([^\s/]*))? \/ (.+)$/s.exec(raw);
  if (old) {
    const [, project, suiteList, name] = old as unknown as [
      string,
      string,
      string | undefined,
      string,
    ];
    const parts = (suiteList ?? '').split('+').filter((x) => x !== '');
    return {
      name,
      suites: parts.length ? parts.map((x) => `${project}:${x}`) : [project],
    };
  }
  const neu = /^(?:(\S+) - )?([^\s:]+):(.+)$/s.exec(raw);
  if (neu && (neu[1] !== undefined || known.size === 0 || known.has(neu[3]!))) {
    const [, suiteList, project, name] = neu as unknown as [
      string,
      string | undefined,
      string,
      string,
    ];
    const parts = (suiteList ?? '').split('+').filter((x) => x !== '');
    return {
      name,
      suites: parts.length ? parts.map((x) => `${project}:${x}`) : [project],
    };
  }
  return { name: raw, suites: [] };
}

/**
 * Parses meson's `meson-logs/testlog.json` (one JSON object per line with `name`, `suite`,
 * `result`: OK, FAIL, SKIP, TIMEOUT, EXPECTEDFAIL, UNEXPECTEDPASS, ERROR). Id: `<suite>::<name>`
 * with the name and suites of {@link mesonTestName} (first suite without its `project:` prefix:
 * `open5gs:unit / ngap encode / decode` is `unit::ngap encode / decode`; `meson` when no suite is
 * known). More than
 * `repeats` results for one id are a conflict (`conflicts`), never merged; pass and fail of one id
 * across `meson test --repeat N` runs make it `flaky`.
 */
export function parseMesonTestLog(text: string, introspectTests?: string, repeats = 1): ParsedRun {
  // meson 1.0 writes no suite into testlog.json; `meson introspect --tests` (also meson's own
  // output) maps each test name to its suites.
  const suiteOf = new Map<string, string[]>();
  if (introspectTests) {
    try {
      for (const t of JSON.parse(introspectTests) as { name?: unknown; suite?: unknown }[])
        if (typeof t.name === 'string' && Array.isArray(t.suite))
          suiteOf.set(t.name, t.suite.map(String));
    } catch (err) {
      throw new SkipItem(
        'ambiguous_log',
        `meson introspect output is not JSON: ${(err as Error).message}`,
      );
    }
  }
  const results: Results = new Map();
  for (const line of text.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let ev: { name?: unknown; suite?: unknown; result?: unknown };
    try {
      ev = JSON.parse(line) as typeof ev;
    } catch {
      continue; // a truncated last line after a kill: ignored, the exit code decides
    }
    const { name, suites: named } = mesonTestName(String(ev.name ?? ''), suiteOf);
    // meson's own suites of this entry: the `suite` field some writers give, else the suites the
    // name carries, else introspect's (keyed by name only: two tests of one name in two suites
    // share the entry, so it comes last)
    const suites = Array.isArray(ev.suite)
      ? (ev.suite as unknown[]).map(String)
      : named.length
        ? named
        : (suiteOf.get(name) ?? []);
    // suites are `project:suite`; `meson` when none is known
    const first = suites[0] ?? 'meson';
    const suite = first.includes(':') ? first.slice(first.indexOf(':') + 1) : first;
    const result = String(ev.result ?? '');
    recordResult(
      results,
      `${suite}::${name}`,
      result === 'OK' || result === 'EXPECTEDFAIL' ? 'pass' : result === 'SKIP' ? 'skip' : 'fail',
    );
  }
  const { tests, conflicts, flaky } = settle(results, repeats);
  return { tests, build_failures: [], package_failures: [], timed_out: false, conflicts, flaky };
}

/**
 * Parses the results file the make step of a C repository writes (`testCommand` with registry
 * commands): one line `<exit code> <test id>` per test run (a target or the registry command run
 * once per repetition; exit 0 is `pass`, anything else `fail`), and `build <exit code>` when the
 * registry build command failed (then `build_failures` is `['build']`). Other lines are ignored.
 * The file is written by the step's own shell script, outside the tests' commands.
 * @param repeats runs per test id (more results than that are a conflict)
 */
export function parseMakeResults(text: string, repeats = 1): ParsedRun {
  const results: Results = new Map();
  const build: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+|build) (\S.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === 'build') {
      if (m[2] !== '0') build.push('build');
      continue;
    }
    recordResult(results, m[2]!, m[1] === '0' ? 'pass' : 'fail');
  }
  const { tests, conflicts, flaky } = settle(results, repeats);
  return { tests, build_failures: build, package_failures: [], timed_out: false, conflicts, flaky };
}

/**
 * Checks that a parsed run agrees with the exit code: exit 0 needs at least one test and no
 * failing test, build or package; a non-zero exit needs at least one failure of any kind.
 * @throws SkipItem `ambiguous_log` naming `step` and what disagreed
 */
export function checkAgreement(parsed: ParsedRun, exitCode: number | null, step: string): void {
  if (parsed.conflicts && parsed.conflicts.length > 0) {
    throw new SkipItem(
      'ambiguous_log',
      `step ${step}: contradicting results for ${parsed.conflicts.slice(0, 5).join(', ')} in one log`,
      { step, conflicts: parsed.conflicts },
    );
  }
  const failing = Object.values(parsed.tests).filter((s) => s === 'fail').length;
  const anyFailure =
    failing > 0 ||
    parsed.build_failures.length > 0 ||
    parsed.package_failures.length > 0 ||
    parsed.timed_out;
  if (exitCode === 0 && anyFailure) {
    throw new SkipItem(
      'ambiguous_log',
      `step ${step}: exit code 0 but the log reports ${failing} failing test(s), builds ${parsed.build_failures.join(', ') || 'none'}, packages ${parsed.package_failures.join(', ') || 'none'}`,
      { step },
    );
  }
  if (exitCode === 0 && Object.keys(parsed.tests).length === 0 && !parsed.packages?.length) {
    throw new SkipItem('ambiguous_log', `step ${step}: exit code 0 but no test result in the log`, {
      step,
    });
  }
  if (exitCode !== 0 && exitCode !== null && !anyFailure && !parsed.no_tests) {
    throw new SkipItem(
      'ambiguous_log',
      `step ${step}: exit code ${exitCode} but the log reports no failure (${Object.keys(parsed.tests).length} tests)`,
      { step },
    );
  }
}
