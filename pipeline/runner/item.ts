/**
 * The item state machine: one attempt at one item, from `running` to its end state, each step one
 * store write and one event.
 *
 *   pending/failed ──start──▶ running ──run() returns──────▶ done
 *                                     ──throws, aborted────▶ pending (abandoned: run again on resume;
 *                                                            also a SkipItem, which the stop may have caused)
 *                                     ──throws SkipItem────▶ skipped (a content outcome, with its reason)
 *                                     ──throws otherwise───▶ failed  (the error, redacted, kept)
 *
 * Every transition is one SQLite transaction, so a SIGKILL leaves the row `running` (started again
 * on resume) or at its end state, never half-written.
 */
import { randomUUID } from 'node:crypto';
import type { Stage, StageContext, WorkItem } from '../stage.js';
import type { Store } from '../store/store.js';
import type { BlobStore } from '../store/blobs.js';
import type { EventBus } from '../events.js';
import { SkipItem, asTelebenchError } from '../errors.js';
import { redact } from '../secrets.js';
import { itemContext } from './context.js';

/** How one attempt ended: the stored state, or `abandoned` (stored back as `pending`). */
export type ItemEnd = 'done' | 'skipped' | 'failed' | 'abandoned';

export interface ItemDeps {
  store: Store;
  blobs: BlobStore;
  bus: EventBus;
  runId: string;
  signal: AbortSignal;
}

/**
 * Runs `stage.run(item)` once as a new attempt and stores how it ended (see the module comment).
 * Never throws for what `run` throws: a `SkipItem` is a skip, an error after the abort signal is an
 * abandon, any other error a failure.
 * @returns the end state
 */
export async function runItem<Cfg>(
  stage: Stage<unknown, unknown, Cfg>,
  item: WorkItem<unknown>,
  ctx: StageContext<Cfg>,
  deps: ItemDeps,
): Promise<ItemEnd> {
  const { store, bus } = deps;
  const name = stage.name;
  const key = item.key;
  const attempt = randomUUID();
  const t0 = Date.now();
  store.startItem(name, key, attempt, deps.runId);
  bus.emit({ kind: 'item-start', stage: name, key, attempt });
  const end = (state: ItemEnd, reason?: string): ItemEnd => {
    bus.emit({
      kind: 'item-end',
      stage: name,
      key,
      attempt,
      state,
      ...(reason !== undefined ? { reason } : {}),
      ms: Date.now() - t0,
    });
    return state;
  };
  try {
    const output = await stage.run(item, itemContext(ctx, { stage: name, key, attempt }, deps));
    store.finishItem(name, key, attempt, { state: 'done', output: output ?? null });
    return end('done');
  } catch (err) {
    if (deps.signal.aborted) {
      // Abandoned: back to pending, so the next run starts it again. A SkipItem thrown now is no
      // verdict either: the stop may have caused it (a killed step's log reads as ambiguous).
      store.finishItem(name, key, attempt, { state: 'pending' });
      return end('abandoned');
    }
    if (err instanceof SkipItem) {
      store.finishItem(name, key, attempt, {
        state: 'skipped',
        reason: err.code,
        detail: redact(err.message),
        data: err.context,
      });
      return end('skipped', err.code);
    }
    const e = asTelebenchError(err);
    const json = e.toJSON();
    json.message = redact(String(json.message));
    if (typeof json.stack === 'string') json.stack = redact(json.stack);
    store.finishItem(name, key, attempt, { state: 'failed', error: json });
    return end('failed', e.code);
  }
}
