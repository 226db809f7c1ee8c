/** The contexts the runner hands to stage hooks: a {@link StageContext} and one item's {@link RunContext}. */
import {
  stageName,
  type Stage,
  type StageContext,
  type RunContext,
  type StageOutput,
  type StoreReader,
} from '../stage.js';
import type { Store } from '../store/store.js';
import type { BlobStore } from '../store/blobs.js';
import type { EventBus } from '../events.js';
import { TelebenchError } from '../errors.js';
import { redact } from '../secrets.js';
import type { StageRegistry } from './select.js';

/**
 * A {@link StageContext} over `store`, as the runner gives every stage hook (and `telebench report`
 * gives a pipeline's report): `store.outputs(handle)` (typed) and `store.outputsNamed(name)` list
 * done outputs at the stage's version in `registry`, `kv` is `store`, and `memo` keeps one instance per key in `memo` (pass the same map
 * to share instances between contexts).
 * @throws TelebenchError `unknown_stage` (tier bug) from `store.outputs` for a stage not in `registry`
 */
export function stageContext<Cfg>(
  base: Omit<StageContext<Cfg>, 'store' | 'kv' | 'memo'>,
  store: Store,
  registry: StageRegistry,
  memo: Map<string, unknown> = new Map(),
): StageContext<Cfg> {
  const reader = storeReader(store, (name) => registry.get(name)?.version, 'bug');
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
 * The {@link StoreReader} over `store`: done outputs at the version `versionOf` gives a stage name.
 * @param tier the tier of the `unknown_stage` error for a name `versionOf` does not know (`bug`
 *   inside a run, where every stage is registered; `config` where the name comes from a file)
 */
export function storeReader(
  store: Store,
  versionOf: (name: string) => number | undefined,
  tier: 'bug' | 'config' = 'bug',
): StoreReader {
  const named = (stage: string): Iterable<StageOutput<unknown, unknown>> => {
    const v = versionOf(stage);
    if (v === undefined)
      throw new TelebenchError('unknown_stage', `no stage named "${stage}"`, { tier });
    return store.doneOutputs<unknown>(stage, v);
  };
  return {
    outputs: <In, Out>(stage: Stage<In, Out, unknown>) =>
      named(stage.name) as Iterable<StageOutput<In, Out>>,
    outputsNamed: named,
    item: (stage, key) => store.item(stageName(stage), key),
    items: (stage) => store.items(stageName(stage)),
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

/**
 * A {@link StageContext} for reading a state outside a run (`telebench report`, `telebench plan`):
 * no events (emit does nothing), log lines to stderr, a signal never aborted.
 * @param runId what the context's `runId` says (a label: `report`, `plan`; no run is recorded)
 * @param state the opened state folder (`openState`): its store and blobs
 * @throws what {@link stageContext} throws
 */
export function readContext<Cfg>(
  runId: string,
  config: Cfg,
  configFile: string,
  stateDir: string,
  state: { store: Store; blobs: BlobStore },
  registry: StageRegistry,
): StageContext<Cfg> {
  return stageContext<Cfg>(
    {
      config,
      configFile,
      stateDir,
      runId,
      blobs: state.blobs,
      signal: new AbortController().signal,
      emit: () => undefined,
      log: (m) => process.stderr.write(`${m}\n`),
    },
    state.store,
    registry,
  );
}
