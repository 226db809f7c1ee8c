/**
 * Runs a repository's tests on the host, in a scratch copy of one commit (`git archive`), for the
 * checks testgen makes itself (Strategy A must fail at the parent and pass after the fix; Strategy
 * B tests are optionally checked the same way). The swe5g validation stage does the real
 * three-step validation in its images; this is the small, swappable local counterpart.
 *
 * Isolation (issue 4: no secret in the executor's environment): every process gets only an
 * allow-listed environment ({@link sandboxEnv}): never a variable of `SECRET_ENV_VARS`, HOME a
 * scratch folder, proxies without credentials. The tests run through the harness like every other
 * test run (issue 22, "nothing else runs tests"): the steps of the ids are the harness's
 * (stages/swe5g/harness/id-spec.ts: the commands and parsers by id), each run by the one step
 * runner (`runStep`: executor call, limits, log, the parser table, exit-code agreement) on
 * {@link ScratchExecutor}, a harness executor that runs in the scratch checkout on the one process
 * runner (pipeline/process.ts: process-group kill at the timeout or abort). Results come from
 * structured channels only (`go test -json` Action events, pytest's JUnit XML, meson's
 * testlog.json, the make step's results), parsed from the whole stream (only the kept log is
 * capped).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportTree } from '../../../pipeline/providers/git/export-tree.js';
import { SkipItem, TelebenchError } from '../../../pipeline/errors.js';
import { SECRET_ENV_VARS, redact } from '../../../pipeline/secrets.js';
import { runProcess } from '../../../pipeline/process.js';
import {
  collectFiles,
  type Executor,
  type StepResult,
  type StepSpec,
} from '../../../pipeline/providers/docker/executor.js';
import { writeOverlay } from '../../../pipeline/providers/docker/overlay.js';
import { ID_BUILD_FAILED, idSteps, type IdStep } from '../harness/id-spec.js';
import { runStep, type StepOutcome } from '../harness/run-step.js';

/** Outcome of one test id: passed, failed, skipped, or not seen (build failure, unknown id). */
export type TestStatus = 'passed' | 'failed' | 'skipped' | 'missing';

/** Result of a test run. `buildFailed` when the code under test did not compile. */
export interface TestRun {
  statuses: Record<string, TestStatus>;
  buildFailed: boolean;
  /** Worst exit code over the commands of the run: null (killed) > non-zero > 0. */
  exitCode: number | null;
  /**
   * Set when a result channel disagreed with the exit code or held contradicting results for one
   * test (e.g. output injected around the runner): the statuses are then all `missing`.
   */
  ambiguous?: string;
  /** Combined stdout+stderr, truncated to 64 KiB (results are parsed from the whole stream). */
  log: string;
  durationMs: number;
}

/** Bytes of output kept in {@link TestRun.log} and in `out` of {@link runCommand}. */
export const LOG_CAP = 1 << 16;
/** Hard bound on the output kept for parsing; past it the process is killed (`overflow`). */
export const STREAM_CAP = 256 << 20;

const SECRET_NAMES = new Set<string>(SECRET_ENV_VARS);

/** `scheme://user:pass@host` -> `scheme://host` (each comma/pipe-separated entry of a list). */
function stripCredentials(v: string): string {
  return v.replace(/(^|[,|])([a-z][a-z0-9+.-]*:\/\/)[^/@,|]*@/gi, '$1$2');
}

