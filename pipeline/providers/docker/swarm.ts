/**
 * Executor `swarm` (issue 13): each step runs as a one-task Docker Swarm service (restart
 * condition none; see {@link SERVICE_MODE} for why not `replicated-job`) created through
 * dockerode's services API, on whatever node the scheduler picks from the step's resource
 * reservations. Same contract as
 * {@link DockerExecutor}: same {@link StepSpec} in, same {@link StepResult} out.
 *
 * Isolation: the task is attached only to an `internal` overlay network made for this one step
 * (Swarm cannot attach `none`: "could not find the corresponding predefined swarm network"), so
 * it has no route out and no peer; memory / CPU limits are set as Swarm limits *and* reservations
 * (placement), pids as a limit; the command runs under `timeout`; the environment holds only
 * {@link PINNED_ENV} plus `spec.env`.
 *
 * Files in: the step's changed files travel as a gzip tar in Swarm configs (each below the 500 KiB
 * config limit), mounted into the task and unpacked over the workdir.
 *
 * Results back ({@link wrapperScript}, {@link readFrame}): the command's stdout and stderr go to
 * files, never to the task's own output. When the command ends, the wrapper (PID 1 of the task)
 * SIGKILLs every other process of the container, then packs exit code, duration, stdout, stderr
 * and the `collect` files into a gzip tar and prints it base64 between `<nonce> BEGIN` and
 * `<nonce> END <sha256>` lines, the nonce being 128 random bits of this attempt. The coordinator
 * reads the task's output through the service logs API (from whatever node ran it; a task of the
 * coordinator's own node from its container's log, the same bytes) and takes the
 * *last* complete frame whose digest matches: a line the code under test prints is inside the
 * packed stdout file; one it writes straight to the task's output (`/proc/1/fd/1`) comes before
 * the wrapper's frame, because nothing but the wrapper is alive when the frame is written.
 *
 * A node that leaves mid-step (node down or removed, task orphaned) makes the step run again on
 * another node (`node.id!=<lost>` constraint), up to `maxAttempts`; the lost attempt's service is
 * removed first and its output, under another nonce, can never be read as the result: a step is
 * neither lost nor counted twice.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { pipeline as streamPipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import { TelebenchError } from '../../errors.js';
import { tarFs, type DockerClient } from './client.js';
import {
  demux,
  throwIfAborted,
  type Executor,
  type StepResult,
  type StepSpec,
} from './executor.js';
import { writeOverlay, type Overlay } from './overlay.js';
import { PINNED_ENV } from './recipes.js';
import { pushImage } from './registry.js';

/** Options of {@link SwarmExecutor}. */
export interface SwarmExecutorOptions {
  /** Registry (`host:port`) the nodes pull images from (`swe5g.environments.swarm.registry`). */
  registry: string;
  /** Attempts of one step when its node leaves (default 3). */
  maxAttempts?: number;
  /** How long a task may wait to be scheduled and pull its image, ms (default 600 000). */
  startTimeoutMs?: number;
  /** Extra placement constraints (`node.labels.telebench==tests`). */
  constraints?: string[];
  /** Poll interval of the task state, ms (default 100: one cheap manager query). */
  pollMs?: number;
  /**
   * How often a running task's node is checked for having left, ms (default 2000; the manager
   * itself marks a silent node down only after several 5 s heartbeats).
   */
  nodeCheckMs?: number;
  /** Receives a failure to remove a step's service, configs or network (else thrown by `run`). */
  onCleanupError?: (err: TelebenchError) => void;
  /**
   * Before its first step, the executor removes the services (with their configs and networks)
   * that a killed coordinator left: labelled {@link SWARM_LABEL}, every task ended, the last one
   * at least this long ago, ms (default 600 000; a live coordinator reads and removes its own
   * within seconds of the task's end, so its steps are never taken). 0 disables.
   */
  reapAfterMs?: number;
  /** Progress lines (node lost, retry). */
  log?: (message: string) => void;
  /** Diagnostics: the task's raw output (stdout of the service logs) of every finished attempt. */
  onTaskOutput?: (step: string, output: string) => void;
}

