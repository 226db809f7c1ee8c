/**
 * Ollama's native API (https://github.com/ollama/ollama/blob/main/docs/api.md): `POST /api/chat`
 * with `think` and the options `num_ctx`, `num_predict`, `temperature`, `seed`, `top_p`; streamed
 * as NDJSON by default (an idle timeout instead of a total one, so a slow CPU server that keeps
 * producing tokens is never cut). Preflight uses `/api/version`, `/api/tags` (the model digest) and
 * `/api/show` (the model's trained context length); `/api/ps` reports `size_vram` (an allocation,
 * not a peak) for VRAM reporting.
 */
import { z } from 'zod';
import { PreflightError, TelebenchError } from '../../errors.js';
import type { BlobStore } from '../../store/blobs.js';
import type { TelebenchEvent } from '../../events.js';
import type {
  ChatRequest,
  ChatResult,
  EndpointModels,
  LlmProvider,
  LoadedModel,
  ModelInfo,
} from './types.js';
import { assembleResult } from './result.js';
import {
  DEFAULT_HTTP_POLICY,
  errorMessageOf,
  httpError,
  parseBody,
  sendRequest,
  withRetries,
  type HttpPolicy,
  type Sleep,
  type HttpResponse,
} from './http.js';
import {
  DEFAULT_TRUNCATION_POLICY,
  assertPromptFits,
  estimatePromptTokens,
  requiredContext,
  type TruncationPolicy,
} from './truncation.js';

/** Construction options of {@link OllamaProvider}. */
export interface OllamaOptions {
  /** Server root, e.g. `http://127.0.0.1:11434` (a trailing `/` is ignored). */
  baseUrl: string;
  /** Stream NDJSON (default true). */
  stream?: boolean;
  http?: Partial<HttpPolicy>;
  truncation?: Partial<TruncationPolicy>;
  /** Ollama `keep_alive` (e.g. `30m`); not part of the cache key (it cannot change the output). */
  keepAlive?: string;
  /** When given, every raw response body is stored here and its digest is `rawDigest`. */
  blobs?: BlobStore;
  onEvent?: (event: TelebenchEvent) => void;
  /** How the retry loop waits for a `retry-after` (default: a real timer; tests record the delay). */
  sleep?: Sleep;
}

/** One model loaded in Ollama's memory (`/api/ps`). Sizes in bytes. */
export type OllamaLoadedModel = LoadedModel;

const nullableCount = z
  .number()
  .int()
  .nonnegative()
  .nullish()
  .transform((v) => v ?? null);

const chatChunkSchema = z.looseObject({
  model: z.string().optional(),
  message: z
    .looseObject({
      role: z.string().optional(),
      content: z.string().nullish(),
      thinking: z.string().nullish(),
    })
    .optional(),
  done: z.boolean().optional(),
  done_reason: z.string().nullish(),
  prompt_eval_count: nullableCount,
  eval_count: nullableCount,
  error: z.string().optional(),
});

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
const psSchema = z.looseObject({
  models: z
    .array(
      z.looseObject({
        name: z.string(),
        digest: z.string().nullish(),
        size: z.number().nullish(),
        size_vram: z.number().nullish(),
        context_length: z.number().nullish(),
      }),
    )
    .nullish(),
});
const showSchema = z.looseObject({ model_info: z.record(z.string(), z.unknown()).nullish() });

/**
 * Ollama's refusals of a prompt that does not fit: `truncate: false` gives
 * `exceed_context_size_error` ("request (N tokens) exceeds the available context size (M tokens)"),
 * `shift: false` gives "the prompt is longer than the context length".
 */
const CONTEXT_OVERFLOW =
  /exceed_context_size_error|exceeds the available context size|prompt is longer than the context length|input length exceeds the context length/i;

