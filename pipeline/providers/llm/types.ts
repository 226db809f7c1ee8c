/**
 * The narrow interface every model provider implements (Ollama native, OpenAI-compatible, and the
 * scripted provider used by tests). Modelled on vercel/ai's LanguageModel specification: a small,
 * versioned contract; errors carry their own retryability.
 */
import type { EmbeddedRuntimeInfo } from './embedded.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Everything that can change a model's output. It is the response-cache key (no secrets in it). */
export interface ChatRequest {
  /** Model name as the server knows it (`qwen3.5:2b`). */
  model: string;
  messages: ChatMessage[];
  /** Ask for a separate reasoning trace (Ollama `think`; ignored where unsupported). */
  think?: boolean;
  /** Context window in tokens (Ollama `num_ctx`; OpenAI-compatible servers ignore it). */
  numCtx?: number;
  /** Output budget in tokens, thinking included (Ollama `num_predict`, OpenAI `max_tokens`). */
  maxTokens?: number;
  temperature?: number;
  seed?: number;
  topP?: number;
  /**
   * Ollama `shift`: when prompt plus output reach `numCtx`, let the server slide the window (it
   * drops the start of the prompt in the middle of the answer). Default false: the answer stops
   * with done reason `length` instead, which is flagged, never silent.
   */
  contextShift?: boolean;
  /**
   * The published run's behaviour (TeleResilienceBench `paper` profiles): a prompt longer than
   * `numCtx` is cut as Ollama cut it (truncation.ts {@link ollamaCut}) and flagged
   * `promptTruncated`, instead of being refused with `prompt_too_long`. Ollama: sent as
   * `truncate: true`; embedded: cut by the model's own token count; OpenAI-compatible servers
   * cannot cut, so they still refuse. Default false: never cut.
   */
  truncatePrompt?: boolean;
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
  /** True when the prompt reached the context limit (the server may have cut it silently). */
  promptTruncated: boolean;
  /** True when the output budget ran out (`done_reason` / `finish_reason` `length`). */
  budgetExhausted: boolean;
  /** Wall time of the request in milliseconds (0 for a cache hit). */
  latencyMs: number;
  /** Endpoint base URL that answered. */
  endpoint: string;
  /** True when served from the response cache. */
  cached: boolean;
  /** sha256 of the raw response body stored in the blob store (when a blob store was given). */
  rawDigest?: string;
  /**
   * Local cl100k estimate of the prompt (tokens, chat overhead included, no safety margin): the
   * fallback evidence when the server omits `promptTokens` or lowers it for prompt-cache hits.
   */
  promptTokensLocal?: number;
  /** True when `contextShift` was allowed and prompt plus output tokens went past `numCtx`. */
  contextShifted?: boolean;
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
}