/**
 * The allow-listed environment of every process this runner starts (issue 4: "no secrets in the
 * executor's environment").
 * Shape: PATH (host's); HOME = `home` (a scratch folder); TZ=UTC, LANG/LC_ALL=C.UTF-8,
 * SOURCE_DATE_EPOCH=0; Go: GOCACHE, GOMODCACHE, GOPATH, GOROOT (host's, defaulting to the host
 * user's folders so the caches stay shared), GOFLAGS=-mod=mod, GOTOOLCHAIN=local, GOPROXY /
 * GOSUMDB / GONOSUMDB / GOPRIVATE / GONOPROXY / GOINSECURE (host's, without URL credentials);
 * HTTP(S)_PROXY / NO_PROXY without credentials; Python: PYTHONHASHSEED=0,
 * PYTHONDONTWRITEBYTECODE=1, PYENV_ROOT / PYENV_VERSION / VIRTUAL_ENV / PYTHONUSERBASE (the
 * host's, so interpreters installed under the real HOME still resolve); C: CC, CXX, PKG_CONFIG_PATH,
 * and ccache's CCACHE_DIR (host's, else `~/.cache/ccache` of the real HOME), CCACHE_BASEDIR (the
 * temporary folder the scratch checkouts are made in) and CCACHE_NOHASHDIR, so the parent and fix
 * builds of a check, and every check of a project, share compiled objects (Open5GS: ~990 build
 * steps per direct-call build).
 * A name of `SECRET_ENV_VARS` is never included, nor any value containing a secret's value.
 * @param extra variables merged last (e.g. GOFLAGS)
 * @throws TelebenchError `secret_in_env` (tier config) when `extra` names a secret variable
 */
export function sandboxEnv(
  home: string,
  extra: Record<string, string> = {},
  host: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const realHome = host.HOME || homedir();
  const env: Record<string, string> = {
    PATH: host.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TZ: 'UTC',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    SOURCE_DATE_EPOCH: '0',
    GOCACHE: host.GOCACHE || join(realHome, '.cache', 'go-build'),
    GOPATH: host.GOPATH || join(realHome, 'go'),
    GOFLAGS: '-mod=mod',
    GOTOOLCHAIN: 'local',
    PYTHONHASHSEED: '0',
    PYTHONDONTWRITEBYTECODE: '1',
  };
  env.GOMODCACHE = host.GOMODCACHE || join(env.GOPATH!.split(':')[0]!, 'pkg', 'mod');
  const pyenvRoot = host.PYENV_ROOT || join(realHome, '.pyenv');
  if (existsSync(pyenvRoot)) env.PYENV_ROOT = pyenvRoot;
  env.PYTHONUSERBASE = host.PYTHONUSERBASE || join(realHome, '.local');
  // C: meson uses ccache when it is on PATH; one cache for every scratch checkout (they live under
  // the temporary folder, so paths below it are hashed relative and the build folder is not)
  env.CCACHE_DIR = host.CCACHE_DIR || join(realHome, '.cache', 'ccache');
  env.CCACHE_BASEDIR = host.CCACHE_BASEDIR || tmpdir();
  env.CCACHE_NOHASHDIR = 'true';
  for (const k of ['GOROOT', 'PYENV_VERSION', 'VIRTUAL_ENV', 'CC', 'CXX', 'PKG_CONFIG_PATH'])
    if (host[k]) env[k] = host[k];
  for (const k of [
    'GOPROXY',
    'GOSUMDB',
    'GONOSUMDB',
    'GOPRIVATE',
    'GONOPROXY',
    'GOINSECURE',
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'NO_PROXY',
    'http_proxy',
    'https_proxy',
    'no_proxy',
  ])
    if (host[k]) env[k] = stripCredentials(host[k]);
  for (const [k, v] of Object.entries(extra)) {
    if (SECRET_NAMES.has(k))
      throw new TelebenchError('secret_in_env', `${k} must not reach the test runner`, {
        tier: 'config',
        context: { variable: k },
      });
    env[k] = v;
  }
  // a value that contains a secret (e.g. a token inside a proxy URL's path) is dropped
  for (const [k, v] of Object.entries(env)) if (redact(v, host) !== v) delete env[k];
  return env;
}

