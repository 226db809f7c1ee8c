/**
 * The plan pass: list a stage's items (`stage.plan`), hash each input (canonical JSON, SHA-256) and
 * decide it against the store (run / done / skipped / failed), in batches of 256 decisions per
 * SQLite transaction. Pure over the store except for the decisions it records: a dry run decides
 * read-only and writes nothing.
 *
 * One {@link PlanPass} serves every pass of a stage in a run (a streaming stage plans several
 * times): it remembers which keys it decided, so a key is decided once.
 */
import type { PlanContext, Stage, WorkItem } from '../stage.js';
import type { PlanDecision, Store } from '../store/store.js';
import { TelebenchError } from '../errors.js';
import { canonicalJson, sha256 } from '../hash.js';

/** Decisions per SQLite transaction. */
export const PLAN_BATCH = 256;

/**
 * Lets the event loop run pending I/O callbacks and signal handlers. Stages whose `plan` or `run`
 * never wait for I/O (tokenising, parsing) would otherwise chain through promises only, and a
 * SIGINT could not be handled until the whole pipeline had finished.
 */
export const yieldToEventLoop = (): Promise<void> =>
  new Promise((resolve) => setImmediate(resolve));

export interface PlanPassOptions {
  store: Store;
  /** Decide read-only (`--dry-run`): nothing is written. */
  dry: boolean;
  retryFailed: boolean;
  /** `--limit N`: at most N keys are decided over all passes. */
  limit: number | undefined;
  signal: AbortSignal;
  /** Whether a listed item may be decided in a non-final pass (the streaming readiness). */
  ready?: (item: WorkItem<unknown>) => boolean;
  /** Called once per batch with the keys decided done / skipped / failed (not dry runs). */
  onSettled?: (keys: string[]) => void;
}

export class PlanPass<Cfg> {
  /** Keys decided so far (in any pass). */
  readonly decided = new Set<string>();
  /** Decisions so far by kind. */
  readonly decisions: Record<PlanDecision, number> = { run: 0, done: 0, skipped: 0, failed: 0 };
  /** Set when `--limit` stopped a pass. */
  limitReached = false;
  /** When the last pass ended (epoch ms) and how long it took (ms): paces re-planning. */
  lastEnd = 0;
  lastMs = 0;
  private toRun: WorkItem<unknown>[] = [];
  private batch: { item: WorkItem<unknown>; inputJson: string; inputHash: string }[] = [];

  constructor(
    private readonly stage: Stage<unknown, unknown, Cfg>,
    private readonly ctx: PlanContext<Cfg>,
    private readonly opts: PlanPassOptions,
  ) {}

  /** The items decided `run` since the last call (and forgets them). */
  takeToRun(): WorkItem<unknown>[] {
    const t = this.toRun;
    this.toRun = [];
    return t;
  }

  /**
   * One pass over `plan`. In a non-final pass an item is decided only when `ready` says so; the
   * final pass decides every listed item. Stops early at `--limit` or when the signal aborts.
   * @returns every key the pass listed (decided now, before, or not yet)
   * @throws TelebenchError `bad_item_key` / `duplicate_item_key` (tier bug) for a plan that lists
   *   an item without a key or a key twice
   */
  async run(final: boolean): Promise<Set<string>> {
    const { stage, opts } = this;
    const name = stage.name;
    const start = Date.now();
    const listed = new Set<string>();
    for await (const item of stage.plan(this.ctx)) {
      if (typeof item.key !== 'string' || item.key === '') {
        throw new TelebenchError('bad_item_key', `stage ${name} planned an item without a key`, {
          tier: 'bug',
        });
      }
      if (listed.has(item.key)) {
        throw new TelebenchError(
          'duplicate_item_key',
          `stage ${name} planned the key "${item.key}" twice`,
          { tier: 'bug', context: { stage: name, key: item.key } },
        );
      }
      listed.add(item.key);
      if (this.decided.has(item.key) || (!final && opts.ready && !opts.ready(item))) continue;
      this.decided.add(item.key);
      const inputJson = canonicalJson(item.input ?? null);
      // the hash of what decides the stored output (Stage.cacheKey), else of the whole input
      const keyJson = stage.cacheKey
        ? canonicalJson(stage.cacheKey(item.input) ?? null)
        : inputJson;
      this.batch.push({ item, inputJson, inputHash: sha256(keyJson) });
      if (this.batch.length >= PLAN_BATCH) {
        this.flush();
        await yieldToEventLoop();
        if (opts.signal.aborted) break;
      }
      if (opts.limit !== undefined && this.decided.size >= opts.limit) {
        this.limitReached = true;
        break;
      }
    }
    this.flush();
    this.lastEnd = Date.now();
    this.lastMs = this.lastEnd - start;
    return listed;
  }

  /**
   * Decides the batched items in one transaction (in a dry run too, reads only: each statement in
   * its own implicit transaction cost ~20 ms of system time in WAL mode, 15,321 resilience items
   * planned in 5 min 47 s, issue 15).
   */
  private flush(): void {
    if (this.batch.length === 0) return;
    const b = this.batch;
    this.batch = [];
    const { store, dry, retryFailed } = this.opts;
    const name = this.stage.name;
    const version = this.stage.version;
    const settled: string[] = [];
    store.transaction(() => {
      for (const x of b) {
        const d = dry
          ? store.planDecisionReadOnly(name, x.item.key, version, x.inputHash, retryFailed)
          : store.planItem(name, x.item.key, version, x.inputHash, x.inputJson, retryFailed);
        this.decisions[d]++;
        if (d === 'run') this.toRun.push(x.item);
        else if (!dry) settled.push(x.item.key);
      }
    });
    if (settled.length > 0) this.opts.onSettled?.(settled);
  }
}
