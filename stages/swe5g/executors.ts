/**
 * The executor a configuration asks for (`swe5g.environments.executor`), shared by
 * `swe5g.build` (toolchain probe stays local; images pushed for `swarm`), `swe5g.validate` and
 * `telebench verify` / the release check, so every stage runs its steps in the same place.
 */
import { PreflightError, type TelebenchError } from '../../pipeline/errors.js';
import { DockerClient } from '../../pipeline/providers/docker/client.js';
import {
  DockerExecutor,
  LocalExecutor,
  type Executor,
} from '../../pipeline/providers/docker/executor.js';
import { pingRegistry, pushImage } from '../../pipeline/providers/docker/registry.js';
import { SwarmExecutor } from '../../pipeline/providers/docker/swarm.js';
import type { NodeBuildOptions } from '../../pipeline/providers/docker/swarm-build.js';
import type { StageContext } from '../../pipeline/stage.js';
import type { EnvironmentsSettings } from './environments-config.js';

/**
 * The executor of `settings.executor`.
 * @param docker the engine (docker, swarm); unused for local
 * @param hooks onCleanupError: a container/service left behind (the result stands); log: progress
 */
export function executorFor(
  settings: EnvironmentsSettings,
  docker: DockerClient | null,
  hooks: { onCleanupError?: (e: TelebenchError) => void; log?: (m: string) => void } = {},
): Executor {
  if (settings.executor === 'local' || !docker) return new LocalExecutor();
  const cleanup = hooks.onCleanupError ? { onCleanupError: hooks.onCleanupError } : {};
  if (settings.executor === 'docker') return new DockerExecutor(docker, cleanup);
  return new SwarmExecutor(docker, {
    registry: settings.swarm.registry,
    maxAttempts: settings.swarm.max_attempts,
    startTimeoutMs: settings.swarm.start_timeout_s * 1000,
    constraints: settings.swarm.constraints,
    ...cleanup,
    ...(hooks.log ? { log: hooks.log } : {}),
  });
}

/**
 * The executor of a stage's items (`swe5g.validate`, `swe5g.audit`): {@link executorFor} on the
 * run's one Docker client (memoised as `docker`), a container or service left behind written to
 * the event log with its code (the step's result stands), progress to the log.
 */
export function stageExecutor(
  settings: EnvironmentsSettings,
  ctx: Pick<StageContext, 'log' | 'memo'>,
): Executor {
  return executorFor(
    settings,
    settings.executor === 'local' ? null : ctx.memo('docker', () => new DockerClient()),
    {
      onCleanupError: (e) => ctx.log(e.message, { code: e.code, ...e.context }),
      log: (m) => ctx.log(m),
    },
  );
}

/**
 * What the executor needs before a stage starts: the Docker engine (docker, swarm), a Swarm
 * manager and the registry (swarm).
 * @throws PreflightError naming the engine, the swarm or the registry, with what to do
 */
export async function executorPreflight(settings: EnvironmentsSettings): Promise<void> {
  if (settings.executor === 'local') return;
  const docker = new DockerClient();
  await docker.ping();
  if (settings.executor !== 'swarm') return;
  const info = (await docker.docker.info()) as {
    Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean };
  };
  if (info.Swarm?.LocalNodeState !== 'active' || !info.Swarm.ControlAvailable) {
    throw new PreflightError(
      'docker swarm',
      `executor swarm needs the local Docker engine to be a Swarm manager (swarm state: ${info.Swarm?.LocalNodeState ?? 'unknown'}${info.Swarm?.LocalNodeState === 'active' ? ', a worker' : ''})`,
      'run `docker swarm init` here (and `docker swarm join` on the other machines), or set swe5g.environments.executor: docker',
    );
  }
  await pingRegistry(settings.swarm.registry);
}

/**
 * Pushes an instance's three images to the swarm registry (executor `swarm` only).
 * @returns the digest references, by layer
 * @throws TelebenchError `registry_push_failed` (infra) naming the registry
 */
export async function pushLayers(
  settings: EnvironmentsSettings,
  docker: DockerClient,
  images: { base: string; env: string; instance: string },
): Promise<Record<'base' | 'env' | 'instance', string>> {
  const r = settings.swarm.registry;
  // base and env first: the instance push then finds their layers in the registry
  const base = await pushImage(docker, images.base, r);
  const env = await pushImage(docker, images.env, r);
  const instance = await pushImage(docker, images.instance, r);
  return { base, env, instance };
}

/** The node builds' options of `swe5g.environments.swarm` (`builds.on: nodes`, swarm-build.ts). */
export function nodeBuildOptions(settings: EnvironmentsSettings): NodeBuildOptions {
  const b = settings.swarm.builds;
  return {
    registry: settings.swarm.registry,
    builderImage: b.builder_image,
    cpus: b.cpus,
    memoryBytes: b.memory_mib * 2 ** 20,
    timeoutMs: b.timeout_s * 1000,
  };
}
