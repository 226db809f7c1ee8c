/**
 * `swe5g.validate`: the three-step validation of the SWE-Bench 5G paper (section "Validation"):
 *  1. at the parent (`base_commit`), the existing tests pass (`parent_p2p`). Paper rule: any
 *     failure rejects (`p2p_fails_at_parent`); `pass_to_pass_policy: drop-failing` instead drops
 *     the failing tests from PASS_TO_PASS and lists them (SWE-bench's behaviour);
 *  2. at the parent with the test patches (`test_patch` + the generated `f2p_test_patch`), the
 *     fail-to-pass tests fail (`parent_f2p`), else `f2p_does_not_fail_at_parent`;
 *  3. after the fix (`patch` + test patches), FAIL_TO_PASS and PASS_TO_PASS pass, `fix_runs`
 *     times (`fix_1..3`); a test whose result differs between runs is flaky: a flaky
 *     PASS_TO_PASS test is dropped and listed, a flaky FAIL_TO_PASS test rejects (`flaky`).
 * Steps 1 and 3 run every test `test_repeats` times (`go test -count=N`; a test that passes and
 * fails within one step is flaky too), so a one-in-three flake reaches PASS_TO_PASS with
 * probability (2/3)^(test_repeats x (1 + fix_runs)) = (2/3)^12 = 0.77% with the defaults
 * (environments-config.ts). A C repository whose registry entry gives `test.command` (and
 * `test.build`) is tested through them instead of meson ({@link testCommand}).
 * Each step runs in a fresh executor sandbox; its log is stored as a blob; the parsed result must
 * agree with the exit code (`ambiguous_log`). Strategy `shipped` with an empty FAIL_TO_PASS: the
 * fail-to-pass tests are those failing (or absent) in step 2 and passing in every fix run.
 */
import { cpSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve as resolvePath } from 'node:path';
import { loadRegistry } from '../registry.js';
import { defineStage } from '../../../pipeline/stage.js';
import { sameKeyIn } from '../resolve/plan.js';
import { filesOfPatch, packageDirs } from '../resolve/packages.js';
import { SkipItem } from '../../../pipeline/errors.js';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import { type Executor, type StepResult } from '../../../pipeline/providers/docker/executor.js';
import { overlayOf, type Overlay } from '../../../pipeline/providers/docker/overlay.js';
import { executorFor, executorPreflight } from '../executors.js';
import {
  checkAgreement,
  parseGoTestJson,
  parseMakeResults,
  parseMesonTestLog,
  parsePytestJUnit,
  type ParsedRun,
  type TestStatus,
} from '../../../pipeline/providers/docker/parsers.js';
import type { RecipeName } from '../../../pipeline/providers/docker/recipes.js';
import {
  mesonStepCommand,
  type MesonSelection,
} from '../../../pipeline/providers/docker/meson-step.js';
import { mesonSelection } from '../build/c-env.js';
import type { EnvironmentSpec, ExcludedTests } from '../registry.js';
import { applyPatch, git, patchFiles } from '../../../pipeline/providers/git/repo.js';
import type { Resolved, TestGen, ValidatedInstance } from '../types.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import type { EnvironmentsSettings } from '../environments-config.js';
import type { Built } from '../build/build.js';

/** Input of one validation item. */
export interface ValidateInput {
  resolved: Resolved;
  testgen: TestGen;
  built: Built;
}

/** Output: the validated instance plus per-step timings (seconds) and layer sizes (bytes). */
export interface Validated extends ValidatedInstance {
  step_seconds: Record<string, number>;
  image_sizes: Built['sizes'];
  /** Tests dropped from PASS_TO_PASS because they failed at the parent (drop-failing policy). */
  dropped_failing_at_parent: { test: string; reason: string }[];
  /**
   * Registry commands the steps ran with (C: make instead of meson), so grading runs the same
   * tests; absent in records validated before they were read.
   */
  test_commands?: RegistryCommands;
  /** Suites and tests the registry leaves out of the existing tests, with the reason (C). */
  excluded_tests?: ExcludedTests[];
}

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
 * The first lines of a build log that say what failed (compiler `error:`, meson `ERROR:`, linker
 * `undefined reference`, `fatal error`, Go `cannot find`/`undefined:`), at most `max`, each cut to
 * 300 characters; falls back to the last non-empty lines when none matches.
 */
