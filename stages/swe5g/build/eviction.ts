/**
 * A disk budget for this state's images with eviction (issue 31: images that scale to a
 * whole-registry run). Under `swe5g.environments.image_budget_gib`, `swe5g.build` first removes
 * images of this state that no pending stage needs, least recently used first, until the state's
 * images fit: instance images of items whose validation (and audit, when enabled) has finished,
 * and env images none of whose instances is still needed or not yet built. An evicted image is
 * rebuilt from its recipe when a later stage needs it (`on-demand.ts`): the names are content
 * keys, so the rebuilt image has the name the records hold.
 */
import type { DockerClient } from '../../../pipeline/providers/docker/client.js';
import type { KeyValue } from '../../../pipeline/store/store.js';
import type { StageContext, StoreReader } from '../../../pipeline/stage.js';
import type { Resolved } from '../types.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import type { Built } from './build.js';

/** kv namespace: image name -> last time (ms since the epoch) a stage built or used it. */
export const IMAGE_USE_KV = 'swe5g.image_used';
/** kv namespace: run id -> the {@link EvictionReport} of that run's build stage. */
export const EVICTIONS_KV = 'swe5g.evictions';

/** Records that a stage built or used `image` now (the order of eviction). */
export function touchImage(kv: KeyValue | undefined, image: string, now = Date.now()): void {
  if (image) kv?.set(IMAGE_USE_KV, image, now);
}

/** One image of this state as the eviction sees it. */
export interface StateImage {
  name: string;
  layer: 'env' | 'instance';
  /** Bytes it holds on its own (its layer: Built `sizes.env_layer` / `instance_layer`). */
  bytes: number;
  /** ms since the epoch of its last use (build or step), 0 when never recorded. */
  lastUsed: number;
  /** No pending stage needs it. */
  evictable: boolean;
  /** Instance ids built on it (an env image) or its own (an instance image). */
  instances: string[];
  /** An env image's instance images (it is removed only after they are). */
  children: string[];
}

/** What one build stage's eviction did (stage log, run summary, kv {@link EVICTIONS_KV}). */
export interface EvictionReport {
  budget_bytes: number;
  /** This state's images present before and after, bytes (sum of their own layers). */
  used_before: number;
  used_after: number;
  evicted: { image: string; layer: 'env' | 'instance'; bytes: number; instances: string[] }[];
}

/**
 * Picks the images to remove so that `images` fit in `budgetBytes`: evictable images, least
 * recently used first (ties: larger first); an env image only once none of its children remains.
 * Pure: the caller removes them.
 * @returns the report (`evicted` empty when already under budget or nothing is evictable)
 */
export function planEviction(images: readonly StateImage[], budgetBytes: number): EvictionReport {
  const used_before = images.reduce((n, i) => n + i.bytes, 0);
  const present = new Set(images.map((i) => i.name));
  const evicted: EvictionReport['evicted'] = [];
  let used = used_before;
  const order = images
    .filter((i) => i.evictable)
    .sort((a, b) => a.lastUsed - b.lastUsed || b.bytes - a.bytes || (a.name < b.name ? -1 : 1));
  let progress = true;
  while (used > budgetBytes && progress) {
    progress = false;
    for (const i of order) {
      if (used <= budgetBytes) break;
      if (!present.has(i.name) || i.children.some((c) => present.has(c))) continue;
      present.delete(i.name);
      used -= i.bytes;
      evicted.push({ image: i.name, layer: i.layer, bytes: i.bytes, instances: i.instances });
      progress = true;
      // start again from the least recently used: an env image this removal freed is next
      break;
    }
  }
  return { budget_bytes: budgetBytes, used_before, used_after: used, evicted };
}

/** An item is finished in `stage` when it has a record that is not pending or running. */
function finished(store: StoreReader, stage: string, key: string): boolean {
  const r = store.item(stage, key);
  return r !== undefined && r.state !== 'pending' && r.state !== 'running';
}

/**
 * This state's env and instance images that the engine holds, from the build stage's outputs:
 * an instance image is evictable when `swe5g.validate` (and `swe5g.audit` when `audit`) has
 * finished its item; an env image when all its instance images are evictable and no resolved item
 * of the same registry entry and environment commit is still to be built.
 * @param built the build stage's done outputs (key, Built)
 * @param unbuilt resolved records the build stage has not finished
 */
