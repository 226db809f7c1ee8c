/**
 * `release`: assembles one dataset's release folder from what the store holds — shared by the
 * `telebench release` command and the `release.*` stages of the `all` pipeline. Everything
 * dataset-specific comes from the dataset's entry (`entry.ts`).
 */
import { canonicalJson, hashJson } from '../../pipeline/hash.js';
import { gitSha } from '../../pipeline/manifest.js';
import { ConfigError, TelebenchError } from '../../pipeline/errors.js';
import type { DatasetDefinition } from '../../datasets/definition.js';
import type { VerifySummary } from '../../datasets/card.js';
import {
  planRelease,
  writeRelease,
  listReleases,
  readManifest,
  readReleaseRows,
  releaseDir,
  type ReleaseInput,
  type WriteOutcome,
  type ReleasePlan,
} from './assemble.js';
import { funnelOf, inputHashOf, sampleOf, sourceOutputs } from './collect.js';
import { releaseSettings } from './config.js';
import type {
  AnyDatasetEntry,
  CollectedRows,
  DatasetRegistry,
  ImageHooks,
  PushOptions,
  ReleaseContextLike,
  Verifier,
} from './entry.js';

/** What the release code needs from the composition root (stages/index.ts), without importing it. */
export interface ReleaseWiring {
  /** The registered datasets. */
  readonly datasets: DatasetRegistry;
  /**
   * Stage names of a pipeline, in pipeline order (a dataset's branch, for the funnel).
   * @throws TelebenchError `unknown_pipeline` (tier bug) for a pipeline that is not registered
   */
  pipelineStages(pipeline: string): readonly string[];
  /** Registered version of a stage, undefined when the stage is not registered. */
  stageVersion(name: string): number | undefined;
}

export type { ReleaseContextLike, Verifier };

/**
 * The stage whose outputs are `entry`'s rows: `release.sources.<id>`, else the entry's own.
 * @throws ConfigError when `release.sources` names a dataset that is not registered
 */
export function sourceStageOf(config: unknown, wiring: ReleaseWiring, entry: AnyDatasetEntry) {
  const sources = releaseSettings(config).sources;
  for (const id of Object.keys(sources)) {
    if (!wiring.datasets.entries.some((e) => e.definition.id === id))
      throw new ConfigError(
        `release.sources.${id}: no dataset is registered as "${id}"; known: ${wiring.datasets.entries.map((e) => e.definition.id).join(', ')}`,
        { path: `release.sources.${id}` },
      );
  }
  return sources[entry.definition.id] ?? entry.source;
}

/**
 * Collects the rows of `entry` from its source stage, through the entry's one mapping.
 * @throws TelebenchError `release_source_missing` when the source stage is not registered, and
 *   what the entry's `collect` throws (TeleResilienceBench: `release_scripted_output`,
 *   `release_source_changed`, `release_rows_invalid`)
 */
export function collectRows(
  ctx: ReleaseContextLike,
  wiring: ReleaseWiring,
  entry: AnyDatasetEntry,
): CollectedRows & { source: string } {
  const source = sourceStageOf(ctx.config, wiring, entry);
  const outputs = sourceOutputs(ctx.store, source, entry.definition.id);
  return { ...entry.collect(outputs, ctx), source };
}

/** The latest written release other than `version`, with its rows. */
function previousOf(stateDir: string, dataset: DatasetDefinition, version: string) {
  const existing = readManifest(releaseDir(stateDir, dataset.id, version));
  const prevVersion = existing
    ? existing.previous_version
    : (listReleases(stateDir, dataset.id)
        .filter((m) => m.version !== version)
        .at(-1)?.version ?? null);
  if (!prevVersion) return null;
  return {
    version: prevVersion,
    rows: readReleaseRows(releaseDir(stateDir, dataset.id, prevVersion)),
  };
}

/** The previous release a refresh builds on: its version, rows and cutoff. */
export interface CarriedRelease {
  version: string;
  rows: readonly Record<string, unknown>[];
  cutoff: string | null;
}

