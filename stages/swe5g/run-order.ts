/**
 * The order in which the stages of the `swe5g` pipeline hand out their items (issue 31):
 * round-robin over the projects, each project's items in key order. Instance ids are
 * `owner__name-N`, so key order ran every free5GC item before the first of Magma or Open5GS, and a
 * time-boxed, interrupted or `--limit` run measured free5GC only. Interleaved, the first items of
 * a stage are one of each project, and so on while every project has items left.
 *
 * The project of a key is the one `telebench plan` groups by (`projectOf` in report-counts.ts):
 * the organisation, lower case. The order changes which item starts first, nothing else: the
 * keys, the inputs and the cache keys are the ones the stage planned before (the runner decides
 * done-ness by key and input hash), so a resumed state finds its work done.
 */
import type { WorkItem } from '../../pipeline/stage.js';
import { projectOfKey } from './report-counts.js';

/** Key order by UTF-16 code unit (ASCII keys: SQLite's `ORDER BY key`). */
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * `items` interleaved by project: the first item of each project (projects by name), then the
 * second of each, and so on; a project with no items left drops out of the rotation. Within a
 * project, items keep key order. Deterministic: the result depends on the keys only, not on the
 * order `items` came in.
 * @param items any items (all are returned, duplicates included)
 * @param keyOf an item's key (an instance id or a registry id: `projectOfKey`)
 * @returns a new array of the same items
 */
export function interleaveByProject<T>(items: Iterable<T>, keyOf: (item: T) => string): T[] {
  const groups = new Map<string, { key: string; item: T }[]>();
  for (const item of items) {
    const key = keyOf(item);
    const project = projectOfKey(key);
    let g = groups.get(project);
    if (!g) groups.set(project, (g = []));
    g.push({ key, item });
  }
  const lists = [...groups.entries()]
    .sort((a, b) => byKey(a[0], b[0]))
    .map(([, g]) => g.sort((a, b) => byKey(a.key, b.key)));
  const out: T[] = [];
  const rounds = Math.max(0, ...lists.map((l) => l.length));
  for (let r = 0; r < rounds; r++) for (const l of lists) if (r < l.length) out.push(l[r]!.item);
  return out;
}

/**
 * The plan of a swe5g stage in run order: `items` (every item the stage lists, already filtered)
 * interleaved by project ({@link interleaveByProject}), at most `ctx.limit` of them (`--limit N`
 * takes the first N of that order: a sample of every project). Every swe5g stage plan yields
 * through this, so they all share one order.
 * @param ctx   the plan context (only `limit` is read)
 * @param items the stage's work items, in any order
 * @returns a generator over the ordered items (reads `items` whole before the first yield)
 */
export function* inRunOrder<In>(
  ctx: { readonly limit: number | undefined },
  items: Iterable<WorkItem<In>>,
): Generator<WorkItem<In>> {
  const ordered = interleaveByProject(items, (i) => i.key);
  const n = ctx.limit === undefined ? ordered.length : Math.min(ctx.limit, ordered.length);
  for (let i = 0; i < n; i++) yield ordered[i]!;
}
