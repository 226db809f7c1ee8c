/**
 * Where a validation step runs. Two executors implement one interface:
 * - {@link DockerExecutor}: a fresh container per step from the instance image, no network
 *   (`NetworkMode: none`: the loopback only, /etc/hosts with localhost), memory / CPU / pids limits, a wall-clock timeout
 *   (the container is killed), and an environment with only pinned variables (TZ, seeds): no
 *   secret of the host's environment is ever passed.
 * - {@link LocalExecutor}: a temporary copy of the source tree and the host's toolchain, for hosts
 *   with no Docker engine; same inputs, same result shape.
 * Every {@link StepResult} records which executor produced it.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { PassThrough } from 'node:stream';
import { TelebenchError } from '../../errors.js';
import { runProcess } from '../../process.js';
import { tarFs, type DockerClient } from './client.js';
import { PINNED_ENV } from './recipes.js';
import { writeOverlay, type Overlay } from './overlay.js';

/** Which executor produced a result (recorded on every validated instance). */
export type ExecutorKind = 'docker' | 'local' | 'swarm';

/** Resource limits of one step. */
export interface StepLimits {
  /** Memory limit in bytes. */
  memory: number;
  /** CPUs (fractional allowed). */
  cpus: number;
  /** Max processes/threads in the container. */
  pids: number;
  /** Wall-clock limit in milliseconds; the step is killed after it. */
  timeoutMs: number;
}

/** One step: the instance to start from, the files to change, the shell command to run. */
export interface StepSpec {
  /** Step name for logs (`parent_p2p`, `fix_2`, ...). */
  step: string;
  /** Instance image (docker) and its source tree on the host (local). */
  instance: { image: string; workdir: string; sourceDir: string };
  /**
   * Files to write before the command: path relative to workdir -> bytes and git mode (see
   * {@link Overlay}); null deletes. Every executor writes it with {@link writeOverlay}.
   */
  files: Overlay;
  /** Shell command (`/bin/sh -c`), run in workdir. */
  command: string;
  /** Files to read back after the command (relative to workdir). */
  collect: string[];
  limits: StepLimits;
  /** Extra environment (merged over {@link PINNED_ENV}); never pass secrets here. */
  env?: Record<string, string>;
}

/** What a step produced. `exitCode` is null when the step was killed by the timeout. */
export interface StepResult {
  executor: ExecutorKind;
  step: string;
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Contents of `collect` files; undefined for a file that was not there. */
  collected: Record<string, string | undefined>;
  durationMs: number;
  /** Swarm node id that ran the step (executor `swarm` only). */
  node?: string;
  /** Attempts the step took (executor `swarm`: more than 1 when a node left mid-step). */
  attempts?: number;
}

/** Runs steps. Implementations must not share state between steps. */
export interface Executor {
  readonly kind: ExecutorKind;
  run(spec: StepSpec, signal?: AbortSignal): Promise<StepResult>;
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Throws when the run was stopped (Ctrl-C, SIGTERM): a step that would start after the stop, or
 * that the stop killed, has no result to grade (its exit 137 is the stop's, not the tests').
 * @throws TelebenchError `step_aborted` (tier infra; the runner puts the item back to pending)
 */
export function throwIfAborted(signal: AbortSignal | undefined, step: string, when: string): void {
  if (!signal?.aborted) return;
  throw new TelebenchError('step_aborted', `step ${step}: the run was stopped ${when}`, {
    tier: 'infra',
    context: { step },
  });
}

/**
 * Engine answers that mean "nothing to do" for kill/remove: 304 (already stopped), 404 (no such
 * container), 409 (not running, or removal already in progress).
 */
const ENGINE_NOOP = new Set([304, 404, 409]);

/** Whether `err` is one of the engine's "nothing to do" answers ({@link ENGINE_NOOP}). */
export function isEngineNoop(err: unknown): boolean {
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' && ENGINE_NOOP.has(code);
}

/** Options of {@link DockerExecutor}. */
export interface DockerExecutorOptions {
  /**
   * Receives a failure to remove a step's container after the step's result is recorded
   * (`container_remove_failed`, tier infra). Without it such a failure is thrown by `run`.
   */
  onCleanupError?: (err: TelebenchError) => void;
}

/** A fresh, network-less, resource-limited container per step. */
export class DockerExecutor implements Executor {
  readonly kind = 'docker' as const;
  constructor(
    private readonly client: DockerClient,
    private readonly options: DockerExecutorOptions = {},
  ) {}

