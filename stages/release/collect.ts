/**
 * Reads what a run produced from the store, for any dataset: the source stage's done outputs, the
 * construction funnel (counts per stage), the input hashes for the manifest and whether the rows
 * are a sample. The rows themselves come from the dataset entry's `collect`.
 */
import type { StageOutput, StoreReader } from '../../pipeline/stage.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunManifest } from '../../pipeline/manifest.js';
import { hashJson } from '../../pipeline/hash.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { FunnelStep } from '../../datasets/card.js';
import type { FunnelRows } from './entry.js';

/**
 * Funnel counts of `stages` from the store, in rows (all items, any state): one item is one row
 * except for the stages of `rowsOf` (the dataset entry's `funnelRows`), whose done items count
 * their rows (and rejected rows as skipped, by reason); a failed item of those counts once (its
 * rows are unknown).
 */
export function funnelOf(
  store: StoreReader,
  stages: readonly string[],
  rowsOf: Readonly<Record<string, FunnelRows>> = {},
): FunnelStep[] {
  const out: FunnelStep[] = [];
  for (const stage of stages) {
    const f: FunnelStep = { stage, done: 0, skipped: 0, failed: 0, reasons: {} };
    const countRows = rowsOf[stage];
    let any = false;
    for (const it of store.items(stage)) {
      any = true;
      if (it.state === 'done' && countRows) {
        const r = countRows(it.output);
        f.done += r.rows;
        for (const [reason, n] of Object.entries(r.rejected)) {
          f.skipped += n;
          f.reasons[reason] = (f.reasons[reason] ?? 0) + n;
        }
      } else if (it.state === 'done') f.done++;
      else if (it.state === 'skipped') {
        f.skipped++;
        const r = it.skipReason ?? 'unknown';
        f.reasons[r] = (f.reasons[r] ?? 0) + 1;
      } else if (it.state === 'failed') f.failed++;
    }
    if (any) out.push(f);
  }
  return out;
}

/** Hash of the (key, input hash) pairs of a stage's done items: what the rows were made from. */
export function inputHashOf(store: StoreReader, stage: string): string {
  const pairs: [string, string][] = [];
  for (const it of store.items(stage)) if (it.state === 'done') pairs.push([it.key, it.inputHash]);
  return hashJson(pairs);
}

/**
 * Done outputs of a source stage, or a clear error when the stage is not registered.
 * @throws TelebenchError `release_source_missing` (tier config) naming the stage and the config key
 */
export function sourceOutputs(
  store: StoreReader,
  stage: string,
  datasetId: string,
): StageOutput<unknown, unknown>[] {
  try {
    return [...store.outputsNamed(stage)];
  } catch (err) {
    throw new TelebenchError(
      'release_source_missing',
      `the rows of ${datasetId} come from stage "${stage}", which is not registered (set release.sources.${datasetId} in the configuration)`,
      { tier: 'config', cause: err, context: { stage, dataset: datasetId } },
    );
  }
}

/** The `--limit` of the latest runs that built a release's rows (a sample), from their manifests. */
export interface SampleInfo {
  /** The `--limit N` values of those runs, ascending. */
  limits: number[];
  /** Those runs (`<state>/runs/<id>`), oldest first. */
  runs: string[];
}

/** `--limit N` / `--limit=N` in a run's argv, else null. Pure. */
function limitOf(argv: readonly string[]): number | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = a === '--limit' ? argv[i + 1] : a.startsWith('--limit=') ? a.slice(8) : undefined;
    if (v !== undefined && /^\d+$/.test(v)) return Number(v);
  }
  return null;
}

/**
 * Whether the rows are a sample: for each stage of `stages`, the latest run that ran it (its
 * manifest `<state>/runs/<id>/manifest.json` lists the stage); when any of those runs had
 * `--limit`, that stage stopped after at most N items, so the rows are a sample of what the
 * configuration describes.
 * @returns null when no such run had a limit (or no run manifest is there)
 */
export function sampleOf(stateDir: string, stages: readonly string[]): SampleInfo | null {
  const dir = join(stateDir, 'runs');
  if (!existsSync(dir)) return null;
  const runs: { id: string; at: string; stages: string[]; limit: number | null }[] = [];
  for (const id of readdirSync(dir)) {
    const f = join(dir, id, 'manifest.json');
    if (!existsSync(f)) continue;
    try {
      const m = JSON.parse(readFileSync(f, 'utf8')) as Partial<RunManifest>;
      runs.push({
        id,
        at: String(m.startedAt ?? ''),
        stages: Object.keys(m.stageVersions ?? {}),
        limit: limitOf(m.argv ?? []),
      });
    } catch {
      continue; // a manifest cut by a kill: that run's limit is unknown, the others still count
    }
  }
  runs.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id));
  const latest = new Map<string, (typeof runs)[number]>();
  for (const r of runs) for (const s of r.stages) if (stages.includes(s)) latest.set(s, r);
  const limited = [...new Set(latest.values())].filter((r) => r.limit !== null);
  if (limited.length === 0) return null;
  limited.sort((a, b) => a.at.localeCompare(b.at));
  return {
    limits: [...new Set(limited.map((r) => r.limit!))].sort((a, b) => a - b),
    runs: limited.map((r) => r.id),
  };
}