export async function stateImages(opts: {
  docker: Pick<DockerClient, 'hasImage'>;
  store: StoreReader;
  kv: KeyValue | undefined;
  built: readonly { key: string; output: Built; resolved?: Resolved }[];
  unbuilt: readonly Resolved[];
  audit: boolean;
}): Promise<StateImage[]> {
  const envs = new Map<string, StateImage & { groups: Set<string> }>();
  const out: StateImage[] = [];
  const lastUsed = (n: string): number => opts.kv?.get<number>(IMAGE_USE_KV, n) ?? 0;
  for (const { key, output: b, resolved } of opts.built) {
    if (!b.images.instance || !(await opts.docker.hasImage(b.images.instance))) continue;
    const done =
      finished(opts.store, 'swe5g.validate', key) &&
      (!opts.audit || finished(opts.store, 'swe5g.audit', key));
    out.push({
      name: b.images.instance,
      layer: 'instance',
      bytes: Math.max(0, b.sizes.instance_layer),
      lastUsed: lastUsed(b.images.instance),
      evictable: done,
      instances: [b.instance_id],
      children: [],
    });
    let env = envs.get(b.images.env);
    if (!env) {
      if (!(await opts.docker.hasImage(b.images.env))) continue;
      env = {
        name: b.images.env,
        layer: 'env',
        bytes: Math.max(0, b.sizes.env_layer),
        lastUsed: lastUsed(b.images.env),
        evictable: true,
        instances: [],
        children: [],
        groups: new Set(),
      };
      envs.set(b.images.env, env);
    }
    env.instances.push(b.instance_id);
    env.children.push(b.images.instance);
    env.evictable &&= done;
    if (resolved) env.groups.add(`${resolved.registry_id}@${resolved.environment_setup_commit}`);
  }
  const pending = new Set(
    opts.unbuilt.map((r) => `${r.registry_id}@${r.environment_setup_commit}`),
  );
  for (const { groups, ...env } of envs.values())
    out.push({ ...env, evictable: env.evictable && ![...groups].some((g) => pending.has(g)) });
  return out;
}

/**
 * Before the build stage builds anything (once per run): with `image_budget_gib` set, removes
 * this state's images no pending stage needs ({@link stateImages}, {@link planEviction}) until
 * the state's images fit, logs each removal and stores the report under the run id
 * ({@link EVICTIONS_KV}; the run summary prints it). A removal the engine refuses (a container
 * still uses the image) is logged and counted as not freed.
 * @returns the report, or undefined without a budget
 */
export async function evictOverBudget(
  ctx: Pick<StageContext<HasSwe5g>, 'config' | 'store' | 'kv' | 'log' | 'runId'>,
  docker: Pick<DockerClient, 'hasImage' | 'remove'>,
): Promise<EvictionReport | undefined> {
  const s = swe5gSettings(ctx.config);
  const budget = s.environments.image_budget_gib;
  if (budget === undefined || s.environments.executor === 'local') return undefined;
  const built: { key: string; output: Built; resolved?: Resolved }[] = [];
  const unbuilt: Resolved[] = [];
  for (const r of ctx.store.items('swe5g.resolve')) {
    if (r.state !== 'done' || !r.output) continue;
    const b = ctx.store.item('swe5g.build', r.key);
    if (b?.state === 'done' && b.output)
      built.push({ key: r.key, output: b.output as Built, resolved: r.output as Resolved });
    else if (ctx.store.item('swe5g.testgen', r.key)?.state === 'done')
      unbuilt.push(r.output as Resolved);
  }
  const images = await stateImages({
    docker,
    store: ctx.store,
    kv: ctx.kv,
    built,
    unbuilt,
    audit: s.audit.enabled,
  });
  const plan = planEviction(images, budget * 1024 ** 3);
  const evicted: EvictionReport['evicted'] = [];
  let used = plan.used_before;
  for (const e of plan.evicted) {
    const r = await docker.remove(e.image);
    if (!r.removed) {
      ctx.log(`could not evict ${e.image}: ${r.error}`);
      continue;
    }
    used -= e.bytes;
    evicted.push(e);
    ctx.log(
      `evicted ${e.layer} image ${e.image} (${mib(e.bytes)} MiB; ${e.instances.join(', ')}): over swe5g.environments.image_budget_gib ${budget}; rebuilt from its recipe if a stage needs it`,
      { evicted: e.image, layer: e.layer, bytes: e.bytes },
    );
  }
  const report = { ...plan, evicted, used_after: used };
  if (plan.used_before > report.budget_bytes)
    ctx.log(
      `image budget: this state's images ${mib(plan.used_before)} MiB -> ${mib(used)} MiB (budget ${mib(report.budget_bytes)} MiB), ${evicted.length} evicted`,
    );
  if (evicted.length > 0) ctx.kv.set(EVICTIONS_KV, ctx.runId, report);
  return report;
}

const mib = (b: number): string => (b / 2 ** 20).toFixed(1);