export function firstErrorLines(log: string, max = 5): string[] {
  const esc = String.fromCharCode(27); // terminal colour codes (meson, gcc) are not text
  const lines = log.split('\n').map((l) =>
    l
      .split(esc)
      .join('')
      .replace(/\[[0-9;]*m/g, '')
      .trimEnd(),
  );
  const re =
    /^FAILED: |\b(error|ERROR|fatal error|undefined reference|cannot find|undefined:|No such file or directory|Dependency .* not found|not found or not usable)\b/;
  const hits = lines.filter((l) => re.test(l) && !/^# command:/.test(l));
  const pick = hits.length > 0 ? hits : lines.filter((l) => l.trim() !== '').slice(-max);
  return pick.slice(0, max).map((l) => (l.length > 300 ? `${l.slice(0, 297)}...` : l));
}

/** Directories holding the test files a unified diff adds or changes (exact names, {@link patchFiles}). */
function testFileDirs(patch: string): string[] {
  const dirs = new Set<string>();
  for (const f of patchFiles(patch)) if (f.newPath !== null) dirs.add(posix.dirname(f.newPath));
  return [...dirs];
}

/**
 * The test directories a step runs, shared by `swe5g.validate` and `telebench verify` so a released
 * row is re-checked on exactly the tests validation ran.
 * - scope `repo` or recipe `c-meson` (one meson test suite per build): `'all'`;
 * - `python`: the directories of the test files the test patches touch (`'all'` when none);
 * - `go`: the directories the fix touches (`sourceDirs`, `Resolved.test_dirs`) plus those of the
 *   test files the test patches touch, sorted.
 * Paths are made relative to `moduleDir` (a Go module in a sub-folder; `'.'` for the module root).
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
  const testDirs = opts.testPatches.flatMap(testFileDirs);
  if (recipe === 'python') {
    const pyDirs = [...new Set(testDirs.map(rel))].sort();
    return pyDirs.length ? pyDirs : 'all';
  }
  return [...new Set([...opts.sourceDirs, ...testDirs].map(rel))].sort();
}

/** Test and build commands of a registry entry (`test.command`, `test.build` in config/repos.yaml). */
export interface RegistryCommands {
  /** The repository's own test command (`make check`). */
  test?: string;
  /** Command that builds the code before the tests run (`make`). */
  build?: string;
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
const MAKE_RESULTS = '.telebench/make-results.txt';

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

/**
 * The shell command of a step for a recipe, and the files to read back.
 * - Go: `go test -json -count=<repeats>` over the selected packages (`./...` for scope `repo`).
 * - Python: pytest with a JUnit XML report (run once; `repeats` is not applied: pytest repeats
 *   tests only through a plugin the images do not have).
 * - C (`c-meson`) with a registry test command that is not meson's ({@link usesMakeStep}): the
 *   make step. It runs
 *   `commands.build` when given (its failure exits 97 after `build <exit>` is recorded), then each
 *   test of {@link registryTestIds} and each `f2p_*` target of the root `Makefile` (the targets
 *   swe5g.testgen adds; absent before its test patch is applied), `repeats` times each, appending
 *   `<exit> <id>` per run to `.telebench/make-results.txt`; exit 1 when any run failed.
 * - C without one: meson setup/compile, then `meson test` (`--repeat <repeats>`).
 * Every tool's own output, errors included, stays in the step log: nothing goes to /dev/null.
 * @param opts.repeats runs of every test within the step (>= 1; 1 when omitted)
 * @param opts.commands the registry entry's commands (read for C only: Go and Python keep their
 *   structured reports, `go test -json` and JUnit XML, which per-test results come from)
 */
export function testCommand(
  recipe: RecipeName,
  dirs: string[] | 'all',
  timeoutS: number,
  moduleDir: string,
  opts: { repeats?: number; commands?: RegistryCommands; meson?: MesonSelection } = {},
): { command: string; collect: string[] } {
  const repeats = Math.max(1, Math.floor(opts.repeats ?? 1));
  const cd = moduleDir ? `cd ${moduleDir} && ` : '';
  const pre = moduleDir ? `${moduleDir}/` : '';
  if (recipe === 'go') {
    const pkgs = dirs === 'all' ? './...' : dirs.map((d) => (d === '.' ? '.' : `./${d}`)).join(' ');
    return {
      command: `${cd}go test -json -count=${repeats} -timeout ${timeoutS}s ${pkgs}`,
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
      `t() { i=0; while [ $i -lt ${repeats} ]; do i=$((i+1)); sh -c "$2"; c=$?; echo "$c $1" >> ${MAKE_RESULTS}; [ $c -eq 0 ] || rc=1; done; }\n` +
      tests +
      `if [ -f Makefile ]; then for f in $(sed -n 's/^\\(f2p_[A-Za-z0-9_]*\\):.*/\\1/p' Makefile); do t "make::$f" "make --no-print-directory $f"; done; fi\n` +
      `exit $rc`;
    return { command: script, collect: [`${pre}${MAKE_RESULTS}`] };
  }
  if (opts.meson) {
    // the kept build of the env/instance layers: only the selected tests and the fix's objects
    return {
      command: `${cd}${mesonStepCommand(opts.meson, 'test', repeats)}`,
      collect: [`${pre}.telebench/build/meson-logs/testlog.json`, `${pre}.telebench/tests.json`],
    };
  }
  return {
    // meson's own output (its errors included) stays in the step log: nothing goes to /dev/null
    command: `${cd}(meson setup .telebench/build && meson compile -C .telebench/build && meson introspect --tests .telebench/build > .telebench/tests.json) || { echo 'telebench: meson setup/compile failed (exit 97), see the output above' >&2; exit 97; }; meson test -C .telebench/build --print-errorlogs -t 1${repeats > 1 ? ` --repeat ${repeats}` : ''}`,
    collect: [`${pre}.telebench/build/meson-logs/testlog.json`, `${pre}.telebench/tests.json`],
  };
}

/**
 * Parses one step's output for its recipe (see parsers.ts for the trusted channels).
 * @param repeats the `repeats` the step's {@link testCommand} was made with
 * @throws SkipItem `ambiguous_log` from the parsers (malformed JUnit XML, meson introspect)
 */
export function parseStep(
  recipe: RecipeName,
  r: StepResult,
  collect: string[],
  repeats = 1,
): ParsedRun {
  if (recipe === 'go') return parseGoTestJson(r.stdout, repeats);
  const file = r.collected[collect[0] ?? ''];
  if (recipe === 'python') {
    if (file === undefined)
      return {
        tests: {},
        build_failures: r.exitCode !== 0 ? ['pytest'] : [],
        package_failures: [],
        timed_out: false,
      };
    const parsed = parsePytestJUnit(file);
    // pytest exit 5: no tests were collected (e.g. the touched folder has none at the parent)
    if (r.exitCode === 5 && Object.keys(parsed.tests).length === 0) parsed.no_tests = true;
    return parsed;
  }
  const make = (collect[0] ?? '').endsWith(MAKE_RESULTS);
  if (file === undefined) {
    return {
      tests: {},
      build_failures: r.exitCode !== 0 ? [make ? 'build' : 'meson'] : [],
      package_failures: [],
      timed_out: false,
    };
  }
  if (make) {
    const parsed = parseMakeResults(file, repeats);
    // exit 97 is the script's own "build failed" (the results file says so too)
    if (r.exitCode === 97 && parsed.build_failures.length === 0) parsed.build_failures = ['build'];
    return parsed;
  }
  return parseMesonTestLog(file, r.collected[collect[1] ?? ''], repeats);
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

/**
 * Applies patches in order to a copy of `sourceDir` and returns the overlay of the files they
 * touched, relative to the repository root: exact bytes and git mode (100644 / 100755 / 120000
 * symlink), null for a deleted file, names as git holds them (read NUL-separated by
 * {@link applyPatch}). Validation and release verify both use it; every executor writes it with
 * the one overlay writer (issue 14, section 1).
 * @returns the {@link Overlay} (later patches win for a path two patches touch)
 * @throws TelebenchError `patch_does_not_apply` (tier content) naming the patch
 */
export async function overlayFor(sourceDir: string, patches: [string, string][]): Promise<Overlay> {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-apply-'));
  try {
    cpSync(sourceDir, dir, { recursive: true, verbatimSymlinks: true });
    const files: Overlay = {};
    for (const [label, patch] of patches) {
      const { changed, deleted } = await applyPatch(dir, patch, label);
      Object.assign(files, overlayOf(dir, changed));
      for (const p of deleted) files[p] = null;
    }
    return files;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Everything validation needs besides the instance. */
export interface ValidateContext {
  executor: Executor;
  settings: EnvironmentsSettings;
  /** Stores a step log; returns its digest. */
  saveLog: (step: string, text: string) => string;
  log?: (message: string) => void;
  signal?: AbortSignal;
  /** Registry test scope of the repository (`touched` | `repo`), used when settings say `registry`. */
  registryScope?: 'touched' | 'repo';
  /** Registry test and build commands of the repository (used by the C recipe: make). */
  registryCommands?: RegistryCommands;
  /** Registry `environment` of the repository (C: the meson suites/tests the steps run). */
  registryEnvironment?: EnvironmentSpec;
}

/**
 * Runs the three validation steps for one instance.
 * @returns the validated instance (SWE-bench fields plus images, toolchain, executor, step logs)
 * @throws SkipItem with the failed step's reason (see the module comment)
 */
export async function validateInstance(
  input: ValidateInput,
  vc: ValidateContext,
): Promise<Validated> {
  const { resolved: res, testgen: tg, built } = input;
  const s = vc.settings;
  const recipe = built.image_recipe;
  const scope = s.test_scope === 'registry' ? (vc.registryScope ?? 'touched') : s.test_scope;
  const dirs = selectTestDirs({
    recipe,
    scope,
    moduleDir: built.module_dir,
    // from the patch, not res.test_dirs: a store resolved before packageDirs may hold `.` for a
    // root go.mod (which Go answers with "no Go files")
    sourceDirs: packageDirs(filesOfPatch(res.patch), res.language),
    testPatches: [res.test_patch, tg.f2p_test_patch],
  });
  const commands = vc.registryCommands;
  const meson =
    recipe === 'c-meson' && !usesMakeStep(commands)
      ? mesonSelection(vc.registryEnvironment, filesOfPatch(res.patch))
      : undefined;
  // steps 1 and 3 run every test `test_repeats` times (flaky PASS_TO_PASS detection, see
  // environments-config.ts for the arithmetic); step 2 only needs the F2P tests to fail once
  const repeated = testCommand(recipe, dirs, s.limits.timeout_s, built.module_dir, {
    repeats: s.test_repeats,
    ...(commands ? { commands } : {}),
    ...(meson ? { meson } : {}),
  });
  const once = testCommand(recipe, dirs, s.limits.timeout_s, built.module_dir, {
    ...(commands ? { commands } : {}),
    ...(meson ? { meson } : {}),
  });
  const limits = {
    memory: s.limits.memory_mib * 2 ** 20,
    cpus: s.limits.cpus,
    pids: s.limits.pids,
    timeoutMs: s.limits.timeout_s * 1000 + 15_000,
  };
  const instance = {
    image: built.images.instance,
    workdir: '/testbed',
    sourceDir: built.source_dir,
  };
  const step_logs: Validated['step_logs'] = {};
  const step_seconds: Record<string, number> = {};

  const runStep = async (
    step: keyof Validated['step_logs'],
    files: Overlay,
  ): Promise<{ parsed: ParsedRun; result: StepResult }> => {
    const repeats = step === 'parent_f2p' ? 1 : s.test_repeats;
    const { command, collect } = repeats === 1 ? once : repeated;
    const result = await vc.executor.run(
      { step, instance, files, command, collect, limits },
      vc.signal,
    );
    step_seconds[step] = result.durationMs / 1000;
    const logText = [
      `# step ${step} executor ${result.executor} exit ${result.exitCode} timed_out ${result.timedOut} ${result.durationMs} ms`,
      `# command: ${command}`,
      '## stdout',
      result.stdout,
      '## stderr',
      result.stderr,
      ...Object.entries(result.collected).map(([k, v]) => `## ${k}\n${v ?? '(absent)'}`),
    ].join('\n');
    step_logs[step] = vc.saveLog(step, logText);
    vc.log?.(
      `${res.instance_id} ${step}: exit ${result.exitCode} in ${(result.durationMs / 1000).toFixed(1)} s`,
    );
    if (result.timedOut) {
      throw new SkipItem(
        'timeout',
        `${res.instance_id} step ${step}: killed after ${s.limits.timeout_s} s`,
        { step, step_logs },
      );
    }
    const parsed = parseStep(recipe, result, collect, repeats);
    if (parsed.timed_out) {
      throw new SkipItem(
        'timeout',
        `${res.instance_id} step ${step}: the test framework reported a timeout`,
        { step, step_logs },
      );
    }
    checkAgreement(parsed, result.exitCode, step);
    return { parsed, result };
  };

  // The patched file sets of steps 2 and 3 are prepared on the host while step 1 runs; their
  // errors (patch_does_not_apply) are raised where they are awaited, after step 1.
  const testPatches: [string, string][] = [
    ['test_patch', res.test_patch],
    ['f2p_test_patch', tg.f2p_test_patch],
  ];
  const withTestsP = overlayFor(built.source_dir, testPatches);
  const withFixP = overlayFor(built.source_dir, [['patch', res.patch], ...testPatches]);
  withTestsP.catch(() => undefined); // rethrown by the await below
  withFixP.catch(() => undefined); // rethrown by the await below

  // Step 1: existing tests at the parent.
  const s1 = await runStep('parent_p2p', {});
  if (s1.parsed.build_failures.length > 0) {
    const errors = firstErrorLines(`${s1.result.stdout}\n${s1.result.stderr}`);
    throw new SkipItem(
      'build_failed_at_parent',
      `${res.instance_id}: ${s1.parsed.build_failures.join(', ')} do not build at the parent${errors.length ? `: ${errors.join(' | ')}` : ''}`,
      {
        build_failures: s1.parsed.build_failures,
        first_errors: errors,
        step_logs,
      },
    );
  }
  // Re-run step 1 while tests fail: a test that passes in one run and fails in another is flaky
  // (listed, dropped), not a failure at the parent (`parent_reruns`; see environments-config.ts
  // for the escape probability).
  const parentRuns: ParsedRun[] = [s1.parsed];
  // a test that passed and failed within one run (test_repeats > 1) is flaky already
  const flakyInRun = (id: string): boolean => parentRuns.some((r) => r.flaky?.includes(id));
  const failedEveryRun = (): string[] =>
    Object.keys(s1.parsed.tests).filter(
      (id) => !flakyInRun(id) && parentRuns.every((r) => (r.tests[id] ?? 'absent') !== 'pass'),
    );
  for (
    let i = 0;
    i < s.parent_reruns &&
    failedEveryRun().some((id) => parentRuns.some((r) => r.tests[id] === 'fail'));
    i++
  ) {
    parentRuns.push((await runStep(`parent_p2p_${i + 2}`, {})).parsed);
  }
  const flakyAtParent = Object.keys(s1.parsed.tests)
    .filter(
      (id) =>
        flakyInRun(id) ||
        (parentRuns.some((r) => r.tests[id] === 'fail') &&
          parentRuns.some((r) => r.tests[id] === 'pass')),
    )
    .sort();
  const failingAtParent = failedEveryRun().filter((id) => s1.parsed.tests[id] === 'fail');
  const dropped_failing_at_parent = failingAtParent.map((test) => ({
    test,
    reason:
      environmentalReason(
        recipe === 'go' ? goTestOutput(s1.result.stdout, test) : s1.result.stdout,
      ) || 'fails at the parent',
  }));
  if (
    (failingAtParent.length > 0 || s1.parsed.package_failures.length > 0) &&
    s.pass_to_pass_policy === 'reject'
  ) {
    throw new SkipItem(
      'p2p_fails_at_parent',
      `${res.instance_id}: ${failingAtParent.length} existing test(s) fail at the parent: ${failingAtParent.slice(0, 5).join(', ')}${s1.parsed.package_failures.length ? `; packages ${s1.parsed.package_failures.join(', ')}` : ''}`,
      {
        failing: dropped_failing_at_parent,
        package_failures: s1.parsed.package_failures,
        step_logs,
      },
    );
  }
  const passingAtParent = Object.entries(s1.parsed.tests)
    .filter(([id, st]) => st === 'pass' && !flakyAtParent.includes(id))
    .map(([id]) => id);

  // Step 2: fail-to-pass tests fail at the parent.
  const withTests = await withTestsP;
  const s2 = await runStep('parent_f2p', withTests);
  const statusAt2 = (id: string): TestStatus | 'absent' => s2.parsed.tests[id] ?? 'absent';
  // Packages (Go) or suites with any failure in step 2: an absent test there did not get to pass.
  const pkgBroken2 = new Set([
    ...s2.parsed.build_failures,
    ...s2.parsed.package_failures,
    ...Object.entries(s2.parsed.tests)
      .filter(([, st]) => st === 'fail')
      .map(([id]) => id.split('::')[0]!),
  ]);
  const inBrokenPkg = (id: string): boolean => pkgBroken2.has(id.split('::')[0]!);
  if (tg.FAIL_TO_PASS.length > 0) {
    const notFailing = tg.FAIL_TO_PASS.filter((id) => {
      const st = statusAt2(id);
      return (
        st === 'pass' ||
        st === 'skip' ||
        (st === 'absent' && !inBrokenPkg(id) && recipe !== 'c-meson')
      );
    });
    if (notFailing.length > 0) {
      throw new SkipItem(
        'f2p_does_not_fail_at_parent',
        `${res.instance_id}: ${notFailing.join(', ')} do(es) not fail at the parent (${notFailing.map(statusAt2).join(', ')})`,
        {
          not_failing: notFailing,
          step_logs,
        },
      );
    }
  }

  // Step 3: after the fix, fix_runs times.
  const withFix = await withFixP;
  const runs: ParsedRun[] = [];
  const stepNames = ['fix_1', 'fix_2', 'fix_3'] as const;
  for (let i = 0; i < s.fix_runs; i++) {
    const name = stepNames[Math.min(i, 2)]!;
    runs.push((await runStep(name, withFix)).parsed);
  }
  const statusesOf = (id: string): (TestStatus | 'absent')[] =>
    runs.map((r) => r.tests[id] ?? 'absent');
  // one status in every fix run, and never both passing and failing within one run
  const consistent = (id: string): boolean =>
    new Set(statusesOf(id)).size === 1 && !runs.some((r) => r.flaky?.includes(id));
  const allPass = (id: string): boolean => statusesOf(id).every((x) => x === 'pass');

  let FAIL_TO_PASS = tg.FAIL_TO_PASS;
  if (FAIL_TO_PASS.length === 0) {
    // Shipped tests: those not passing in step 2 that pass after the fix (a mixed one is kept
    // here so the flaky check below names it).
    const everAfter = new Set(runs.flatMap((r) => Object.keys(r.tests)));
    FAIL_TO_PASS = [...everAfter]
      // failing in step 2, or absent there without having passed at the parent (a panic cut the
      // run short after it, or its package did not build with the new tests)
      .filter(
        (id) =>
          statusAt2(id) === 'fail' || (statusAt2(id) === 'absent' && !passingAtParent.includes(id)),
      )
      .filter((id) => statusesOf(id).includes('pass'))
      .sort();
    if (FAIL_TO_PASS.length === 0) {
      throw new SkipItem(
        'f2p_does_not_fail_at_parent',
        `${res.instance_id}: no test fails at the parent and passes after the fix`,
        { step_logs },
      );
    }
  }
  const flakyF2P = FAIL_TO_PASS.filter((id) => !consistent(id));
  if (flakyF2P.length > 0) {
    throw new SkipItem(
      'flaky',
      `${res.instance_id}: fail-to-pass test(s) ${flakyF2P.slice(0, 5).join(', ')}${flakyF2P.length > 5 ? ` and ${flakyF2P.length - 5} more` : ''} differ between the ${s.fix_runs} fix runs (${flakyF2P
        .slice(0, 5)
        .map((id) => statusesOf(id).join('/'))
        .join('; ')})`,
      {
        flaky: flakyF2P,
        step_logs,
      },
    );
  }
  const f2pFailing = FAIL_TO_PASS.filter((id) => !allPass(id));
  if (f2pFailing.length > 0) {
    throw new SkipItem(
      'f2p_fails_after_fix',
      `${res.instance_id}: ${f2pFailing.join(', ')} still fail(s) after the fix (${f2pFailing.map((id) => statusesOf(id)[0]).join(', ')})`,
      {
        failing: f2pFailing,
        step_logs,
      },
    );
  }
  const f2pSet = new Set(FAIL_TO_PASS);
  const p2pCandidates = passingAtParent.filter((id) => !f2pSet.has(id));
  const dropped_flaky = [
    ...new Set([...p2pCandidates.filter((id) => !consistent(id)), ...flakyAtParent]),
  ].sort();
  const p2pBroken = p2pCandidates.filter(
    (id) => consistent(id) && !allPass(id) && statusesOf(id)[0] !== 'skip',
  );
  if (p2pBroken.length > 0) {
    throw new SkipItem(
      'p2p_fails_after_fix',
      `${res.instance_id}: ${p2pBroken.length} test(s) passing at the parent fail after the fix: ${p2pBroken.slice(0, 5).join(', ')}`,
      {
        failing: p2pBroken,
        step_logs,
      },
    );
  }
  const PASS_TO_PASS = p2pCandidates.filter((id) => consistent(id) && allPass(id)).sort();
  return {
    instance_id: res.instance_id,
    repo: res.repo,
    base_commit: res.base_commit,
    patch: res.patch,
    test_patch: [res.test_patch, tg.f2p_test_patch].filter((p) => p.trim() !== '').join(''),
    problem_statement: res.problem_statement,
    hints_text: res.hints_text,
    created_at: res.created_at,
    version: res.version,
    environment_setup_commit: res.environment_setup_commit,
    FAIL_TO_PASS,
    PASS_TO_PASS,
    alias: res.alias,
    nf: res.nf,
    bug_category: tg.bug_category,
    strategy: tg.strategy,
    spec_refs: tg.spec_refs,
    license: res.license,
    images: built.images,
    image_recipe: recipe,
    toolchain: built.toolchain,
    executor: vc.executor.kind,
    step_logs,
    dropped_flaky,
    incomplete: res.incomplete,
    step_seconds,
    image_sizes: built.sizes,
    dropped_failing_at_parent:
      s.pass_to_pass_policy === 'drop-failing' ? dropped_failing_at_parent : [],
    ...(recipe === 'c-meson' && usesMakeStep(commands) ? { test_commands: commands } : {}),
    ...(meson && vc.registryEnvironment?.excluded.length
      ? { excluded_tests: vc.registryEnvironment.excluded }
      : {}),
  };
}

/** Whether `dir` is a repository work tree (used by tests to sanity-check source dirs). */
export async function isRepo(dir: string): Promise<boolean> {
  return existsSync(join(dir, '.git')) && (await git(dir).checkIsRepo());
}

/**
 * `test` of every registry entry (`config/repos.yaml`), by registry id: its scope and its test
 * and build commands. A registry that cannot be read is a configuration error of the mining
 * stages, which read it first.
 * @throws ConfigError from loadRegistry
 */
function registryTests(
  cfg: HasSwe5g,
  configFile: string,
): Map<
  string,
  { scope: 'touched' | 'repo'; commands: RegistryCommands; environment?: EnvironmentSpec }
> {
  const file = resolvePath(dirname(configFile), swe5gSettings(cfg).registry);
  if (!existsSync(file)) return new Map();
  return new Map(
    loadRegistry(file).map((e) => [
      e.id,
      {
        scope: e.test.scope,
        commands: {
          ...(e.test.command ? { test: e.test.command } : {}),
          ...(e.test.build ? { build: e.test.build } : {}),
        },
        ...(e.environment ? { environment: e.environment } : {}),
      },
    ]),
  );
}

/**
 * Stage `swe5g.validate`: one item per built instance that also has a `swe5g.testgen` record.
 * @throws SkipItem with the failed step's reason (contract list in stages/swe5g/types.ts)
 */
export const validateStage = defineStage<ValidateInput, Validated, HasSwe5g>({
  name: 'swe5g.validate',
  version: 3, // 3: C meson steps run the registry selection (kept build); 2: test dirs are Go packages / source folders (packages.ts), not every touched dir
  needs: ['swe5g.build', 'swe5g.testgen'],
  description:
    'Three-step validation: existing tests pass at the parent, F2P tests fail there and pass after the fix (3 runs).',
  // executor swarm: the cluster's task budget (`swe5g.environments.swarm.task_budget`)
  concurrency: (cfg) => {
    const env = swe5gSettings(cfg).environments;
    return env.executor === 'swarm' ? env.swarm.task_budget : 1;
  },
  async preflight(ctx) {
    await executorPreflight(swe5gSettings(ctx.config).environments);
  },
  itemNeeds: sameKeyIn('swe5g.build', 'swe5g.testgen'),
  *plan(ctx) {
    let n = 0;
    const tests = new Map(
      [...ctx.store.outputs<TestGen>('swe5g.testgen')].map((t) => [t.key, t.output]),
    );
    for (const b of ctx.store.outputs<Built>('swe5g.build')) {
      const testgen = tests.get(b.key);
      const resolved = ctx.store.item('swe5g.resolve', b.key);
      if (!testgen || resolved?.state !== 'done' || !resolved.output) continue;
      if (ctx.limit !== undefined && n >= ctx.limit) return;
      n++;
      yield {
        key: b.key,
        input: { resolved: resolved.output as Resolved, testgen, built: b.output },
      };
    }
  },
  async run(item, ctx) {
    const settings = swe5gSettings(ctx.config).environments;
    const executor: Executor = executorFor(
      settings,
      settings.executor === 'local' ? null : ctx.memo('docker', () => new DockerClient()),
      {
        // the step's result stands; a container or service left behind is reported in the event log
        onCleanupError: (e) => ctx.log(e.message, { code: e.code, ...e.context }),
        log: (m) => ctx.log(m),
      },
    );
    const reg = ctx
      .memo('swe5g.validate.registry', () => registryTests(ctx.config, ctx.configFile))
      .get(item.input.resolved.registry_id);
    return validateInstance(item.input, {
      executor,
      settings,
      ...(reg ? { registryScope: reg.scope, registryCommands: reg.commands } : {}),
      ...(reg?.environment ? { registryEnvironment: reg.environment } : {}),
      saveLog: (step, text) => ctx.artifact(`step_logs/${step}`, text, 'text/plain'),
      log: (m) => ctx.log(m),
      signal: ctx.signal,
    });
  },
});
