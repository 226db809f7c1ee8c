/**
 * Several endpoints serving one model. Each endpoint has its own concurrency limit (p-limit, why:
 * the small standard limiter); a request goes to the endpoint with the lowest load (running plus
 * queued, over its limit), ties broken round-robin. When an endpoint still fails with a retryable
 * error after its own retries, the request moves to the next endpoint, each tried at most once.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { PreflightError } from '../../errors.js';
import type { ChatRequest, ChatResult, EndpointModels, LlmProvider, ModelInfo } from './types.js';
import { isRetryable } from './http.js';

/** One endpoint of a pool. */
export interface PoolMember {
  provider: LlmProvider & { readonly endpoint?: string };
  /** Requests sent to this endpoint at once (>= 1). */
  concurrency: number;
}

interface Slot {
  provider: PoolMember['provider'];
  concurrency: number;
  limit: LimitFunction;
}

/** A provider that spreads requests over endpoints. */
export class LlmPool implements LlmProvider {
  readonly specificationVersion = 'v1' as const;
  readonly provider: string;
  private readonly slots: Slot[];
  private next = 0;

  /**
   * @param members at least one endpoint
   * @throws TypeError for an empty list or a concurrency below 1
   */
  constructor(members: readonly PoolMember[]) {
    if (members.length === 0) throw new TypeError('an LLM pool needs at least one endpoint');
    this.slots = members.map((m) => {
      if (!Number.isInteger(m.concurrency) || m.concurrency < 1) {
        throw new TypeError(`endpoint concurrency must be an integer >= 1, got ${m.concurrency}`);
      }
      return { provider: m.provider, concurrency: m.concurrency, limit: pLimit(m.concurrency) };
    });
    this.provider = [...new Set(members.map((m) => m.provider.provider))].join('+');
  }

  /**
   * The members' configured default seed when they all set the same one (see
   * {@link LlmProvider.defaultSeed}); undefined when none sets one or they differ (then the cache
   * scope cannot tell which member sampled an answer: give pool members one seed).
   */
  get defaultSeed(): number | undefined {
    const seeds = new Set(this.slots.map((s) => s.provider.defaultSeed));
    return seeds.size === 1 ? [...seeds][0] : undefined;
  }

  /** The endpoint providers, in configuration order. */
  members(): LlmProvider[] {
    return this.slots.map((s) => s.provider);
  }

  /** Sum of the endpoints' concurrency limits: the requests the pool runs at once. */
  capacity(): number {
    return this.slots.reduce((n, s) => n + s.concurrency, 0);
  }

  /** Every endpoint's loaded models, in configuration order. @throws as the endpoints' */
  async loadedModels(signal?: AbortSignal): Promise<EndpointModels[]> {
    const out: EndpointModels[] = [];
    for (const s of this.slots) out.push(...(await s.provider.loadedModels(signal)));
    return out;
  }

  /**
   * Preflights every endpoint. All must serve the model, with the same digest where the servers
   * report one (two builds of a model would mix two generators in one dataset).
   * @returns the first endpoint's info with `endpoint` listing all of them
   * @throws PreflightError of the first failing endpoint (its message names every failing one),
   *   or when the digests differ
   */
  async preflight(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    const infos = await this.preflightAll(model, signal);
    return { ...infos[0]!, endpoint: infos.map((i) => i.endpoint).join(', ') };
  }

  /** Like {@link preflight}, one ModelInfo per endpoint. @throws as {@link preflight} */
  async preflightAll(model: string, signal?: AbortSignal): Promise<ModelInfo[]> {
    const settled = await Promise.allSettled(
      this.slots.map((s) => s.provider.preflight(model, signal)),
    );
    const failed = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    if (failed.length > 0) {
      const first = failed[0];
      if (failed.length === 1 || !(first instanceof PreflightError)) throw first;
      throw new PreflightError(
        first.service,
        `${failed.length} of ${this.slots.length} endpoints failed: ${failed.map((e) => (e as Error).message).join('; ')}`,
        first.hint,
        first,
      );
    }
    const infos = settled.map((s) => (s as PromiseFulfilledResult<ModelInfo>).value);
    const digests = new Set(infos.map((i) => i.modelDigest).filter((d): d is string => d !== null));
    if (digests.size > 1) {
      throw new PreflightError(
        `llm pool for ${model}`,
        `the endpoints serve different builds of ${model}: ${infos.map((i) => `${i.endpoint} ${i.modelDigest}`).join(', ')}`,
        `pull the same ${model} on every endpoint (\`ollama pull ${model}\`) or list only one endpoint`,
      );
    }
    return infos;
  }

  private order(): Slot[] {
    const start = this.next++ % this.slots.length;
    const rotated = [...this.slots.slice(start), ...this.slots.slice(0, start)];
    const load = (s: Slot) => (s.limit.activeCount + s.limit.pendingCount) / s.concurrency;
    return rotated.sort((a, b) => load(a) - load(b));
  }

  /**
   * Sends the request to the least loaded endpoint; on a retryable failure there (after its own
   * retries), to the next one.
   * @throws the last endpoint's error
   */
  async chat(request: ChatRequest, options: { signal?: AbortSignal } = {}): Promise<ChatResult> {
    const order = this.order();
    let lastError: unknown;
    for (const slot of order) {
      try {
        return await slot.limit(() => slot.provider.chat(request, options));
      } catch (err) {
        lastError = err;
        if (!isRetryable(err) || options.signal?.aborted) throw err;
      }
    }
    throw lastError;
  }
}
