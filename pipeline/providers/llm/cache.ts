/**
 * The response cache: a provider wrapper that answers a request it has answered before from the
 * store's key-value table, so a re-run makes no model call. The key is `hashJson(ChatRequest)`:
 * the canonical request (model, messages, think, numCtx, maxTokens, temperature, seed, topP), i.e.
 * everything that can change the output and nothing else: no endpoint, timeout, retry setting or
 * API key (after inspect_ai's cache key). Errors are never cached. The raw response bodies stay in
 * the blob store under the `rawDigest` the providers record.
 */
import { hashJson } from '../../hash.js';
import type { KeyValue } from '../../store/store.js';
import type { ChatRequest, ChatResult, LlmProvider, ModelInfo } from './types.js';

/** Namespace of the cached results in `kv` (bump the suffix if ChatResult changes shape). */
export const RESPONSE_CACHE_NAMESPACE = 'llm.chat.v1';

/** Cache key of a request: SHA-256 hex of its canonical JSON (RFC 8785). */
export function responseCacheKey(request: ChatRequest): string {
  return hashJson(request);
}

/** A provider that serves repeated requests from the store. */
export class CachedProvider implements LlmProvider {
  readonly specificationVersion = 'v1' as const;
  readonly provider: string;
  private readonly inFlight = new Map<string, Promise<ChatResult>>();

  /**
   * @param inner the provider that answers misses
   * @param kv the store's key-value table (`ctx.kv`)
   */
  constructor(
    readonly inner: LlmProvider,
    private readonly kv: KeyValue,
    private readonly namespace = RESPONSE_CACHE_NAMESPACE,
  ) {
    this.provider = inner.provider;
  }

  /** Passes through: a preflight checks the live server even when every answer is cached. */
  preflight(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    return this.inner.preflight(model, signal);
  }

  /** The stored result of an identical earlier request, marked `cached` with `latencyMs` 0. */
  lookup(request: ChatRequest): ChatResult | undefined {
    const hit = this.kv.get<ChatResult>(this.namespace, responseCacheKey(request));
    return hit === undefined ? undefined : { ...hit, cached: true, latencyMs: 0 };
  }

  /**
   * A cached result, or the inner provider's (then stored). Identical requests in flight at the same
   * time share one call.
   * @throws whatever the inner provider throws (nothing is stored then)
   */
  async chat(request: ChatRequest, options: { signal?: AbortSignal } = {}): Promise<ChatResult> {
    const hit = this.lookup(request);
    if (hit) return hit;
    const key = responseCacheKey(request);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const call = (async () => {
      try {
        const result = await this.inner.chat(request, options);
        this.kv.set(this.namespace, key, { ...result, cached: false });
        return result;
      } finally {
        this.inFlight.delete(key);
      }
    })();
    this.inFlight.set(key, call);
    return call;
  }
}
