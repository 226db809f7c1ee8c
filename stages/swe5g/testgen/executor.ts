/**
 * Runs a repository's tests on the host, in a scratch copy of one commit (`git archive`), for the
 * checks testgen makes itself (Strategy A must fail at the parent and pass after the fix; Strategy
 * B tests are optionally checked the same way). The swe5g validation stage does the real
 * three-step validation in its images; this is the small, swappable local counterpart.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TelebenchError } from '../../../pipeline/errors.js';

/** Outcome of one test id: passed, failed, or not seen (build failure, unknown id). */
export type TestStatus = 'passed' | 'failed' | 'missing';

/** Result of a test run. `buildFailed` when the code under test did not compile. */
export interface TestRun {
  statuses: Record<string, TestStatus>;
  buildFailed: boolean;
  exitCode: number | null;
  /** Combined stdout+stderr, truncated to 64 KiB. */
  log: string;
  durationMs: number;
}

/** Runs `cmd args` in `cwd`; never throws for a non-zero exit. Output capped at 64 KiB. */
export async function runCommand(
  cmd: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
  env: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<{ code: number | null; out: string; timedOut: boolean }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    const add = (b: Buffer): void => {
      if (out.length < 1 << 16) out += b.toString('utf8');
    };
    child.stdout.on('data', add);
    child.stderr.on('data', add);
    let timedOut = false;
    const kill = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    };
    signal?.addEventListener('abort', kill, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(
        new TelebenchError('command_failed', `could not start ${cmd}: ${err.message}`, {
          tier: 'infra',
          context: { cmd, cwd },
          cause: err,
        }),
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      resolvePromise({ code, out: out.slice(0, 1 << 16), timedOut });
    });
  });
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

/**
 * Runs the given test ids (contract format `<package-or-file>::<test>`) in `dir`.
 * Go: `go test -v -run` per import path (the test binary may run at most 120 s); Python: pytest node ids; C: `meson test` (suite `f2p`)
 * or `make <target>`.
 * @param timeoutMs per command
 */
export async function runTests(
  dir: string,
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
      const r = await runCommand(
        'go',
        [
          'test',
          '-count=1',
          '-timeout',
          `${Math.min(120, Math.max(10, Math.floor(timeoutMs / 1000) - 5))}s`,
          '-v',
          '-run',
          `^(${names.map(escapeRe).join('|')})$`,
          pkg,
        ],
        mod ? join(dir, mod.dir) : dir,
        timeoutMs,
        { GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
        signal,
      );
      log += r.out;
      exitCode = r.code;
      // no test binary ran: compile error, [setup failed], or `go:` module errors
      if (/\[(build|setup) failed\]/.test(r.out) || (r.code !== 0 && !/^=== RUN/m.test(r.out)))
        buildFailed = true;
      for (const n of names) {
        if (new RegExp(`^\\s*--- PASS: ${escapeRe(n)} `, 'm').test(r.out))
          statuses[`${pkg}::${n}`] = 'passed';
        else if (new RegExp(`^\\s*--- FAIL: ${escapeRe(n)} `, 'm').test(r.out))
          statuses[`${pkg}::${n}`] = 'failed';
      }
    }
  } else if (language === 'python') {
    const r = await runCommand(
      'python3',
      ['-m', 'pytest', '-rA', '-p', 'no:cacheprovider', ...ids],
      dir,
      timeoutMs,
      {},
      signal,
    );
    log = r.out;
    exitCode = r.code;
    for (const id of ids) {
      if (new RegExp(`^PASSED ${escapeRe(id)}\\b`, 'm').test(r.out)) statuses[id] = 'passed';
      else if (new RegExp(`^(FAILED|ERROR) ${escapeRe(id)}\\b`, 'm').test(r.out))
        statuses[id] = 'failed';
    }
    if (r.code === 4 || /ERROR collecting/.test(r.out)) buildFailed = true;
  } else {
    const meson = ids.some((i) => i.startsWith('f2p::'));
    if (meson) {
      for (const args of [
        ['setup', '_f2p_build'],
        ['compile', '-C', '_f2p_build'],
      ]) {
        const s = await runCommand('meson', args, dir, timeoutMs, {}, signal);
        log += s.out;
        if (s.code !== 0) {
          buildFailed = true;
          break;
        }
      }
    }
    for (const id of ids) {
      if (buildFailed) break;
      const name = id.split('::')[1]!;
      const r = meson
        ? await runCommand(
            'meson',
            ['test', '-C', '_f2p_build', '--no-rebuild', '--suite', 'f2p', name],
            dir,
            timeoutMs,
            {},
            signal,
          )
        : await runCommand('make', ['--no-print-directory', name], dir, timeoutMs, {}, signal);
      log += r.out;
      exitCode = r.code;
      if (meson) {
        // meson prints one line per test: " 1/1 f2p_x   OK   0.01s" (or FAIL, ERROR, TIMEOUT)
        const line = r.out.split('\n').find((l) => new RegExp(`\\s${escapeRe(name)}\\s`).test(l));
        statuses[id] = !line ? 'missing' : /\sOK\s/.test(line) ? 'passed' : 'failed';
      } else {
        statuses[id] =
          r.code === 0 ? 'passed' : /No rule to make target/.test(r.out) ? 'missing' : 'failed';
      }
    }
  }
  return {
    statuses,
    buildFailed,
    exitCode,
    log: log.slice(0, 1 << 16),
    durationMs: Date.now() - t0,
  };
}
