/**
 * The {@link BuildContext} of a stage run (one Docker client, build limit and registry per run),
 * for `swe5g.build` and for the stages that rebuild an evicted image on demand (`on-demand.ts`).
 */
import pLimit from 'p-limit';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import type { StageContext } from '../../../pipeline/stage.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import { configuredMirrorsDir } from '../mine/source.js';
import { registryById } from '../registry.js';
import { buildConcurrency } from '../environments-config.js';
import type { BuildContext } from './build.js';

/**
 * The run's build context: the memoized Docker client (`docker`), build limit
 * (`build_concurrency`) and registry, the mirrors folder and `source: git`'s offline flag.
 * @param log where build lines go (the caller's item log)
 */
export function buildContextOf(
  ctx: StageContext<HasSwe5g>,
  log: (message: string) => void,
): BuildContext {
  const settings = swe5gSettings(ctx.config).environments;
  const mirrorsDir = configuredMirrorsDir(ctx);
  return {
    docker: ctx.memo('docker', () => new DockerClient()),
    settings,
    stateDir: ctx.stateDir,
    kv: ctx.kv,
    limit: ctx.memo('swe5g.build.limit', () => pLimit(buildConcurrency(settings))),
    log,
    signal: ctx.signal,
    registry: ctx.memo('swe5g.build.registry', () => registryById(ctx.config, ctx.configFile)),
    ...(mirrorsDir ? { mirrorsDir } : {}),
    ...(swe5gSettings(ctx.config).source === 'git' ? { offline: true } : {}),
  };
}