/**
 * What a step may add to its task beyond {@link StepSpec} (used by the node builds of
 * swarm-build.ts, never by a test step): bind mounts of the node's files (its engine's socket), and
 * an image the nodes pull as it is named (an image of another registry, not pushed from here).
 */
export interface TaskExtras {
  mounts?: { source: string; target: string }[];
  /** Run this image as named instead of pushing `spec.instance.image` to the registry. */
  imageAsNamed?: boolean;
}

/** Largest Swarm config payload (the engine refuses more than 500 KiB); chunks stay below it. */
const CONFIG_CHUNK = 400 * 1024;
/** Where the overlay configs are mounted in the task. */
const OVERLAY_DIR = '/run/telebench-overlay';
/**
 * One task, never restarted. Not `ReplicatedJob`: on Engine 20.10 a job's task stays in the swarm
 * (desired state `complete`) after its service is removed, with its exited container on its node
 * (measured here: 1 task and 1 container left per step; none with a one-replica service), and
 * Swarm's constraint enforcer keeps counting those tasks' reservations, so after a few steps the
 * node rejects every new task ("assigned node no longer meets constraints"). A one-replica
 * service with restart condition `none` runs the command once just the same and is reaped with
 * its service.
 */
export const SERVICE_MODE = { Replicated: { Replicas: 1 } };

/** Label on every service, config and network the executor creates. */
export const SWARM_LABEL = 'telebench.swarm';

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The task's command: unpack the overlay, delete files, run `spec.command` under `timeout` with
 * its output to files, SIGKILL everything else, print the result frame (see the module comment).
 * @param nonce hex string of this attempt
 * @param overlayParts number of overlay config files mounted at {@link OVERLAY_DIR}
 * @returns a POSIX sh script (PID 1 of the task)
 */
export function wrapperScript(
  spec: Pick<StepSpec, 'command' | 'collect' | 'files' | 'instance' | 'limits'>,
  nonce: string,
  overlayParts: number,
): string {
  const wd = shq(spec.instance.workdir);
  const deleted = Object.entries(spec.files)
    .filter(([, v]) => v === null)
    .map(([k]) => shq(k));
  const timeoutS = Math.max(1, Math.ceil(spec.limits.timeoutMs / 1000));
  const parts = Array.from(
    { length: overlayParts },
    (_, i) => `${OVERLAY_DIR}/part.${String(i).padStart(3, '0')}`,
  );
  const collect = spec.collect
    .map((rel, i) => `[ -f ${shq(rel)} ] && cp ${shq(rel)} "$T/c/${i}"`)
    .join('\n');
  return [
    `T=/tmp/.telebench-result; rm -rf "$T"; mkdir -p "$T/c"`,
    `cd ${wd} 2>"$T/setup" || echo "workdir ${spec.instance.workdir} missing" >>"$T/setup"`,
    parts.length
      ? `cat ${parts.join(' ')} | tar -xzf - -C ${wd} 2>>"$T/setup" || echo 'overlay unpack failed' >>"$T/setup"`
      : ':',
    deleted.length ? `rm -f ${deleted.join(' ')}` : ':',
    `s=$(date +%s%N)`,
    `if [ -s "$T/setup" ]; then rc=96; else timeout -s KILL ${timeoutS} /bin/sh -c ${shq(spec.command)} >"$T/stdout" 2>"$T/stderr" </dev/null; rc=$?; fi`,
    `e=$(date +%s%N)`,
    // Everything but this shell (PID 1) dies before the frame is printed.
    `kill -9 -1 2>/dev/null; sleep 0.1; kill -9 -1 2>/dev/null`,
    `echo "$rc" >"$T/exit"; echo $(( (e - s) / 1000000 )) >"$T/ms"; echo ${timeoutS} >"$T/limit"`,
    collect || ':',
    `tar -czf /tmp/.telebench-result.tgz -C "$T" .`,
    `sum=$(sha256sum /tmp/.telebench-result.tgz | cut -d' ' -f1)`,
    `printf '\\n%s BEGIN\\n' ${nonce}`,
    `base64 /tmp/.telebench-result.tgz`,
    `printf '%s END %s\\n' ${nonce} "$sum"`,
  ].join('\n');
}

