/**
 * The test spec of the harness: a pure description, built from an instance and the settings, of
 * how its tests run — the command of one fresh run, the files to read back, the log parser, the
 * fresh runs per step (repeats), the limits and the test selection (suites run and suites
 * excluded with their reason). Validation, grading, `verify` and the release check all build
 * their runs from it (SWE-bench's `TestSpec`: an instance's eval script and log parser, decided
 * before any container starts).
 */
import {
  mesonStepCommand,
  type MesonSelection,
} from '../../../pipeline/providers/docker/meson-step.js';
import { posix } from 'node:path';
import type { StepLimits } from '../../../pipeline/providers/docker/executor.js';
import type { RecipeName } from '../../../pipeline/providers/docker/recipes.js';
import { GO_DIRECTIVE_GUARD } from '../../../pipeline/providers/docker/go-directive.js';
import { patchFiles } from '../../../pipeline/providers/git/repo.js';

/** The log parsers of the table in parse.ts, by the log format they read. */
export type ParserName = 'go-test-json' | 'junit-xml' | 'meson-testlog' | 'make-results';

/** Test and build commands of a registry entry (`test.command`, `test.build` in config/repos.yaml). */
export interface RegistryCommands {
  /** The repository's own test command (`make check`). */
  test?: string;
  /** Command that builds the code before the tests run (`make`). */
  build?: string;
}

/**
 * A suite (or one test, registry `environment.excluded`) left out of every run, with the reason
 * (it needs MongoDB, SCTP, privileged networking, or is too costly to build).
 */
export interface ExcludedSuite {
  suite?: string;
  test?: string;
  reason: string;
}

/**
 * Which tests run (meson: suite names without the `project:` prefix). `suites` empty or absent:
 * every suite but the excluded ones. Excluded suites are listed in the spec and never counted as
 * failing (their results, if a log holds any, are dropped by the parse).
 */
export interface TestSelection {
  suites?: readonly string[];
  /** meson test names within the suites (registry `environment.tests`); absent: all of them. */
  tests?: readonly string[];
  exclude?: readonly ExcludedSuite[];
  /**
   * The env and instance layers keep a meson build (registry `environment`, docs/environments.md):
   * a run builds only the selected tests' executables and the objects of `compile` (the fix's
   * files) through the meson step script, then runs the selected tests and the f2p suite.
   */
  keptBuild?: { setupOptions: readonly string[]; compile: readonly string[] };
}

/** How the repetitions of a step are made fresh (issue 21, "Repeats in fresh processes"). */
export type FreshRuns = 'process' | 'container';

/** The pure test spec of one instance (see the module comment). */
export interface TestSpec {
  recipe: RecipeName;
  parser: ParserName;
  /** Shell command (`/bin/sh -c`, in `workdir`) of ONE fresh run of the tests. */
  command: string;
  /** Files one run writes and the parser reads (relative to `workdir`). */
  collect: string[];
  /**
   * Where repeated runs of a step happen: `process` (Go: separate `go test -count=1` processes
   * in one container, {@link stepCommand}), `container` (every other runner: one container each).
   */
  fresh: FreshRuns;
  limits: StepLimits;
  /** The test framework's own timeout (seconds); `limits.timeoutMs` adds 15 s for the container. */
  timeout_s: number;
  workdir: string;
  /** Suites left out, with the reason (listed in outputs, never counted failing). */
  excluded: ExcludedSuite[];
}

/** Directories holding the test files a unified diff adds or changes (exact names, {@link patchFiles}). */
function testFileDirs(patch: string): string[] {
  const dirs = new Set<string>();
  for (const f of patchFiles(patch)) if (f.newPath !== null) dirs.add(posix.dirname(f.newPath));
  return [...dirs];
}

/**
 * The test directories a step runs, shared by validation, grading and `telebench verify` so a
 * released row is re-checked on exactly the tests validation ran.
 * - scope `repo` or recipe `c-meson` (one meson test suite per build): `'all'`;
 * - `python`: the directories of the test files the test patches touch (`'all'` when none);
 * - `go`: the directories the fix touches (`sourceDirs`, `Resolved.test_dirs`) plus those of the
 *   test files the test patches touch, sorted.
 * Paths are made relative to `moduleDir` (a Go module in a sub-folder; `'.'` for the module root);
 * directories outside `moduleDir` are left out (the steps run inside it).
 * @param opts.sourceDirs repository-relative directories of the fix's non-test files
 * @param opts.testPatches unified diffs of the test files (`test_patch`, `f2p_test_patch`, or a
 *   released row's combined `test_patch`); empty strings are allowed
 * @returns the directory list for {@link testCommand}, or `'all'`
 */
