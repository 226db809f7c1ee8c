/**
 * The plan shared by the stages that take one item per `swe5g.resolve` output (`swe5g.build`,
 * `swe5g.testgen`), and their item-level readiness (`itemNeeds`: item `k` reads item `k` of the
 * named stages, so it starts as soon as those exist: streaming, see pipeline/README.md).
 */
import type { PlanContext, Stage, WorkItem } from '../../../pipeline/stage.js';
import type { Resolved } from '../types.js';
import { resolveStage } from './resolve.js';
import { currentIssueText, withIssueText } from '../statement/current.js';
import { inRunOrder } from '../run-order.js';

/**
 * One work item per stored Resolved instance, interleaved by project (`../run-order.ts`; key =
 * instance_id, the resolve output's key), at most `ctx.limit` items when `--limit N` is given. With `onlyDoneIn`, only the
 * instances that stage has done (e.g. `swe5g.build` plans only instances whose test generation
 * succeeded: an image for an instance without a fail-to-pass test leads nowhere). The issue and PR
 * text is the current candidate's (`swe5g.filter`): resolve leaves it out of its cache key, so its
 * stored record may hold an older statement (statement/current.ts).
 * @returns a generator over the items; reads the store only (no network, no writes)
 */
export function* planPerResolved<Cfg>(
  ctx: PlanContext<Cfg>,
  onlyDoneIn?: Stage<unknown, unknown, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
): Generator<WorkItem<Resolved>> {
  const keep = onlyDoneIn
    ? new Set([...ctx.store.outputs(onlyDoneIn)].map((o) => o.key))
    : undefined;
  const text = currentIssueText(ctx.store);
  const items: WorkItem<Resolved>[] = [];
  for (const o of ctx.store.outputs(resolveStage))
    if (!keep || keep.has(o.key))
      items.push({ key: o.key, input: withIssueText(o.output, text.get(o.key)) });
  yield* inRunOrder(ctx, items);
}

/**
 * `itemNeeds` of a stage whose item `k` reads item `k` of each of `stages` (same instance_id).
 * @returns a function for `Stage.itemNeeds`
 */
export function sameKeyIn(
  ...stages: string[]
): (item: WorkItem<unknown>) => Record<string, readonly string[]> {
  return (item) => Object.fromEntries(stages.map((s) => [s, [item.key]]));
}
