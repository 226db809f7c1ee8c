/**
 * `telebench refresh <dataset>`: the next release from the latest one. Reads the latest release of
 * the dataset in the state (`<state>/releases/<dataset>/<V>/`), runs the dataset's pipeline — with
 * its window narrowed to what landed at or after that release's cutoff (SWE-Bench 5G), or with the
 * current configuration (TeleResilienceBench: a new subset or a changed source file) — cached
 * stages redo no old item, and writes release N+1 through {@link releaseDataset}: the previous rows as released plus
 * the new ones, the verifier over all of them when configured, a changelog against N. A refresh
 * that finds no new row writes nothing and says so (exit 0), so one command fits a monthly timer.
 */
import { join } from 'node:path';
import { TelebenchError } from '../../pipeline/errors.js';
import { listReleases, readReleaseRows, releaseDir, type ReleaseManifest } from './assemble.js';
import type {
  AnyDatasetEntry,
  CandidateFate,
  RefreshHooks,
  SourceFile,
  WindowRefreshHooks,
} from './entry.js';
import { collectRows, type CarriedRelease, type ReleaseWiring } from './release.js';
import type { ReleaseContextLike } from './entry.js';
import { newLeftOut, type LeftOut, type WindowReport } from './refresh-report.js';
import type { StoreReader } from '../../pipeline/stage.js';

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
  hooks: WindowRefreshHooks,
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
      `${entry.definition.id} cannot be refreshed: it has neither a landing time to mine from nor source files to compare (refresh works for swe-bench-5g and teleresiliencebench); release a new version with \`telebench release ${entry.definition.id} --version V\``,
      { tier: 'config', context: { dataset: entry.definition.id } },
    );
  }
  return entry.refresh;
}

/**
 * What the store holds that the previous release does not: the keys of the collected rows it
 * lacks (sorted), and the rows the release leaves out (incomplete, weak) that it lacks, by reason.
 */
export function newKeys(
  ctx: ReleaseContextLike,
  wiring: ReleaseWiring,
  entry: AnyDatasetEntry,
  previous: CarriedRelease,
): { added: string[]; leftOut: LeftOut[]; held: Set<string> } {
  const key = (r: Record<string, unknown>) => entry.definition.key(r);
  const held = new Set(previous.rows.map(key));
  const collected = collectRows(ctx, wiring, entry);
  return {
    added: collected.rows
      .map(key)
      .filter((k) => !held.has(k))
      .sort(),
    leftOut: newLeftOut(collected.leftOutKeys, collected.leftOutHints, held),
    held,
  };
}

/**
 * What became of the candidates that landed in a window refresh's window (at or after `since`)
 * and that the previous release does not hold: how many landed, how many are new rows, how many
 * were validated but left out (named by {@link LeftOut}), and where each other one stopped
 * (a stage that skipped or failed it, or did not run it; `release`/`not_collected` when every
 * stage finished it and it still is no row). Read from the store after the run; pure otherwise.
 */
export function windowReport(
  hooks: WindowRefreshHooks,
  store: StoreReader,
  since: string,
  known: { held: ReadonlySet<string>; added: readonly string[]; leftOut: readonly LeftOut[] },
): WindowReport {
  const landed = hooks.landedSince(store, since).filter((k) => !known.held.has(k));
  const added = new Set(known.added);
  const left = new Set(known.leftOut.flatMap((l) => l.keys));
  const stopped: CandidateFate[] = [];
  for (const key of landed) {
    if (added.has(key) || left.has(key)) continue;
    stopped.push(
      hooks.fateOf(store, key) ?? {
        key,
        stage: 'release',
        state: 'skipped',
        reason: 'not_collected',
      },
    );
  }
  return {
    noun: hooks.candidateNoun,
    since,
    landed: landed.length,
    rows: landed.filter((k) => added.has(k)).length,
    leftOut: landed.filter((k) => left.has(k)).length,
    stopped,
  };
}

/**
 * The configuration a refresh runs the pipeline with, and the words saying over what: a window
 * dataset's narrowed to {@link refreshSince} (returned as `since`); a sources dataset's as it is (its cached stages redo
 * only the items of a new subset or a changed file).
 * @throws TelebenchError what {@link refreshSince} throws
 */
export function refreshRun(
  hooks: RefreshHooks,
  previous: { manifest: ReleaseManifest; dir: string },
  config: unknown,
  configFile: string,
): { config: unknown; over: string; since: string | null } {
  if (hooks.kind === 'sources')
    return { config, over: `the subsets and source files ${configFile} names now`, since: null };
  const since = refreshSince(hooks, previous, config, configFile);
  return { config: hooks.narrow(config, since), over: `what landed at or after ${since}`, since };
}

/**
 * What changed between the sources a release recorded and the current ones, one line each
 * (`added subset x (file, sha256 0123456789ab)`, `changed ...: sha256 a -> b`, `gone ...`); empty
 * when they are the same. A release without `sources` counts every current one as added. Pure.
 */
export function sourceChanges(
  before: Readonly<Record<string, SourceFile>> | undefined,
  now: Readonly<Record<string, SourceFile>>,
): string[] {
  const short = (f: SourceFile) => f.sha256.slice(0, 12);
  const was = before ?? {};
  const lines: string[] = [];
  for (const id of Object.keys(now).sort()) {
    const a = was[id];
    const b = now[id]!;
    if (!a) lines.push(`added ${id} (${b.file}, sha256 ${short(b)})`);
    else if (a.sha256 !== b.sha256)
      lines.push(`changed ${id} (${b.file}): sha256 ${short(a)} -> ${short(b)}`);
  }
  for (const id of Object.keys(was).sort())
    if (!now[id]) lines.push(`gone ${id} (${was[id]!.file}): not among the loaded subsets`);
  return lines;
}