export function selectTestDirs(opts: {
  recipe: RecipeName;
  scope: 'touched' | 'repo';
  moduleDir: string;
  sourceDirs: readonly string[];
  testPatches: readonly string[];
}): string[] | 'all' {
  const { recipe, scope, moduleDir } = opts;
  if (scope === 'repo' || recipe === 'c-meson') return 'all';
  const rel = (d: string): string =>
    moduleDir && d.startsWith(`${moduleDir}/`)
      ? d.slice(moduleDir.length + 1)
      : d === moduleDir
        ? '.'
        : d;
  // a monorepo folder's steps run inside it: a directory outside belongs to another entry (a
  // Magma fix touching lte/gateway/python/scripts ran pytest on that path from inside
  // .../magma/subscriberdb: "file or directory not found", exit 4)
  const inside = (d: string): boolean =>
    !moduleDir || d === moduleDir || d.startsWith(`${moduleDir}/`);
  const testDirs = opts.testPatches.flatMap(testFileDirs).filter(inside);
  if (recipe === 'python') {
    const pyDirs = [...new Set(testDirs.map(rel))].sort();
    return pyDirs.length ? pyDirs : 'all';
  }
  return [...new Set([...opts.sourceDirs.filter(inside), ...testDirs].map(rel))].sort();
}

/**
 * Whether a C repository's registry commands replace meson: a test command is given and is not
 * itself a meson command (`meson test -C build`, Open5GS's entry, keeps meson's structured log).
 */
export function usesMakeStep(c: RegistryCommands | undefined): c is RegistryCommands & {
  test: string;
} {
  return c?.test !== undefined && !/^\s*meson\b/.test(c.test);
}

/** Results file of the make step of a C repository (see {@link testCommand}). */
export const MAKE_RESULTS = '.telebench/make-results.txt';

/** `s` as one single-quoted POSIX shell word. */
const shq = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Test ids of a registry test command run by the make step: `make T1 T2` runs each target on its
 * own (`make::T1`, `make::T2`); any other command is one test, `command::<command>`.
 */
export function registryTestIds(command: string): { id: string; run: string }[] {
  const m = /^make((?:\s+[A-Za-z0-9_][A-Za-z0-9_.-]*)+)\s*$/.exec(command.trim());
  if (!m) return [{ id: `command::${command.trim()}`, run: command.trim() }];
  return m[1]!
    .trim()
    .split(/\s+/)
    .map((t) => ({ id: `make::${t}`, run: `make --no-print-directory ${t}` }));
}

/** meson's suite arguments of a selection: `--suite S` per chosen suite, `--no-suite S` per excluded. */
function mesonSuiteArgs(sel: TestSelection | undefined): string {
  const args = [
    ...(sel?.suites ?? []).map((s) => `--suite ${shq(s)}`),
    ...(sel?.exclude ?? []).flatMap((e) => (e.suite ? [`--no-suite ${shq(e.suite)}`] : [])),
  ];
  return args.length ? ` ${args.join(' ')}` : '';
}

/**
 * The shell command of ONE fresh run of a recipe's tests, and the files to read back.
 * - Go: `go test -json -count=1` over the selected packages (`./...` for scope `repo`); repeats
 *   are separate processes ({@link stepCommand}), never `-count=N` in one process (a test with
 *   global state that fails only on a second in-process iteration is not flaky).
 * - Python: pytest with a JUnit XML report.
 * - C (`c-meson`) with a registry test command that is not meson's ({@link usesMakeStep}): the
 *   make step. It runs `commands.build` when given (its failure exits 97 after `build <exit>` is
 *   recorded), then each test of {@link registryTestIds} and each `f2p_*` target of the root
 *   `Makefile` (the targets swe5g.testgen adds; absent before its test patch is applied),
 *   appending `<exit> <id>` per test to `.telebench/make-results.txt`; exit 1 when any failed.
 * - C with a kept build (`selection.keptBuild`, registry `environment`): the meson step script
 *   (pipeline/providers/docker/meson-step.ts) builds the selected tests and the fix's objects in
 *   the layers' build directory, then runs the selected tests and the f2p suite.
 * - C without one: meson setup/compile, then `meson test` over the selection's suites.
 * Every tool's own output, errors included, stays in the step log: nothing goes to /dev/null.
 * @param opts.commands the registry entry's commands (read for C only: Go and Python keep their
 *   structured reports, `go test -json` and JUnit XML, which per-test results come from)
 * @param opts.selection suites to run and to exclude (meson)
 */