/**
 * The rows of a refreshed release: every carried row as released (same fields, same image names
 * and digests), then the collected rows whose key the previous release does not hold. Pure.
 */
export function carryOver(
  dataset: DatasetDefinition,
  carried: readonly Record<string, unknown>[],
  collected: readonly Record<string, unknown>[],
): Record<string, unknown>[] {
  const held = new Set(carried.map((r) => dataset.key(r)));
  return [...carried, ...collected.filter((r) => !held.has(dataset.key(r)))];
}

/** Whether two row lists hold the same rows (same keys, each row the same canonical JSON). */
function sameRows(
  dataset: DatasetDefinition,
  a: readonly Record<string, unknown>[],
  b: readonly Record<string, unknown>[],
): boolean {
  const ka = new Map(a.map((r) => [dataset.key(r), canonicalJson(r)]));
  return ka.size === b.length && b.every((r) => ka.get(dataset.key(r)) === canonicalJson(r));
}

/** The later of two ISO 8601 UTC times (null when both are). */
function later(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return a > b ? a : b;
}

/**
 * Builds and writes a release of `entry`.
 * @param version a version, or `auto` for `0.0.0-local.<12 hex of the content>`
 * @param verifier re-proves the rows first (SWE-Bench 5G: `release.reproof_runs` runs of gold and
 *   empty patch each); rows that do not hold are dropped, listed in the card and, when the previous
 *   release had them, in the changelog as removed with the reason; every record goes into the
 *   manifest (`verify.records`). null to skip: a dataset with `verify` hooks released without it
 *   gets the hooks' limitation in its card
 * @param push `--push REGISTRY`: the entry's image hooks push the rows' images and name them by
 *   digest (after the verifier, before the plan)
 * @param carry the previous release of a refresh (rows kept as released, new keys added; a
 *   dataset refreshed by its sources decides through `refresh.carry`, which may replace a changed
 *   row or remove a gone one with a reason); the manifest's `cutoff` is the later of its cutoff
 *   and the entry's `refresh.cutoffOf(store)`, its `sources` the entry's `refresh.sourcesOf(store)`
 * @returns the write outcome (`written` or `unchanged`) and the plan; with `carry`, when the rows
 *   left after the verifier are the carried ones, unchanged: `unchanged` at the carried version, plan null
 * @throws TelebenchError `release_version_exists` when the version exists with different content,
 *   `release_rows_invalid` when a row fails the schema, `release_no_rows` when nothing is left,
 *   `release_no_images` (tier config) when `push` is given for a dataset without images
 */
