/**
 * Plans and runs one stage that passed preflight: the plan pass, then its items through the item
 * state machine under the stage's concurrency limit (p-limit, why: the standard small concurrency
 * limiter), re-planning on the streaming wake-ups when the stage streams from its needs.
 */
import pLimit from 'p-limit';
import type { Stage, StageContext, WorkItem } from '../stage.js';
import type { Store } from '../store/store.js';
import type { BlobStore } from '../store/blobs.js';
import type { EventBus } from '../events.js';
import type { StageOutcome } from './outcome.js';
import { PlanPass, yieldToEventLoop } from './plan-pass.js';
import { runItem } from './item.js';
import { Wakeups, type LiveBoard } from './live.js';

/** What every stage of a run shares. */
export interface RunEnv<Cfg> {
  runId: string;
  store: Store;
  blobs: BlobStore;
  bus: EventBus;
  board: LiveBoard;
  signal: AbortSignal;
  config: Cfg;
  retryFailed: boolean;
  limit: number | undefined;
  concurrency: Record<string, number | undefined> | undefined;
}

export interface ExecuteOptions {
  /** Decide read-only and run nothing (`--dry-run`, or the preflight probe). */
  dry: boolean;
  /**
   * The selected needs of a stage that declares `itemNeeds`: the plan is repeated as their items
   * settle, and each listed item is decided (and run) once the items it names have settled in this
   * run; a final plan after the needs have ended lists the rest and orphans what it no longer lists.
   */
  streamFrom: readonly string[];
  /** Emit `stage-end` for a dry run (the preflight probe does not). */
  emitEnd: boolean;
}

/**
 * Plans and runs `stage` (see {@link ExecuteOptions}).
 * @returns `completed` (with `wouldRun` in a dry run) or `interrupted` (the signal aborted, or a
 *   need it streams from ended without completing)
 * @throws what `plan` throws (a bug or config error): items already started still settle first
 */
export async function executeStage<Cfg>(
  stage: Stage<unknown, unknown, Cfg>,
  ctx: StageContext<Cfg>,
  env: RunEnv<Cfg>,
  opts: ExecuteOptions,
): Promise<StageOutcome> {
  const started = Date.now();
  const { name } = stage;
  const { store, bus, board, signal, dry } = { ...env, dry: opts.dry };
  const streamFrom = opts.streamFrom;
  const pass = new PlanPass(
    stage,
    { ...ctx, limit: env.limit },
    {
      store,
      dry,
      retryFailed: env.retryFailed,
      limit: env.limit,
      signal,
      ...(streamFrom.length > 0 ? { ready: (item) => board.ready(stage, item) } : {}),
      onSettled: (keys) => board.settle(name, keys),
    },
  );
  const { decisions } = pass;
  const wakeups =
    !dry && streamFrom.length > 0 ? new Wakeups(board, streamFrom, signal) : undefined;
  let final = wakeups?.needsEnded() ?? true;
  let listed: Set<string>;
  try {
    listed = await pass.run(final);
  } catch (err) {
    wakeups?.close();
    throw err;
  }

  if (dry) {
    const counts = { planned: listed.size, ...decisions };
    if (opts.emitEnd)
      bus.emit({ kind: 'stage-end', stage: name, counts, ms: Date.now() - started });
    return {
      status: 'completed',
      counts,
      ran: 0,
      wouldRun: decisions.run,
      ...(decisions.failed > 0 ? { notRetried: decisions.failed } : {}),
    };
  }

  let announced = listed.size;
  bus.emit({
    kind: 'stage-start',
    stage: name,
    total: listed.size,
    alreadyDone: decisions.done + decisions.skipped,
    ...(streamFrom.length > 0 ? { streaming: true } : {}),
  });
  const concurrency = env.concurrency?.[name] ?? stage.concurrency?.(env.config) ?? 1;
  const limit = pLimit(Math.max(1, concurrency));
  let ran = 0;
  /** Items of this run's plan that failed in it. */
  let failedNow = 0;
  /** Items stopped mid-run by the interrupt (back to pending). */
  let abandonedNow = 0;
  let interrupted = false;

  const runOne = async (item: WorkItem<unknown>): Promise<void> => {
    await yieldToEventLoop();
    if (signal.aborted) {
      interrupted = true;
      return;
    }
    ran++;
    const end = await runItem(stage, item, ctx, env);
    if (end === 'failed') failedNow++;
    if (end === 'abandoned') {
      abandonedNow++;
      interrupted = true;
    } else board.settle(name, [item.key]);
  };
  const running: Promise<void>[] = [];
  const release = (): void => {
    for (const item of pass.takeToRun()) running.push(limit(() => runOne(item)));
  };
  try {
    release();
    while (wakeups && !final && !pass.limitReached && !signal.aborted) {
      await wakeups.next(pass.lastEnd, pass.lastMs);
      if (signal.aborted) break;
      final = wakeups.needsEnded();
      if (final && wakeups.needFailed()) {
        // a need was interrupted or threw: what it did not finish is not ours to plan
        interrupted = true;
        break;
      }
      listed = await pass.run(final);
      if (listed.size > announced) {
        announced = listed.size;
        bus.emit({
          kind: 'stage-total',
          stage: name,
          total: listed.size,
          alreadyDone: decisions.done + decisions.skipped,
        });
      }
      release();
    }
  } finally {
    wakeups?.close();
  }
  // An interrupted or partial plan listed only part of the items: orphaning the rest would be
  // wrong. Keys decided in an earlier pass are kept even if the last pass did not list them.
  if (final && !interrupted && env.limit === undefined && !signal.aborted) {
    store.orphanUnplanned(name, new Set([...listed, ...pass.decided]));
  }

  await Promise.all(running);
  const c = store.counts(name);
  const counts = { ...c.byState, total: c.total };
  bus.emit({ kind: 'stage-end', stage: name, counts, ran, ms: Date.now() - started });
  const notRetried = decisions.failed > 0 ? { notRetried: decisions.failed } : {};
  const failedInPlan = failedNow + decisions.failed;
  if (interrupted || signal.aborted)
    return {
      status: 'interrupted',
      counts,
      ran,
      failedInPlan,
      abandoned: abandonedNow,
      ...notRetried,
    };
  return { status: 'completed', counts, ran, failedInPlan, ...notRetried };
}