/**
 * Runs `cmd args` in `cwd` with {@link sandboxEnv} (HOME = `home`, or a fresh scratch folder
 * removed afterwards); never throws for a non-zero exit.
 * @returns `out`: stdout+stderr capped at {@link LOG_CAP}; `stdout`: the whole stdout (up to
 *   {@link STREAM_CAP}, then the process is killed and `overflow` set) and `stderr` for parsing;
 *   `code` null when killed; `durationMs` wall time
 * @throws TelebenchError `command_failed` (tier infra) when the command cannot be started
 */
export async function runCommand(
  cmd: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
  env: Record<string, string> = {},
  signal?: AbortSignal,
  home?: string,
): Promise<{
  code: number | null;
  out: string;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  overflow: boolean;
  durationMs: number;
}> {
  const scratchHome = home ?? mkdtempSync(join(tmpdir(), 'telebench-home-'));
  let childEnv: Record<string, string>;
  try {
    childEnv = sandboxEnv(scratchHome, env);
  } catch (err) {
    if (!home) rmSync(scratchHome, { recursive: true, force: true });
    throw err;
  }
  try {
    const r = await runProcess({
      cmd,
      args,
      cwd,
      env: childEnv,
      timeoutMs,
      stdoutCap: STREAM_CAP,
      logCap: LOG_CAP,
      ...(signal ? { signal } : {}),
    });
    return {
      code: r.code,
      out: r.out,
      stdout: r.stdout,
      stderr: r.stderr,
      timedOut: r.timedOut,
      overflow: r.overflow,
      durationMs: r.durationMs,
    };
  } finally {
    if (!home) rmSync(scratchHome, { recursive: true, force: true });
  }
}

/**
 * Extracts the tree of `commit` from `gitDir` into a new temporary directory (the shared
 * exporter: blobs a partial mirror lacks are left out when they are documents no test reads or
 * listed in `unread`, the instance's `absent_files` that resolve found outside what it reads).
 * @returns the directory (remove it with {@link removeScratch})
 * @throws TelebenchError `git_export_failed` (tier infra) when the commit is unknown;
 *   `source_objects_missing` (tier content) when an absent blob may be read by a build or test
 */
export async function scratchCheckout(
  gitDir: string,
  commit: string,
  unread: readonly string[] = [],
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-testgen-'));
  const skip = new Set(unread);
  try {
    await exportTree(gitDir, commit, dir, (p) => skip.has(p));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return dir;
}

/** Removes a scratch directory made by {@link scratchCheckout}. */
export function removeScratch(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Applies a unified diff in `dir` with `git apply`.
 * @returns null when applied, else git's message
 */
export async function applyPatch(dir: string, patch: string): Promise<string | null> {
  if (patch.trim() === '') return null;
  const file = join(dir, '.telebench-f2p.patch');
  writeFileSync(file, patch);
  const r = await runCommand('git', ['apply', '--whitespace=nowarn', file], dir, 60_000);
  rmSync(file, { force: true });
  return r.code === 0 ? null : r.out.slice(0, 2000);
}

/**
 * The Go modules of a source tree: `go.mod` files up to 4 levels deep (not under vendor/,
 * testdata/ or hidden folders) with their `module` path; `dir` is relative ('' for the root).
 */
export function goModules(root: string): { dir: string; path: string }[] {
  const out: { dir: string; path: string }[] = [];
  const walk = (rel: string, depth: number): void => {
    const abs = join(root, rel);
    if (existsSync(join(abs, 'go.mod'))) {
      const m = /^module\s+("?)([^\s"]+)\1\s*$/m.exec(readFileSync(join(abs, 'go.mod'), 'utf8'));
      if (m) out.push({ dir: rel, path: m[2]! });
    }
    if (depth >= 4) return;
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (
        !e.isDirectory() ||
        e.name.startsWith('.') ||
        e.name === 'vendor' ||
        e.name === 'testdata'
      )
        continue;
      walk(rel ? `${rel}/${e.name}` : e.name, depth + 1);
    }
  };
  walk('', 0);
  return out;
}

/** The worse of two exit codes: null (killed) over non-zero over 0. */
export function worseExit(a: number | null, b: number | null): number | null {
  if (a === null || b === null) return null;
  return a !== 0 ? a : b;
}

