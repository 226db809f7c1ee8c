/**
 * Release assembly, in two steps (after changesets: plan, then apply):
 * - {@link planRelease} is pure: rows + provenance -> every file of the release folder as bytes,
 *   the manifest and a content digest. Rows are checked against the dataset's zod schema first.
 * - {@link writeRelease} performs the writes with the immutability rule: a written version is
 *   never changed. Same content -> no-op; different content -> refused, naming the files that differ.
 *
 * Folder layout (`<state>/releases/<dataset>/<version>/`):
 *   README.md (card), CHANGELOG.md, manifest.json, data/<config>/<split>.jsonl and .parquet
 * The content digest covers the JSON Lines files, README.md and CHANGELOG.md (sorted by path), not
 * manifest.json (it records when and from which commit the release was made) and not the Parquet
 * files (derived from the JSON Lines; a new writer version may encode the same rows differently).
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DatasetDefinition } from '../../datasets/definition.js';
import {
  renderCard,
  type CardWindows,
  type FunnelStep,
  type VerifySummary,
} from '../../datasets/card.js';
import { sha256 } from '../../pipeline/hash.js';
import { ConfigError, TelebenchError } from '../../pipeline/errors.js';
import { rowsToParquet } from './parquet.js';
import { renderChangelog } from './changelog.js';
import type { SampleInfo } from './collect.js';
import type { SourceFile } from './entry.js';

/** Where the rows came from and with what settings (recorded in manifest.json and the card). */
export interface ReleaseProvenance {
  gitSha: string | null;
  configHash: string;
  /** Stage name -> version. */
  stageVersions: Record<string, number>;
  /** Stage name -> hash of the (key, input hash) pairs of its done items. */
  inputHashes: Record<string, string>;
  /** Generator and model settings (config sections as they were), JSON. */
  settings: Record<string, unknown>;
  /** Generation profile (TeleResilienceBench), null otherwise. */
  profile: string | null;
  provenanceNotes: string[];
  /** The `--limit` of the runs that built the rows, when they were a sample; null otherwise. */
  sample: SampleInfo | null;
  /** Models behind the rows: the generator that made them, the targets configured to evaluate. */
  models: { generator: string[]; targets: string[] };
}

/** Everything {@link planRelease} needs: rows, provenance, funnel, the previous version. */
export interface ReleaseInput {
  dataset: DatasetDefinition;
  version: string;
  /** Candidate rows; each is checked against `dataset.rowSchema`. */
  rows: readonly unknown[];
  /** ISO 8601 time recorded in the manifest only. */
  createdAt: string;
  provenance: ReleaseProvenance;
  funnel: FunnelStep[];
  /** Sentence naming where a licence comes from, by SPDX id. */
  licenseEvidence: (spdx: string) => string;
  verify: VerifySummary | null;
  snapshotLimitations: string[];
  previous: { version: string; rows: readonly Record<string, unknown>[] } | null;
  /** Why a row of `previous` is gone, by key (the changelog lists it as removed with it). */
  removedReasons?: Readonly<Record<string, string>>;
  /** Extra manifest counts (e.g. incomplete candidates left out). */
  extraCounts?: Record<string, number>;
  /**
   * Latest landing time (ISO 8601 UTC) of what the release's candidates cover: where the next
   * `telebench refresh` starts mining; null or absent when the dataset has no such time.
   */
  cutoff?: string | null;
  /** The source files the rows were built from, by input id (datasets refreshed by their sources). */
  sources?: Record<string, SourceFile> | null;
}

/** One file of a release: path relative to the release folder, bytes, sha256 hex. */
export interface ReleaseFile {
  path: string;
  bytes: Uint8Array;
  sha256: string;
}

/** `manifest.json`: what made the release (git SHA, config hash, stage versions, input hashes, settings), counts and per-file sha256. */
export interface ReleaseManifest {
  dataset: string;
  version: string;
  created_at: string;
  previous_version: string | null;
  /**
   * Latest landing time (ISO 8601 UTC, SWE-Bench 5G: `merged_at`) among the candidates mined for
   * this release; `telebench refresh` mines from here. Null when unknown (older releases).
   */
  cutoff?: string | null;
  /**
   * What the rows were built from, by input id (TeleResilienceBench: subset id -> source file and
   * its sha256); `telebench refresh` says which changed. Absent for datasets refreshed by a window.
   */
  sources?: Record<string, SourceFile>;
  content_digest: string;
  git_sha: string | null;
  config_hash: string;
  stage_versions: Record<string, number>;
  input_hashes: Record<string, string>;
  settings: Record<string, unknown>;
  profile: string | null;
  /** The `--limit` of the runs that built the rows (a sample), or null. */
  sample: SampleInfo | null;
  models: { generator: string[]; targets: string[] };
  counts: {
    rows: number;
    by_config: Record<string, number>;
    by_license: Record<string, number>;
  } & Record<string, unknown>;
  verify: VerifySummary | null;
  files: Record<string, { sha256: string; bytes: number }>;
}

