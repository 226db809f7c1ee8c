/**
 * The runner: orders the selected stages by their `needs`, runs independent stages at the same
 * time, runs each stage's items under a concurrency limit (p-limit, why: the standard small
 * concurrency limiter), and records every item's state in the {@link Store}.
 *
 * Resumability: `plan` is re-run on every start; an item is skipped when the store holds it `done`
 * (or `skipped`) at the same stage version and input hash. A row left `running` by a killed process
 * is started again, so after a SIGKILL at most `concurrency` items per running stage are repeated
 * and nothing done is lost (each finish is one SQLite transaction).
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import type { Pipeline, Stage, StageContext, WorkItem, RunContext, StoreReader } from './stage.js';
import { Store, type PlanDecision } from './store/store.js';
import { BlobStore } from './store/blobs.js';
import { EventBus, type TelebenchEvent } from './events.js';
import { canonicalJson, sha256 } from './hash.js';
import {
  ConfigError,
  PreflightError,
  SkipItem,
  TelebenchError,
  asTelebenchError,
} from './errors.js';
import { redact } from './secrets.js';

export type StageRegistry = ReadonlyMap<string, Stage<any, any, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any

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
 * How a stage ended. `counts` are the stage's items by state in the store (every run's, not only
 * this one's); `ran` the items this run executed; `notRetried` the planned items that had failed
 * in an earlier run and were left failed because `--retry-failed` was not given (they count
 * towards `--limit`).
 */
export type StageOutcome =
  | {
      status: 'completed';
      counts: Record<string, number>;
      ran: number;
      wouldRun?: number;
      notRetried?: number;
      /** Items of this run's plan that are failed (failed in it, or before and not retried). */
      failedInPlan?: number;
    }
  | {
      status: 'blocked';
      reason: string;
      service?: string;
      hint?: string;
      /** The stage upstream whose preflight stopped (set on stages blocked behind it). */
      root?: string;
    }
  | {
      status: 'interrupted';
      counts: Record<string, number>;
      ran: number;
      /** Items this run started and stopped at the interrupt: pending again, run on resume. */
      abandoned?: number;
      notRetried?: number;
      failedInPlan?: number;
    };

export interface RunResult {
  runId: string;
  exitCode: number;
  stages: Record<string, StageOutcome>;
}

/**
 * Selects the stages to run and sorts them so that every stage comes after its needs.
 * @throws ConfigError when a stage name is unknown, a need is missing from the registry, or the
 *   needs form a cycle
 */
export function selectStages(
  pipeline: Pipeline<unknown>,
  registry: StageRegistry,
  opts: { only?: string; from?: string } = {},
): string[] {
  for (const name of pipeline.stages) {
    if (!registry.has(name))
      throw new ConfigError(`pipeline "${pipeline.name}" names unknown stage "${name}"`);
  }
  const inPipeline = new Set(pipeline.stages);
  // topological order over the pipeline's stages (Kahn, stable by declaration order)
  const order: string[] = [];
  const visiting = new Set<string>();
  const visited = new Set<string>();
  const visit = (name: string, trail: string[]): void => {
    if (visited.has(name)) return;
    if (visiting.has(name))
      throw new ConfigError(`stage needs form a cycle: ${[...trail, name].join(' -> ')}`);
    visiting.add(name);
    const stage = registry.get(name);
    if (!stage) throw new ConfigError(`stage "${trail.at(-1)}" needs unknown stage "${name}"`);
    for (const need of stage.needs) if (inPipeline.has(need)) visit(need, [...trail, name]);
    visiting.delete(name);
    visited.add(name);
    order.push(name);
  };
  for (const name of pipeline.stages) visit(name, []);

  for (const flag of [opts.only, opts.from]) {
    if (flag !== undefined && !inPipeline.has(flag)) {
      throw new ConfigError(
        `stage "${flag}" is not part of pipeline "${pipeline.name}" (its stages: ${pipeline.stages.join(', ')})`,
      );
    }
  }
  if (opts.only) return [opts.only];
  if (opts.from) {
    const keep = new Set([opts.from]);
    for (const name of order) {
      if (registry.get(name)!.needs.some((n) => keep.has(n))) keep.add(name);
    }
    return order.filter((n) => keep.has(n));
  }
  return order;
}

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

const PLAN_BATCH = 256;

