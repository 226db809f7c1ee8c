/**
 * How TeleResilienceBench is refreshed (`telebench refresh teleresiliencebench`,
 * stages/release/refresh.ts): not by a date but by what a release is built from — the subsets that
 * `resilience.load` loaded and each one's source file with its sha256 (`file_sha256`), recorded in
 * the manifest as `sources`. The refresh runs the `resilience` pipeline with the current
 * configuration (a new subset or a changed file is a new load input; the rows of unchanged files
 * hit their done items), then carries the previous rows as released unless their source row
 * changed (replaced by the new instance) or is gone from its file (removed, with the reason).
 */
import { basename } from 'node:path';
import type { StoreReader } from '../../pipeline/stage.js';
import type { SourceFile, SourcesRefreshHooks } from '../release/entry.js';
import { resilienceLoad } from './load.js';
import type { PromptedItem } from './types.js';

/** Where a loaded row comes from: its subset, the file label and its sha256, the item itself. */
interface LoadedRow {
  subset: string;
  file: SourceFile;
  item: PromptedItem;
}

/** The done `resilience.load` items: source files by subset id, rows by sample_id. */
function loaded(store: StoreReader): {
  files: Record<string, SourceFile>;
  rows: Map<string, LoadedRow>;
} {
  const files: Record<string, SourceFile> = {};
  const rows = new Map<string, LoadedRow>();
  let outputs;
  try {
    outputs = [...store.outputs(resilienceLoad)];
  } catch {
    return { files, rows }; // resilience.load not registered (a release command on a state from elsewhere)
  }
  for (const { output } of outputs) {
    // a local file by its name only: a release manifest holds no machine path (a URL stays whole)
    const label = /^[a-z][a-z0-9+.-]*:\/\//i.test(output.file)
      ? output.file
      : basename(output.file);
    const file = { file: label, sha256: output.file_sha256 };
    files[output.subset_id] = file;
    for (const item of output.items)
      rows.set(item.sample_id, { subset: output.subset_id, file, item });
  }
  return { files, rows };
}

/** The fields of a row that come from its source row (a change there regenerates the instance). */
function sourcePart(r: {
  question?: unknown;
  choices?: unknown;
  correct_answer?: unknown;
}): string {
  const choices = Array.isArray(r.choices) && r.choices.length > 0 ? r.choices : null;
  return JSON.stringify([r.question, choices, r.correct_answer]);
}

/** The subset id (`<source>:<name>`, stages/resilience/subsets.ts) of a `<source>:<name>:<row>` sample_id. */
function subsetOf(sampleId: string): string {
  return sampleId.replace(/:\d+$/, '');
}

/**
 * The rows of release N+1 from the previous ones and those collected now (both keyed by
 * `sample_id`), see {@link SourcesRefreshHooks.carry}. A collected row whose source row is no
 * longer loaded (a done generation item of a row since deleted from its file) is not released.
 * A previous row of a subset that is no longer loaded at all is kept: nothing says it is gone.
 */
function carryResilience(
  previous: readonly Record<string, unknown>[],
  collected: readonly Record<string, unknown>[],
  store: StoreReader,
): { rows: Record<string, unknown>[]; removedReasons: Record<string, string> } {
  const { files, rows: loadedRows } = loaded(store);
  const key = (r: Record<string, unknown>) => String(r.sample_id);
  // a row of a loaded subset that its file no longer holds (a stale done item) is not released
  const current = (r: Record<string, unknown>) =>
    loadedRows.has(key(r)) || !files[subsetOf(key(r))];
  const now = new Map(collected.filter(current).map((r) => [key(r), r]));
  const out: Record<string, unknown>[] = [];
  const removedReasons: Record<string, string> = {};
  for (const p of previous) {
    const k = key(p);
    const src = loadedRows.get(k);
    const c = now.get(k);
    now.delete(k);
    const subset = subsetOf(k);
    const f = files[subset];
    if (!src && !f) out.push(p);
    else if (!src)
      removedReasons[k] =
        `its source row is no longer in ${f!.file} (sha256 ${f!.sha256.slice(0, 12)})`;
    else if (c && sourcePart(c) !== sourcePart(p)) out.push(c);
    else if (c || sourcePart(src.item) === sourcePart(p)) out.push(p);
    else
      removedReasons[k] =
        `its source row changed in ${src.file.file} (sha256 ${src.file.sha256.slice(0, 12)}) and gave no instance this time (the generator answered it correctly, or it was skipped)`;
  }
  out.push(...now.values());
  return { rows: out, removedReasons };
}

/** TeleResilienceBench's refresh hooks: sources are the loaded subsets' files and sha256. */
export const resilienceRefresh: SourcesRefreshHooks = {
  kind: 'sources',
  sourcesOf: (store) => loaded(store).files,
  carry: carryResilience,
};