  /**
   * Runs one step in a fresh container and removes the container afterwards.
   * @throws TelebenchError `container_failed` (tier infra) when the engine cannot create or start
   *   the container; `container_kill_failed` (tier infra) when the engine refuses to kill it at the
   *   timeout or abort (other than 304/404/409: already stopped or gone);
   *   `container_remove_failed` (tier infra) when removing it fails and no `onCleanupError` was given
   */
  async run(spec: StepSpec, signal?: AbortSignal): Promise<StepResult> {
    throwIfAborted(signal, spec.step, 'before it started');
    const docker = this.client.docker;
    const started = Date.now();
    const overlay = mkdtempSync(join(tmpdir(), 'telebench-overlay-'));
    let container: Awaited<ReturnType<typeof docker.createContainer>> | undefined;
    let outcome: { result: StepResult } | { error: TelebenchError };
    let lateKill: TelebenchError | undefined;
    try {
      const deleted = writeOverlay(overlay, spec.files);
      const env = { ...PINNED_ENV, ...(spec.env ?? {}) };
      const pre = deleted.length ? `rm -f ${deleted.map(shq).join(' ')} && ` : '';
      container = await docker.createContainer({
        Image: spec.instance.image,
        Cmd: ['/bin/sh', '-c', `${pre}${spec.command}`],
        WorkingDir: spec.instance.workdir,
        Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
        Labels: { 'telebench.step': spec.step },
        HostConfig: {
          // network `none` (only the loopback) isolates the step; `NetworkDisabled` is not set:
          // it also leaves /etc/hosts empty, and `localhost` then does not resolve
          NetworkMode: 'none',
          // the loopback's IPv6 address (::1), which every Linux host has: Docker disables it in
          // a container, and tests that bind [::1] (Open5GS core's socket-test) then fail
          Sysctls: { 'net.ipv6.conf.lo.disable_ipv6': '0' },
          Memory: spec.limits.memory,
          MemorySwap: spec.limits.memory,
          NanoCpus: Math.round(spec.limits.cpus * 1e9),
          PidsLimit: spec.limits.pids,
          AutoRemove: false,
        },
      });
      const c = container;
      if (Object.keys(spec.files).length > deleted.length) {
        const tar = tarFs().pack(overlay);
        await c.putArchive(tar as unknown as NodeJS.ReadableStream, {
          path: spec.instance.workdir,
        });
      }
      await c.start();
      let timedOut = false;
      // A kill the engine refuses (other than "already stopped/gone") ends the wait with an error:
      // the container may still run, so the step cannot be graded.
      let rejectKill: (err: TelebenchError) => void = () => undefined;
      const killFailed = new Promise<never>((_, reject) => {
        rejectKill = reject;
      });
      // Also recorded when it comes after the wait ended (reported below, never unhandled).
      killFailed.catch((err: unknown) => {
        lateKill = err as TelebenchError;
      });
      const kill = (why: string): void => {
        c.kill().catch((err: unknown) => {
          if (isEngineNoop(err)) return; // exited on its own meanwhile
          rejectKill(
            new TelebenchError(
              'container_kill_failed',
              `step ${spec.step}: the engine did not kill container ${c.id} (${why}): ${(err as Error).message}`,
              {
                tier: 'infra',
                context: { image: spec.instance.image, step: spec.step, container: c.id },
                cause: err,
              },
            ),
          );
        });
      };
      const timer = setTimeout(() => {
        timedOut = true;
        kill(`timeout ${spec.limits.timeoutMs} ms`);
      }, spec.limits.timeoutMs);
      const onAbort = (): void => kill('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      let status: { StatusCode: number };
      try {
        status = (await Promise.race([c.wait(), killFailed])) as { StatusCode: number };
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
      if (!timedOut) throwIfAborted(signal, spec.step, 'while it ran: its container was killed');
      const raw = (await c.logs({ stdout: true, stderr: true, follow: false })) as Buffer;
      const { stdout, stderr } = demux(raw);
      const collected: Record<string, string | undefined> = {};
      for (const rel of spec.collect)
        collected[rel] = await readFromContainer(c, spec.instance.workdir, rel);
      outcome = {
        result: {
          executor: 'docker',
          step: spec.step,
          exitCode: timedOut ? null : status.StatusCode,
          timedOut,
          stdout,
          stderr,
          collected,
          durationMs: Date.now() - started,
        },
      };
    } catch (err) {
      outcome = {
        error:
          err instanceof TelebenchError
            ? err
            : new TelebenchError(
                'container_failed',
                `step ${spec.step} in ${spec.instance.image}: ${(err as Error).message}`,
                {
                  tier: 'infra',
                  context: { image: spec.instance.image, step: spec.step },
                  cause: err,
                },
              ),
      };
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
    const cleanup =
      (container ? await removeContainer(container, spec) : undefined) ??
      ('result' in outcome ? lateKill : undefined);
    if ('error' in outcome) {
      // The step's own failure wins; the cleanup failure goes to the callback or rides along.
      if (cleanup) {
        if (this.options.onCleanupError) this.options.onCleanupError(cleanup);
        else outcome.error.context.cleanup_error = cleanup.message;
      }
      throw outcome.error;
    }
    if (cleanup) {
      if (this.options.onCleanupError) this.options.onCleanupError(cleanup);
      else throw cleanup;
    }
    return outcome.result;
  }
}

/**
 * Force-removes a step's container.
 * @returns undefined when removed (or already gone: 404/409), else the failure as a
 *   TelebenchError `container_remove_failed` (tier infra) naming the container and step
 */
async function removeContainer(
  container: { id: string; remove(o: { force: boolean }): Promise<unknown> },
  spec: StepSpec,
): Promise<TelebenchError | undefined> {
  try {
    await container.remove({ force: true });
    return undefined;
  } catch (err) {
    if (isEngineNoop(err)) return undefined;
    return new TelebenchError(
      'container_remove_failed',
      `step ${spec.step}: could not remove container ${container.id}: ${(err as Error).message}`,
      {
        tier: 'infra',
        context: { image: spec.instance.image, step: spec.step, container: container.id },
        cause: err,
      },
    );
  }
}

/** Splits Docker's multiplexed log stream (8-byte frame headers) into stdout and stderr. */
export function demux(buf: Buffer): { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const type = buf[i];
    const len = buf.readUInt32BE(i + 4);
    const chunk = buf.subarray(i + 8, i + 8 + len);
    (type === 2 ? err : out).push(chunk);
    i += 8 + len;
  }
  return {
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  };
}

async function readFromContainer(
  container: { getArchive(o: { path: string }): Promise<NodeJS.ReadableStream> },
  workdir: string,
  rel: string,
): Promise<string | undefined> {
  let stream: NodeJS.ReadableStream;
  try {
    stream = await container.getArchive({ path: `${workdir}/${rel}` });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw err;
  }
  const dir = mkdtempSync(join(tmpdir(), 'telebench-collect-'));
  try {
    await streamPipeline(stream as unknown as PassThrough, tarFs().extract(dir));
    const base = rel.split('/').pop() ?? rel;
    const p = join(dir, base);
    return existsSync(p) ? readFileSync(p, 'utf8') : undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The `collect` files of a step run on the host, read back from `dir` (UTF-8; undefined for a
 * file that is not there). Shared by every executor that runs in a host folder.
 */
export function collectFiles(
  dir: string,
  paths: readonly string[],
): Record<string, string | undefined> {
  const collected: Record<string, string | undefined> = {};
  for (const rel of paths) {
    const p = join(dir, rel);
    collected[rel] = existsSync(p) ? readFileSync(p, 'utf8') : undefined;
  }
  return collected;
}

/**
 * Runs a step on the host: copies `instance.sourceDir` to a temporary folder, writes the files,
 * runs the command with the host's toolchain and a minimal environment (PATH, HOME, the pinned
 * variables; GOMODCACHE/GOCACHE of the host so modules resolve offline). No network isolation or
 * memory limit is possible here; the timeout kills the whole process group (the one process
 * runner, pipeline/process.ts).
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local' as const;

  async run(spec: StepSpec, signal?: AbortSignal): Promise<StepResult> {
    throwIfAborted(signal, spec.step, 'before it started');
    const started = Date.now();
    const dir = mkdtempSync(join(tmpdir(), 'telebench-local-'));
    try {
      cpSync(spec.instance.sourceDir, dir, { recursive: true, verbatimSymlinks: true });
      const deleted = writeOverlay(dir, spec.files);
      for (const rel of deleted) rmSync(join(dir, rel), { force: true });
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
        HOME: dir,
        ...PINNED_ENV,
        ...(spec.env ?? {}),
      };
      for (const k of ['GOMODCACHE', 'GOCACHE', 'GOROOT'] as const) {
        const v = process.env[k];
        if (v) env[k] = v;
      }
      if (!env.GOMODCACHE) env.GOMODCACHE = join(process.env.HOME ?? '/root', 'go', 'pkg', 'mod');
      if (!env.GOCACHE) env.GOCACHE = join(process.env.HOME ?? '/root', '.cache', 'go-build');
      const r = await runProcess({
        cmd: '/bin/sh',
        args: ['-c', spec.command],
        cwd: dir,
        env,
        timeoutMs: spec.limits.timeoutMs,
        ...(signal ? { signal } : {}),
      });
      const { stdout, stderr, timedOut } = r;
      if (!timedOut) throwIfAborted(signal, spec.step, 'while it ran: its processes were killed');
      return {
        executor: 'local',
        step: spec.step,
        exitCode: timedOut ? null : r.code,
        timedOut,
        stdout,
        stderr,
        collected: collectFiles(dir, spec.collect),
        durationMs: Date.now() - started,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
