/**
 * The one process runner: every child process that runs tests on the host (the `local` executor's
 * steps, testgen's own Strategy A checks and their helpers) starts here. A child gets its own
 * process group (`detached`), so a timeout, an abort or an output overflow kills the whole group
 * (the `go` command and the test binaries it starts, `meson` and its tests), never only the shell.
 */
import { spawn } from 'node:child_process';
import { TelebenchError } from './errors.js';

/** What to run. */
export interface ProcessSpec {
  cmd: string;
  args: string[];
  cwd: string;
  /** The child's whole environment (nothing of the parent's is inherited). */
  env: Record<string, string>;
  /** Wall-clock limit in milliseconds; the process group is killed after it (`timedOut`). */
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * Bytes of stdout kept whole for parsing; past it the process group is killed and `overflow`
   * set (default: unbounded).
   */
  stdoutCap?: number;
  /** Bytes of the combined stdout+stderr kept in `out` (default 64 KiB). */
  logCap?: number;
}

/** What a process produced. `code` is null when it was killed (timeout, abort, overflow). */
export interface ProcessResult {
  code: number | null;
  /** The whole stdout (up to `stdoutCap`). */
  stdout: string;
  /** The whole stderr. */
  stderr: string;
  /** stdout and stderr interleaved as they came, capped at `logCap` bytes. */
  out: string;
  timedOut: boolean;
  overflow: boolean;
  aborted: boolean;
  durationMs: number;
}

/** Default of {@link ProcessSpec.logCap}: 64 KiB. */
export const PROCESS_LOG_CAP = 1 << 16;

/**
 * Runs one process in its own process group and waits for it; never throws for a non-zero exit.
 * @returns see {@link ProcessResult}
 * @throws TelebenchError `command_failed` (tier infra) when the command cannot be started (not
 *   installed, cwd missing)
 */
export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const started = Date.now();
  const logCap = spec.logCap ?? PROCESS_LOG_CAP;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(spec.cmd, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stdoutChunks: Buffer[] = [];
    const stderrChunks: Buffer[] = [];
    let stdoutBytes = 0;
    let out = '';
    let timedOut = false;
    let overflow = false;
    let aborted = false;
    const killGroup = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    };
    const addLog = (b: Buffer): void => {
      if (out.length < logCap) out += b.toString('utf8');
    };
    child.stdout.on('data', (b: Buffer) => {
      addLog(b);
      if (overflow) return;
      stdoutBytes += b.length;
      if (spec.stdoutCap !== undefined && stdoutBytes > spec.stdoutCap) {
        overflow = true;
        killGroup();
        return;
      }
      stdoutChunks.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      addLog(b);
      stderrChunks.push(b);
    });
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    if (spec.signal?.aborted) onAbort();
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      cleanup();
      reject(
        new TelebenchError('command_failed', `could not start ${spec.cmd}: ${err.message}`, {
          tier: 'infra',
          context: { cmd: spec.cmd, cwd: spec.cwd },
          cause: err,
        }),
      );
    });
    child.on('close', (code) => {
      cleanup();
      // the group may hold children that outlived the shell (a backgrounded test server)
      killGroup();
      resolvePromise({
        code: timedOut || overflow || aborted ? null : code,
        stdout: Buffer.concat(stdoutChunks).toString('utf8'),
        stderr: Buffer.concat(stderrChunks).toString('utf8'),
        out: out.slice(0, logCap),
        timedOut,
        overflow,
        aborted,
        durationMs: Date.now() - started,
      });
    });
  });
}
