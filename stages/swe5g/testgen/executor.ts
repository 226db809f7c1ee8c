/**
 * Runs a repository's tests on the host, in a scratch copy of one commit (`git archive`), for the
 * checks testgen makes itself (Strategy A must fail at the parent and pass after the fix; Strategy
 * B tests are optionally checked the same way). The swe5g validation stage does the real
 * three-step validation in its images; this is the small, swappable local counterpart.
 *
 * Isolation (issue 4: no secret in the executor's environment): every process gets only an
 * allow-listed environment ({@link sandboxEnv}): never a variable of `SECRET_ENV_VARS`, HOME a
 * scratch folder, proxies without credentials. Results come from structured channels only
 * (`go test -json` Action events, pytest's JUnit XML, meson's testlog.json), parsed from the whole
 * stream (only the stored log is capped) through the harness's parser table and exit-code
 * agreement check (stages/swe5g/harness/parse.ts); every process runs on the one process runner
 * (pipeline/process.ts: process-group kill at the timeout or abort). The tests are chosen by id
 * (`go test -run`, pytest node ids, a meson suite, make targets) in a host scratch copy, so the
 * commands are built here, not by the harness spec (which runs an instance's whole selection).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkipItem, TelebenchError } from '../../../pipeline/errors.js';
import { SECRET_ENV_VARS, redact } from '../../../pipeline/secrets.js';
import { runProcess } from '../../../pipeline/process.js';
import type { ParsedRun } from '../harness/parsers.js';
import { PARSERS, disagreement as harnessDisagreement } from '../harness/parse.js';

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
 * host's, so interpreters installed under the real HOME still resolve); C: CC, CXX, PKG_CONFIG_PATH.
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
 *   {@link STREAM_CAP}, then the process is killed and `overflow` set) for parsing; `code` null
 *   when killed
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
  timedOut: boolean;
  overflow: boolean;
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
      timedOut: r.timedOut,
      overflow: r.overflow,
    };
  } finally {
    if (!home) rmSync(scratchHome, { recursive: true, force: true });
  }
}

/**
 * Extracts the tree of `commit` from `gitDir` into a new temporary directory.
 * @returns the directory (remove it with {@link removeScratch})
 * @throws TelebenchError `git_archive_failed` (tier infra) when the commit is unknown
 */
