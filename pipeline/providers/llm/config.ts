/**
 * The `llm` configuration section and the factory that builds a provider from it:
 *
 * ```yaml
 * llm:
 *   endpoints:
 *     - { kind: ollama, base_url: http://127.0.0.1:11434, concurrency: 2 }
 *     - { kind: openai-compatible, base_url: http://gpu-2:8000/v1, context_length: 32768 }
 *   cache: true
 *   prompt_check: { margin_ratio: 0.15, margin_tokens: 32, limit_slack_tokens: 1 }
 *   # used only when no endpoint above passes its preflight (the same model, in this process):
 *   fallback:
 *     - { kind: embedded, model: qwen3.5:2b, source: [{ ollama: { model: qwen3.5:2b } }] }
 * ```
 * A stage embeds {@link llmConfigSchema} in its own section and calls {@link createProvider} with
 * its context's `kv` and `blobs`.
 */
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { BlobStore } from '../../store/blobs.js';
import type { KeyValue } from '../../store/store.js';
import type { TelebenchEvent } from '../../events.js';
import type { EndpointModels, LlmProvider } from './types.js';
import type { HttpPolicy } from './http.js';
import type { TruncationPolicy } from './truncation.js';
import { OllamaProvider } from './ollama.js';
import { OpenAiCompatibleProvider } from './openai.js';
import { LlmPool } from './pool.js';
import { CachedProvider } from './cache.js';
import { EmbeddedProvider } from './embedded.js';
import { FallbackProvider } from './fallback.js';
import { modelSourceSchema } from './model-source.js';

const ms = z.number().int().min(0);

/** One model server. Times in milliseconds. */
export const httpEndpointSchema = z.strictObject({
  /** `ollama`: native `/api/chat`; `openai-compatible`: `/v1/chat/completions` (vLLM, SGLang, ...). */
  kind: z.enum(['ollama', 'openai-compatible']),
  /** Server root; for openai-compatible a trailing `/v1` is allowed. */
  base_url: z.url({
    protocol: /^https?$/,
    error: 'expected an http(s) URL such as http://127.0.0.1:11434',
  }),
  /** Requests sent to this endpoint at once (match the server's parallel slots, OLLAMA_NUM_PARALLEL). */
  concurrency: z.number().int().min(1).max(256).default(1),
  /** Stream the answer (NDJSON / SSE) so slow servers are judged by the idle timeout. */
  stream: z.boolean().default(true),
  /**
   * Abort when no byte arrives for this long (with `stream: false`, a limit on the whole answer).
   * 120 s: a streaming server sends a token every few seconds even on CPU; a silent minute or two
   * means it is stuck. Raise it for `stream: false` with long answers on slow hardware.
   */
  idle_timeout_ms: ms.min(1).default(120_000),
  /** Abort after this total time (0: none). */
  timeout_ms: ms.default(0),
  /**
   * Retries of 408/409/429/5xx, timeouts and connection errors (each shown as a `retry` event with
   * its reason). 2: a hung server costs at most ~3 idle timeouts per item before it fails.
   */
  retries: z.number().int().min(0).max(20).default(2),
  min_backoff_ms: ms.default(500),
  max_backoff_ms: ms.default(30_000),
  /** A longer `retry-after` is not waited for (the item fails with tier rate-limit). */
  max_retry_after_ms: ms.default(300_000),
  /** openai-compatible only: the server's context window for the prompt check (it ignores num_ctx). */
  context_length: z.number().int().min(1).optional(),
  /** openai-compatible only: how `think` is sent (`none` or vLLM/SGLang `chat_template_kwargs`). */
  think_param: z.enum(['none', 'chat_template_kwargs']).default('none'),
  /** openai-compatible only: which variable holds the API key (default: TELEBENCH_LLM_API_KEY, then OPENAI_API_KEY). */
  api_key_env: z.enum(['TELEBENCH_LLM_API_KEY', 'OPENAI_API_KEY']).optional(),
  /** ollama only: `keep_alive` (e.g. `30m`). */
  keep_alive: z.string().optional(),
});
export type HttpEndpointConfig = z.output<typeof httpEndpointSchema>;

/**
 * The embedded runtime (llama.cpp in this process, embedded.ts): no server, a GGUF file from
 * `source`. `concurrency` is the number of sequences in its llama.cpp context.
 */