/** A planned release: every file, the manifest and the validated rows in key order. */
export interface ReleasePlan {
  dataset: string;
  version: string;
  /** Every file except manifest.json, sorted by path. */
  files: ReleaseFile[];
  manifest: ReleaseManifest;
  rows: Record<string, unknown>[];
}

const VERSION_RE = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;

/**
 * Checks a version string (used as a folder name and a Hub tag).
 * @throws ConfigError when it is empty, has a slash or other characters outside `[0-9A-Za-z.+_-]`
 */
export function checkVersion(version: string): string {
  if (!VERSION_RE.test(version) || version.includes('..')) {
    throw new ConfigError(
      `release version "${version}" is not usable as a folder name and Hub tag: use letters, digits and . + _ - (e.g. 1.0.0)`,
    );
  }
  return version;
}

/**
 * Validates rows with the dataset's schema and puts their keys in the field order.
 * @throws TelebenchError `release_rows_invalid` (tier config) listing up to 10 bad rows with the
 *   field path and message, or a duplicate key
 */
export function validateRows(
  dataset: DatasetDefinition,
  rows: readonly unknown[],
): Record<string, unknown>[] {
  const problems: string[] = [];
  const out: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  rows.forEach((raw, i) => {
    const r = dataset.rowSchema.safeParse(raw);
    const id =
      raw && typeof raw === 'object'
        ? String((raw as Record<string, unknown>)[dataset.fields[0]!.name] ?? `row ${i}`)
        : `row ${i}`;
    if (!r.success) {
      for (const issue of r.error.issues.slice(0, 3))
        problems.push(`${id}: ${issue.path.join('.') || '(row)'}: ${issue.message}`);
      return;
    }
    const row = r.data;
    const key = dataset.key(row);
    if (seen.has(key)) {
      problems.push(`${key}: duplicate key`);
      return;
    }
    seen.add(key);
    out.push(Object.fromEntries(dataset.fields.map((f) => [f.name, row[f.name] ?? null])));
  });
  if (problems.length > 0) {
    throw new TelebenchError(
      'release_rows_invalid',
      `${problems.length} problem(s) in the ${dataset.id} rows:\n  ${problems.slice(0, 10).join('\n  ')}${problems.length > 10 ? `\n  ... and ${problems.length - 10} more` : ''}`,
      { tier: 'config', context: { dataset: dataset.id, problems: problems.slice(0, 50) } },
    );
  }
  return out.sort((a, b) => dataset.key(a).localeCompare(dataset.key(b)));
}

const enc = new TextEncoder();
const file = (path: string, data: string | Uint8Array): ReleaseFile => {
  const bytes = typeof data === 'string' ? enc.encode(data) : data;
  return { path, bytes, sha256: sha256(bytes) };
};

/** Paths whose bytes make the content digest (see the module comment). */
export function isDigestFile(path: string): boolean {
  return path === 'README.md' || path === 'CHANGELOG.md' || path.endsWith('.jsonl');
}

/** SHA-256 over `path\0sha256\n` of the digest files, sorted by path. */
export function contentDigest(files: readonly { path: string; sha256: string }[]): string {
  return sha256(
    files
      .filter((f) => isDigestFile(f.path))
      .sort((a, b) => a.path.localeCompare(b.path))
      .map((f) => `${f.path}\0${f.sha256}\n`)
      .join(''),
  );
}

/**
 * The date-window configs of a dataset with windows: one Parquet file per window
 * (`windows/<name>/<split>.parquet`, the rows of its config folders again, for the Hub's window
 * configs; no JSON Lines copy, so {@link readReleaseRows} reads each row once) and the card's table.
 * @returns no files and `card: null` for a dataset without windows
 */
function windowFiles(
  dataset: DatasetDefinition,
  rows: readonly Record<string, unknown>[],
): { files: ReleaseFile[]; card: CardWindows | null } {
  const w = dataset.windows;
  if (!w) return { files: [], card: null };
  const by = new Map<string, Record<string, unknown>[]>();
  const dates = new Map<string, string[]>();
  let undated = 0;
  for (const r of rows) {
    const d = w.dateOf(r);
    if (!d) {
      undated++;
      continue;
    }
    const name = w.windowOf(d);
    by.set(name, [...(by.get(name) ?? []), r]);
    dates.set(name, [...(dates.get(name) ?? []), d]);
  }
  const files: ReleaseFile[] = [];
  const windows = [...by.keys()].sort().map((name) => {
    const parquet = `windows/${name}/${dataset.split}.parquet`;
    files.push(file(parquet, rowsToParquet(by.get(name)!, dataset.fields)));
    const ds = dates.get(name)!.sort();
    return { name, rows: ds.length, first: ds[0]!, last: ds.at(-1)!, parquet };
  });
  return { files, card: { windows, undated, text: w.text } };
}