export async function scratchCheckout(gitDir: string, commit: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-testgen-'));
  const r = await runCommand(
    'sh',
    ['-c', `git -C "$0" archive --format=tar "$1" | tar -x -C "$2"`, gitDir, commit, dir],
    dir,
    300_000,
  );
  if (r.code !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new TelebenchError(
      'git_archive_failed',
      `git archive ${commit} in ${gitDir} failed: ${r.out.slice(0, 500)}`,
      {
        tier: 'infra',
        context: { gitDir, commit },
      },
    );
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

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The worse of two exit codes: null (killed) over non-zero over 0. */
export function worseExit(a: number | null, b: number | null): number | null {
  if (a === null || b === null) return null;
  return a !== 0 ? a : b;
}

const fromParsed = (s: 'pass' | 'fail' | 'skip' | undefined): TestStatus =>
  s === 'pass' ? 'passed' : s === 'fail' ? 'failed' : s === 'skip' ? 'skipped' : 'missing';

/** The harness's agreement check (harness/parse.ts): its message, or null when the run agrees. */
function disagreement(parsed: ParsedRun, code: number | null, step: string): string | null {
  return harnessDisagreement(parsed, code, step) || null;
}

/**
 * Runs the given test ids (contract format `<package-or-file>::<test>`) in `dir`, with
 * {@link sandboxEnv} (HOME a scratch folder made here and removed afterwards).
 * Go: `go test -json -run` per import path (the test binary may run at most 120 s), statuses from
 * the `Action` of test events (`parseGoTestJson` of the harness: a `--- PASS` line printed by the code
 * under test stays an `output` event). Python: pytest node ids, statuses from pytest's JUnit XML
 * (`parsePytestJUnit`). C: `meson test` (suite `f2p`, statuses from
 * `meson-logs/testlog.json`) or `make <target>` (exit code).
 * Each command's results must agree with its exit code (`checkAgreement`); when they do not,
 * `ambiguous` says why and every status is `missing`.
 * @param timeoutMs per command
 * @returns statuses of `ids`; `exitCode` the worst over the commands
 * @throws TelebenchError `command_failed` (tier infra) when go / python3 / meson / make is missing
 */
export async function runTests(
  dir: string,
  language: 'go' | 'c' | 'python',
  ids: string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<TestRun> {
  const home = mkdtempSync(join(tmpdir(), 'telebench-home-'));
  try {
    return await runTestsIn(dir, home, language, ids, timeoutMs, signal);
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
): Promise<TestRun> {
  const t0 = Date.now();
  const statuses: Record<string, TestStatus> = Object.fromEntries(
    ids.map((i) => [i, 'missing' as TestStatus]),
  );
  let log = '';
  let buildFailed = false;
  let exitCode: number | null = 0;
  const ambiguous: string[] = [];
  const run = (
    cmd: string,
    args: string[],
    cwd: string,
    env: Record<string, string> = {},
  ): ReturnType<typeof runCommand> => runCommand(cmd, args, cwd, timeoutMs, env, signal, home);
  if (language === 'go') {
    const byPkg = new Map<string, string[]>();
    for (const id of ids) {
      const [pkg, name] = id.split('::') as [string, string];
      byPkg.set(pkg, [...(byPkg.get(pkg) ?? []), name]);
    }
    const modules = goModules(dir);
    for (const [pkg, names] of byPkg) {
      const mod = modules
        .filter((m) => pkg === m.path || pkg.startsWith(`${m.path}/`))
        .sort((a, b) => b.path.length - a.path.length)[0];
      const r = await run(
        'go',
        [
          'test',
          '-json',
          '-count=1',
          '-timeout',
          `${Math.min(120, Math.max(10, Math.floor(timeoutMs / 1000) - 5))}s`,
          '-run',
          `^(${names.map(escapeRe).join('|')})$`,
          pkg,
        ],
        mod ? join(dir, mod.dir) : dir,
      );
      log += r.out;
      exitCode = worseExit(exitCode, r.code);
      if (r.overflow) ambiguous.push(`go test ${pkg}: output over ${STREAM_CAP} bytes`);
      const parsed = PARSERS['go-test-json']({ exitCode: r.code, stdout: r.stdout, files: [] });
      const ranAny = Object.keys(parsed.tests).some((id) => id.startsWith(`${pkg}::`));
      // no test binary ran: compile error, [setup failed], `go:` module errors, init panic
      if (parsed.build_failures.length > 0 || (r.code !== 0 && !ranAny)) buildFailed = true;
      else {
        const why = disagreement(parsed, r.code, `go test ${pkg}`);
        if (why) ambiguous.push(why);
      }
      for (const n of names) statuses[`${pkg}::${n}`] = fromParsed(parsed.tests[`${pkg}::${n}`]);
    }
  } else if (language === 'python') {
    const xmlFile = join(home, 'junit.xml');
    const r = await run(
      'python3',
      [
        '-m',
        'pytest',
        '-rA',
        '-p',
        'no:cacheprovider',
        `--junitxml=${xmlFile}`,
        '-o',
        'junit_family=xunit1',
        ...ids,
      ],
      dir,
    );
    log = r.out;
    exitCode = r.code;
    let parsed: ParsedRun | null = null;
    if (existsSync(xmlFile)) {
      try {
        parsed = {
          ...PARSERS['junit-xml']({
            exitCode: r.code,
            stdout: '',
            files: [readFileSync(xmlFile, 'utf8')],
          }),
          no_tests: r.code === 5,
        };
      } catch (err) {
        if (!(err instanceof SkipItem)) throw err;
        ambiguous.push(err.message);
      }
    }
    if (parsed) {
      const why = disagreement(parsed, r.code, 'pytest');
      if (why) ambiguous.push(why);
      for (const id of ids) statuses[id] = fromParsed(parsed.tests[id]);
      // collection errors (exit 2, no requested test reported) or bad arguments (exit 4)
      if (
        parsed.build_failures.length > 0 ||
        (r.code === 2 && !ids.some((id) => parsed.tests[id] !== undefined))
      )
        buildFailed = true;
    } else if (r.code !== 0) buildFailed = true;
    if (r.code === 4) buildFailed = true;
  } else {
    const meson = ids.some((i) => i.startsWith('f2p::'));
    let introspect: string | undefined;
    if (meson) {
      for (const args of [
        ['setup', '_f2p_build'],
        ['compile', '-C', '_f2p_build'],
      ]) {
        const s = await run('meson', args, dir);
        log += s.out;
        if (s.code !== 0) {
          buildFailed = true;
          exitCode = worseExit(exitCode, s.code);
          break;
        }
      }
      if (!buildFailed) {
        const i = await run('meson', ['introspect', '--tests', '_f2p_build'], dir);
        if (i.code === 0) introspect = i.stdout;
        else log += i.out;
      }
    }
    for (const id of ids) {
      if (buildFailed) break;
      const name = id.split('::')[1]!;
      const r = meson
        ? await run(
            'meson',
            ['test', '-C', '_f2p_build', '--no-rebuild', '--suite', 'f2p', name],
            dir,
          )
        : await run('make', ['--no-print-directory', name], dir);
      log += r.out;
      exitCode = worseExit(exitCode, r.code);
      if (meson) {
        const logFile = join(dir, '_f2p_build', 'meson-logs', 'testlog.json');
        const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
        rmSync(logFile, { force: true });
        let parsed: ParsedRun;
        try {
          parsed = PARSERS['meson-testlog']({
            exitCode: r.code,
            stdout: '',
            files: [text, introspect],
          });
        } catch (err) {
          if (!(err instanceof SkipItem)) throw err;
          ambiguous.push(err.message);
          continue;
        }
        const why = disagreement(parsed, r.code, `meson test ${name}`);
        if (why) ambiguous.push(why);
        statuses[id] = fromParsed(parsed.tests[id]);
      } else {
        statuses[id] =
          r.code === 0 ? 'passed' : /No rule to make target/.test(r.out) ? 'missing' : 'failed';
      }
    }
  }
  if (ambiguous.length > 0) for (const id of ids) statuses[id] = 'missing';
  return {
    statuses,
    buildFailed,
    exitCode,
    ...(ambiguous.length > 0 ? { ambiguous: ambiguous.join('; ') } : {}),
    log: log.slice(0, LOG_CAP),
    durationMs: Date.now() - t0,
  };
}