/**
 * The wrapper's frame in a task's output: the last `<nonce> END <sha256>` line, the `<nonce> BEGIN`
 * line before it, and the base64 between, whose gzip tar must hash to the END line's digest.
 * @returns the gzip tar, or undefined when the output holds no END line of this nonce
 * @throws TelebenchError `swarm_result_corrupt` (infra) when the last frame's bytes do not match its digest
 */
export function readFrame(output: string, nonce: string): Buffer | undefined {
  const lines = output.split('\n');
  const endRe = new RegExp(`^${nonce} END ([0-9a-f]{64})$`);
  let end = -1;
  let digest = '';
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = endRe.exec(lines[i]!);
    if (m) {
      end = i;
      digest = m[1]!;
      break;
    }
  }
  if (end < 0) return undefined;
  let begin = -1;
  for (let i = end - 1; i >= 0; i--) {
    if (lines[i] === `${nonce} BEGIN`) {
      begin = i;
      break;
    }
  }
  const bytes = Buffer.from(lines.slice(begin + 1, end).join(''), 'base64');
  if (begin < 0 || createHash('sha256').update(bytes).digest('hex') !== digest) {
    throw new TelebenchError(
      'swarm_result_corrupt',
      `the step's result frame does not match its sha256 (${begin < 0 ? 'no BEGIN line' : `${bytes.length} bytes`})`,
      { tier: 'infra', context: { digest } },
    );
  }
  return bytes;
}

/** The unpacked frame of a finished step. */
export interface FrameContents {
  exitCode: number;
  ms: number;
  limitS: number;
  setup: string;
  stdout: string;
  stderr: string;
  /** Collected files by index in `spec.collect`. */
  collected: (string | undefined)[];
}

