/**
 * Plans and runs one stage that passed preflight: the plan pass, then its items through the item
 * state machine under the stage's concurrency limit (p-limit, why: the standard small concurrency
 * limiter), re-planning on the streaming wake-ups when the stage streams from its needs.
 */
import pLimit, { type LimitFunction } from 'p-limit';
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
  const { store, bus, board, signal } = env;
  const streamFrom = opts.streamFrom;
  const pass = new PlanPass(
    stage,
    { ...ctx, limit: env.limit },
    {
      store,
      dry: opts.dry,
      retryFailed: env.retryFailed,
      limit: env.limit,
      signal,
      ...(streamFrom.length > 0 ? { ready: (item) => board.ready(stage, item) } : {}),
      onSettled: (keys) => board.settle(name, keys),
    },
  );
  const { decisions } = pass;
  const wakeups =
    !opts.dry && streamFrom.length > 0 ? new Wakeups(board, streamFrom, signal) : undefined;
  const items = new ItemPool(stage, ctx, env);
  let final = wakeups?.needsEnded() ?? true;
  let listed: Set<string>;
  try {
    listed = await pass.run(final);
    if (opts.dry)
      return dryOutcome(name, listed, decisions, opts.emitEnd ? bus : undefined, started);
    bus.emit({
      kind: 'stage-start',
      stage: name,
      total: listed.size,
      alreadyDone: decisions.done + decisions.skipped,
      ...(streamFrom.length > 0 ? { streaming: true } : {}),
    });
    items.release(pass.takeToRun());
    if (wakeups && !final)
      ({ final, listed } = await streamPasses(pass, wakeups, items, env, listed));
  } finally {
    wakeups?.close();
  }
  // An interrupted or partial plan listed only part of the items: orphaning the rest would be
  // wrong. Keys decided in an earlier pass are kept even if the last pass did not list them.
  if (final && !items.interrupted && env.limit === undefined && !signal.aborted) {
    store.orphanUnplanned(name, new Set([...listed, ...pass.decided]));
  }
  await items.settled();
  const c = store.counts(name);
  const counts = { ...c.byState, total: c.total };
  const { ran } = items;
  bus.emit({ kind: 'stage-end', stage: name, counts, ran, ms: Date.now() - started });
  const notRetried = decisions.failed > 0 ? { notRetried: decisions.failed } : {};
  const failedInPlan = items.failed + decisions.failed;
  if (items.interrupted || signal.aborted) {
    const abandoned = items.abandoned;
    return { status: 'interrupted', counts, ran, failedInPlan, abandoned, ...notRetried };
  }
  return { status: 'completed', counts, ran, failedInPlan, ...notRetried };
}

/** The outcome of a dry run (and its `stage-end` on `bus` when given): what would run. */
function dryOutcome(
  name: string,
  listed: ReadonlySet<string>,
  decisions: PlanPass<unknown>['decisions'],
  bus: EventBus | undefined,
  started: number,
): StageOutcome {
  const counts = { planned: listed.size, ...decisions };
  bus?.emit({ kind: 'stage-end', stage: name, counts, ms: Date.now() - started });
  return {
    status: 'completed',
    counts,
    ran: 0,
    wouldRun: decisions.run,
    ...(decisions.failed > 0 ? { notRetried: decisions.failed } : {}),
  };
}

/**
 * The streaming re-plan loop: after each wake-up, one more pass over `plan` (the final one once
 * every need ended), its new items released. Stops at the abort, at `--limit`, after the final
 * pass, or (marking the pool interrupted) when a need ended without completing.
 * @returns whether the last pass was final, and the keys it listed
 */
async function streamPasses<Cfg>(
  pass: PlanPass<Cfg>,
  wakeups: Wakeups,
  items: ItemPool<Cfg>,
  env: RunEnv<Cfg>,
  listed: Set<string>,
): Promise<{ final: boolean; listed: Set<string> }> {
  const { signal, bus } = env;
  let final = false;
  let announced = listed.size;
  while (!final && !pass.limitReached && !signal.aborted) {
    await wakeups.next(pass.lastEnd, pass.lastMs);
    if (signal.aborted) break;
    final = wakeups.needsEnded();
    if (final && wakeups.needFailed()) {
      // a need was interrupted or threw: what it did not finish is not ours to plan
      items.interrupted = true;
      break;
    }
    listed = await pass.run(final);
    if (listed.size > announced) {
      announced = listed.size;
      bus.emit({
        kind: 'stage-total',
        stage: items.stage.name,
        total: listed.size,
        alreadyDone: pass.decisions.done + pass.decisions.skipped,
      });
    }
    items.release(pass.takeToRun());
  }
  return { final, listed };
}

/** A stage's items running under its concurrency limit, with this run's counts. */
class ItemPool<Cfg> {
  /** Items this run started. */
  ran = 0;
  /** Items of this run's plan that failed in it. */
  failed = 0;
  /** Items stopped mid-run by the interrupt (back to pending). */
  abandoned = 0;
  /** Set when an item saw the abort, or a need it streams from did not complete. */
  interrupted = false;
  private readonly limit: LimitFunction;
  private readonly running: Promise<void>[] = [];

  constructor(
    readonly stage: Stage<unknown, unknown, Cfg>,
    private readonly ctx: StageContext<Cfg>,
    private readonly env: RunEnv<Cfg>,
  ) {
    const n = env.concurrency?.[stage.name] ?? stage.concurrency?.(env.config) ?? 1;
    this.limit = pLimit(Math.max(1, n));
  }

  /** Queues `items`; each starts when a slot is free (and not after the abort). */
  release(items: readonly WorkItem<unknown>[]): void {
    for (const item of items) this.running.push(this.limit(() => this.runOne(item)));
  }

  /** Resolves when every released item has ended. */
  async settled(): Promise<void> {
    await Promise.all(this.running);
  }

  private async runOne(item: WorkItem<unknown>): Promise<void> {
    await yieldToEventLoop();
    if (this.env.signal.aborted) {
      this.interrupted = true;
      return;
    }
    this.ran++;
    const end = await runItem(this.stage, item, this.ctx, this.env);
    if (end === 'failed') this.failed++;
    if (end === 'abandoned') {
      this.abandoned++;
      this.interrupted = true;
    } else this.env.board.settle(this.stage.name, [item.key]);
  }
}
