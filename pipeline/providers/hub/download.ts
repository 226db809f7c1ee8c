/**
 * Downloads single files of a Hugging Face Hub dataset at a pinned revision, once, into the state
 * directory (`<state>/downloads/hf/datasets/<owner>/<name>/<revision>/<path>`), through the real
 * `@huggingface/hub` client (`fileDownloadInfo`, `downloadFile`; why: the official client, whose
 * `hubUrl` and `fetch` parameters are the seams tests use to point it at a local Hub server).
 *
 * A sidecar `<file>.meta.json` records the revision, the commit the Hub resolved it to
 * (`X-Repo-Commit`), the ETag, size and sha256; when file and sidecar agree, a later call makes no
 * request at all. Files are written to a temporary name and renamed, so a kill never leaves half
 * a file under the final name.
 *
 * `HF_TOKEN` is optional (public datasets need none) and comes from the environment only
 * (pipeline/secrets.ts); it never reaches the sidecar, logs or error messages.
 */
import { mkdirSync, existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type * as hubTypes from '@huggingface/hub';
import { messageWithCauses, TelebenchError, PreflightError } from '../../errors.js';
import { sha256 } from '../../hash.js';
import { redact, secret } from '../../secrets.js';
import { lazy } from '../../lazy.js';

const hub = lazy<typeof hubTypes>('@huggingface/hub');

export interface HubFileParams {
  /** Hub base URL, e.g. `https://huggingface.co` (tests: a local server). */
  hubUrl: string;
  /** Dataset `owner/name`. */
  dataset: string;
  /** Branch, tag or commit sha; pin a commit for reproducible builds. */
  revision: string;
  /** File path inside the dataset repository. */
  path: string;
  /** Folder under which downloads are kept (`<state>/downloads`). */
  downloadsDir: string;
  /** Token; default `HF_TOKEN` from the environment (optional). */
  accessToken?: string;
  /** Injected fetch (default global fetch). */
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** Per-request timeout in milliseconds (default 60 000). */
  timeoutMs?: number;
}

/** What a download produced (also the content of the sidecar). */
export interface HubFileResult {
  /** Absolute path of the local copy. */
  file: string;
  dataset: string;
  path: string;
  revision: string;
  /** Commit the revision resolved to (`X-Repo-Commit`), null when the server did not say. */
  commit: string | null;
  etag: string;
  size: number;
  sha256: string;
  /** True when the local copy was used and no request was made. */
  fromCache: boolean;
}

/** Local path a file is (or will be) downloaded to. Pure. */
export function hubLocalPath(
  p: Pick<HubFileParams, 'downloadsDir' | 'dataset' | 'revision' | 'path'>,
): string {
  const safeRev = p.revision.replace(/[^\w.-]/g, '_');
  return join(
    p.downloadsDir,
    'hf',
    'datasets',
    ...p.dataset.split('/'),
    safeRev,
    ...p.path.split('/'),
  );
}

function readSidecar(file: string): Omit<HubFileResult, 'fromCache'> | null {
  const meta = `${file}.meta.json`;
  if (!existsSync(file) || !existsSync(meta)) return null;
  const m = JSON.parse(readFileSync(meta, 'utf8')) as Omit<HubFileResult, 'fromCache'>;
  if (sha256(readFileSync(file)) !== m.sha256) return null;
  return m;
}

/** True when the file is already downloaded (and intact) for this revision. No request. */
export function isHubFileCached(
  p: Pick<HubFileParams, 'downloadsDir' | 'dataset' | 'revision' | 'path'>,
): boolean {
  return readSidecar(hubLocalPath(p)) !== null;
}

function withTimeout(
  base: typeof fetch,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  seen: { commit: string | null },
): typeof fetch {
  return async (input, init) => {
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
    const res = await base(input, { ...init, signal: AbortSignal.any(signals) });
    const commit = res.headers.get('x-repo-commit');
    if (commit) seen.commit = commit;
    return res;
  };
}

/** Turns a client or network error into a TelebenchError naming the file and what to do. */
export function hubError(
  err: unknown,
  p: Pick<HubFileParams, 'hubUrl' | 'dataset' | 'revision' | 'path'>,
): TelebenchError {
  const where = `${p.hubUrl}/datasets/${p.dataset}@${p.revision}/${p.path}`;
  if (err instanceof TelebenchError) return err;
  if (err instanceof hub().HubApiError) {
    const s = err.statusCode;
    if (s === 401 || s === 403) {
      return new TelebenchError(
        'hub_unauthorized',
        `the Hub refused ${where} (HTTP ${s}): set HF_TOKEN to a token that can read ${p.dataset}`,
        { tier: 'config', context: { url: where, status: s } },
      );
    }
    if (s === 404) {
      return new TelebenchError(
        'hub_not_found',
        `${where} does not exist on the Hub (HTTP 404: dataset, revision or file): check resilience.hub.dataset, revision and file_pattern`,
        { tier: 'config', context: { url: where, status: s } },
      );
    }
    if (s === 429) {
      return new TelebenchError(
        'hub_rate_limited',
        `the Hub rate-limited the download of ${where} (HTTP 429)`,
        { tier: 'rate-limit', context: { url: where, status: s } },
      );
    }
    return new TelebenchError(
      'hub_http_error',
      `the Hub answered HTTP ${s} for ${where}: ${redact(err.message)}`,
      { tier: 'transient', context: { url: where, status: s } },
    );
  }
  const e = err as Error;
  return new TelebenchError(
    'hub_unreachable',
    `cannot reach the Hub for ${where}: ${redact(messageWithCauses(e))}`,
    { tier: 'transient', context: { url: where }, cause: err },
  );
}

/**
 * Downloads one file at the pinned revision, or returns the local copy without any request.
 * @returns where the file is and what it is
 * @throws TelebenchError `hub_not_found` / `hub_unauthorized` (tier config), `hub_rate_limited`,
 *   `hub_http_error`, `hub_unreachable` (transient), `hub_size_mismatch` (transient)
 */
export async function downloadHubFile(p: HubFileParams): Promise<HubFileResult> {
  const file = hubLocalPath(p);
  const cached = readSidecar(file);
  if (cached) return { ...cached, file, fromCache: true };
  const accessToken = p.accessToken ?? secret('HF_TOKEN');
  const seen = { commit: null as string | null };
  const f = withTimeout(p.fetch ?? fetch, p.timeoutMs ?? 60_000, p.signal, seen);
  const repo = { type: 'dataset' as const, name: p.dataset };
  let bytes: Buffer;
  let etag: string;
  try {
    const info = await hub().fileDownloadInfo({
      repo,
      path: p.path,
      revision: p.revision,
      hubUrl: p.hubUrl,
      fetch: f,
      ...(accessToken ? { accessToken } : {}),
    });
    if (!info)
      throw new (hub().HubApiError)(
        `${p.hubUrl}/datasets/${p.dataset}/resolve/${p.revision}/${p.path}`,
        404,
      );
    const blob = await hub().downloadFile({
      repo,
      path: p.path,
      revision: p.revision,
      hubUrl: p.hubUrl,
      fetch: f,
      downloadInfo: info,
      xet: false,
      ...(accessToken ? { accessToken } : {}),
    });
    if (!blob)
      throw new (hub().HubApiError)(
        `${p.hubUrl}/datasets/${p.dataset}/resolve/${p.revision}/${p.path}`,
        404,
      );
    bytes = Buffer.from(await blob.arrayBuffer());
    etag = info.etag;
    if (bytes.length !== info.size) {
      throw new TelebenchError(
        'hub_size_mismatch',
        `downloaded ${bytes.length} bytes of ${p.path}, the Hub announced ${info.size}`,
        { tier: 'transient', context: { path: p.path } },
      );
    }
  } catch (err) {
    throw hubError(err, p);
  }
  const meta: Omit<HubFileResult, 'fromCache'> = {
    file,
    dataset: p.dataset,
    path: p.path,
    revision: p.revision,
    commit: seen.commit,
    etag,
    size: bytes.length,
    sha256: sha256(bytes),
  };
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${randomUUID()}`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, file);
  writeFileSync(`${file}.meta.json.tmp`, `${JSON.stringify(meta, null, 2)}\n`);
  renameSync(`${file}.meta.json.tmp`, `${file}.meta.json`);
  return { ...meta, fromCache: false };
}

/**
 * Preflight: checks that the Hub serves `path` at the revision (one small ranged request).
 * @throws PreflightError naming the Hub URL and what to set or start
 */
export async function checkHubFile(p: Omit<HubFileParams, 'downloadsDir'>): Promise<void> {
  const accessToken = p.accessToken ?? secret('HF_TOKEN');
  const f = withTimeout(p.fetch ?? fetch, p.timeoutMs ?? 15_000, p.signal, { commit: null });
  let info;
  try {
    info = await hub().fileDownloadInfo({
      repo: { type: 'dataset', name: p.dataset },
      path: p.path,
      revision: p.revision,
      hubUrl: p.hubUrl,
      fetch: f,
      ...(accessToken ? { accessToken } : {}),
    });
  } catch (err) {
    const e = hubError(err, p);
    throw new PreflightError(
      `huggingface hub ${p.hubUrl}`,
      e.message,
      e.code === 'hub_unauthorized'
        ? 'export HF_TOKEN=<a token with read access> and run again'
        : e.code === 'hub_not_found'
          ? `check resilience.hub.dataset (${p.dataset}), resilience.hub.revision (${p.revision}) and file_pattern`
          : `connect to ${p.hubUrl} (or set resilience.hub.url to a mirror), or build from local sources only: set resilience.only_subsets to local subsets (see config/subsets.yaml)`,
      err,
    );
  }
  if (!info) {
    throw new PreflightError(
      `huggingface hub ${p.hubUrl}`,
      `${p.hubUrl}/datasets/${p.dataset}@${p.revision} has no file ${p.path}`,
      'check resilience.hub.revision and file_pattern',
    );
  }
}
