/**
 * `telebench refresh <dataset>`: the next release from the latest one. Reads the latest release of
 * the dataset in the state (`<state>/releases/<dataset>/<V>/`), runs the dataset's pipeline with
 * its window narrowed to what landed at or after that release's cutoff (cached stages redo no old
 * item), and writes release N+1 through {@link releaseDataset}: the previous rows as released plus
 * the new ones, the verifier over all of them when configured, a changelog against N. A refresh
 * that finds no new row writes nothing and says so (exit 0), so one command fits a monthly timer.
 */
import { join } from 'node:path';
import { TelebenchError } from '../../pipeline/errors.js';
import { listReleases, readReleaseRows, releaseDir, type ReleaseManifest } from './assemble.js';
import type { AnyDatasetEntry, RefreshHooks } from './entry.js';
import { collectRows, type CarriedRelease, type ReleaseWiring } from './release.js';
import type { ReleaseContextLike } from './entry.js';

/**
 * The latest release of a dataset in a state, with its rows (the one a refresh builds on).
 * @throws TelebenchError `refresh_no_release` (tier config) naming the folder looked in and the
 *   command that writes a first release
 */
export function latestRelease(
  stateDir: string,
  datasetId: string,
): { manifest: ReleaseManifest; dir: string; rows: Record<string, unknown>[] } {
  const manifest = listReleases(stateDir, datasetId).at(-1);
  if (!manifest) {
    throw new TelebenchError(
      'refresh_no_release',
      `no release of ${datasetId} to refresh in ${join(stateDir, 'releases', datasetId)}: a refresh starts from the latest release of the state; write the first one with \`telebench release ${datasetId} --version V\` (or run the pipeline and release it), then refresh`,
      { tier: 'config', context: { dataset: datasetId, state: stateDir } },
    );
  }
  const dir = releaseDir(stateDir, datasetId, manifest.version);
  return { manifest, dir, rows: readReleaseRows(dir) };
}

/**
 * Where a refresh starts mining: the later of the previous release's `cutoff` (manifest) and the
 * window start the configuration sets.
 * @throws TelebenchError `refresh_no_cutoff` (tier config) when neither is there, naming the
 *   manifest and the configuration key
 */
export function refreshSince(
  hooks: RefreshHooks,
  previous: { manifest: ReleaseManifest; dir: string },
  config: unknown,
  configFile: string,
): string {
  const recorded = previous.manifest.cutoff ?? null;
  const configured = hooks.configuredSince(config);
  if (!recorded && !configured) {
    throw new TelebenchError(
      'refresh_no_cutoff',
      `cannot tell where to refresh ${previous.manifest.dataset} ${previous.manifest.version} from: ${join(previous.dir, 'manifest.json')} records no cutoff (a release written before refreshes existed) and ${configFile} sets no ${hooks.sinceKey}; set ${hooks.sinceKey} to the date the release's mining ended`,
      {
        tier: 'config',
        context: { manifest: join(previous.dir, 'manifest.json'), key: hooks.sinceKey },
      },
    );
  }
  if (!recorded) return configured!;
  if (!configured) return recorded;
  return recorded > configured ? recorded : configured;
}

/**
 * The refresh hooks of an entry.
 * @throws TelebenchError `refresh_not_supported` (tier config) for a dataset without them
 */
export function refreshHooksOf(entry: AnyDatasetEntry): RefreshHooks {
  if (!entry.refresh) {
    throw new TelebenchError(
      'refresh_not_supported',
      `${entry.definition.id} cannot be refreshed: its rows carry no landing time to mine from (refresh works for datasets mined from a history, e.g. swe-bench-5g); release a new version with \`telebench release ${entry.definition.id} --version V\``,
      { tier: 'config', context: { dataset: entry.definition.id } },
    );
  }
  return entry.refresh;
}

/** The keys of the collected rows the previous release does not hold, sorted. */
export function newKeys(
  ctx: ReleaseContextLike,
  wiring: ReleaseWiring,
  entry: AnyDatasetEntry,
  previous: CarriedRelease,
): string[] {
  const key = (r: Record<string, unknown>) => entry.definition.key(r);
  const held = new Set(previous.rows.map(key));
  return collectRows(ctx, wiring, entry)
    .rows.map(key)
    .filter((k) => !held.has(k))
    .sort();
}
