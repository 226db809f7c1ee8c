/**
 * The changelog of a release against the previous version: rows added, removed and changed (by
 * key, with the fields that changed). Pure.
 */
import type { DatasetDefinition } from '../../datasets/definition.js';
import { canonicalJson } from '../../pipeline/hash.js';

const MAX_LISTED = 50;

function listed(ids: string[]): string {
  const shown = ids
    .slice(0, MAX_LISTED)
    .map((i) => `\`${i}\``)
    .join(', ');
  return ids.length > MAX_LISTED ? `${shown} and ${ids.length - MAX_LISTED} more` : shown;
}

/** Keys added, removed and changed (with changed field names) from `previous` to `rows`. */
export function diffRows(
  dataset: DatasetDefinition,
  previous: readonly Record<string, unknown>[],
  rows: readonly Record<string, unknown>[],
): { added: string[]; removed: string[]; changed: { key: string; fields: string[] }[] } {
  const before = new Map(previous.map((r) => [dataset.key(r), r]));
  const after = new Map(rows.map((r) => [dataset.key(r), r]));
  const added = [...after.keys()].filter((k) => !before.has(k)).sort();
  const removed = [...before.keys()].filter((k) => !after.has(k)).sort();
  const changed: { key: string; fields: string[] }[] = [];
  for (const [k, r] of [...after].sort(([a], [b]) => a.localeCompare(b))) {
    const p = before.get(k);
    if (!p) continue;
    const names = new Set([...Object.keys(p), ...Object.keys(r)]);
    const fields = [...names]
      .filter((f) => canonicalJson(p[f] ?? null) !== canonicalJson(r[f] ?? null))
      .sort();
    if (fields.length > 0) changed.push({ key: k, fields });
  }
  return { added, removed, changed };
}

/**
 * CHANGELOG.md text of a release.
 * @param removedReasons why a removed key is gone, by key (a re-proof that no longer holds); a
 *   removed key without one is listed with the others, as no longer among the source's rows
 */
export function renderChangelog(args: {
  dataset: DatasetDefinition;
  version: string;
  rows: readonly Record<string, unknown>[];
  previous: { version: string; rows: readonly Record<string, unknown>[] } | null;
  removedReasons?: Readonly<Record<string, string>>;
}): string {
  const lines = [`# Changelog of ${args.dataset.prettyName}`, '', `## ${args.version}`, ''];
  if (!args.previous) {
    lines.push(`First release: ${args.rows.length} rows.`, '');
    return lines.join('\n');
  }
  const d = diffRows(args.dataset, args.previous.rows, args.rows);
  lines.push(
    `Against ${args.previous.version}: ${args.previous.rows.length} -> ${args.rows.length} rows; ${d.added.length} added, ${d.removed.length} removed, ${d.changed.length} changed.`,
    '',
  );
  if (d.added.length) lines.push(`- added: ${listed(d.added)}`);
  const why = args.removedReasons ?? {};
  const plain = d.removed.filter((k) => !why[k]);
  if (plain.length) lines.push(`- removed: ${listed(plain)}`);
  for (const k of d.removed.filter((x) => why[x]).slice(0, MAX_LISTED))
    lines.push(`- removed \`${k}\`: ${why[k]!.replace(/\s+/g, ' ')}`);
  for (const c of d.changed.slice(0, MAX_LISTED))
    lines.push(`- changed \`${c.key}\`: ${c.fields.join(', ')}`);
  if (d.changed.length > MAX_LISTED)
    lines.push(`- ... and ${d.changed.length - MAX_LISTED} more changed rows`);
  lines.push('');
  return lines.join('\n');
}