export function testCommand(
  recipe: RecipeName,
  dirs: string[] | 'all',
  timeoutS: number,
  moduleDir: string,
  opts: { commands?: RegistryCommands; selection?: TestSelection } = {},
): { command: string; collect: string[] } {
  const cd = moduleDir ? `cd ${moduleDir} && ` : '';
  const pre = moduleDir ? `${moduleDir}/` : '';
  if (recipe === 'go') {
    const pkgs = dirs === 'all' ? './...' : dirs.map((d) => (d === '.' ? '.' : `./${d}`)).join(' ');
    return {
      command: `${cd}${GO_DIRECTIVE_GUARD} && go test -json -count=1 -timeout ${timeoutS}s ${pkgs}`,
      collect: [],
    };
  }
  if (recipe === 'python') {
    const paths = dirs === 'all' ? '.' : dirs.join(' ');
    return {
      command: `${cd}mkdir -p .telebench && python3 -m pytest -p no:cacheprovider -o junit_family=xunit1 --junitxml=.telebench/junit.xml -q ${paths}`,
      collect: [`${pre}.telebench/junit.xml`],
    };
  }
  const c = opts.commands;
  if (usesMakeStep(c)) {
    const build = c.build
      ? `{ ${c.build}\n} || { c=$?; echo "build $c" >> ${MAKE_RESULTS}; echo "telebench: the build command failed (exit $c, step exit 97), see the output above: "${shq(c.build)} >&2; exit 97; }\n`
      : '';
    const tests = registryTestIds(c.test)
      .map((t) => `t ${shq(t.id)} ${shq(t.run)}\n`)
      .join('');
    const script =
      `${cd}mkdir -p .telebench && : > ${MAKE_RESULTS} || exit 98\n` +
      build +
      `rc=0\n` +
      `t() { sh -c "$2"; c=$?; echo "$c $1" >> ${MAKE_RESULTS}; [ $c -eq 0 ] || rc=1; }\n` +
      tests +
      `if [ -f Makefile ]; then for f in $(sed -n 's/^\\(f2p_[A-Za-z0-9_]*\\):.*/\\1/p' Makefile); do t "make::$f" "make --no-print-directory $f"; done; fi\n` +
      `exit $rc`;
    return { command: script, collect: [`${pre}${MAKE_RESULTS}`] };
  }
  const kept = opts.selection?.keptBuild;
  if (kept) {
    const sel: MesonSelection = {
      suites: opts.selection?.suites ?? [],
      tests: opts.selection?.tests ?? [],
      setupOptions: kept.setupOptions,
      compile: kept.compile,
    };
    return {
      command: `${cd}${mesonStepCommand(sel, 'test')}`,
      collect: [`${pre}.telebench/build/meson-logs/testlog.json`, `${pre}.telebench/tests.json`],
    };
  }
  return {
    // meson's own output (its errors included) stays in the step log: nothing goes to /dev/null
    command: `${cd}(meson setup .telebench/build && meson compile -C .telebench/build && meson introspect --tests .telebench/build > .telebench/tests.json) || { echo 'telebench: meson setup/compile failed (exit 97), see the output above' >&2; exit 97; }; meson test -C .telebench/build --print-errorlogs -t 1${mesonSuiteArgs(opts.selection)}`,
    collect: [`${pre}.telebench/build/meson-logs/testlog.json`, `${pre}.telebench/tests.json`],
  };
}

/** The line {@link stepCommand} prints after run `i` of a multi-process Go step (`exit` its code). */
export const RUN_MARK = /^telebench-run (\d+) exit (\d+)$/;

/**
 * The line {@link stepCommand} prints after the {@link RUN_MARK} of a run that timed out, just
 * before the step stops (issue 31): `limit` when the run's share of the step's time ran out (the
 * watchdog killed it), `tool` when the test tool's own timeout ended it ({@link TOOL_TIMEOUT}).
 */
export const RUN_STOP_MARK = /^telebench-run (\d+) timed-out (limit|tool)$/;

/**
 * What a test tool writes when its own timeout ends a run, as it stands in the log its parser
 * reads: Go's `panic: test timed out after ...` as `go test -json` encodes it (an output event
 * whose text starts with it, the line parsers.ts `parseGoTestJson` counts as `timed_out`).
 */
export const TOOL_TIMEOUT: Partial<Record<ParserName, string>> = {
  'go-test-json': '"Output":"panic: test timed out after',
};

/** Seconds the watchdog waits after its TERM before it sends KILL (`timeout -k`). */
const KILL_AFTER_S = 10;