const fromParsed = (s: 'pass' | 'fail' | 'skip' | undefined): TestStatus =>
  s === 'pass' ? 'passed' : s === 'fail' ? 'failed' : s === 'skip' ? 'skipped' : 'missing';

/**
 * The harness {@link Executor} of testgen's host checks: runs a step's command in the scratch
 * checkout itself (`instance.sourceDir`; made for one check and removed after it, so the steps
 * of one check share the meson build of `F2P_BUILD`, id-spec.ts), through {@link runCommand} (the
 * allow-listed environment, HOME = `home`, the process-group kill of pipeline/process.ts).
 * Collected paths are relative to the checkout. Keeps each step's interleaved
 * output (`log`) and the steps whose output passed {@link STREAM_CAP} (`overflowed`).
 */
class ScratchExecutor implements Executor {
  readonly kind = 'local' as const;
  log = '';
  readonly overflowed: string[] = [];

  constructor(
    private readonly home: string,
    private readonly extraEnv: Readonly<Record<string, string>> = {},
  ) {}

  async run(spec: StepSpec, signal?: AbortSignal): Promise<StepResult> {
    const dir = spec.instance.sourceDir;
    for (const rel of writeOverlay(dir, spec.files)) rmSync(join(dir, rel), { force: true });
    const r = await runCommand(
      '/bin/sh',
      ['-c', spec.command],
      dir,
      spec.limits.timeoutMs,
      { ...spec.env, ...this.extraEnv },
      signal,
      this.home,
    );
    this.log += r.out;
    if (r.overflow) this.overflowed.push(spec.step);
    return {
      executor: 'local',
      step: spec.step,
      exitCode: r.timedOut ? null : r.code,
      timedOut: r.timedOut,
      stdout: r.stdout,
      stderr: r.stderr,
      collected: collectFiles(dir, spec.collect),
      durationMs: r.durationMs,
    };
  }
}

/** stdout and stderr of a step's (one) run. */
const runText = (o: StepOutcome): string =>
  `${o.stored[0]?.stdout ?? ''}${o.stored[0]?.stderr ?? ''}`;

/** How one id step's outcome reads for testgen: statuses of its ids, a build failure, ambiguity. */
function readIdStep(
  language: 'go' | 'c' | 'python',
  step: IdStep,
  outcome: StepOutcome,
): { statuses: Record<string, TestStatus>; buildFailed: boolean; ambiguous: string } {
  const code = outcome.results[0]?.exitCode ?? null;
  const { parsed } = outcome;
  const statuses = Object.fromEntries(step.ids.map((id) => [id, fromParsed(parsed.tests[id])]));
  let buildFailed: boolean;
  if (language === 'go') {
    const pkg = step.ids[0]!.split('::')[0]!;
    const ranAny = Object.keys(parsed.tests).some((id) => id.startsWith(`${pkg}::`));
    // no test binary ran: compile error, [setup failed], `go:` module errors, init panic
    buildFailed = parsed.build_failures.length > 0 || (code !== 0 && !ranAny);
  } else if (language === 'python') {
    // collection errors (exit 2, no requested test reported) or bad arguments (exit 4)
    buildFailed =
      parsed.build_failures.length > 0 ||
      (code === 2 && !step.ids.some((id) => parsed.tests[id] !== undefined)) ||
      code === 4;
  } else if (step.spec.parser === 'meson-testlog') {
    buildFailed = code === ID_BUILD_FAILED;
  } else {
    // make: the exit code is the result; a target the Makefile lacks did not run
    buildFailed = false;
    for (const id of step.ids)
      if (statuses[id] === 'failed' && /No rule to make target/.test(runText(outcome)))
        statuses[id] = 'missing';
    return { statuses, buildFailed, ambiguous: '' };
  }
  return { statuses, buildFailed, ambiguous: buildFailed ? '' : outcome.ambiguous };
}

