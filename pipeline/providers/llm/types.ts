/**
 * The narrow interface every model provider implements (Ollama native, OpenAI-compatible, the
 * embedded llama.cpp runtime, and the decorators over them: pool, fallback, cache). Modelled on
 * vercel/ai's LanguageModel specification: a small, versioned contract; errors carry their own
 * retryability; vendor settings travel in namespaced `providerOptions` that only their provider
 * reads, and what a provider did to a request (cut the prompt, shifted the window) comes back as
 * `warnings`. Benchmark rules (the TeleResilienceBench `paper` profile) are built by the stages
 * from these options (stages/resilience/request.ts), never named here.
 */
import type { EmbeddedRuntimeInfo } from './embedded-info.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * Ollama's own settings (provider option `ollama`; https://github.com/ollama/ollama/blob/main/docs/api.md).
 */
export interface OllamaChatOptions {
  /** Ask for a separate reasoning trace (`think`). */
  think?: boolean;
  /** Context window in tokens (`options.num_ctx`); also the window of the local prompt check. */
  numCtx?: number;
  /**
   * `shift`: when prompt plus output reach `numCtx`, let the server slide the window (it drops the
   * start of the prompt in the middle of the answer; reported as a `context-shifted` warning).
   * Default false: the answer stops with done reason `length` instead, which is flagged.
   */
  contextShift?: boolean;
  /**
   * `truncate`: a prompt longer than `numCtx` is cut by the server (reported as a
   * `prompt-truncated` warning) instead of being refused with `prompt_too_long`. Default false.
   */
  truncatePrompt?: boolean;
}

/** An OpenAI-compatible server's settings (provider option `openai`). */
export interface OpenAiChatOptions {
  /** Reasoning switch, sent only as the endpoint's `think_param` says (vLLM/SGLang `enable_thinking`). */
  think?: boolean;
  /** The window for the prompt check when the endpoint has no `context_length` (the server ignores it). */
  numCtx?: number;
}

/**
 * The embedded llama.cpp runtime's settings (provider option `embedded`, embedded.ts rules 2, 5, 9).
 * The same meanings as Ollama's: `contextShift` and `truncatePrompt` reproduce how Ollama's runner
 * shifts and cuts, token by token.
 */
export interface EmbeddedChatOptions {
  /** The chat template's reasoning switch (`enable_thinking` for Qwen3). */
  think?: boolean;
  /** Context window per sequence in tokens (default: the endpoint's context size). */
  numCtx?: number;
  contextShift?: boolean;
  truncatePrompt?: boolean;
}

/**
 * Vendor settings by provider (the vercel/ai `providerOptions` shape): each provider reads only its
 * own namespace, so a request meant for a pool or a fallback names each runtime it may reach.
 */
export interface ProviderOptions {
  ollama?: OllamaChatOptions;
  openai?: OpenAiChatOptions;
  embedded?: EmbeddedChatOptions;
}

/** Everything that can change a model's output. It is the response-cache key (no secrets in it). */
export interface ChatRequest {
  /** Model name as the server knows it (`qwen3.5:2b`). */
  model: string;
  messages: ChatMessage[];
  /** Output budget in tokens, thinking included (Ollama `num_predict`, OpenAI `max_tokens`). */
  maxTokens?: number;
  temperature?: number;
  seed?: number;
  topP?: number;
  providerOptions?: ProviderOptions;
}

/**
 * What a provider did to a request that changes how its answer can be read (vercel/ai `warnings`):
 * `prompt-truncated` the prompt reached the context window (cut by the runtime as
 * `truncatePrompt` allowed, or possibly cut silently by the server); `context-shifted` prompt plus
 * output went past the window with `contextShift` allowed (the start of the prompt was dropped
 * mid-answer).
 */
export interface ChatWarning {
  type: 'prompt-truncated' | 'context-shifted';
  message: string;
}

/** One model answer, normalised across servers. */
export interface ChatResult {
  /** Reasoning text: Ollama `message.thinking`, OpenAI `reasoning` / `reasoning_content`, or `<think>` content. '' when none. */
  thinking: string;
  /** Answer text without the reasoning. */
  content: string;
  /** Prompt tokens as the server counted them (Ollama `prompt_eval_count`); null when not reported. */
  promptTokens: number | null;
  /** Output tokens, thinking included (Ollama `eval_count`); null when not reported. */
  outputTokens: number | null;
  /** Server's stop reason: `stop`, `length`, ... */
  doneReason: string;
  /** What the provider did to the request (see {@link ChatWarning}); [] when nothing. */
  warnings: ChatWarning[];
  /** True when the output budget ran out (`done_reason` / `finish_reason` `length`). */
  budgetExhausted: boolean;
  /** Wall time of the request in milliseconds (0 for a cache hit). */
  latencyMs: number;
  /** Endpoint base URL that answered. */
  endpoint: string;
  /** True when served from the response cache. */
  cached: boolean;
  /**
   * The sampling seed the runtime used, when it is known: the embedded runtime always reports it
   * (the request's, else the endpoint's, else 0); the servers do not (absent).
   */
  seed?: number;
  /** sha256 of the raw response body stored in the blob store (when a blob store was given). */
  rawDigest?: string;
  /**
   * Local cl100k estimate of the prompt (tokens, chat overhead included, no safety margin): the
   * fallback evidence when the server omits `promptTokens` or lowers it for prompt-cache hits.
   */
  promptTokensLocal?: number;
}

/** What a preflight learns about the server and model. */
export interface ModelInfo {
  endpoint: string;
  serverVersion: string | null;
  modelDigest: string | null;
  /** The model's trained context length in tokens when the server tells it (Ollama `/api/show`). */
  contextLength?: number | null;
  /**
   * The embedded runtime's details (provider `embedded` only): runtime and llama.cpp versions,
   * device, threads, the resolved model file with its sha256 and origin, the chat template.
   */
  embedded?: EmbeddedRuntimeInfo;
}

export interface LlmProvider {
  readonly specificationVersion: 'v1';
  /** `ollama` | `openai-compatible` | ... */
  readonly provider: string;
  /**
   * The sampling seed this provider uses for a request that names none, when its endpoint sets
   * one in config (`seed` of an embedded endpoint); undefined otherwise. Part of the response
   * cache scope, so changing only the endpoint's seed never reuses answers sampled with another.
   */
  readonly defaultSeed?: number | undefined;
  /**
   * Checks the endpoint answers and serves `model`.
   * @throws PreflightError saying what to start or pull
   */
  preflight(model: string, signal?: AbortSignal): Promise<ModelInfo>;
  /**
   * One chat completion. Retries 408/409/429/5xx and malformed bodies with backoff honouring
   * `retry-after`.
   * @throws TelebenchError tier `rate-limit` | `transient` after the retries (an unparseable
   *   response body is `bad_response`, transient), `config` for 4xx that retrying cannot fix
   */
  chat(request: ChatRequest, options?: { signal?: AbortSignal }): Promise<ChatResult>;
  /** Requests this provider serves at once (a pool: the sum of its endpoints'; inspect_ai's `max_connections`). */
  capacity(): number;
  /**
   * Models loaded in memory per endpoint, with their VRAM (Ollama `/api/ps` `size_vram`, an
   * allocation, not a peak); endpoints that cannot tell are left out ([] for them).
   * @throws TelebenchError as the endpoint's HTTP client
   */
  loadedModels(signal?: AbortSignal): Promise<EndpointModels[]>;
}

/** One model loaded in a server's memory (Ollama `/api/ps`). Sizes in bytes. */
export interface LoadedModel {
  name: string;
  digest: string | null;
  size: number | null;
  sizeVram: number | null;
  contextLength: number | null;
}

/** The models an endpoint holds in memory. */
export interface EndpointModels {
  endpoint: string;
  models: LoadedModel[];
}

/** Whether `result` carries a warning of `type`. */
export function hasWarning(
  result: Pick<ChatResult, 'warnings'>,
  type: ChatWarning['type'],
): boolean {
  return result.warnings.some((w) => w.type === type);
}