/**
 * Plans a release: every file's bytes and the manifest. Pure (no I/O).
 * @throws TelebenchError `release_rows_invalid` when a row fails the schema; ConfigError for a bad version
 */
export function planRelease(input: ReleaseInput): ReleasePlan {
  const { dataset } = input;
  checkVersion(input.version);
  const rows = validateRows(dataset, input.rows);
  const byConfig = new Map<string, Record<string, unknown>[]>();
  for (const r of rows) {
    const c = dataset.config(r);
    if (!/^[A-Za-z0-9][\w.-]*$/.test(c)) {
      throw new TelebenchError(
        'release_rows_invalid',
        `${dataset.key(r)}: config name "${c}" is not usable as a folder name`,
        {
          tier: 'config',
        },
      );
    }
    byConfig.set(c, [...(byConfig.get(c) ?? []), r]);
  }
  const files: ReleaseFile[] = [];
  const configs = [...byConfig.keys()].sort().map((name) => {
    const rs = byConfig.get(name)!;
    const base = `data/${name}/${dataset.split}`;
    files.push(file(`${base}.jsonl`, rs.map((r) => `${JSON.stringify(r)}\n`).join('')));
    files.push(file(`${base}.parquet`, rowsToParquet(rs, dataset.fields)));
    return { name, rows: rs.length, parquet: `${base}.parquet`, jsonl: `${base}.jsonl` };
  });
  const windows = windowFiles(dataset, rows);
  files.push(...windows.files);
  const byLicense: Record<string, number> = {};
  for (const r of rows) byLicense[dataset.license(r)] = (byLicense[dataset.license(r)] ?? 0) + 1;
  const card = renderCard({
    dataset,
    version: input.version,
    configs,
    licenses: Object.entries(byLicense)
      .sort()
      .map(([spdx, n]) => ({ spdx, rows: n, evidence: input.licenseEvidence(spdx) })),
    funnel: input.funnel,
    stageVersions: input.provenance.stageVersions,
    configHash: input.provenance.configHash,
    profile: input.provenance.profile,
    provenanceNotes: input.provenance.provenanceNotes,
    sample: input.provenance.sample,
    models: input.provenance.models,
    snapshotLimitations: input.snapshotLimitations,
    verify: input.verify,
    windows: windows.card,
  });
  files.push(file('README.md', card));
  files.push(
    file(
      'CHANGELOG.md',
      renderChangelog({
        dataset,
        version: input.version,
        rows,
        previous: input.previous,
        ...(input.removedReasons && { removedReasons: input.removedReasons }),
      }),
    ),
  );
  files.sort((a, b) => a.path.localeCompare(b.path));
  const manifest: ReleaseManifest = {
    dataset: dataset.id,
    version: input.version,
    created_at: input.createdAt,
    previous_version: input.previous?.version ?? null,
    cutoff: input.cutoff ?? null,
    ...(input.sources && { sources: input.sources }),
    content_digest: contentDigest(files),
    git_sha: input.provenance.gitSha,
    config_hash: input.provenance.configHash,
    stage_versions: input.provenance.stageVersions,
    input_hashes: input.provenance.inputHashes,
    settings: input.provenance.settings,
    profile: input.provenance.profile,
    sample: input.provenance.sample,
    models: input.provenance.models,
    counts: {
      rows: rows.length,
      by_config: Object.fromEntries(configs.map((c) => [c.name, c.rows])),
      by_license: byLicense,
      ...(windows.card && {
        by_window: Object.fromEntries(windows.card.windows.map((w) => [w.name, w.rows])),
        undated: windows.card.undated,
      }),
      ...input.extraCounts,
    },
    verify: input.verify,
    files: Object.fromEntries(
      files.map((f) => [f.path, { sha256: f.sha256, bytes: f.bytes.length }]),
    ),
  };
  return { dataset: dataset.id, version: input.version, files, manifest, rows };
}

/**
 * Folder of a release: `<stateDir>/releases/<dataset>/<version>`.
 * @throws ConfigError (code `config_invalid`) when `version` fails {@link checkVersion}
 */
export function releaseDir(stateDir: string, dataset: string, version: string): string {
  return join(stateDir, 'releases', dataset, checkVersion(version));
}

/**
 * The manifest of a written release, or undefined when the folder has none.
 * @throws TelebenchError `release_manifest_unreadable` (tier config) when manifest.json is not JSON
 */
