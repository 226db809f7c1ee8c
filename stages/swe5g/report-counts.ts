/**
 * Small helpers shared by the `swe5g` report tables (fail-to-pass, validation, environments,
 * `telebench plan`): per-repository and per-project grouping of instance ids and reason counts.
 */

/** The repository of an instance id: `free5gc__amf-161` -> `free5gc/amf` (SWE-bench id form). */
export function repoOfInstance(instanceId: string): string {
  return instanceId.replace(/-\d+$/, '').replace('__', '/');
}

/**
 * The project of a registry id or repository: its organisation, lower case
 * (`magma/magma:lte/cloud/go` -> `magma`, `free5gc/amf` -> `free5gc`, `open5gs/open5gs` ->
 * `open5gs`).
 */
export const projectOf = (id: string): string => id.split('/')[0]!.toLowerCase();

/**
 * The project of an item key of a swe5g stage, by {@link projectOf}: an instance id
 * (`free5gc__amf-161` -> `free5gc`, `magma__magma-10269` -> `magma`) or a registry id
 * (`swe5g.mine`'s keys: `free5gc/amf`, `magma/magma:lte/cloud/go` -> `magma`).
 */
export const projectOfKey = (key: string): string => projectOf(repoOfInstance(key));

/** Adds one to `counts[key]` (starting from 0). */
export function countInto(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** Adds every count of `from` to `into` (by key, starting from 0). */
export function addCounts(
  into: Record<string, number>,
  from: Readonly<Record<string, number>>,
): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/** `reason n, reason n, ...`, most frequent first; '' for no counts. */
export function formatCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}
