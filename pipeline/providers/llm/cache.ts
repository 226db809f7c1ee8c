/**
 * The response cache: a provider wrapper that answers a request it has answered before from the
 * store's key-value table, so a re-run makes no model call. The key is the hash of
 * {@link ResponseCacheScope} plus the canonical {@link ChatRequest}: the provider kind (`ollama`,
 * `openai-compatible`: the same model name on another kind of server is another model), the model
 * digest the server reported at preflight (a re-pulled model is another model; null when the server
 * reports none), and the request (model, messages, maxTokens, temperature, seed, topP and the
 * vendor settings in `providerOptions`: think, numCtx, contextShift, truncatePrompt), plus the endpoint's configured default seed when it has one (a request without
 * `seed` samples with it). That is everything that can change the output (issue 6) and nothing else: no
 * endpoint URL (several endpoints serve one model), timeout, retry setting or API key (after
 * inspect_ai's cache key). Errors are never cached. The raw response bodies stay in the blob store
 * under the `rawDigest` the providers record.
 */
import { hashJson } from '../../hash.js';
import type { KeyValue } from '../../store/store.js';
import type { ChatRequest, ChatResult, EndpointModels, LlmProvider, ModelInfo } from './types.js';

/** Namespace of the cached results in `kv` (bump the suffix if ChatResult or the key changes). */
export const RESPONSE_CACHE_NAMESPACE = 'llm.chat.v3';

/** What besides the request decides a model's output: which server kind runs which build. */
export interface ResponseCacheScope {
  /** Provider kind (`LlmProvider.provider`: `ollama`, `openai-compatible`, or a pool's `a+b`). */
  provider: string;
  /** `ModelInfo.modelDigest` from the preflight; null when the server does not report one. */
  modelDigest: string | null;
  /** The provider's configured default seed ({@link LlmProvider.defaultSeed}); absent when unset. */
  defaultSeed?: number;
}

/**
 * Cache key of a request: SHA-256 hex (64 characters) of the canonical JSON (RFC 8785) of
 * `{ provider, modelDigest, defaultSeed?, request }` (defaultSeed only when the scope has one).
 */
export function responseCacheKey(request: ChatRequest, scope: ResponseCacheScope): string {
  return hashJson({
    provider: scope.provider,
    modelDigest: scope.modelDigest,
    // Only when set: keys of endpoints without a configured seed stay what they were.
    ...(scope.defaultSeed !== undefined ? { defaultSeed: scope.defaultSeed } : {}),
    request,
  });
}

/** A provider that serves repeated requests from the store. */
export class CachedProvider implements LlmProvider {
  readonly specificationVersion = 'v1' as const;
  private readonly inFlight = new Map<string, Promise<ChatResult>>();
  /** Model name -> digest from its preflight (a pending preflight while one runs). */
  private readonly digests = new Map<string, Promise<string | null>>();

  /**
   * @param inner the provider that answers misses
   * @param kv the store's key-value table (`ctx.kv`)
   */
  constructor(
    readonly inner: LlmProvider,
    private readonly kv: KeyValue,
    private readonly namespace = RESPONSE_CACHE_NAMESPACE,
  ) {}

  /**
   * The answering provider's kind, read when needed: behind a FallbackProvider it becomes
   * `embedded` once the preflight chose the fallback, and the cache keys follow.
   */
  get provider(): string {
    return this.inner.provider;
  }

  /** The inner provider's capacity (a hit costs nothing, a miss takes one of its slots). */
  capacity(): number {
    return this.inner.capacity();
  }

  /** The inner provider's loaded models. @throws as its */
  loadedModels(signal?: AbortSignal): Promise<EndpointModels[]> {
    return this.inner.loadedModels(signal);
  }

  /**
   * Passes through (a preflight checks the live server even when every answer is cached) and
   * records the model digest it reports: it is part of every later cache key of `model`.
   * @throws whatever the inner provider's preflight throws (PreflightError)
   */
  async preflight(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    const info = await this.inner.preflight(model, signal);
    this.digests.set(model, Promise.resolve(info.modelDigest));
    return info;
  }

  /**
   * The cache scope of `model`: this provider's kind and the digest recorded by {@link preflight}.
   * When no preflight ran for `model` yet, one runs now (once per model), so a key never lacks
   * the digest of a server that reports one.
   * @throws whatever the inner provider's preflight throws (then the next call tries again)
   */
  async scopeOf(model: string, signal?: AbortSignal): Promise<ResponseCacheScope> {
    let digest = this.digests.get(model);
    if (!digest) {
      digest = this.inner.preflight(model, signal).then((info) => info.modelDigest);
      this.digests.set(model, digest);
      const pending = digest;
      // A failed preflight is not remembered: the next chat tries again (the error reaches the caller below).
      pending.catch(() => {
        if (this.digests.get(model) === pending) this.digests.delete(model);
      });
    }
    const modelDigest = await digest;
    const defaultSeed = this.inner.defaultSeed;
    return {
      provider: this.provider,
      modelDigest,
      ...(defaultSeed !== undefined ? { defaultSeed } : {}),
    };
  }

  /**
   * The stored result of an identical earlier request in `scope`, marked `cached` with
   * `latencyMs` 0; undefined on a miss.
   */
  lookup(request: ChatRequest, scope: ResponseCacheScope): ChatResult | undefined {
    const hit = this.kv.get<ChatResult>(this.namespace, responseCacheKey(request, scope));
    return hit === undefined ? undefined : { ...hit, cached: true, latencyMs: 0 };
  }

  /**
   * A cached result, or the inner provider's (then stored). Identical requests in flight at the same
   * time share one call.
   * @throws whatever the inner provider throws (nothing is stored then), or its preflight when
   *   no digest is recorded for `request.model` yet (see {@link scopeOf})
   */
  async chat(request: ChatRequest, options: { signal?: AbortSignal } = {}): Promise<ChatResult> {
    const scope = await this.scopeOf(request.model, options.signal);
    const hit = this.lookup(request, scope);
    if (hit) return hit;
    const key = responseCacheKey(request, scope);
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