/** Unpacks a frame's gzip tar. @throws TelebenchError `swarm_result_corrupt` when a member is missing */
export async function unpackFrame(tgz: Buffer, collectCount: number): Promise<FrameContents> {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-frame-'));
  try {
    await streamPipeline(Readable.from([gunzipSync(tgz)]), tarFs().extract(dir));
    const read = (p: string): string | undefined =>
      existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : undefined;
    const exit = read('exit');
    if (exit === undefined) {
      throw new TelebenchError('swarm_result_corrupt', 'the step result has no exit code', {
        tier: 'infra',
      });
    }
    return {
      exitCode: Number(exit.trim()),
      ms: Number((read('ms') ?? '0').trim()),
      limitS: Number((read('limit') ?? '0').trim()),
      setup: read('setup') ?? '',
      stdout: read('stdout') ?? '',
      stderr: read('stderr') ?? '',
      collected: Array.from({ length: collectCount }, (_, i) => read(`c/${i}`)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The fields of a Swarm task (Engine API `GET /tasks`) the executor reads. */
interface TaskInfo {
  ID: string;
  NodeID?: string;
  Version?: { Index?: number };
  DesiredState?: string;
  Status?: {
    State?: string;
    Err?: string;
    Message?: string;
    ContainerStatus?: { ContainerID?: string };
  };
}

/** The fields of a Swarm node (Engine API `GET /nodes`) the executor reads. */
interface NodeInfo {
  ID: string;
  Description?: { Hostname?: string; Resources?: { NanoCPUs?: number; MemoryBytes?: number } };
  Status?: { State?: string };
  Spec?: { Availability?: string };
}

/** What one attempt came to. */
type Attempt =
  { kind: 'done'; result: StepResult } | { kind: 'lost'; node: string; why: string; gone: boolean };

const TERMINAL_LOST = new Set(['orphaned', 'shutdown', 'remove']);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Steps as Swarm jobs (see the module comment). */
export class SwarmExecutor implements Executor {
  readonly kind = 'swarm' as const;
  private readonly opts: Required<
    Pick<
      SwarmExecutorOptions,
      'maxAttempts' | 'startTimeoutMs' | 'pollMs' | 'nodeCheckMs' | 'reapAfterMs'
    >
  > &
    SwarmExecutorOptions;

  constructor(
    private readonly client: DockerClient,
    options: SwarmExecutorOptions,
  ) {
    this.opts = {
      maxAttempts: 3,
      startTimeoutMs: 600_000,
      pollMs: 100,
      nodeCheckMs: 2000,
      reapAfterMs: 600_000,
      ...options,
    };
  }

  /**
   * Runs one step as a Swarm job, retrying on another node when its node leaves.
   * @throws TelebenchError (tier infra): `registry_push_failed` (the registry is down: named),
   *   `swarm_task_rejected` (the node could not pull or start it), `swarm_task_unscheduled` (not
   *   started within `startTimeoutMs`, with the scheduler's reason), `swarm_task_failed` (the task
   *   died without a result), `swarm_result_missing` | `swarm_result_corrupt`, `swarm_node_lost`
   *   (every attempt's node left), `swarm_failed` (the engine refused a request), `step_aborted`;
   *   `swarm_cleanup_failed` when removal fails and no `onCleanupError` was given
   */
  async run(spec: StepSpec, signal?: AbortSignal, extras: TaskExtras = {}): Promise<StepResult> {
    throwIfAborted(signal, spec.step, 'before it started');
    const started = Date.now();
    if (this.opts.reapAfterMs > 0) {
      // once per executor; a failed listing is tried again by the next step
      this.reaped ??= this.reapLeftovers(this.opts.reapAfterMs).catch((err: unknown) => {
        this.reaped = undefined;
        throw err;
      });
      await this.reaped;
    }
    const image = extras.imageAsNamed
      ? spec.instance.image
      : await pushImage(this.client, spec.instance.image, this.opts.registry);
    const excluded: string[] = [];
    const lost: string[] = [];
    for (let attempt = 1; attempt <= this.opts.maxAttempts; attempt++) {
      const a = await this.attempt(spec, image, excluded, attempt, started, signal, extras);
      if (a.kind === 'done') return { ...a.result, attempts: attempt };
      if (a.gone) excluded.push(a.node);
      lost.push(`${a.node} (${a.why})`);
      this.opts.log?.(
        `step ${spec.step}: node ${a.node} left during attempt ${attempt} (${a.why}); ${attempt < this.opts.maxAttempts ? 'running it again elsewhere' : 'no attempt left'}`,
      );
    }
    throw new TelebenchError(
      'swarm_node_lost',
      `step ${spec.step}: the node of each of ${this.opts.maxAttempts} attempts left: ${lost.join(', ')}`,
      { tier: 'infra', context: { step: spec.step, image, lost } },
    );
  }

  private async attempt(
    spec: StepSpec,
    image: string,
    excluded: string[],
    attempt: number,
    started: number,
    signal?: AbortSignal,
    extras: TaskExtras = {},
  ): Promise<Attempt> {
    const docker = this.client.docker;
    const nonce = randomBytes(16).toString('hex');
    const id = `telebench-${spec.step.replace(/[^a-zA-Z0-9-]/g, '-').slice(0, 20)}-${nonce.slice(0, 12)}`;
    const labels = { [SWARM_LABEL]: id, 'telebench.step': spec.step };
    const created: { configs: string[]; network?: string; service?: string } = { configs: [] };
    const infra = (code: string, message: string, cause?: unknown): TelebenchError =>
      new TelebenchError(code, `step ${spec.step} (${image}): ${message}`, {
        tier: 'infra',
        context: { step: spec.step, image, service: id, attempt },
        ...(cause === undefined ? {} : { cause }),
      });
    let outcome: { value: Attempt } | { error: TelebenchError };
    try {
      const parts: Buffer[] = [];
      if (Object.values(spec.files).some((f) => f !== null)) {
        const tgz = gzipSync(await tarOf(spec.files));
        for (let i = 0; i < tgz.length; i += CONFIG_CHUNK)
          parts.push(tgz.subarray(i, i + CONFIG_CHUNK));
      }
      const configRefs: Docker.ConfigReference[] = [];
      for (const [i, part] of parts.entries()) {
        const name = `${id}-overlay-${i}`;
        const cfg = await docker.createConfig({
          Name: name,
          Labels: labels,
          Data: part.toString('base64'),
        });
        created.configs.push(cfg.id);
        configRefs.push({
          File: {
            Name: `${OVERLAY_DIR}/part.${String(i).padStart(3, '0')}`,
            UID: '0',
            GID: '0',
            Mode: 0o400,
          },
          ConfigID: cfg.id,
          ConfigName: name,
        });
      }
      const net = await docker.createNetwork({
        Name: id,
        Driver: 'overlay',
        Internal: true,
        Attachable: false,
        Labels: labels,
      });
      created.network = net.id;
      const env = { ...PINNED_ENV, ...(spec.env ?? {}) };
      const nano = Math.round(spec.limits.cpus * 1e9);
      const svc = await docker.createService({
        Name: id,
        Labels: labels,
        TaskTemplate: {
          ContainerSpec: {
            Image: image,
            Command: ['/bin/sh', '-c', wrapperScript(spec, nonce, parts.length)],
            Dir: spec.instance.workdir,
            Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
            Labels: labels,
            Init: false,
            StopGracePeriod: 1e9, // a drained node stops the task at once (ns)
            Configs: configRefs,
            ...(extras.mounts?.length
              ? {
                  Mounts: extras.mounts.map((m) => ({
                    Type: 'bind',
                    Source: m.source,
                    Target: m.target,
                  })),
                }
              : {}),
          },
          Networks: [{ Target: net.id }],
          Resources: {
            Limits: { NanoCPUs: nano, MemoryBytes: spec.limits.memory, Pids: spec.limits.pids },
            Reservations: { NanoCPUs: nano, MemoryBytes: spec.limits.memory },
          },
          RestartPolicy: { Condition: 'none', MaxAttempts: 0 },
          Placement: {
            Constraints: [
              ...(this.opts.constraints ?? []),
              ...excluded.map((n) => `node.id!=${n}`),
            ],
          },
        },
        Mode: SERVICE_MODE,
      } as unknown as Docker.CreateServiceOptions);
      created.service = svc.id;
      outcome = { value: await this.await(spec, svc.id, nonce, started, infra, signal) };
    } catch (err) {
      outcome = {
        error:
          err instanceof TelebenchError
            ? err
            : infra('swarm_failed', `the engine refused: ${(err as Error).message}`, err),
      };
    }
    const cleanup = await this.cleanup(created);
    if ('error' in outcome) {
      if (cleanup) {
        if (this.opts.onCleanupError) this.opts.onCleanupError(cleanup);
        else outcome.error.context.cleanup_error = cleanup.message;
      }
      throw outcome.error;
    }
    if (cleanup) {
      if (this.opts.onCleanupError) this.opts.onCleanupError(cleanup);
      else throw cleanup;
    }
    return outcome.value;
  }

  /** Polls the task until it ends, its node leaves, or a deadline passes. */
  private async await(
    spec: StepSpec,
    serviceId: string,
    nonce: string,
    started: number,
    infra: (code: string, message: string, cause?: unknown) => TelebenchError,
    signal?: AbortSignal,
  ): Promise<Attempt> {
    const docker = this.client.docker;
    const createdAt = Date.now();
    let runningSince: number | undefined;
    let lastReason = '';
    let nodeChecked = 0;
    for (;;) {
      if (signal?.aborted) throw infra('step_aborted', 'aborted');
      const tasks = (await docker.listTasks({
        filters: { service: [serviceId] },
      })) as TaskInfo[];
      const task = tasks.sort((a, b) => (b.Version?.Index ?? 0) - (a.Version?.Index ?? 0))[0];
      const state = task?.Status?.State ?? 'new';
      const node = task?.NodeID;
      lastReason = task?.Status?.Err || task?.Status?.Message || lastReason;
      if (
        node &&
        !['complete', 'failed', 'rejected'].includes(state) &&
        Date.now() - nodeChecked >= this.opts.nodeCheckMs
      ) {
        nodeChecked = Date.now();
        const why = await nodeGone(docker, node);
        if (why) return { kind: 'lost', node, why, gone: true };
      }
      // shut down under the task (node drained, or its engine left): run it again; the scheduler
      // itself avoids a drained node, a node that is down or removed is excluded
      const stopping =
        TERMINAL_LOST.has(task?.DesiredState ?? '') && !['complete', 'failed'].includes(state);
      if (node && (TERMINAL_LOST.has(state) || stopping)) {
        const gone = await nodeGone(docker, node);
        return { kind: 'lost', node, why: gone || `task ${state}`, gone: gone !== '' };
      }
      if (state === 'rejected') {
        throw infra(
          'swarm_task_rejected',
          `node ${node ?? '?'} rejected the task: ${task?.Status?.Err ?? 'no reason given'} (registry ${this.opts.registry})`,
        );
      }
      if (state === 'complete' || state === 'failed') {
        const container =
          node && node === (await this.localNode())
            ? task?.Status?.ContainerStatus?.ContainerID
            : undefined;
        const result = await this.collect(spec, serviceId, nonce, started, infra, container);
        if (result) return { kind: 'done', result: { ...result, node: node ?? '' } };
        throw infra(
          state === 'failed' ? 'swarm_task_failed' : 'swarm_result_missing',
          `task ${state} on node ${node ?? '?'} without a result frame${task?.Status?.Err ? `: ${task.Status.Err}` : ''}`,
        );
      }
      if (state === 'running' && runningSince === undefined) runningSince = Date.now();
      if (runningSince === undefined && Date.now() - createdAt > this.opts.startTimeoutMs) {
        throw infra(
          'swarm_task_unscheduled',
          `not started within ${this.opts.startTimeoutMs / 1000} s (state ${state}${lastReason ? `: ${lastReason}` : ''})`,
        );
      }
      // The wrapper's own `timeout` ends the command; this backstop covers a wrapper that hangs.
      if (
        runningSince !== undefined &&
        Date.now() - runningSince > spec.limits.timeoutMs + 60_000
      ) {
        return {
          kind: 'done',
          result: {
            executor: 'swarm',
            step: spec.step,
            exitCode: null,
            timedOut: true,
            stdout: '',
            stderr: `swarm: the task ran past its deadline of ${spec.limits.timeoutMs} ms and was removed`,
            collected: Object.fromEntries(spec.collect.map((c) => [c, undefined])),
            durationMs: Date.now() - started,
            node: node ?? '',
          },
        };
      }
      await sleep(this.opts.pollMs);
    }
  }

  private reaped: Promise<string[]> | undefined;
  /**
   * Removes what killed coordinators left in the swarm: every service labelled
   * {@link SWARM_LABEL} whose tasks have all ended (complete, failed, rejected, shutdown, orphaned,
   * or none left) and were last updated at least `olderThanMs` ago, with the configs and network
   * of the same label value. A service with a task still new, pending, starting or running is
   * never touched, whoever runs it. Logs each removal; a removal that fails goes to
   * `onCleanupError` (or the log), never stops the step.
   * @param olderThanMs ms since the service's last task update
   * @returns the ids (label values) removed
   * @throws TelebenchError `swarm_failed` when the engine refuses to list services or tasks
   */
  async reapLeftovers(olderThanMs: number): Promise<string[]> {
    const docker = this.client.docker;
    const infra = (message: string, cause: unknown): TelebenchError =>
      new TelebenchError('swarm_failed', `listing leftover telebench services: ${message}`, {
        tier: 'infra',
        cause,
      });
    let services: { ID: string; Spec?: { Labels?: Record<string, string> }; UpdatedAt?: string }[];
    let tasks: (TaskInfo & { ServiceID?: string; UpdatedAt?: string })[];
    try {
      services = (await docker.listServices({ filters: { label: [SWARM_LABEL] } })) as never;
      tasks = services.length
        ? ((await docker.listTasks({
            filters: { service: services.map((x) => x.ID) },
          })) as never)
        : [];
    } catch (err) {
      throw infra((err as Error).message, err);
    }
    const ended = new Set(['complete', 'failed', 'rejected', 'shutdown', 'orphaned', 'remove']);
    const removed: string[] = [];
    for (const svc of services) {
      const id = svc.Spec?.Labels?.[SWARM_LABEL];
      if (!id) continue;
      const own = tasks.filter((t) => t.ServiceID === svc.ID);
      if (!own.every((t) => ended.has(t.Status?.State ?? ''))) continue;
      const last = Math.max(
        Date.parse(svc.UpdatedAt ?? '') || 0,
        ...own.map((t) => Date.parse(t.UpdatedAt ?? '') || 0),
      );
      if (Date.now() - last < olderThanMs) continue;
      const byId = { filters: { label: [`${SWARM_LABEL}=${id}`] } };
      const configs = ((await docker.listConfigs(byId)) as { ID: string }[]).map((c) => c.ID);
      const network = ((await docker.listNetworks(byId)) as { Id: string }[])[0]?.Id;
      const failure = await this.cleanup({
        configs,
        service: svc.ID,
        ...(network ? { network } : {}),
      });
      if (failure) {
        if (this.opts.onCleanupError) this.opts.onCleanupError(failure);
        else if (this.opts.log) this.opts.log(`swarm: ${failure.message}`);
        else process.emitWarning(failure.message, { code: failure.code });
        continue;
      }
      removed.push(id);
    }
    if (removed.length)
      this.opts.log?.(
        `swarm: removed ${removed.length} service(s) an earlier, killed run left (with their configs and networks): ${removed.join(', ')}`,
      );
    return removed;
  }

  private localNodeId: Promise<string> | undefined;
  /**
   * This engine's own swarm node id, or '' when `docker info` fails. Not an error to report here:
   * with '' every task's output is read through the service logs API (the same bytes, 0.3-0.6 s
   * slower), and an engine that really fails makes that read, and so the step, fail with its
   * message (`swarm_failed`).
   */
  private localNode(): Promise<string> {
    this.localNodeId ??= this.client.docker
      .info()
      .then((i: { Swarm?: { NodeID?: string } }) => i.Swarm?.NodeID ?? '')
      .catch(() => '');
    return this.localNodeId;
  }

  /**
   * Reads the task output and unpacks the frame (a few tries). A task that ran on this engine's
   * own node is read from its container's log (the same bytes, without the manager's log broker
   * round trip to the node, measured at 0.3-0.6 s a step); one that ran elsewhere through the
   * service logs API. Either way only the frame of this attempt's nonce with a matching sha256
   * counts.
   */
  private async collect(
    spec: StepSpec,
    serviceId: string,
    nonce: string,
    started: number,
    infra: (code: string, message: string, cause?: unknown) => TelebenchError,
    localContainer?: string,
  ): Promise<StepResult | undefined> {
    const docker = this.client.docker;
    const svc = docker.getService(serviceId);
    for (let i = 0; i < 5; i++) {
      let raw: Buffer;
      try {
        const local = localContainer && i === 0 ? localContainer : undefined;
        raw = (await (local
          ? docker
              .getContainer(local)
              .logs({ stdout: true, stderr: true, follow: false })
              .catch(() => svc.logs({ stdout: true, stderr: true, follow: false })) // gone: the broker
          : svc.logs({ stdout: true, stderr: true, follow: false }))) as unknown as Buffer;
      } catch (err) {
        throw infra('swarm_failed', `service logs: ${(err as Error).message}`, err);
      }
      const { stdout } = demux(raw);
      this.opts.onTaskOutput?.(spec.step, stdout);
      const tgz = readFrame(stdout, nonce);
      if (tgz) {
        const f = await unpackFrame(tgz, spec.collect.length);
        if (f.setup.trim()) throw infra('swarm_task_failed', `task set-up: ${f.setup.trim()}`);
        const timedOut = f.exitCode === 137 && f.ms >= f.limitS * 1000;
        return {
          executor: 'swarm',
          step: spec.step,
          exitCode: timedOut ? null : f.exitCode,
          timedOut,
          stdout: f.stdout,
          stderr: f.stderr,
          collected: Object.fromEntries(spec.collect.map((c, j) => [c, f.collected[j]])),
          durationMs: Date.now() - started,
        };
      }
      await sleep(i === 0 ? 100 : 500 * i);
    }
    return undefined;
  }

  /** Removes the attempt's service, configs and network. @returns the first failure, if any */
  private async cleanup(created: {
    configs: string[];
    network?: string;
    service?: string;
  }): Promise<TelebenchError | undefined> {
    const docker = this.client.docker;
    const failures: string[] = [];
    const gone = (err: unknown): boolean => (err as { statusCode?: number }).statusCode === 404;
    if (created.service) {
      await docker
        .getService(created.service)
        .remove()
        .catch((e: unknown) => {
          if (!gone(e)) failures.push(`service ${created.service}: ${(e as Error).message}`);
        });
    }
    for (const c of created.configs) {
      await docker
        .getConfig(c)
        .remove()
        .catch((e: unknown) => {
          if (!gone(e)) failures.push(`config ${c}: ${(e as Error).message}`);
        });
    }
    if (created.network) {
      // The network is free once the task's container is gone; the node may take a moment.
      let last: unknown;
      for (let i = 0; i < 20; i++) {
        try {
          await docker.getNetwork(created.network).remove();
          last = undefined;
          break;
        } catch (e) {
          if (gone(e)) {
            last = undefined;
            break;
          }
          last = e;
          await sleep(250 * Math.min(i + 1, 4));
        }
      }
      if (last) failures.push(`network ${created.network}: ${(last as Error).message}`);
    }
    if (!failures.length) return undefined;
    return new TelebenchError('swarm_cleanup_failed', `could not remove ${failures.join('; ')}`, {
      tier: 'infra',
      context: { ...created },
    });
  }
}

/** Why `node` no longer runs tasks (down, or removed from the swarm), or '' when it is there. */
async function nodeGone(docker: Docker, node: string): Promise<string> {
  try {
    const info = (await docker.getNode(node).inspect()) as { Status?: { State?: string } };
    const st = info.Status?.State ?? 'unknown';
    return st === 'down' || st === 'disconnected' ? `node ${st}` : '';
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return 'node removed from the swarm';
    throw err;
  }
}

/** A tar of the overlay's written files (bytes, modes, symlinks), via {@link writeOverlay}. */
async function tarOf(files: Overlay): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-swarm-overlay-'));
  try {
    writeOverlay(dir, files);
    const chunks: Buffer[] = [];
    const pack = tarFs().pack(dir);
    for await (const c of pack as unknown as AsyncIterable<Buffer>) chunks.push(c);
    return Buffer.concat(chunks);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tasks telebench runs on the swarm, per node (hostname), for `telebench status`. */
export interface NodeTasks {
  node: string;
  hostname: string;
  state: string;
  availability: string;
  cpus: number;
  memoryBytes: number;
  /** Running or starting telebench step tasks on the node. */
  tasks: number;
  /** Steps of the given limits that fit the node at once. */
  budget: number;
}

/**
 * The swarm's nodes with telebench's tasks on each, and the cluster task budget: per ready, active
 * node, how many steps of `limits` fit its CPUs and memory at once (the scheduler places by the
 * same reservations).
 * @param limits per-step CPUs and memory bytes (`swe5g.environments.limits`)
 * @throws TelebenchError `swarm_unavailable` (preflight) when the engine is not a swarm manager
 */
export async function swarmTasksPerNode(
  client: DockerClient,
  limits: { cpus: number; memory: number },
): Promise<{ nodes: NodeTasks[]; budget: number }> {
  const docker = client.docker;
  let nodes: NodeInfo[];
  try {
    nodes = (await docker.listNodes()) as NodeInfo[];
  } catch (err) {
    throw new TelebenchError(
      'swarm_unavailable',
      `the Docker engine is not a Swarm manager: ${(err as Error).message}`,
      { tier: 'preflight', cause: err },
    );
  }
  const services = (await docker.listServices({
    filters: { label: [SWARM_LABEL] },
  })) as { ID: string }[];
  const tasks = services.length
    ? ((await docker.listTasks({
        filters: { service: services.map((s) => s.ID), 'desired-state': ['running'] },
      })) as TaskInfo[])
    : [];
  const out: NodeTasks[] = nodes.map((n) => {
    const res = n.Description?.Resources;
    const cpus = (res?.NanoCPUs ?? 0) / 1e9;
    const memoryBytes = res?.MemoryBytes ?? 0;
    const ready = n.Status?.State === 'ready' && n.Spec?.Availability === 'active';
    return {
      node: n.ID,
      hostname: n.Description?.Hostname ?? n.ID,
      state: n.Status?.State ?? 'unknown',
      availability: n.Spec?.Availability ?? 'unknown',
      cpus,
      memoryBytes,
      tasks: tasks.filter((t) => t.NodeID === n.ID).length,
      budget: ready
        ? Math.max(
            0,
            Math.min(Math.floor(cpus / limits.cpus), Math.floor(memoryBytes / limits.memory)),
          )
        : 0,
    };
  });
  return { nodes: out, budget: out.reduce((a, n) => a + n.budget, 0) };
}
