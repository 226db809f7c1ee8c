/**
 * The plan shared by the stages that take one item per `swe5g.resolve` output (`swe5g.build`,
 * `swe5g.testgen`).
 */
import type { PlanContext, WorkItem } from '../../../pipeline/stage.js';
import type { Resolved } from '../types.js';

/**
 * One work item per stored Resolved instance, in key order (key = instance_id, the resolve
 * output's key), at most `ctx.limit` items when `--limit N` is given.
 * @returns a generator over the items; reads the store only (no network, no writes)
 */
export function* planPerResolved<Cfg>(ctx: PlanContext<Cfg>): Generator<WorkItem<Resolved>> {
  let n = 0;
  for (const o of ctx.store.outputs<Resolved>('swe5g.resolve')) {
    if (ctx.limit !== undefined && n >= ctx.limit) return;
    n++;
    yield { key: o.key, input: o.output };
  }
}
