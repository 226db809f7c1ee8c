/**
 * The streaming wake-ups: what a stage that streams from another (`Stage.itemNeeds`) sees of it
 * while both run, and the paced loop that re-plans when it changes.
 *
 * - {@link LiveBoard} holds, per selected stage, the keys settled in this run, whether it ended, and
 *   a `begun` promise (resolved when it passed preflight, or with its outcome if it never started);
 *   listeners are called on every change.
 * - {@link Wakeups} turns those changes (and an abort) into a `next()` that resolves when something
 *   changed and the pacing gap has passed: passes over `plan` are spaced at least 20 ms and 3x a
 *   pass's own duration apart, so re-planning stays a small share of the work.
 */
import type { Stage, WorkItem } from '../stage.js';
import { TelebenchError } from '../errors.js';
import type { StageOutcome } from './outcome.js';

/** What the stages that stream from a stage see of it while it runs. */
export interface LiveStage {
  /** Keys finished in this run: decided done/skipped/failed by its plan, or run to an end. */
  readonly settled: Set<string>;
  /** Set once its outcome is known (or its promise rejected). */
  ended: boolean;
  outcome?: StageOutcome;
  /** Resolves with undefined when the stage passed preflight and starts planning, or with its
   * outcome when it ended without starting (blocked, interrupted, or finished at preflight). */
  readonly begun: Promise<StageOutcome | undefined>;
  readonly listeners: Set<() => void>;
}

/** The live state of every stage of one run, by name. */
export class LiveBoard {
  private readonly stages = new Map<string, LiveStage & { markBegun(o?: StageOutcome): void }>();

  constructor(names: Iterable<string>) {
    for (const name of names) {
      let markBegun!: (o?: StageOutcome) => void;
      const begun = new Promise<StageOutcome | undefined>((resolve) => (markBegun = resolve));
      this.stages.set(name, {
        settled: new Set(),
        ended: false,
        begun,
        markBegun,
        listeners: new Set(),
      });
    }
  }

  /** The live state of a selected stage, or undefined for one not selected in this run. */
  get(name: string): LiveStage | undefined {
    return this.stages.get(name);
  }

  /** Marks `name` as having passed preflight: stages streaming from it may start. */
  begin(name: string): void {
    this.stages.get(name)!.markBegun(undefined);
  }

  /** Records keys of `name` as settled in this run and wakes its listeners. */
  settle(name: string, keys: Iterable<string>): void {
    const s = this.stages.get(name);
    if (!s) return;
    let any = false;
    for (const k of keys) {
      s.settled.add(k);
      any = true;
    }
    if (any) this.notify(name);
  }

  /** Records that `name` ended (with `outcome`, or by throwing when it is undefined). */
  end(name: string, outcome: StageOutcome | undefined): void {
    const s = this.stages.get(name)!;
    s.ended = true;
    if (outcome) s.outcome = outcome;
    s.markBegun(outcome ?? { status: 'interrupted', counts: {}, ran: 0 });
    this.notify(name);
  }

  private notify(name: string): void {
    for (const l of this.stages.get(name)!.listeners) l();
  }

  /**
   * Whether every item `item` names through `stage.itemNeeds` (in selected, still running needs)
   * has settled in this run.
   * @throws TelebenchError `bad_item_needs` (tier bug) when it names a stage outside `stage.needs`
   */
  ready(stage: Stage<unknown, unknown, never>, item: WorkItem<unknown>): boolean {
    const named = stage.itemNeeds!(item);
    for (const [need, keys] of Object.entries(named)) {
      if (!stage.needs.includes(need)) {
        throw new TelebenchError(
          'bad_item_needs',
          `stage ${stage.name} names items of ${need}, which is not in its needs (${stage.needs.join(', ')})`,
          { tier: 'bug', context: { stage: stage.name, key: item.key, need } },
        );
      }
      const l = this.stages.get(need);
      if (!l || l.ended) continue;
      for (const k of keys) if (!l.settled.has(k)) return false;
    }
    return true;
  }
}

/**
 * Wake-ups of one streaming stage: a change in one of `needs` on `board` (an item settled, the stage
 * ended) or the abort of `signal` marks it dirty; {@link Wakeups.next} waits for that and for the
 * pacing gap after the last plan pass. Call {@link Wakeups.close} when done (removes the listeners).
 */
export class Wakeups {
  private dirty = false;
  private wake: (() => void) | undefined;
  private readonly onChange = (): void => {
    this.dirty = true;
    this.wake?.();
  };

  constructor(
    private readonly board: LiveBoard,
    private readonly needs: readonly string[],
    private readonly signal: AbortSignal,
  ) {
    for (const n of needs) board.get(n)!.listeners.add(this.onChange);
    signal.addEventListener('abort', this.onChange);
  }

  /** Whether every need has ended (the next pass is the final one). */
  needsEnded(): boolean {
    return this.needs.every((n) => this.board.get(n)!.ended);
  }

  /** Whether some need ended other than completed (interrupted, or its promise rejected). */
  needFailed(): boolean {
    return this.needs.some((n) => this.board.get(n)!.outcome?.status !== 'completed');
  }

  /**
   * Resolves once something changed and at least max(20 ms, 3 x `lastPassMs`) have passed since
   * `lastPassEnd` (epoch ms): the time to plan again.
   */
  async next(lastPassEnd: number, lastPassMs: number): Promise<void> {
    if (!this.dirty) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    const gap = Math.max(20, 3 * lastPassMs) - (Date.now() - lastPassEnd);
    if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
    this.dirty = false;
  }

  close(): void {
    for (const n of this.needs) this.board.get(n)!.listeners.delete(this.onChange);
    this.signal.removeEventListener('abort', this.onChange);
  }
}
