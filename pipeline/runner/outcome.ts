/**
 * How a stage ended and how a run's stage outcomes become its exit code. Pure: no store, no events.
 */

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

/** The outcome of a stage that never started because `blockedBy` (one of its needs) ended as `o`. */
export interface BlockedBehind {
  outcome: Extract<StageOutcome, { status: 'blocked' }>;
  /** The `stage-blocked` event's text and the stage that actually stopped (if any). */
  because: string;
  root?: string;
}

/**
 * The outcome of a stage whose need `blockedBy` ended as `o` (blocked or interrupted). Names the
 * stage that actually stopped at preflight (`root`), not the whole chain in between.
 */
export function blockedBehind(blockedBy: string, o: StageOutcome): BlockedBehind {
  const root = o.status === 'blocked' ? (o.service !== undefined ? blockedBy : o.root) : undefined;
  const because =
    o.status === 'interrupted'
      ? `needs ${blockedBy}, which was interrupted`
      : root === blockedBy
        ? `needs ${blockedBy}, which stopped at preflight`
        : root !== undefined
          ? `needs ${blockedBy}, which waits on ${root} (stopped at preflight)`
          : `needs ${blockedBy}, which did not run`;
  return {
    outcome: { status: 'blocked', reason: because, ...(root !== undefined ? { root } : {}) },
    because,
    ...(root !== undefined ? { root } : {}),
  };
}

/**
 * The exit code of a run from its stages' outcomes: 0 all done; 1 some item of this run's plan is
 * failed (not counted in a dry run, which fails nothing); 3 a stage stopped at preflight (or waits
 * behind one); 130 / 143 when the run was aborted by SIGINT / SIGTERM (`abortReason`). Later rules
 * win over earlier ones.
 *
 * Exit 1 counts only failures of this run's plan: a `--limit` run (a sample) or a config that no
 * longer plans them leaves older failures in the store; with a 1 for them the resume hint
 * (`--retry-failed`, same `--limit`) never reached them and printed itself again for ever.
 */
export function exitCodeOf(
  outcomes: readonly StageOutcome[],
  run: { dryRun: boolean; aborted: boolean; abortReason?: unknown },
): number {
  let exitCode = 0;
  const anyFailed = outcomes.some((o) => o.status !== 'blocked' && (o.failedInPlan ?? 0) > 0);
  if (anyFailed && !run.dryRun) exitCode = 1;
  if (outcomes.some((o) => o.status === 'blocked')) exitCode = 3;
  if (run.aborted) exitCode = run.abortReason === 'SIGTERM' ? 143 : 130;
  return exitCode;
}
