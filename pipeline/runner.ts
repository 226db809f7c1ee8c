/**
 * The runner: orders the selected stages by their `needs`, runs independent stages at the same
 * time, runs each stage's items under a concurrency limit, and records every item's state in the
 * {@link Store}. It is a short composition of the parts in `runner/`:
 *
 * - `runner/select.ts` — which stages run, in needs order;
 * - `runner/start.ts` — wait for the needs, preflight, then `runner/execute.ts`, which runs
 * - `runner/plan-pass.ts` — the plan pass (list, hash, decide against the store) and
 * - `runner/item.ts` — the item state machine (one attempt → done / skipped / failed / abandoned),
 *   re-planning on `runner/live.ts`'s streaming wake-ups;
 * - `runner/outcome.ts` — stage outcomes and the outcome → exit-code rule.
 *
 * Resumability: `plan` is re-run on every start; an item is skipped when the store holds it `done`
 * (or `skipped`) at the same stage version and input hash. A row left `running` by a killed process
 * is started again, so after a SIGKILL at most `concurrency` items per running stage are repeated
 * and nothing done is lost (each finish is one SQLite transaction).
 */
import { randomUUID } from 'node:crypto';
import type { Pipeline, StageContext } from './stage.js';
import type { Store } from './store/store.js';
import type { BlobStore } from './store/blobs.js';
import type { EventBus } from './events.js';
import { redact } from './secrets.js';
import { selectStages, type StageRegistry } from './runner/select.js';
import { stageContext } from './runner/context.js';
import { exitCodeOf, type RunResult, type StageOutcome } from './runner/outcome.js';
import { LiveBoard } from './runner/live.js';
import { startStage } from './runner/start.js';
import type { RunEnv } from './runner/execute.js';

export { selectStages, type StageRegistry } from './runner/select.js';
export { readContext, stageContext, storeReader } from './runner/context.js';
export type { RunResult, StageOutcome } from './runner/outcome.js';

export interface RunOptions<Cfg> {
  pipeline: Pipeline<Cfg>;
  registry: StageRegistry;
  config: Cfg;
  configFile: string;
  stateDir: string;
  store: Store;
  blobs: BlobStore;
  bus: EventBus;
  /** Aborted by SIGINT/SIGTERM: no new item starts after it. */
  signal: AbortSignal;
  runId?: string;
  /** Run only this stage (its needs are read from the store as they are). */
  only?: string;
  /** Run this stage and every stage of the pipeline that depends on it. */
  from?: string;
  retryFailed?: boolean;
  /** Plan every stage and report what would run; write nothing. */
  dryRun?: boolean;
  /** At most N items per stage are planned. */
  limit?: number;
  /** Per-stage concurrency overrides (from the config's `stages:` section). */
  concurrency?: Record<string, number | undefined>;
}

/**
 * Runs a pipeline to completion (or until interrupted). Never throws for item failures; throws
 * ConfigError (exit 2) for configuration problems found before items start.
 * @returns per-stage outcomes and the exit code ({@link exitCodeOf}: 0 all done, 1 some items
 *   failed, 3 a stage stopped at preflight, 130/143 interrupted by SIGINT/SIGTERM)
 */
export async function runPipeline<Cfg>(opts: RunOptions<Cfg>): Promise<RunResult> {
  const runId = opts.runId ?? randomUUID();
  const { store, bus, registry } = opts;
  const order = selectStages(opts.pipeline as Pipeline<unknown>, registry, opts);
  const selected = new Set(order);
  const memo = new Map<string, unknown>();
  const env: RunEnv<Cfg> = {
    runId,
    store,
    blobs: opts.blobs,
    bus,
    board: new LiveBoard(order),
    signal: opts.signal,
    config: opts.config,
    retryFailed: opts.retryFailed ?? false,
    limit: opts.limit,
    concurrency: opts.concurrency,
  };
  const contextOf = (stage: string): StageContext<Cfg> =>
    stageContext(
      {
        config: opts.config,
        configFile: opts.configFile,
        stateDir: opts.stateDir,
        runId,
        blobs: opts.blobs,
        signal: opts.signal,
        emit: (e) => bus.emit(e),
        log: (message, data) =>
          bus.emit({ kind: 'log', stage, message: redact(message), ...(data ? { data } : {}) }),
      },
      store,
      registry,
      memo,
    );

  bus.emit({ kind: 'run-start', runId, pipeline: opts.pipeline.name, stages: order });
  const outcomes: Record<string, StageOutcome> = {};
  const promises = new Map<string, Promise<StageOutcome>>();
  for (const name of order) {
    const stage = registry.get(name)!;
    const needs = stage.needs.filter((n) => selected.has(n));
    const p = startStage(stage, contextOf(name), env, {
      needs,
      outcomes: promises,
      dryRun: opts.dryRun === true,
    }).then(
      (o) => {
        outcomes[name] = o;
        env.board.end(name, o);
        return o;
      },
      (err: unknown) => {
        env.board.end(name, undefined);
        throw err;
      },
    );
    promises.set(name, p);
  }
  // Settle every stage; a thrown error (config, bug in plan) aborts after in-flight stages settle.
  const settled = await Promise.allSettled([...promises.values()]);
  const thrown = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (thrown) throw thrown.reason;

  const exitCode = exitCodeOf(
    order.map((n) => outcomes[n]!),
    { dryRun: opts.dryRun === true, aborted: opts.signal.aborted, abortReason: opts.signal.reason },
  );
  return { runId, exitCode, stages: outcomes };
}
