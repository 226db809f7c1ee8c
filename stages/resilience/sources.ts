/**
 * Download of the local-source subsets (ORAN-Bench-13K, srsRANBench) into `<state>/data` when no
 * data root is configured: once per file, from `resilience.data_url_base`
 * (raw.githubusercontent.com layout), written through a temporary file so a killed run leaves no
 * half file.
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { TelebenchError } from '../../pipeline/errors.js';

/**
 * Makes sure `dest` exists, downloading `url` when it does not.
 * @param url full URL of the file (`https://raw.githubusercontent.com/prnshv/srsRANBench/main/srsRANBench.json`)
 * @param dest absolute path of the file under the data root
 * @returns true when this call downloaded the file, false when it was already there
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
  try {
    const res = await fetch(url, { signal: AbortSignal.any(signals) });
    if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
    body = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    throw new TelebenchError(
      'source_unreachable',
      `could not download ${url} into ${dest}: ${(err as Error).message} (set resilience.data_root or $TELEBENCH_DATA_ROOT to a folder that holds the file, or make the URL reachable and rerun with --retry-failed)`,
      { tier: 'transient', context: { url, dest }, cause: err },
    );
  }
  mkdirSync(dirname(dest), { recursive: true });
  const tmp = `${dest}.part-${process.pid}`;
  writeFileSync(tmp, body);
  renameSync(tmp, dest);
  return true;
}