/**
 * The command one container runs for a step of `runs` fresh runs: the spec's command itself for
 * one run (and for `fresh: 'container'`, where the runner starts one container per run); for
 * `fresh: 'process'` (Go) the command `runs` times in a row, each a separate `go test -count=1`
 * process, each followed by the line `telebench-run <i> exit <code>` ({@link RUN_MARK}) that
 * parse.ts splits the log at. The step exits with the last failing run's code, 0 when all passed.
 *
 * A run that times out ends the step at once (issue 31: a test blocked until `go test -timeout`
 * cost the step `runs` x the timeout): after its mark, `telebench-run <i> timed-out <how>`
 * ({@link RUN_STOP_MARK}) and the step exits with that run's code. `how` is `limit` when the run
 * outlived its share of the step, `spec.limits.timeoutMs` (the limit one container of a
 * `fresh: 'container'` step has; coreutils `timeout` sends TERM, then KILL 10 s later: exit 124,
 * or 137 at or after the share), `tool` when its stdout holds the tool's own timeout marker
 * ({@link TOOL_TIMEOUT}, by `spec.parser`). Without `timeout` in the image, or without
 * `spec.limits`, only the tool's marker and the container's limit stop a run. Each run's stdout
 * goes to `.telebench/run-out` in the working folder and is then copied to the step's stdout
 * whole (the same bytes, in the same order, as when it went there directly); stderr is not
 * touched. Every run that does not time out runs and exits exactly as before.
 * @param runs fresh runs (values below 1 count as 1)
 * @returns a `/bin/sh -c` script
 */
export function stepCommand(
  spec: Pick<TestSpec, 'command' | 'fresh'> & {
    limits?: Pick<StepLimits, 'timeoutMs'>;
    parser?: ParserName;
  },
  runs: number,
): string {
  const n = Math.max(1, Math.floor(runs));
  if (n === 1 || spec.fresh !== 'process') return spec.command;
  const share = spec.limits ? Math.ceil(spec.limits.timeoutMs / 1000) : undefined;
  const marker = spec.parser ? TOOL_TIMEOUT[spec.parser] : undefined;
  const killed =
    share === undefined
      ? ''
      : `if [ -n "$tmo" ] && { [ $c -eq 124 ] || { [ $c -eq 137 ] && [ $(($(date +%s)-s)) -ge ${share} ]; }; }; then t=limit; fi\n`;
  const tool = marker
    ? `[ -n "$t" ] || ! grep -qF ${shq(marker)} .telebench/run-out || t=tool\n`
    : '';
  return (
    `rc=0; i=0; mkdir -p .telebench || exit 98\n` +
    (share === undefined
      ? `tmo=\n`
      : `tmo=; if command -v timeout >/dev/null 2>&1; then tmo="timeout -k ${KILL_AFTER_S} ${share}"; fi\n`) +
    `while [ $i -lt ${n} ]; do i=$((i+1)); s=$(date +%s)\n` +
    `$tmo sh -c ${shq(spec.command)} > .telebench/run-out; c=$?; cat .telebench/run-out\n` +
    `echo "telebench-run $i exit $c"; [ $c -eq 0 ] || rc=$c; t=\n` +
    killed +
    tool +
    `if [ -n "$t" ]; then echo "telebench-run $i timed-out $t"; exit $c; fi\n` +
    `done; exit $rc`
  );
}

/** The parser of a recipe's log (a C repository with registry make commands: the make results). */
export function parserOf(recipe: RecipeName, commands?: RegistryCommands): ParserName {
  if (recipe === 'go') return 'go-test-json';
  if (recipe === 'python') return 'junit-xml';
  return usesMakeStep(commands) ? 'make-results' : 'meson-testlog';
}

/** Limits of the environments settings (`swe5g.environments.limits`). */
export interface LimitSettings {
  limits: { timeout_s: number; memory_mib: number; cpus: number; pids: number };
}

/**
 * The test spec of an instance.
 * @param opts.dirs from {@link selectTestDirs}
 * @param opts.moduleDir the module folder (`Built.module_dir`, a registry entry's `path`)
 * @param opts.commands the registry entry's test commands (C)
 * @param opts.selection suites to run / excluded with reason (registry entry)
 */
export function testSpec(opts: {
  recipe: RecipeName;
  dirs: string[] | 'all';
  moduleDir: string;
  settings: LimitSettings;
  commands?: RegistryCommands | undefined;
  selection?: TestSelection | undefined;
}): TestSpec {
  const l = opts.settings.limits;
  const { command, collect } = testCommand(opts.recipe, opts.dirs, l.timeout_s, opts.moduleDir, {
    ...(opts.commands ? { commands: opts.commands } : {}),
    ...(opts.selection ? { selection: opts.selection } : {}),
  });
  return {
    recipe: opts.recipe,
    parser: parserOf(opts.recipe, opts.commands),
    command,
    collect,
    fresh: opts.recipe === 'go' ? 'process' : 'container',
    limits: {
      memory: l.memory_mib * 2 ** 20,
      cpus: l.cpus,
      pids: l.pids,
      timeoutMs: l.timeout_s * 1000 + 15_000,
    },
    timeout_s: l.timeout_s,
    workdir: '/testbed',
    excluded: [...(opts.selection?.exclude ?? [])],
  };
}