export const embeddedEndpointSchema = z.strictObject({
  kind: z.literal('embedded'),
  /** The model name it serves (requests name it: `qwen3.5:2b`, `smollm2:135m`). */
  model: z.string().min(1),
  /** Where the GGUF file comes from, tried in order; every entry must be the same model. */
  source: z.array(modelSourceSchema).min(1),
  /** Sequences evaluated together in one llama.cpp context (requests at once). */
  concurrency: z.number().int().min(1).max(64).default(1),
  /** CPU threads; 1 holds on a busy shared machine (2 busy-wait: 25 s/token at load 30). */
  threads: z.number().int().min(1).max(256).default(1),
  /** Context window per sequence in tokens, or `auto` (the largest num_ctx asked, 4096 at least). */
  context_size: z.union([z.literal('auto'), z.number().int().min(64)]).default('auto'),
  /** Sampling seed used when a request has none. */
  seed: z.number().int().optional(),
  /** `auto`: a GPU when node-llama-cpp finds one (CUDA, Vulkan, Metal), else the CPU; false: CPU only. */
  gpu: z.union([z.literal('auto'), z.literal(false)]).default('auto'),
  /** `gguf`: the model's own Jinja chat template from the file; `auto`: node-llama-cpp's choice. */
  chat_template: z.enum(['gguf', 'auto']).default('gguf'),
});
export type EmbeddedEndpointConfig = z.output<typeof embeddedEndpointSchema>;

/** Any endpoint: a model server (`ollama`, `openai-compatible`) or the `embedded` runtime. */
export const llmEndpointSchema = z.discriminatedUnion('kind', [
  httpEndpointSchema,
  embeddedEndpointSchema,
]);
export type LlmEndpointConfig = z.output<typeof llmEndpointSchema>;

/** The no-silent-truncation settings (see truncation.ts for the rule). */
export const promptCheckSchema = z.strictObject({
  /** Relative safety margin on the local cl100k prompt estimate. */
  margin_ratio: z.number().min(0).max(2).default(0.15),
  /** Absolute safety margin in tokens (chat template tokens). */
  margin_tokens: z.number().int().min(0).default(32),
  /** A server prompt count at num_ctx minus this (or above) flags prompt_truncated. */
  limit_slack_tokens: z.number().int().min(0).default(1),
});

export const llmConfigSchema = z.strictObject({
  /** Endpoints serving the model; several share the load. */
  endpoints: z
    .array(llmEndpointSchema)
    .min(1)
    .default(() => [
      llmEndpointSchema.parse({ kind: 'ollama', base_url: 'http://127.0.0.1:11434' }),
    ]),
  /**
   * Endpoints used when none of `endpoints` passes its preflight (e.g. Ollama is not running): the
   * same model through another runtime, typically `kind: embedded` reading Ollama's model store.
   * The switch is logged and recorded (provider kind, model digest); it never changes the model.
   */
  fallback: z.array(llmEndpointSchema).min(1).optional(),
  /** Serve repeated requests from the store (a re-run makes no model call). */
  cache: z.boolean().default(true),
  prompt_check: promptCheckSchema.prefault({}),
});
export type LlmConfig = z.output<typeof llmConfigSchema>;

/** What the factory needs from the running stage. */
export interface LlmDeps {
  /** The store's key-value table: required for the response cache. */
  kv?: KeyValue;
  /** Where raw response bodies go. */
  blobs?: BlobStore;
  onEvent?: (event: TelebenchEvent) => void;
  /** Environment for API keys (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Folder relative model paths resolve against (the configuration file's folder; default cwd). */
  baseDir?: string;
  /** Where embedded endpoints keep downloaded models (`<state>/models`; default `./cache/models`). */
  modelsDir?: string;
}

/** The deps a stage passes: its kv, blobs, events, configuration folder and `<state>/models`. */
export function stageLlmDeps(ctx: {
  kv: KeyValue;
  blobs: BlobStore;
  configFile: string;
  stateDir: string;
  emit(event: TelebenchEvent): void;
}): LlmDeps {
  return {
    kv: ctx.kv,
    blobs: ctx.blobs,
    onEvent: (e) => ctx.emit(e),
    baseDir: dirname(ctx.configFile),
    modelsDir: join(ctx.stateDir, 'models'),
  };
}