export async function releaseDataset(args: {
  ctx: ReleaseContextLike;
  wiring: ReleaseWiring;
  entry: AnyDatasetEntry;
  version: string;
  verifier: Verifier | null;
  push?: PushOptions | null;
  now?: Date;
  /**
   * `telebench refresh`: the previous release, whose rows are kept as released (the collected
   * rows only add keys it lacks) and which the changelog diffs against; the verifier re-runs all.
   */
  carry?: CarriedRelease | null;
}): Promise<WriteOutcome & { plan: ReleasePlan | null }> {
  const { ctx, wiring, entry } = args;
  const dataset = entry.definition;
  const images = args.push ? imageHooksOf(entry, args.push.flag) : null;
  const collected = collectRows(ctx, wiring, entry);
  const refresh = entry.refresh;
  const carried =
    args.carry && refresh?.kind === 'sources'
      ? refresh.carry(args.carry.rows, collected.rows, ctx.store)
      : null;
  let rows = carried
    ? carried.rows
    : args.carry
      ? carryOver(dataset, args.carry.rows, collected.rows)
      : collected.rows;
  const removedReasons: Record<string, string> = { ...carried?.removedReasons };
  const snapshotLimitations: string[] = [...(collected.limitations ?? [])];
  let verify: VerifySummary | null = null;
  if (args.verifier && rows.length > 0) {
    const result = await args.verifier(rows);
    verify = result.summary;
    rows = rows.filter((r) => result.reproduced.has(dataset.key(r)));
    for (const d of verify.dropped)
      removedReasons[d.instance_id] = `did not hold at the re-proof of this release: ${d.reason}`;
  }
  if (entry.verify && !verify) snapshotLimitations.push(entry.verify.unverifiedLimitation);
  if (images && args.push && rows.length > 0) rows = await images.push(rows, args.push);
  if (rows.length === 0) {
    throw new TelebenchError(
      'release_no_rows',
      `nothing to release for ${dataset.id}: stage "${collected.source}" holds no releasable rows${collected.leftOut.incomplete_left_out ? ` (${collected.leftOut.incomplete_left_out} incomplete left out)` : ''}`,
      { tier: 'config', context: { dataset: dataset.id, source: collected.source } },
    );
  }
  if (args.carry && sameRows(dataset, args.carry.rows, rows)) {
    // a refresh that brings no new or changed row: N stays the latest, nothing is written
    const dir = releaseDir(ctx.stateDir, dataset.id, args.carry.version);
    const manifest = readManifest(dir);
    if (manifest) {
      ctx.log(`${dataset.id}: nothing new against ${args.carry.version}; no version written`);
      return { status: 'unchanged', dir, manifest, plan: null };
    }
  }
  const branch = wiring.pipelineStages(entry.pipeline);
  const stageVersions: Record<string, number> = {};
  const inputHashes: Record<string, string> = {};
  for (const s of branch) {
    const v = wiring.stageVersion(s);
    if (v === undefined) continue;
    stageVersions[s] = v;
    inputHashes[s] = inputHashOf(ctx.store, s);
  }
  const notes: string[] = [`rows from stage \`${collected.source}\``, ...(collected.notes ?? [])];
  for (const [k, n] of Object.entries(collected.leftOut))
    if (n > 0) notes.push(`${k.replace(/_/g, ' ')}: ${n}`);
  const base: Omit<ReleaseInput, 'version' | 'previous'> = {
    dataset,
    rows,
    createdAt: (args.now ?? new Date()).toISOString(),
    provenance: {
      gitSha: gitSha(),
      configHash: hashJson(ctx.config ?? null),
      stageVersions,
      inputHashes,
      settings: collected.settings,
      profile: collected.profile,
      provenanceNotes: notes,
      sample: sampleOf(ctx.stateDir, branch),
      models: collected.models,
    },
    funnel: funnelOf(ctx.store, branch, entry.funnelRows),
    licenseEvidence: (spdx) => entry.licenseEvidence(spdx),
    verify,
    snapshotLimitations,
    extraCounts: collected.leftOut,
    cutoff:
      refresh?.kind === 'window' ? later(args.carry?.cutoff, refresh.cutoffOf(ctx.store)) : null,
    sources: refresh?.kind === 'sources' ? refresh.sourcesOf(ctx.store) : null,
    removedReasons,
  };
  let version = args.version;
  if (version === 'auto') {
    const probe = planRelease({ ...base, version: 'local', previous: null });
    version = `0.0.0-local.${probe.manifest.content_digest.slice(0, 12)}`;
  }
  const plan = planRelease({
    ...base,
    version,
    previous: args.carry
      ? { version: args.carry.version, rows: args.carry.rows }
      : previousOf(ctx.stateDir, dataset, version),
  });
  const outcome = writeRelease(ctx.stateDir, plan);
  ctx.log(
    `${dataset.id} ${version}: ${outcome.status} at ${outcome.dir} (${plan.rows.length} rows)`,
  );
  return { ...outcome, plan };
}

/**
 * The image hooks of a dataset given `--push`.
 * @throws TelebenchError `release_no_images` (tier config) when its rows name no images
 */
export function imageHooksOf(
  entry: AnyDatasetEntry,
  flag: string,
): ImageHooks<Record<string, unknown>> {
  if (!entry.images)
    throw new TelebenchError(
      'release_no_images',
      `${flag}: ${entry.definition.id} rows name no container images, so there is nothing to push; leave --push out`,
      { tier: 'config', context: { dataset: entry.definition.id } },
    );
  return entry.images;
}
