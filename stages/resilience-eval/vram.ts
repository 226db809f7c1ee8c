/**
 * VRAM, measured, never typed in (issue 10), in this order:
 * 1. `nvidia-smi` on this machine (when the model server is local: its endpoint is 127.0.0.1,
 *    localhost or ::1): the GPUs' `memory.used`, summed; the report takes the peak of the samples
 *    taken after each reply (`nvidia-smi-peak`);
 * 2. else Ollama `/api/ps` `size_vram` of the model: what the server allocated, not a peak
 *    (`ollama-allocated`);
 * 3. else, for an in-process model (no HTTP endpoint), this process's resident memory
 *    (`process-rss`);
 * 4. else `unavailable`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadedModels } from '../../pipeline/providers/llm/config.js';
import type { LlmProvider } from '../../pipeline/providers/llm/types.js';

const run = promisify(execFile);

export interface VramSample {
  bytes: number | null;
  method: 'nvidia-smi-peak' | 'ollama-allocated' | 'process-rss' | 'unavailable';
  detail: string;
}

const LOCAL = /^https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?/;

/** Sum of `memory.used` over this machine's GPUs in bytes, or null without nvidia-smi. */
export async function nvidiaSmiUsedBytes(): Promise<number | null> {
  try {
    const { stdout } = await run(
      'nvidia-smi',
      ['--query-gpu=memory.used', '--format=csv,noheader,nounits'],
      { timeout: 10_000 },
    );
    const mib = stdout
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isFinite(n) && n >= 0);
    return mib.length ? mib.reduce((a, b) => a + b, 0) * 1024 * 1024 : null;
  } catch {
    return null; // no nvidia-smi (or no GPU): the next method is tried, and the report says which
  }
}

/**
 * One VRAM sample for `model` served by `provider` (see the module comment for the order).
 * @param inProcess every endpoint of the target is `embedded` (llama.cpp in this process)
 * Never throws: a method that fails falls through to the next, and `detail` says why.
 */
export async function measureVram(
  provider: LlmProvider,
  model: string,
  inProcess: boolean,
  signal?: AbortSignal,
): Promise<VramSample> {
  let ps: Awaited<ReturnType<typeof loadedModels>> = [];
  let psError = '';
  try {
    ps = await loadedModels(provider, signal);
  } catch (err) {
    psError = String(err);
  }
  const local = ps.some((p) => LOCAL.test(p.endpoint)) || inProcess;
  if (local) {
    const used = await nvidiaSmiUsedBytes();
    if (used !== null)
      return { bytes: used, method: 'nvidia-smi-peak', detail: 'nvidia-smi memory.used, all GPUs' };
  }
  for (const p of ps) {
    const m = p.models.find((x) => x.name === model || x.name.startsWith(`${model}:`));
    if (m?.sizeVram !== null && m?.sizeVram !== undefined)
      return {
        bytes: m.sizeVram,
        method: 'ollama-allocated',
        detail: `${p.endpoint}/api/ps size_vram`,
      };
  }
  if (inProcess)
    return {
      bytes: process.memoryUsage().rss,
      method: 'process-rss',
      detail: 'in-process model: resident memory',
    };
  return {
    bytes: null,
    method: 'unavailable',
    detail: psError || 'no nvidia-smi, no Ollama /api/ps entry for the model, not in-process',
  };
}
