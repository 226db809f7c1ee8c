/**
 * OpenAI-compatible chat servers (vLLM, SGLang, LM Studio, llama.cpp server, Ollama `/v1`):
 * `POST /v1/chat/completions`, streamed as server-sent events (eventsource-parser) with
 * `stream_options.include_usage` so the token counts arrive in the last event. The reasoning comes
 * back as `message.reasoning` (Ollama `/v1`, recent vLLM), `message.reasoning_content` (older vLLM,
 * SGLang, DeepSeek) or `<think>...</think>` inside the content; all three are read, the two fields
 * through the one reader in reasoning.ts (an empty field never shadows a filled one).
 * These servers ignore `num_ctx`: the context window for the prompt check is the endpoint's
 * configured `contextLength`, else the request's `numCtx`.
 * The API key comes from `TELEBENCH_LLM_API_KEY` or `OPENAI_API_KEY` (pipeline/secrets.ts) and is
 * sent only as a header, never stored or hashed.
 */
import { z } from 'zod';
import { createParser } from 'eventsource-parser';
import { PreflightError, TelebenchError } from '../../errors.js';
import { secret, type SecretName } from '../../secrets.js';
import type { BlobStore } from '../../store/blobs.js';
import type { TelebenchEvent } from '../../events.js';
import type { ChatRequest, ChatResult, EndpointModels, LlmProvider, ModelInfo } from './types.js';
import { assembleResult } from './result.js';
import {
  DEFAULT_HTTP_POLICY,
  httpError,
  parseBody,
  sendRequest,
  withRetries,
  type HttpPolicy,
  type Sleep,
  type HttpResponse,
} from './http.js';
import { reasoningText } from './reasoning.js';
import {
  DEFAULT_TRUNCATION_POLICY,
  assertPromptFits,
  type TruncationPolicy,
} from './truncation.js';

/** Construction options of {@link OpenAiCompatibleProvider}. */
export interface OpenAiCompatibleOptions {
  /** Server root, with or without a trailing `/v1` (`http://127.0.0.1:8000`, `https://host/v1`). */
  baseUrl: string;
  /** Stream SSE (default true). */
  stream?: boolean;
  /** The server's context window in tokens, for the prompt check (these servers ignore num_ctx). */
  contextLength?: number;
  /**
   * How `think` is sent: `none` (not sent; the server's default), `chat_template_kwargs`
   * (`{"chat_template_kwargs": {"enable_thinking": think}}`, vLLM and SGLang with Qwen3-style templates).
   */
  thinkParam?: 'none' | 'chat_template_kwargs';
  /** Environment variable with the API key (default: TELEBENCH_LLM_API_KEY, then OPENAI_API_KEY). */
  apiKeyEnv?: SecretName;
  http?: Partial<HttpPolicy>;
  truncation?: Partial<TruncationPolicy>;
  blobs?: BlobStore;
  onEvent?: (event: TelebenchEvent) => void;
  /** How the retry loop waits for a `retry-after` (default: a real timer; tests record the delay). */
  sleep?: Sleep;
  /** Environment to read the key from (default process.env; tests pass their own). */
  env?: NodeJS.ProcessEnv;
}

const count = z.number().int().nonnegative().nullish();
const usageSchema = z.looseObject({ prompt_tokens: count, completion_tokens: count }).nullish();
const messageSchema = z.looseObject({
  content: z.string().nullish(),
  reasoning: z.string().nullish(),
  reasoning_content: z.string().nullish(),
});
const completionSchema = z.looseObject({
  choices: z
    .array(z.looseObject({ message: messageSchema, finish_reason: z.string().nullish() }))
    .min(1),
  usage: usageSchema,
});
const chunkSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        delta: messageSchema.nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: usageSchema,
  error: z.unknown().optional(),
});
const modelsSchema = z.looseObject({ data: z.array(z.looseObject({ id: z.string() })) });
const versionSchema = z.looseObject({ version: z.string() });
const tagsSchema = z.looseObject({
  models: z
    .array(
      z.looseObject({
        name: z.string(),
        model: z.string().optional(),
        digest: z.string().nullish(),
      }),
    )
    .nullish(),
});

interface Folded {
  thinking: string;
  content: string;
  promptTokens: number | null;
  outputTokens: number | null;
  doneReason: string;
}

/** The OpenAI-compatible provider. */
export class OpenAiCompatibleProvider implements LlmProvider {
  readonly specificationVersion = 'v1' as const;
  readonly provider = 'openai-compatible';
  readonly endpoint: string;
  private readonly root: string;
  private readonly http: HttpPolicy;
  private readonly truncation: TruncationPolicy;
  private readonly stream: boolean;