export function readManifest(dir: string): ReleaseManifest | undefined {
  const p = join(dir, 'manifest.json');
  if (!existsSync(p)) return undefined;
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as ReleaseManifest;
  } catch (err) {
    throw new TelebenchError(
      'release_manifest_unreadable',
      `${p} is not valid JSON: ${(err as Error).message}`,
      {
        tier: 'config',
        cause: err,
        context: { file: p },
      },
    );
  }
}

/**
 * Written versions of a dataset (folders with a manifest), oldest first by `created_at`.
 * @throws TelebenchError `release_manifest_unreadable` when a manifest.json is not JSON
 */
export function listReleases(stateDir: string, dataset: string): ReleaseManifest[] {
  const root = join(stateDir, 'releases', dataset);
  if (!existsSync(root)) return [];
  const out: ReleaseManifest[] = [];
  for (const name of readdirSync(root)) {
    if (name.startsWith('.')) continue;
    const m = readManifest(join(root, name));
    if (m) out.push(m);
  }
  return out.sort(
    (a, b) => a.created_at.localeCompare(b.created_at) || a.version.localeCompare(b.version),
  );
}

/** What {@link writeRelease} did: `written`, or `unchanged` (same content already there). */
export type WriteOutcome = {
  status: 'written' | 'unchanged';
  dir: string;
  manifest: ReleaseManifest;
};

/**
 * Writes a planned release into `<stateDir>/releases/<dataset>/<version>/`, atomically (a hidden
 * temporary folder renamed into place, so a killed process never leaves a half release).
 * @returns `unchanged` when the version exists with the same content digest (nothing is written)
 * @throws TelebenchError `release_version_exists` (tier config) when the version exists with
 *   different content, naming the differing files; `release_folder_incomplete` when the folder
 *   exists without a manifest
 */
export function writeRelease(stateDir: string, plan: ReleasePlan): WriteOutcome {
  const dir = releaseDir(stateDir, plan.dataset, plan.version);
  if (existsSync(dir)) {
    const existing = readManifest(dir);
    if (!existing) {
      throw new TelebenchError(
        'release_folder_incomplete',
        `${dir} exists but holds no manifest.json: it was not written by telebench release; move it away and release again`,
        { tier: 'config', context: { dir } },
      );
    }
    if (existing.content_digest === plan.manifest.content_digest) {
      return { status: 'unchanged', dir, manifest: existing };
    }
    const changed = new Set<string>();
    for (const f of plan.files)
      if (isDigestFile(f.path) && existing.files[f.path]?.sha256 !== f.sha256) changed.add(f.path);
    for (const p of Object.keys(existing.files))
      if (isDigestFile(p) && !plan.files.some((f) => f.path === p)) changed.add(p);
    throw new TelebenchError(
      'release_version_exists',
      `${plan.dataset} ${plan.version} was already released with different content (${[...changed].sort().join(', ')}); a written version is never changed: release under a new version`,
      {
        tier: 'config',
        context: { dir, changed: [...changed].sort(), existing_digest: existing.content_digest },
      },
    );
  }
  const tmp = join(dirname(dir), `.${plan.version}.tmp-${randomUUID().slice(0, 8)}`);
  try {
    for (const f of plan.files) {
      mkdirSync(dirname(join(tmp, f.path)), { recursive: true });
      writeFileSync(join(tmp, f.path), f.bytes);
    }
    writeFileSync(join(tmp, 'manifest.json'), `${JSON.stringify(plan.manifest, null, 2)}\n`);
    renameSync(tmp, dir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  return { status: 'written', dir, manifest: plan.manifest };
}

/**
 * Rows of a written release, read from its JSON Lines files (config order, then file order).
 * @throws TelebenchError (tier config) `release_not_found` when `dir` has no manifest.json,
 *   `release_manifest_unreadable` when it is not JSON, `release_row_unreadable` naming the file and
 *   line that is not JSON
 */
export function readReleaseRows(dir: string): Record<string, unknown>[] {
  const m = readManifest(dir);
  if (!m)
    throw new TelebenchError('release_not_found', `no release at ${dir} (no manifest.json)`, {
      tier: 'config',
    });
  const rows: Record<string, unknown>[] = [];
  for (const p of Object.keys(m.files)
    .filter((x) => x.endsWith('.jsonl'))
    .sort()) {
    const text = readFileSync(join(dir, p), 'utf8');
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        rows.push(JSON.parse(line) as Record<string, unknown>);
      } catch (err) {
        throw new TelebenchError(
          'release_row_unreadable',
          `${join(dir, p)} line ${i + 1} is not JSON`,
          {
            tier: 'config',
            cause: err,
          },
        );
      }
    });
  }
  return rows;
}
