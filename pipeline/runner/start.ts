/**
 * Starting one stage: wait for its needs (their outcomes, or only their start for a streaming
 * stage), stop behind a need that did not complete, run its preflight, and hand over to
 * {@link executeStage}. A missing service (PreflightError) blocks the stage unless every item of it
 * is already finished.
 */
import type { Stage, StageContext } from '../stage.js';
import { PreflightError } from '../errors.js';
import { redact } from '../secrets.js';
import { blockedBehind, type StageOutcome } from './outcome.js';
import { executeStage, type RunEnv } from './execute.js';

export interface StartOptions {
  /** The stage's needs selected in this run. */
  needs: readonly string[];
  /** Each selected stage's final outcome (a promise that may reject), by name. */
  outcomes: ReadonlyMap<string, Promise<StageOutcome>>;
  dryRun: boolean;
}

/**
 * Runs `stage` once its needs allow it.
 * @returns its outcome: `blocked` behind a need or at its own preflight, `interrupted` when the
 *   signal aborted before it started, or what {@link executeStage} returns
 * @throws what a need's promise or the stage's plan or preflight throws (other than PreflightError)
 */
export async function startStage<Cfg>(
  stage: Stage<unknown, unknown, Cfg>,
  ctx: StageContext<Cfg>,
  env: RunEnv<Cfg>,
  opts: StartOptions,
): Promise<StageOutcome> {
  const { needs, outcomes } = opts;
  // A streaming stage starts once its needs have begun; it then waits per item (executeStage).
  const streaming = stage.itemNeeds !== undefined && !opts.dryRun && needs.length > 0;
  const needOutcomes = await Promise.all(
    needs.map((n) => (streaming ? env.board.get(n)!.begun : outcomes.get(n)!)),
  );
  const blocked = firstBlocked(stage.name, needs, needOutcomes, env);
  if (blocked) return blocked;
  if (env.signal.aborted) return { status: 'interrupted', counts: {}, ran: 0 };
  if (stage.preflight && !opts.dryRun) {
    try {
      await stage.preflight(ctx);
    } catch (err) {
      if (!(err instanceof PreflightError)) throw err;
      if (streaming) {
        // Judge "nothing left to do" on the needs' final outputs, as a barrier stage would.
        const finals = await Promise.all(needs.map((n) => outcomes.get(n)!));
        const behind = firstBlocked(stage.name, needs, finals, env);
        if (behind) return behind;
      }
      return preflightStopped(stage, ctx, env, err);
    }
  }
  env.board.begin(stage.name);
  return executeStage(stage, ctx, env, {
    dry: opts.dryRun,
    streamFrom: streaming ? needs : [],
    emitEnd: true,
  });
}

/** The blocked outcome (and its `stage-blocked` event) behind the first need that did not complete. */
function firstBlocked<Cfg>(
  name: string,
  needs: readonly string[],
  needOutcomes: readonly (StageOutcome | undefined)[],
  env: RunEnv<Cfg>,
): StageOutcome | undefined {
  const i = needOutcomes.findIndex((o) => o !== undefined && o.status !== 'completed');
  if (i < 0) return undefined;
  const b = blockedBehind(needs[i]!, needOutcomes[i]!);
  env.bus.emit({
    kind: 'stage-blocked',
    stage: name,
    because: b.because,
    ...(b.root !== undefined ? { root: b.root } : {}),
  });
  return b.outcome;
}

/**
 * A stage whose preflight found a service missing: completed when a read-only plan finds every
 * item already finished (its finished items stay usable by the stages after it; plan is pure, so
 * a read-only plan is safe), else blocked with the service, message and hint.
 */
async function preflightStopped<Cfg>(
  stage: Stage<unknown, unknown, Cfg>,
  ctx: StageContext<Cfg>,
  env: RunEnv<Cfg>,
  err: PreflightError,
): Promise<StageOutcome> {
  const { bus, store } = env;
  const name = stage.name;
  // A probe: its dry-run stage-end, whose `run` would count items that never run, is not
  // emitted; the stage's own stage-end below says what happened.
  const nothingToDo = await executeStage(stage, ctx, env, {
    dry: true,
    streamFrom: [],
    emitEnd: false,
  }).then(
    (o) => o.status === 'completed' && o.wouldRun === 0 && (o.counts.planned ?? 0) > 0,
    () => false, // a plan that needs the missing service cannot say: the stage stays stopped
  );
  const c = store.counts(name);
  const counts = { ...c.byState, total: c.total };
  if (nothingToDo) {
    bus.emit({
      kind: 'log',
      stage: name,
      message: `${err.service} is not available, but every item of ${name} is already finished`,
    });
    bus.emit({ kind: 'stage-end', stage: name, counts, ran: 0, ms: 0 });
    return { status: 'completed', counts, ran: 0 };
  }
  const reason = redact(err.message);
  bus.emit({
    kind: 'stage-preflight-failed',
    stage: name,
    service: err.service,
    message: reason,
    hint: err.hint,
  });
  bus.emit({
    kind: 'stage-end',
    stage: name,
    counts,
    ran: 0,
    stopped: {
      at: 'preflight',
      service: err.service,
      reason,
      ...(err.hint ? { hint: err.hint } : {}),
    },
    ms: 0,
  });
  return { status: 'blocked', reason, service: err.service, hint: err.hint };
}