  /** @param options see {@link OpenAiCompatibleOptions}; nothing is contacted until a call */
  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.endpoint = options.baseUrl.replace(/\/+$/, '');
    this.root = this.endpoint.replace(/\/v1$/, '');
    this.http = { ...DEFAULT_HTTP_POLICY, ...options.http };
    this.truncation = { ...DEFAULT_TRUNCATION_POLICY, ...options.truncation };
    this.stream = options.stream ?? true;
  }

  private get service(): string {
    return `openai-compatible ${this.endpoint}`;
  }

  private headers(): Record<string, string> {
    const env = this.options.env ?? process.env;
    const key = this.options.apiKeyEnv
      ? secret(this.options.apiKeyEnv, env)
      : (secret('TELEBENCH_LLM_API_KEY', env) ?? secret('OPENAI_API_KEY', env));
    return {
      'content-type': 'application/json',
      ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}),
    };
  }

  /**
   * Checks that the server answers `/v1/models` and lists `model`; reads the server version from
   * `/version` (vLLM) or `/api/version` (Ollama) when one of them answers, else null. For Ollama
   * behind `/v1` it also reads the model digest, and requires `contextLength` (those routes ignore
   * num_ctx, so the server's default window would cut long prompts silently).
   * @throws PreflightError saying what to start, which key to set, which model to serve, or to
   *   configure an Ollama `/v1` endpoint as `kind: ollama` or with `context_length`
   */
  async preflight(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    const startHint = `start the OpenAI-compatible server (\`vllm serve ${model}\`, SGLang, LM Studio or \`ollama serve\`) at ${this.endpoint} or set base_url of this endpoint in the llm configuration`;
    let res: HttpResponse;
    try {
      res = await sendRequest(
        `${this.root}/v1/models`,
        { method: 'GET', headers: this.headers() },
        this.http,
        this.endpoint,
        { signal },
      );
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new PreflightError(
        this.service,
        // the HTTP error starts with the endpoint already
        `the OpenAI-compatible server is not reachable at ${this.endpoint}: ${(err as Error).message.replace(`${this.endpoint}: `, '')}`,
        startHint,
        err,
      );
    }
    if (res.status === 401 || res.status === 403) {
      throw new PreflightError(
        this.service,
        `${this.endpoint} refused the API key (HTTP ${res.status})`,
        'set TELEBENCH_LLM_API_KEY (or OPENAI_API_KEY) to a key this server accepts',
      );
    }
    let ids: string[];
    try {
      if (res.status !== 200) throw httpError(res, this.endpoint, '/v1/models');
      ids = parseBody(res.body, modelsSchema, this.endpoint, '/v1/models').data.map((m) => m.id);
    } catch (err) {
      throw new PreflightError(
        this.service,
        `${this.endpoint} does not answer like an OpenAI-compatible server: ${(err as Error).message}`,
        startHint,
        err,
      );
    }
    if (!ids.includes(model)) {
      throw new PreflightError(
        this.service,
        `model "${model}" is not served at ${this.endpoint} (it serves: ${ids.join(', ') || 'nothing'})`,
        `serve model "${model}" there (vLLM: \`vllm serve ${model}\`; Ollama: run \`ollama pull ${model}\`)`,
      );
    }
    const server = await this.serverVersion(signal);
    if (server.ollama && this.options.contextLength === undefined) {
      throw new PreflightError(
        this.service,
        `${this.endpoint} is Ollama ${server.version} behind its OpenAI-compatible /v1 routes, which ignore num_ctx: ` +
          'prompts longer than the server default context would be cut silently',
        `use \`kind: ollama\` for this endpoint, or set \`context_length\` to the server's OLLAMA_CONTEXT_LENGTH`,
      );
    }
    return {
      endpoint: this.endpoint,
      serverVersion: server.version,
      modelDigest: server.ollama ? await this.ollamaDigest(model, signal) : null,
    };
  }

  /** vLLM answers `/version`, Ollama `/api/version`; other servers neither (version null). */
  private async serverVersion(
    signal?: AbortSignal,
  ): Promise<{ version: string | null; ollama: boolean }> {
    for (const path of ['/version', '/api/version']) {
      const res = await sendRequest(
        `${this.root}${path}`,
        { method: 'GET', headers: this.headers() },
        this.http,
        this.endpoint,
        { signal },
      );
      if (res.status !== 200) continue;
      const parsed = versionSchema.safeParse(safeJson(res.body));
      if (parsed.success) return { version: parsed.data.version, ollama: path === '/api/version' };
    }
    return { version: null, ollama: false };
  }

  /** The model digest from Ollama's `/api/tags` (null when not listed there). */
  private async ollamaDigest(model: string, signal?: AbortSignal): Promise<string | null> {
    const res = await sendRequest(
      `${this.root}/api/tags`,
      { method: 'GET', headers: this.headers() },
      this.http,
      this.endpoint,
      { signal },
    );
    if (res.status !== 200) throw httpError(res, this.endpoint, '/api/tags');
    const tags = parseBody(res.body, tagsSchema, this.endpoint, '/api/tags');
    return tags.models?.find((m) => m.name === model || m.model === model)?.digest ?? null;
  }

  /**
   * One chat completion (see {@link LlmProvider.chat}).
   * @throws TelebenchError `prompt_too_long` (content) before sending, or when the server answers
   *   400 about its maximum context length; `bad_response` (transient: retried, then thrown);
   *   `model_not_found`,
   *   `llm_unauthorized` (config); `llm_rate_limited` / `llm_server_error` / `llm_timeout` /
   *   `llm_unreachable` after the retries
   */
  async chat(request: ChatRequest, options: { signal?: AbortSignal } = {}): Promise<ChatResult> {
    const own = request.providerOptions?.openai ?? {};
    const window = this.options.contextLength ?? own.numCtx;
    const where = { endpoint: this.endpoint, model: request.model };
    const promptTokensLocal = assertPromptFits(request.messages, window, this.truncation, where);
    const body = JSON.stringify(this.requestBody(request));
    const path = '/v1/chat/completions';
    return withRetries(
      async () => {
        const started = performance.now();
        const res = await sendRequest(
          `${this.root}${path}`,
          { method: 'POST', headers: this.headers(), body },
          this.http,
          this.endpoint,
          { signal: options.signal },
        );
        if (res.status === 400 && /context length|context window|too many tokens/i.test(res.body)) {
          throw new TelebenchError(
            'prompt_too_long',
            `${this.endpoint}: ${path} refused the prompt as too long: ${httpError(res, this.endpoint, path).message}`,
            { tier: 'content', context: { ...where, estimate: promptTokensLocal, status: 400 } },
          );
        }
        if (res.status !== 200) throw httpError(res, this.endpoint, path, request.model);
        const folded = (res.headers.get('content-type') ?? '').includes('text/event-stream')
          ? this.foldStream(res.body)
          : this.foldCompletion(res.body);
        return assembleResult({
          parsed: folded,
          started,
          endpoint: this.endpoint,
          maxTokens: request.maxTokens,
          window,
          policy: this.truncation,
          promptTokensLocal,
          blobs: this.options.blobs,
          rawBody: res.body,
        });
      },
      this.http,
      this.service,
      { signal: options.signal, onEvent: this.options.onEvent, sleep: this.options.sleep },
    );
  }

  /** The endpoint's own concurrency is the pool's business: one request at a time here. */
  capacity(): number {
    return 1;
  }

  /** OpenAI-compatible servers do not report loaded models: none. */
  async loadedModels(): Promise<EndpointModels[]> {
    return [];
  }

  private requestBody(request: ChatRequest): Record<string, unknown> {
    return {
      model: request.model,
      messages: request.messages,
      stream: this.stream,
      ...(this.stream ? { stream_options: { include_usage: true } } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(request.topP !== undefined ? { top_p: request.topP } : {}),
      ...(this.options.thinkParam === 'chat_template_kwargs' &&
      request.providerOptions?.openai?.think !== undefined
        ? { chat_template_kwargs: { enable_thinking: request.providerOptions.openai.think } }
        : {}),
    };
  }

  private foldCompletion(body: string): Folded {
    const parsed = parseBody(body, completionSchema, this.endpoint, '/v1/chat/completions');
    const choice = parsed.choices[0]!;
    return {
      thinking: reasoningText(choice.message),
      content: choice.message.content ?? '',
      promptTokens: parsed.usage?.prompt_tokens ?? null,
      outputTokens: parsed.usage?.completion_tokens ?? null,
      doneReason: choice.finish_reason ?? '',
    };
  }

  private foldStream(body: string): Folded {
    const path = '/v1/chat/completions';
    const out: Folded = {
      thinking: '',
      content: '',
      promptTokens: null,
      outputTokens: null,
      doneReason: '',
    };
    let sawDone = false;
    let events = 0;
    const parser = createParser({
      onEvent: (event) => {
        if (event.data === '[DONE]') {
          sawDone = true;
          return;
        }
        events++;
        const chunk = parseBody(
          event.data,
          chunkSchema,
          this.endpoint,
          `${path} (event ${events})`,
        );
        if (chunk.error !== undefined) {
          const message =
            typeof chunk.error === 'string' ? chunk.error : JSON.stringify(chunk.error);
          throw new TelebenchError(
            'llm_server_error',
            `${this.endpoint}: ${path} reported an error in event ${events}: ${message}`,
            { tier: 'transient', context: { endpoint: this.endpoint, path, event: events } },
          );
        }
        const choice = chunk.choices?.[0];
        if (choice?.delta) {
          out.thinking += reasoningText(choice.delta);
          out.content += choice.delta.content ?? '';
        }
        if (choice?.finish_reason) out.doneReason = choice.finish_reason;
        if (chunk.usage) {
          out.promptTokens = chunk.usage.prompt_tokens ?? null;
          out.outputTokens = chunk.usage.completion_tokens ?? null;
        }
      },
    });
    parser.feed(body);
    if (!sawDone && out.doneReason === '') {
      throw new TelebenchError(
        'llm_stream_incomplete',
        `${this.endpoint}: ${path} stream ended after ${events} events without a finish_reason or [DONE]`,
        { tier: 'transient', context: { endpoint: this.endpoint, path, events } },
      );
    }
    if (events === 0) {
      throw new TelebenchError(
        'bad_response',
        `${this.endpoint}: ${path} returned an empty event stream`,
        {
          tier: 'transient',
          context: { endpoint: this.endpoint, path },
        },
      );
    }
    return out;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    return { notJson: String(err) };
  }
}