/** The `prompt_too_long` error for an Ollama context refusal, with the server's counts when given. */
function contextOverflow(
  body: string,
  endpoint: string,
  request: ChatRequest,
  estimate: number,
): TelebenchError {
  const tokens =
    /n_prompt_tokens\\?"?\s*:\s*(\d+)/.exec(body) ?? /request \((\d+) tokens\)/.exec(body);
  const serverPromptTokens = tokens ? Number(tokens[1]) : null;
  return new TelebenchError(
    'prompt_too_long',
    `${endpoint}: /api/chat refused the prompt for ${request.model} as longer than num_ctx ${request.providerOptions?.ollama?.numCtx ?? '(server default)'}` +
      `${serverPromptTokens !== null ? ` (${serverPromptTokens} tokens by the model's tokenizer` : ` (server gave no count`}, ${estimate} by the cl100k estimate): ` +
      `not scored; raise num_ctx. Server said: ${errorMessageOf(body).slice(0, 300)}`,
    {
      tier: 'content',
      context: {
        endpoint,
        model: request.model,
        numCtx: request.providerOptions?.ollama?.numCtx ?? null,
        estimate,
        serverPromptTokens,
        status: 400,
      },
    },
  );
}

/** Same model name under Ollama's `:latest` default tag rule. */
export function sameOllamaModel(a: string, b: string): boolean {
  const norm = (s: string) => (s.includes(':') ? s : `${s}:latest`);
  return norm(a) === norm(b);
}

/** The Ollama native provider. */
export class OllamaProvider implements LlmProvider {
  readonly specificationVersion = 'v1' as const;
  readonly provider = 'ollama';
  readonly endpoint: string;
  private readonly http: HttpPolicy;
  private readonly truncation: TruncationPolicy;
  private readonly stream: boolean;

  /** @param options see {@link OllamaOptions}; nothing is contacted until a call */
  constructor(private readonly options: OllamaOptions) {
    this.endpoint = options.baseUrl.replace(/\/+$/, '');
    this.http = { ...DEFAULT_HTTP_POLICY, ...options.http };
    this.truncation = { ...DEFAULT_TRUNCATION_POLICY, ...options.truncation };
    this.stream = options.stream ?? true;
  }

  private get service(): string {
    return `ollama ${this.endpoint}`;
  }

  private async get(path: string, signal?: AbortSignal): Promise<HttpResponse> {
    return sendRequest(`${this.endpoint}${path}`, { method: 'GET' }, this.http, this.endpoint, {
      signal,
    });
  }

  /**
   * Checks that Ollama answers and has `model`; learns its version, the model digest and the
   * model's trained context length.
   * @throws PreflightError "start Ollama (`ollama serve`) at <url> ..." when unreachable or not
   *   Ollama; "run `ollama pull <model>`" when the model is missing
   */
  async preflight(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    const startHint = `start Ollama (\`ollama serve\`) at ${this.endpoint} or set base_url of this endpoint in the llm configuration`;
    let version: HttpResponse;
    try {
      version = await this.get('/api/version', signal);
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new PreflightError(
        this.service,
        // the HTTP error starts with the endpoint already
        `Ollama is not reachable at ${this.endpoint}: ${(err as Error).message.replace(`${this.endpoint}: `, '')}`,
        startHint,
        err,
      );
    }
    let serverVersion: string;
    try {
      if (version.status !== 200) throw httpError(version, this.endpoint, '/api/version');
      serverVersion = parseBody(version.body, versionSchema, this.endpoint, '/api/version').version;
    } catch (err) {
      throw new PreflightError(
        this.service,
        `${this.endpoint} does not answer like Ollama: ${(err as Error).message}`,
        startHint,
        err,
      );
    }
    const tags = await this.get('/api/tags', signal);
    if (tags.status !== 200) {
      const e = httpError(tags, this.endpoint, '/api/tags');
      throw new PreflightError(this.service, e.message, startHint, e);
    }
    const list = parseBody(tags.body, tagsSchema, this.endpoint, '/api/tags').models ?? [];
    const found = list.find(
      (m) => sameOllamaModel(m.name, model) || sameOllamaModel(m.model ?? '', model),
    );
    if (!found) {
      throw new PreflightError(
        this.service,
        `model "${model}" is not available at ${this.endpoint} (it has: ${list.map((m) => m.name).join(', ') || 'no models'})`,
        `run \`ollama pull ${model}\``,
      );
    }
    const show = await sendRequest(
      `${this.endpoint}/api/show`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model }),
      },
      this.http,
      this.endpoint,
      { signal },
    );
    if (show.status !== 200) {
      const e = httpError(show, this.endpoint, '/api/show', model);
      throw new PreflightError(this.service, e.message, `run \`ollama pull ${model}\``, e);
    }
    const info = parseBody(show.body, showSchema, this.endpoint, '/api/show').model_info ?? {};
    const ctxKey = Object.keys(info).find((k) => k.endsWith('.context_length'));
    const ctx = ctxKey === undefined ? null : info[ctxKey];
    return {
      endpoint: this.endpoint,
      serverVersion,
      modelDigest: found.digest ?? null,
      contextLength: typeof ctx === 'number' ? ctx : null,
    };
  }

  /**
   * Models loaded in memory now (`/api/ps`), with `size_vram` for VRAM reporting.
   * @throws TelebenchError as {@link sendRequest}, `bad_response` for an unexpected body
   */
  async loadedModels(signal?: AbortSignal): Promise<EndpointModels[]> {
    return [{ endpoint: this.endpoint, models: await this.psModels(signal) }];
  }

  /** One request at a time here (the pool holds the endpoint's concurrency). */
  capacity(): number {
    return 1;
  }

  /**
   * Models loaded in memory now (`/api/ps`), with `size_vram`.
   * @throws TelebenchError as {@link sendRequest}, `bad_response` for an unexpected body
   */
  async psModels(signal?: AbortSignal): Promise<OllamaLoadedModel[]> {
    const res = await this.get('/api/ps', signal);
    if (res.status !== 200) throw httpError(res, this.endpoint, '/api/ps');
    return (parseBody(res.body, psSchema, this.endpoint, '/api/ps').models ?? []).map((m) => ({
      name: m.name,
      digest: m.digest ?? null,
      size: m.size ?? null,
      sizeVram: m.size_vram ?? null,
      contextLength: m.context_length ?? null,
    }));
  }

  /**
   * One chat completion through `/api/chat` (see {@link LlmProvider.chat}).
   * @throws TelebenchError `prompt_too_long` (content) before sending when the prompt cannot fit
   *   `numCtx`; `bad_response` (transient: retried, then thrown) for a body that is not Ollama's; `model_not_found`
   *   (config); `llm_rate_limited` / `llm_server_error` / `llm_timeout` / `llm_unreachable` after
   *   the retries
   */
  async chat(request: ChatRequest, options: { signal?: AbortSignal } = {}): Promise<ChatResult> {
    const own = request.providerOptions?.ollama ?? {};
    // truncatePrompt: sent as it is, Ollama cuts it, the answer carries a prompt-truncated warning.
    const promptTokensLocal = own.truncatePrompt
      ? estimatePromptTokens(request.messages)
      : assertPromptFits(request.messages, own.numCtx, this.truncation, {
          endpoint: this.endpoint,
          model: request.model,
        });
    const cutLocally =
      own.truncatePrompt === true &&
      own.numCtx !== undefined &&
      requiredContext(promptTokensLocal, this.truncation) >= own.numCtx;
    const body = JSON.stringify(this.requestBody(request));
    return withRetries(
      async () => {
        const started = performance.now();
        const res = await sendRequest(
          `${this.endpoint}/api/chat`,
          { method: 'POST', headers: { 'content-type': 'application/json' }, body },
          this.http,
          this.endpoint,
          { signal: options.signal },
        );
        if (res.status === 400 && CONTEXT_OVERFLOW.test(res.body)) {
          throw contextOverflow(res.body, this.endpoint, request, promptTokensLocal);
        }
        if (res.status !== 200) throw httpError(res, this.endpoint, '/api/chat', request.model);
        return assembleResult({
          parsed: this.parseChat(res.body),
          started,
          endpoint: this.endpoint,
          maxTokens: request.maxTokens,
          window: own.numCtx,
          policy: this.truncation,
          cutLocally,
          contextShift: own.contextShift === true,
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

  private requestBody(request: ChatRequest): Record<string, unknown> {
    const own = request.providerOptions?.ollama ?? {};
    const opts: Record<string, number> = {};
    if (own.numCtx !== undefined) opts.num_ctx = own.numCtx;
    if (request.maxTokens !== undefined) opts.num_predict = request.maxTokens;
    if (request.temperature !== undefined) opts.temperature = request.temperature;
    if (request.seed !== undefined) opts.seed = request.seed;
    if (request.topP !== undefined) opts.top_p = request.topP;
    return {
      model: request.model,
      messages: request.messages,
      stream: this.stream,
      ...(own.think !== undefined ? { think: own.think } : {}),
      // Never cut a prompt silently: Ollama answers 400 instead (versions without these fields
      // ignore them, and the prompt_eval_count check catches their truncation). truncatePrompt
      // (paper profiles) lets Ollama cut, and the result is flagged promptTruncated.
      truncate: own.truncatePrompt === true,
      shift: own.contextShift ?? false,
      ...(this.options.keepAlive !== undefined ? { keep_alive: this.options.keepAlive } : {}),
      options: opts,
    };
  }

  /** Folds a streamed NDJSON body (or one JSON object) into text, counts and done reason. */
  private parseChat(body: string): {
    thinking: string;
    content: string;
    promptTokens: number | null;
    outputTokens: number | null;
    doneReason: string;
  } {
    const lines = body.split('\n').filter((l) => l.trim() !== '');
    if (lines.length === 0) {
      throw new TelebenchError(
        'bad_response',
        `${this.endpoint}: /api/chat returned an empty body`,
        {
          tier: 'transient',
          context: { endpoint: this.endpoint, path: '/api/chat' },
        },
      );
    }
    let thinking = '';
    let content = '';
    let last: z.output<typeof chatChunkSchema> | undefined;
    for (const [i, line] of lines.entries()) {
      const chunk = parseBody(line, chatChunkSchema, this.endpoint, `/api/chat (line ${i + 1})`);
      if (chunk.error !== undefined) {
        throw new TelebenchError(
          'llm_server_error',
          `${this.endpoint}: /api/chat reported an error after ${i} chunks: ${chunk.error}`,
          {
            tier: 'transient',
            context: { endpoint: this.endpoint, path: '/api/chat', line: i + 1 },
          },
        );
      }
      thinking += chunk.message?.thinking ?? '';
      content += chunk.message?.content ?? '';
      last = chunk;
    }
    if (!last?.done) {
      throw new TelebenchError(
        'llm_stream_incomplete',
        `${this.endpoint}: /api/chat ended after ${lines.length} chunks without a final "done": true chunk`,
        {
          tier: 'transient',
          context: { endpoint: this.endpoint, path: '/api/chat', chunks: lines.length },
        },
      );
    }
    return {
      thinking,
      content,
      promptTokens: last.prompt_eval_count,
      outputTokens: last.eval_count,
      doneReason: last.done_reason ?? '',
    };
  }
}