function httpPolicy(e: HttpEndpointConfig): HttpPolicy {
  return {
    idleTimeoutMs: e.idle_timeout_ms,
    totalTimeoutMs: e.timeout_ms,
    retries: e.retries,
    minBackoffMs: e.min_backoff_ms,
    maxBackoffMs: e.max_backoff_ms,
    maxRetryAfterMs: e.max_retry_after_ms,
  };
}

/**
 * One endpoint's provider (no pool, no cache).
 * @param prompt the truncation policy shared by all endpoints
 */
export function createEndpointProvider(
  endpoint: LlmEndpointConfig,
  prompt: TruncationPolicy,
  deps: LlmDeps = {},
): OllamaProvider | OpenAiCompatibleProvider | EmbeddedProvider {
  if (endpoint.kind === 'embedded') {
    return new EmbeddedProvider({
      model: endpoint.model,
      sources: endpoint.source,
      baseDir: deps.baseDir ?? process.cwd(),
      modelsDir: deps.modelsDir ?? join(process.cwd(), 'cache', 'models'),
      contextSize: endpoint.context_size,
      sequences: endpoint.concurrency,
      threads: endpoint.threads,
      gpu: endpoint.gpu,
      chatTemplate: endpoint.chat_template,
      ...(endpoint.seed !== undefined ? { seed: endpoint.seed } : {}),
      ...(deps.blobs ? { blobs: deps.blobs } : {}),
      ...(deps.onEvent ? { onEvent: deps.onEvent } : {}),
      ...(deps.env ? { env: deps.env } : {}),
    });
  }
  const common = {
    baseUrl: endpoint.base_url,
    stream: endpoint.stream,
    http: httpPolicy(endpoint),
    truncation: prompt,
    ...(deps.blobs ? { blobs: deps.blobs } : {}),
    ...(deps.onEvent ? { onEvent: deps.onEvent } : {}),
  };
  if (endpoint.kind === 'ollama') {
    return new OllamaProvider({
      ...common,
      ...(endpoint.keep_alive !== undefined ? { keepAlive: endpoint.keep_alive } : {}),
    });
  }
  return new OpenAiCompatibleProvider({
    ...common,
    thinkParam: endpoint.think_param,
    ...(endpoint.context_length !== undefined ? { contextLength: endpoint.context_length } : {}),
    ...(endpoint.api_key_env !== undefined ? { apiKeyEnv: endpoint.api_key_env } : {}),
    ...(deps.env ? { env: deps.env } : {}),
  });
}

/**
 * Builds the provider a stage uses: every endpoint behind a pool (per-endpoint concurrency), and
 * the response cache in front when `cache` is on and `deps.kv` is given.
 * @param config a parsed {@link llmConfigSchema} value (or its input: it is parsed here)
 * @throws ZodError when `config` does not match the schema (validate through loadConfigFile first
 *   to get path-qualified messages)
 */
export function createProvider(
  config: z.input<typeof llmConfigSchema>,
  deps: LlmDeps = {},
): LlmProvider {
  const parsed = llmConfigSchema.parse(config);
  const prompt: TruncationPolicy = {
    marginRatio: parsed.prompt_check.margin_ratio,
    marginTokens: parsed.prompt_check.margin_tokens,
    slackTokens: parsed.prompt_check.limit_slack_tokens,
  };
  const poolOf = (endpoints: readonly LlmEndpointConfig[]) =>
    new LlmPool(
      endpoints.map((e) => ({
        provider: createEndpointProvider(e, prompt, deps),
        concurrency: e.concurrency,
      })),
    );
  const pool = poolOf(parsed.endpoints);
  const inner = parsed.fallback
    ? new FallbackProvider(pool, poolOf(parsed.fallback), deps.onEvent)
    : pool;
  return parsed.cache && deps.kv ? new CachedProvider(inner, deps.kv) : inner;
}

/**
 * Total concurrency of a provider ({@link LlmProvider.capacity}: a pool's is the sum of its
 * endpoints'; behind a fallback, the answering side's).
 */
export function providerCapacity(provider: LlmProvider): number {
  return provider.capacity();
}

/**
 * VRAM in use per Ollama endpoint of a provider ({@link LlmProvider.loadedModels}: `/api/ps`
 * `size_vram`, an allocation, not a peak). OpenAI-compatible and embedded endpoints are left out.
 * @throws TelebenchError as {@link OllamaProvider.psModels}
 */
export async function loadedModels(
  provider: LlmProvider,
  signal?: AbortSignal,
): Promise<EndpointModels[]> {
  return provider.loadedModels(signal);
}