/**
 * Runs the given test ids (contract format `<package-or-file>::<test>`) in `dir`, with
 * {@link sandboxEnv} (HOME a scratch folder made here and removed afterwards).
 * The steps are the harness's `idSteps` (one per Go import path, one pytest run, one meson build
 * and test of suite `f2p`, one per make target), each through `runStep`. Go: statuses from the
 * `Action` of test events (a `--- PASS` line printed by the code under test stays an `output`
 * event). Python: pytest's JUnit XML. C: meson's `testlog.json`, or the make target's exit code
 * (`missing` when the Makefile has no such target).
 * Each step's results must agree with its exit code (the harness's agreement check); when they do
 * not, `ambiguous` says why and every status is `missing`.
 * @param timeoutMs per command
 * @param env variables added to every command's environment (after the step's own)
 * @returns statuses of `ids`; `exitCode` the worst over the commands
 * @throws TelebenchError `command_failed` (tier infra) when go / python3 / meson / make is missing
 *   (the shell's exit 127)
 */
export async function runTests(
  dir: string,
  language: 'go' | 'c' | 'python',
  ids: string[],
  timeoutMs: number,
  signal?: AbortSignal,
  env?: Readonly<Record<string, string>>,
): Promise<TestRun> {
  const home = mkdtempSync(join(tmpdir(), 'telebench-home-'));
  try {
    return await runTestsIn(dir, home, language, ids, timeoutMs, signal, env);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function runTestsIn(
  dir: string,
  home: string,
  language: 'go' | 'c' | 'python',
  ids: string[],
  timeoutMs: number,
  signal?: AbortSignal,
  env?: Readonly<Record<string, string>>,
): Promise<TestRun> {
  const t0 = Date.now();
  const statuses: Record<string, TestStatus> = Object.fromEntries(
    ids.map((i) => [i, 'missing' as TestStatus]),
  );
  const executor = new ScratchExecutor(home, env);
  let buildFailed = false;
  let exitCode: number | null = 0;
  const ambiguous: string[] = [];
  const steps = idSteps(language, ids, {
    timeoutMs,
    ...(language === 'go' ? { modules: goModules(dir) } : {}),
  });
  for (const step of steps) {
    let outcome: StepOutcome;
    try {
      outcome = await runStep(
        step.spec,
        { name: step.name, files: {} },
        {
          executor,
          instance: { image: '', sourceDir: dir },
          saveLog: (name) => name,
          ...(signal ? { signal } : {}),
        },
      );
    } catch (err) {
      // a result file the parser cannot read at all (malformed JUnit XML, meson introspect)
      if (!(err instanceof SkipItem)) throw err;
      ambiguous.push(err.message);
      continue;
    }
    const code = outcome.results[0]?.exitCode ?? null;
    // the shell's "command not found": the toolchain is missing, not the test broken
    if (code === 127)
      throw new TelebenchError(
        'command_failed',
        `${step.name}: the command was not found (exit 127): ${runText(outcome).slice(0, 300)}`,
        { tier: 'infra', context: { step: step.name, dir } },
      );
    exitCode = worseExit(exitCode, code);
    if (executor.overflowed.includes(step.name))
      ambiguous.push(`${step.name}: output over ${STREAM_CAP} bytes`);
    const read = readIdStep(language, step, outcome);
    Object.assign(statuses, read.statuses);
    if (read.buildFailed) buildFailed = true;
    if (read.ambiguous) ambiguous.push(read.ambiguous);
    // meson: a failed build leaves nothing to run
    if (read.buildFailed && language === 'c') break;
  }
  if (ambiguous.length > 0) for (const id of ids) statuses[id] = 'missing';
  return {
    statuses,
    buildFailed,
    exitCode,
    ...(ambiguous.length > 0 ? { ambiguous: ambiguous.join('; ') } : {}),
    log: executor.log.slice(0, LOG_CAP),
    durationMs: Date.now() - t0,
  };
}
