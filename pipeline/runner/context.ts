/** The contexts the runner hands to stage hooks: a {@link StageContext} and one item's {@link RunContext}. */
import type { StageContext, RunContext, StoreReader } from '../stage.js';
import type { Store } from '../store/store.js';
import type { BlobStore } from '../store/blobs.js';
import type { EventBus } from '../events.js';
import { TelebenchError } from '../errors.js';
import { redact } from '../secrets.js';
import type { StageRegistry } from './select.js';

/**
 * A {@link StageContext} over `store`, as the runner gives every stage hook (and `telebench report`
 * gives a pipeline's report): `store.outputs(stage)` lists done outputs at the stage's version in
 * `registry`, `kv` is `store`, and `memo` keeps one instance per key in `memo` (pass the same map
 * to share instances between contexts).
 * @throws TelebenchError `unknown_stage` (tier bug) from `store.outputs` for a stage not in `registry`
 */
export function stageContext<Cfg>(
  base: Omit<StageContext<Cfg>, 'store' | 'kv' | 'memo'>,
  store: Store,
  registry: StageRegistry,
  memo: Map<string, unknown> = new Map(),
): StageContext<Cfg> {
  const reader: StoreReader = {
    outputs: <T>(stage: string) => {
      const s = registry.get(stage);
      if (!s)
        throw new TelebenchError('unknown_stage', `no stage named "${stage}"`, { tier: 'bug' });
      return store.doneOutputs<T>(stage, s.version);
    },
    item: (stage, key) => store.item(stage, key),
    items: (stage) => store.items(stage),
  };
  return {
    ...base,
    store: reader,
    kv: store,
    memo: <T>(key: string, make: () => T): T => {
      if (!memo.has(key)) memo.set(key, make());
      return memo.get(key) as T;
    },
  };
}

/**
 * The context of one attempt at one item: `ctx` plus the attempt id, the item key, a log that tags
 * its lines with the item, and `artifact`, which stores bytes in `blobs` and links them to the item
 * (and attempt) in `store`.
 */
export function itemContext<Cfg>(
  ctx: StageContext<Cfg>,
  item: { stage: string; key: string; attempt: string },
  deps: { store: Store; blobs: BlobStore; bus: EventBus },
): RunContext<Cfg> {
  const { stage, key, attempt } = item;
  return {
    ...ctx,
    attempt,
    key,
    log: (message, data) =>
      deps.bus.emit({
        kind: 'log',
        stage,
        key,
        message: redact(message),
        ...(data ? { data } : {}),
      }),
    artifact: (artifactName, data, mediaType = 'text/plain') => {
      const digest = deps.blobs.put(data);
      deps.store.linkArtifact(stage, key, {
        name: artifactName,
        digest,
        size: typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength,
        mediaType,
        attempt,
      });
      return digest;
    },
  };
}
