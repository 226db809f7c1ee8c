/**
 * Download of the local-source subsets (ORAN-Bench-13K, srsRANBench) into `<state>/data` when no
 * data root is configured: once per file, from `resilience.data_url_base`
 * (raw.githubusercontent.com layout), written through a temporary file so a killed run leaves no
 * half file. Beside each downloaded file, `<file>.source.json` records where it came from
 * ({@link SourceRecord}: URL, the server's ETag and Last-Modified, sha256, size).
 *
 * A downloaded copy is identified by its URL (which holds the publisher's ref, e.g. `main`), not by
 * its bytes: `resilience.load` keys the subset's work item by the URL, so a second run neither
 * downloads nor re-reads it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { messageWithCauses, TelebenchError } from '../../pipeline/errors.js';
import { sha256 } from '../../pipeline/hash.js';
import { DATA_ROOT_ENV, SOURCE_FILES } from './subsets.js';
import { DEFAULT_URL_BASE } from './config.js';

/** Where a downloaded source file came from (`<file>.source.json`). */
export interface SourceRecord {
  url: string;
  /** the server's ETag header, when it sent one */
  etag: string | null;
  /** the server's Last-Modified header, when it sent one */
  last_modified: string | null;
  /** sha256 (hex) of the bytes written */
  sha256: string;
  bytes: number;
  /** ISO 8601 time of the download */
  fetched_at: string;
}

/** The record beside `dest` (`<dest>.source.json`), or null when there is none or it is unreadable. */
export function readSourceRecord(dest: string): SourceRecord | null {
  try {
    return JSON.parse(readFileSync(`${dest}.source.json`, 'utf8')) as SourceRecord;
  } catch {
    return null;
  }
}

/**
 * Makes sure `dest` exists, downloading `url` when it does not.
 * @param url full URL of the file (`https://raw.githubusercontent.com/prnshv/srsRANBench/main/srsRANBench.json`)
 * @param dest absolute path of the file under the data root
 * @returns true when this call downloaded the file (and wrote its record), false when it was
 *   already there
 * @throws TelebenchError `source_unreachable` (tier transient: `--retry-failed` tries again)
 *   naming the URL, when the request fails or answers a non-2xx status
 */
export async function ensureSourceFile(
  url: string,
  dest: string,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<boolean> {
  if (existsSync(dest)) return false;
  const signals = [AbortSignal.timeout(opts.timeoutMs ?? 120_000)];
  if (opts.signal) signals.push(opts.signal);
  let body: Buffer;
  let headers: Headers;
  try {
    const res = await fetch(url, { signal: AbortSignal.any(signals) });
    if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
    headers = res.headers;
    body = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    throw new TelebenchError(
      'source_unreachable',
      `could not download ${url} into ${dest}: ${messageWithCauses(err)} (set resilience.data_root or $TELEBENCH_DATA_ROOT to a folder that holds the file, or make the URL reachable and rerun with --retry-failed)`,
      { tier: 'transient', context: { url, dest }, cause: err },
    );
  }
  mkdirSync(dirname(dest), { recursive: true });
  const tmp = `${dest}.part-${process.pid}`;
  const record: SourceRecord = {
    url,
    etag: headers.get('etag'),
    last_modified: headers.get('last-modified'),
    sha256: sha256(body),
    bytes: body.length,
    fetched_at: new Date().toISOString(),
  };
  // the record first: a file that exists always has its record (a kill between the two renames
  // leaves only a record, and the next run downloads the file again)
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, `${dest}.source.json`);
  writeFileSync(tmp, body);
  renameSync(tmp, dest);
  return true;
}

/**
 * The data folder beside a checkout, relative to the checkout's root: a team's shared copy of the
 * publishers' files, laid out like the data root (`srsranbench/srsRANBench.json`,
 * `teleresiliencebench/AuxiliaryBenchmark.json`, ...). Absent on a user's clone.
 */
export const CHECKOUT_DATA_DIR = '../shared/data';

/** Where {@link findDataRoot} found the files. */
export type DataRootVia = 'env' | 'checkout' | 'download';

/**
 * Finds a folder holding every published file in `files` (paths under a data root, each a key of
 * {@link SOURCE_FILES}) the way the product looks for its local sources:
 * `$TELEBENCH_DATA_ROOT` when set (it must hold them), else {@link CHECKOUT_DATA_DIR} beside
 * `opts.checkout` when it holds them, else `opts.cacheDir`, where the missing ones are downloaded
 * once from their publisher (`<urlBase>/<SOURCE_FILES[file]>`, with `<file>.source.json` beside).
 * Used by the tests and benchmarks that read real data.
 * @param files e.g. `['teleresiliencebench/AuxiliaryBenchmark.json']`
 * @param opts.checkout absolute root of the checkout
 * @param opts.cacheDir absolute download folder (the product's is `<state>/data`)
 * @param opts.urlBase publisher base URL (default `https://raw.githubusercontent.com`)
 * @returns the absolute folder and how it was found
 * @throws TelebenchError `data_missing` (tier preflight) with one message saying how to provide
 *   the files (the env var, the folder beside the checkout, or access to the publisher), when
 *   `$TELEBENCH_DATA_ROOT` lacks a file or a download fails; Error for a file with no publisher URL
 */
export async function findDataRoot(
  files: readonly string[],
  opts: {
    checkout: string;
    cacheDir: string;
    urlBase?: string;
    env?: NodeJS.ProcessEnv;
    timeoutMs?: number;
  },
): Promise<{ root: string; via: DataRootVia }> {
  for (const f of files) if (!SOURCE_FILES[f]) throw new Error(`no publisher URL for ${f}`);
  const env = (opts.env ?? process.env)[DATA_ROOT_ENV];
  const missingIn = (root: string) => files.filter((f) => !existsSync(join(root, f)));
  const how = (what: string) =>
    new TelebenchError(
      'data_missing',
      `${what}. Provide the published data in one of three ways: set $${DATA_ROOT_ENV} to a folder holding ${files.join(', ')} (paths under it); or put that folder at ${CHECKOUT_DATA_DIR} beside the checkout; or give this machine access to ${opts.urlBase ?? DEFAULT_URL_BASE} so the files are downloaded once into ${opts.cacheDir}`,
      { tier: 'preflight', context: { files } },
    );
  if (env) {
    const root = resolve(env);
    const missing = missingIn(root);
    if (missing.length)
      throw how(`$${DATA_ROOT_ENV} is ${root}, which has no ${missing.join(', ')}`);
    return { root, via: 'env' };
  }
  const beside = resolve(opts.checkout, CHECKOUT_DATA_DIR);
  if (missingIn(beside).length === 0) return { root: beside, via: 'checkout' };
  const base = (opts.urlBase ?? DEFAULT_URL_BASE).replace(/\/+$/, '');
  for (const f of missingIn(opts.cacheDir)) {
    const url = `${base}/${SOURCE_FILES[f]}`;
    try {
      await ensureSourceFile(url, join(opts.cacheDir, f), { timeoutMs: opts.timeoutMs });
    } catch (err) {
      // the cause alone: ensureSourceFile's own hint speaks of a pipeline run's config keys
      const cause = err instanceof TelebenchError && err.cause ? err.cause : err;
      throw how(
        `${f} is not in ${beside}, and ${url} could not be downloaded (${messageWithCauses(cause)})`,
      );
    }
  }
  return { root: opts.cacheDir, via: 'download' };
}