/**
 * Lets the event loop run pending I/O callbacks and signal handlers. Stages whose `plan` or `run`
 * never wait for I/O (tokenising, parsing) would otherwise chain through promises only, and a
 * SIGINT could not be handled until the whole pipeline had finished.
 */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs a pipeline to completion (or until interrupted). Never throws for item failures; throws
 * ConfigError (exit 2) for configuration problems found before items start.
 * @returns per-stage outcomes and the exit code: 0 all done, 1 some items failed, 3 a stage stopped
 *   at preflight, 130/143 interrupted by SIGINT/SIGTERM (the reason of `signal`)
 */
export async function runPipeline<Cfg>(opts: RunOptions<Cfg>): Promise<RunResult> {
  const runId = opts.runId ?? randomUUID();
  const { store, blobs, bus, registry } = opts;
  const order = selectStages(opts.pipeline as Pipeline<unknown>, registry, opts);
  const selected = new Set(order);
  const memo = new Map<string, unknown>();

  const baseContext = (stageName: string | undefined): StageContext<Cfg> =>
    stageContext(
      {
        config: opts.config,
        configFile: opts.configFile,
        stateDir: opts.stateDir,
        runId,
        blobs,
        signal: opts.signal,
        emit: (e: TelebenchEvent) => bus.emit(e),
        log: (message, data) =>
          bus.emit({
            kind: 'log',
            ...(stageName ? { stage: stageName } : {}),
            message: redact(message),
            ...(data ? { data } : {}),
          }),
      },
      store,
      registry,
      memo,
    );

  bus.emit({ kind: 'run-start', runId, pipeline: opts.pipeline.name, stages: order });
  const outcomes: Record<string, StageOutcome> = {};
  const promises = new Map<string, Promise<StageOutcome>>();

  /** What the stages that stream from a stage see of it while it runs. */
  interface Live {
    /** Keys finished in this run: decided done/skipped/failed by its plan, or run to an end. */
    settled: Set<string>;
    /** Set once its outcome is known (or its promise rejected). */
    ended: boolean;
    outcome?: StageOutcome;
    /** Resolves with undefined when the stage passed preflight and starts planning, or with its
     * outcome when it ended without starting (blocked, interrupted, or finished at preflight). */
    begun: Promise<StageOutcome | undefined>;
    markBegun: (o: StageOutcome | undefined) => void;
    listeners: Set<() => void>;
  }
  const live = new Map<string, Live>();
  for (const name of order) {
    let markBegun!: (o: StageOutcome | undefined) => void;
    const begun = new Promise<StageOutcome | undefined>((resolve) => (markBegun = resolve));
    live.set(name, { settled: new Set(), ended: false, begun, markBegun, listeners: new Set() });
  }
  const notify = (name: string): void => {
    for (const l of live.get(name)!.listeners) l();
  };

  const blockedOutcome = (name: string, blockedBy: string, o: StageOutcome): StageOutcome => {
    // Name the stage that actually stopped, not the whole chain in between.
    const root =
      o.status === 'blocked' ? (o.service !== undefined ? blockedBy : o.root) : undefined;
    const because =
      o.status === 'interrupted'
        ? `needs ${blockedBy}, which was interrupted`
        : root === blockedBy
          ? `needs ${blockedBy}, which stopped at preflight`
          : root !== undefined
            ? `needs ${blockedBy}, which waits on ${root} (stopped at preflight)`
            : `needs ${blockedBy}, which did not run`;
    bus.emit({
      kind: 'stage-blocked',
      stage: name,
      because,
      ...(root !== undefined ? { root } : {}),
    });
    return { status: 'blocked', reason: because, ...(root !== undefined ? { root } : {}) };
  };

  const runStage = async (name: string): Promise<StageOutcome> => {
    const stage = registry.get(name)!;
    const needs = stage.needs.filter((n) => selected.has(n));
    // A streaming stage starts once its needs have begun; it then waits per item (executeStage).
    const streaming = stage.itemNeeds !== undefined && !opts.dryRun && needs.length > 0;
    const needOutcomes = await Promise.all(
      needs.map((n) => (streaming ? live.get(n)!.begun : promises.get(n)!)),
    );
    const blockedBy = needs.find(
      (_, i) => needOutcomes[i] !== undefined && needOutcomes[i].status !== 'completed',
    );
    if (blockedBy) return blockedOutcome(name, blockedBy, needOutcomes[needs.indexOf(blockedBy)]!);
    if (opts.signal.aborted) return { status: 'interrupted', counts: {}, ran: 0 };
    const ctx = baseContext(name);
    if (stage.preflight && !opts.dryRun) {
      try {
        await stage.preflight(ctx);
      } catch (err) {
        if (err instanceof PreflightError) {
          if (streaming) {
            // Judge "nothing left to do" on the needs' final outputs, as a barrier stage would.
            const finals = await Promise.all(needs.map((n) => promises.get(n)!));
            const by = needs.find((_, i) => finals[i]!.status !== 'completed');
            if (by) return blockedOutcome(name, by, finals[needs.indexOf(by)]!);
          }
          // A missing service does not block a stage that has nothing left to do: its finished
          // items stay usable by the stages after it (plan is pure, so a read-only plan is safe).
          // (a probe: its dry-run stage-end, whose `run` would count items that never run, is
          // not emitted; the stage's own stage-end below says what happened)
          const nothingToDo = await executeStage(stage, ctx, true, [], false).then(
            (o) => o.status === 'completed' && o.wouldRun === 0 && (o.counts.planned ?? 0) > 0,
            () => false, // a plan that needs the missing service cannot say: the stage stays stopped
          );
          if (nothingToDo) {
            const c = store.counts(name);
            bus.emit({
              kind: 'log',
              stage: name,
              message: `${err.service} is not available, but every item of ${name} is already finished`,
            });
            const counts = { ...c.byState, total: c.total };
            bus.emit({ kind: 'stage-end', stage: name, counts, ran: 0, ms: 0 });
            return { status: 'completed', counts, ran: 0 };
          }
          bus.emit({
            kind: 'stage-preflight-failed',
            stage: name,
            service: err.service,
            message: redact(err.message),
            hint: err.hint,
          });
          const c = store.counts(name);
          bus.emit({
            kind: 'stage-end',
            stage: name,
            counts: { ...c.byState, total: c.total },
            ran: 0,
            stopped: {
              at: 'preflight',
              service: err.service,
              reason: redact(err.message),
              ...(err.hint ? { hint: err.hint } : {}),
            },
            ms: 0,
          });
          return {
            status: 'blocked',
            reason: redact(err.message),
            service: err.service,
            hint: err.hint,
          };
        }
        throw err;
      }
    }
    live.get(name)!.markBegun(undefined);
    return executeStage(stage, ctx, opts.dryRun === true, streaming ? needs : []);
  };

  /**
   * Plans and runs one stage. With `streamFrom` (the selected needs of a stage that declares
   * `itemNeeds`) the plan is repeated as those stages' items finish, and each listed item is
   * decided (and run) once the items it names have finished in this run; a final plan after the
   * needs have ended lists the rest and orphans what it no longer lists.
   */
  const executeStage = async (
    stage: Stage<unknown, unknown, Cfg>,
    ctx: StageContext<Cfg>,
    dry: boolean = opts.dryRun === true,
    streamFrom: readonly string[] = [],
    emitEnd = true,
  ): Promise<StageOutcome> => {
    const started = Date.now();
    const name = stage.name;
    const self = live.get(name);
    const decided = new Set<string>();
    let toRun: WorkItem<unknown>[] = [];
    let batch: { item: WorkItem<unknown>; inputJson: string; inputHash: string }[] = [];
    const decisions: Record<PlanDecision, number> = { run: 0, done: 0, skipped: 0, failed: 0 };
    let limitReached = false;
    const flush = (): void => {
      if (batch.length === 0) return;
      const b = batch;
      batch = [];
      let settledSome = false;
      const decide = (x: (typeof b)[number]): void => {
        const d = dry
          ? store.planDecisionReadOnly(
              name,
              x.item.key,
              stage.version,
              x.inputHash,
              opts.retryFailed ?? false,
            )
          : store.planItem(
              name,
              x.item.key,
              stage.version,
              x.inputHash,
              x.inputJson,
              opts.retryFailed ?? false,
            );
        decisions[d]++;
        if (d === 'run') toRun.push(x.item);
        else if (!dry && self) {
          self.settled.add(x.item.key);
          settledSome = true;
        }
      };
      // One transaction per batch in a dry run too (reads only, so nothing is written): each
      // statement in its own implicit transaction cost ~20 ms of system time in WAL mode
      // (15,321 resilience items planned in 5 min 47 s, issue 15).
      store.transaction(() => b.forEach(decide));
      if (settledSome) notify(name);
    };
    /** Whether every item `item` names (in selected, still running needs) has finished. */
    const ready = (item: WorkItem<unknown>): boolean => {
      const named = stage.itemNeeds!(item);
      for (const [need, keys] of Object.entries(named)) {
        if (!stage.needs.includes(need)) {
          throw new TelebenchError(
            'bad_item_needs',
            `stage ${name} names items of ${need}, which is not in its needs (${stage.needs.join(', ')})`,
            { tier: 'bug', context: { stage: name, key: item.key, need } },
          );
        }
        const l = selected.has(need) ? live.get(need) : undefined;
        if (!l || l.ended) continue;
        for (const k of keys) if (!l.settled.has(k)) return false;
      }
      return true;
    };
    const planCtx = { ...ctx, limit: opts.limit };
    /** When the last pass over `plan` ended and how long it took (ms): paces re-planning. */
    let roundEnd = 0;
    let roundMs = 0;
    /** One pass over `plan` (sets roundEnd and roundMs). @returns every key it listed */
    const round = async (final: boolean): Promise<Set<string>> => {
      const roundStart = Date.now();
      const listed = new Set<string>();
      for await (const item of stage.plan(planCtx)) {
        if (typeof item.key !== 'string' || item.key === '') {
          throw new TelebenchError('bad_item_key', `stage ${name} planned an item without a key`, {
            tier: 'bug',
          });
        }
        if (listed.has(item.key)) {
          throw new TelebenchError(
            'duplicate_item_key',
            `stage ${name} planned the key "${item.key}" twice`,
            {
              tier: 'bug',
              context: { stage: name, key: item.key },
            },
          );
        }
        listed.add(item.key);
        if (decided.has(item.key) || (!final && !ready(item))) continue;
        decided.add(item.key);
        const inputJson = canonicalJson(item.input ?? null);
        batch.push({ item, inputJson, inputHash: sha256(inputJson) });
        if (batch.length >= PLAN_BATCH) {
          flush();
          await yieldToEventLoop();
          if (opts.signal.aborted) break;
        }
        if (opts.limit !== undefined && decided.size >= opts.limit) {
          limitReached = true;
          break;
        }
      }
      flush();
      roundEnd = Date.now();
      roundMs = roundEnd - roundStart;
      return listed;
    };

    // Streaming: a change in a need (an item finished, the stage ended, an abort) wakes the loop.
    let dirty = false;
    let wake: (() => void) | undefined;
    const onChange = (): void => {
      dirty = true;
      wake?.();
    };
    const needsEnded = (): boolean => streamFrom.every((n) => live.get(n)!.ended);
    if (!dry) {
      for (const n of streamFrom) live.get(n)!.listeners.add(onChange);
      opts.signal.addEventListener('abort', onChange);
    }

    let final = needsEnded();
    let listed = await round(final);

    if (dry) {
      const counts = { planned: listed.size, ...decisions };
      if (emitEnd) bus.emit({ kind: 'stage-end', stage: name, counts, ms: Date.now() - started });
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
    const concurrency = opts.concurrency?.[name] ?? stage.concurrency?.(opts.config) ?? 1;
    const limit = pLimit(Math.max(1, concurrency));
    let ran = 0;
    /** Items of this run's plan that failed in it. */
    let failedNow = 0;
    /** Items stopped mid-run by the interrupt (back to pending). */
    let abandonedNow = 0;
    let interrupted = false;

    const runOne = async (item: WorkItem<unknown>): Promise<void> => {
      await yieldToEventLoop();
      if (opts.signal.aborted) {
        interrupted = true;
        return;
      }
      const attempt = randomUUID();
      const t0 = Date.now();
      store.startItem(name, item.key, attempt, runId);
      bus.emit({ kind: 'item-start', stage: name, key: item.key, attempt });
      ran++;
      const runCtx: RunContext<Cfg> = {
        ...ctx,
        attempt,
        key: item.key,
        log: (message, data) =>
          bus.emit({
            kind: 'log',
            stage: name,
            key: item.key,
            message: redact(message),
            ...(data ? { data } : {}),
          }),
        artifact: (artifactName, data, mediaType = 'text/plain') => {
          const digest = blobs.put(data);
          store.linkArtifact(name, item.key, {
            name: artifactName,
            digest,
            size: typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength,
            mediaType,
            attempt,
          });
          return digest;
        },
      };
      let settled = true;
      try {
        const output = await stage.run(item, runCtx);
        store.finishItem(name, item.key, attempt, { state: 'done', output: output ?? null });
        bus.emit({
          kind: 'item-end',
          stage: name,
          key: item.key,
          attempt,
          state: 'done',
          ms: Date.now() - t0,
        });
      } catch (err) {
        if (err instanceof SkipItem) {
          store.finishItem(name, item.key, attempt, {
            state: 'skipped',
            reason: err.code,
            detail: redact(err.message),
            data: err.context,
          });
          bus.emit({
            kind: 'item-end',
            stage: name,
            key: item.key,
            attempt,
            state: 'skipped',
            reason: err.code,
            ms: Date.now() - t0,
          });
        } else if (opts.signal.aborted) {
          // Abandoned cleanly: back to pending, so the next run starts it again.
          store.finishItem(name, item.key, attempt, { state: 'pending' });
          abandonedNow++;
          interrupted = true;
          settled = false;
          bus.emit({
            kind: 'item-end',
            stage: name,
            key: item.key,
            attempt,
            state: 'abandoned',
            ms: Date.now() - t0,
          });
        } else {
          const e = asTelebenchError(err);
          const json = e.toJSON();
          json.message = redact(String(json.message));
          if (typeof json.stack === 'string') json.stack = redact(json.stack);
          store.finishItem(name, item.key, attempt, { state: 'failed', error: json });
          failedNow++;
          bus.emit({
            kind: 'item-end',
            stage: name,
            key: item.key,
            attempt,
            state: 'failed',
            reason: e.code,
            ms: Date.now() - t0,
          });
        }
      }
      if (settled && self) {
        self.settled.add(item.key);
        notify(name);
      }
    };

    const running: Promise<void>[] = [];
    const release = (): void => {
      for (const item of toRun) running.push(limit(() => runOne(item)));
      toRun = [];
    };
    try {
      release();
      while (!final && !limitReached && !opts.signal.aborted) {
        if (!dirty) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        // A pass re-reads the whole plan: space passes out (at least 3x a pass's own time, 20 ms
        // minimum) so that re-planning stays a small share of the work however fast items finish.
        const gap = Math.max(20, 3 * roundMs) - (Date.now() - roundEnd);
        if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
        dirty = false;
        if (opts.signal.aborted) break;
        final = needsEnded();
        if (final && streamFrom.some((n) => live.get(n)!.outcome?.status !== 'completed')) {
          // a need was interrupted or threw: what it did not finish is not ours to plan
          interrupted = true;
          break;
        }
        listed = await round(final);
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
      for (const n of streamFrom) live.get(n)!.listeners.delete(onChange);
      opts.signal.removeEventListener('abort', onChange);
    }
    // An interrupted or partial plan listed only part of the items: orphaning the rest would be
    // wrong. Keys decided in an earlier pass are kept even if the last pass did not list them.
    if (final && !interrupted && opts.limit === undefined && !opts.signal.aborted) {
      store.orphanUnplanned(name, new Set([...listed, ...decided]));
    }

    await Promise.all(running);
    const c = store.counts(name);
    const counts = { ...c.byState, total: c.total };
    bus.emit({ kind: 'stage-end', stage: name, counts, ran, ms: Date.now() - started });
    const notRetried = decisions.failed > 0 ? { notRetried: decisions.failed } : {};
    const failedInPlan = failedNow + decisions.failed;
    if (interrupted || opts.signal.aborted)
      return {
        status: 'interrupted',
        counts,
        ran,
        failedInPlan,
        abandoned: abandonedNow,
        ...notRetried,
      };
    return { status: 'completed', counts, ran, failedInPlan, ...notRetried };
  };

  for (const name of order) {
    const l = live.get(name)!;
    const p = runStage(name).then(
      (o) => {
        outcomes[name] = o;
        l.outcome = o;
        l.ended = true;
        l.markBegun(o);
        notify(name);
        return o;
      },
      (err: unknown) => {
        l.ended = true;
        l.markBegun({ status: 'interrupted', counts: {}, ran: 0 });
        notify(name);
        throw err;
      },
    );
    promises.set(name, p);
  }
  // Settle every stage; a thrown error (config, bug in plan) aborts after in-flight stages settle.
  const settled = await Promise.allSettled([...promises.values()]);
  const thrown = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (thrown) throw thrown.reason;

  let exitCode = 0;
  // Exit 1 for failed items of this run's plan: a --limit run (a sample) or a config that no
  // longer plans them leaves older failures in the store; with a 1 for them, the resume hint
  // (--retry-failed, same --limit) never reached them and printed itself again for ever.
  const anyFailed = order.some((n) => {
    const o = outcomes[n]!;
    return o.status !== 'blocked' && (o.failedInPlan ?? 0) > 0;
  });
  // A dry run changes nothing and fails nothing: items that failed before are not its failure.
  if (anyFailed && !opts.dryRun) exitCode = 1;
  if (order.some((n) => outcomes[n]!.status === 'blocked')) exitCode = 3;
  if (opts.signal.aborted) exitCode = opts.signal.reason === 'SIGTERM' ? 143 : 130;
  return { runId, exitCode, stages: outcomes };
}
