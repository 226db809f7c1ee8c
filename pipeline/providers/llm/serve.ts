/**
 * `telebench serve-model`: the embedded runtime behind an OpenAI-compatible HTTP endpoint (issue
 * 12), so other tools and other machines' pipelines (`kind: openai-compatible`) use the same model.
 * node:http (why: four routes need no framework), listening where it is told (127.0.0.1 by
 * default). Routes, in the shapes OpenAI's API and vLLM use:
 *
 * - `GET /v1/models`: `{object: 'list', data: [{id, object: 'model', created, owned_by}]}`.
 * - `GET /version`: `{version}` (vLLM's route; the OpenAI-compatible provider records it as the
 *   server version): `telebench-serve-model <runtime> <model digest>`.
 * - `POST /v1/chat/completions`: `model`, `messages` (string contents), `max_tokens` /
 *   `max_completion_tokens`, `temperature`, `top_p`, `seed`, `chat_template_kwargs.enable_thinking`
 *   (vLLM's switch, mapped to `think`), `stream`, `stream_options.include_usage`. The answer has
 *   `message.content`, `message.reasoning_content` (when the model thought), `finish_reason`
 *   (`stop` | `length`) and exact `usage`; with `stream: true` the same as SSE `chat.completion.chunk`
 *   events with deltas as llama.cpp produces them, then `data: [DONE]`.
 * - `POST /v1/responses`: OpenAI's Responses API, the default of Inspect AI's `openai/` provider
 *   (serve-responses.ts): the same model call, `input` items in, `output` items out.
 *
 * Errors are OpenAI-shaped `{error: {message, type, code}}`: a prompt over the context is 400
 * `context_length_exceeded` ("... context length ..."), another model 404 `model_not_found`, a bad
 * body 400, anything else 500. The window is the endpoint's context size (clients cannot ask for
 * another, as with vLLM's `--max-model-len`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { EmbeddedProvider } from './embedded.js';
import type { ChatRequest, ChatResult, ModelInfo } from './types.js';
import {
  asHttpFailure,
  clientGone,
  HttpFailure,
  readJsonBody,
  sendJson,
  startSse,
  stoppedByLength,
} from './serve-http.js';
import { serveResponses } from './serve-responses.js';

/** Options of {@link startModelServer}. */
export interface ModelServerOptions {
  provider: EmbeddedProvider;
  /** The model name served (the provider's). */
  model: string;
  /** Context window per request in tokens (the provider's context size). */
  contextSize: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
}

/** A running server. */
export interface ModelServer {
  /** `http://host:port/v1`. */
  readonly url: string;
  readonly info: ModelInfo;
  close(): Promise<void>;
}

const bodySchema = z.looseObject({
  model: z.string().min(1),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['system', 'user', 'assistant']),
        content: z.string(),
      }),
    )
    .min(1),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  chat_template_kwargs: z.looseObject({ enable_thinking: z.boolean().nullish() }).nullish(),
});

/** OpenAI's `finish_reason` of an answer: `length` when the budget or window stopped it. */
const finishReason = (r: ChatResult): 'length' | 'stop' => (stoppedByLength(r) ? 'length' : 'stop');

/** OpenAI's `usage` of an answer (exact token counts of the embedded runtime). */
const usage = (r: ChatResult) => ({
  prompt_tokens: r.promptTokens,
  completion_tokens: r.outputTokens,
  total_tokens: (r.promptTokens ?? 0) + (r.outputTokens ?? 0),
});

/**
 * Loads the model (the provider's preflight) and starts serving.
 * @returns the server's `/v1` URL, the model info and `close`
 * @throws PreflightError when the model cannot be found or loaded; the listen error when the port
 *   is taken
 */
export async function startModelServer(o: ModelServerOptions): Promise<ModelServer> {
  const info = await o.provider.preflight(o.model);
  const created = Math.floor(Date.now() / 1000);
  const version =
    `telebench-serve-model ${info.serverVersion ?? ''} ${info.modelDigest ?? ''}`.trim();

  async function completions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = bodySchema.safeParse(await readJsonBody(req));
    if (!parsed.success) {
      throw new HttpFailure(400, parsed.error.message, 'invalid_request_error', 'bad_request');
    }
    const b = parsed.data;
    const maxTokens = b.max_completion_tokens ?? b.max_tokens;
    const think = b.chat_template_kwargs?.enable_thinking;
    const request: ChatRequest = {
      model: b.model,
      messages: b.messages.map((m) => ({ role: m.role, content: m.content })),
      ...(maxTokens != null ? { maxTokens } : {}),
      ...(b.temperature != null ? { temperature: b.temperature } : {}),
      ...(b.top_p != null ? { topP: b.top_p } : {}),
      ...(b.seed != null ? { seed: b.seed } : {}),
      providerOptions: {
        embedded: { numCtx: o.contextSize, ...(think != null ? { think } : {}) },
      },
    };
    const id = `chatcmpl-${randomUUID()}`;
    const signal = clientGone(res);
    if (!b.stream) {
      const r = await o.provider.chat(request, { signal });
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: o.model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: r.content,
              ...(r.thinking !== '' ? { reasoning_content: r.thinking } : {}),
            },
            finish_reason: finishReason(r),
          },
        ],
        usage: usage(r),
      });
      return;
    }
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: o.model, choices, ...extra })}\n\n`;
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      startSse(res);
      res.write(
        chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      );
    };
    let r;
    try {
      r = await o.provider.chat(request, {
        signal,
        onDelta: (d) => {
          start();
          const delta =
            d.thinking !== undefined ? { reasoning_content: d.thinking } : { content: d.content };
          res.write(chunk([{ index: 0, delta, finish_reason: null }]));
        },
      });
    } catch (err) {
      if (!started) throw err;
      res.write(`data: ${JSON.stringify(asHttpFailure(err).body())}\n\n`);
      res.end();
      return;
    }
    start();
    res.write(chunk([{ index: 0, delta: {}, finish_reason: finishReason(r) }]));
    if (b.stream_options?.include_usage) {
      res.write(chunk([], { usage: usage(r) }));
    }
    res.end('data: [DONE]\n\n');
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const handle = async () => {
      if (req.method === 'GET' && path === '/v1/models') {
        sendJson(res, 200, {
          object: 'list',
          data: [{ id: o.model, object: 'model', created, owned_by: 'telebench' }],
        });
      } else if (req.method === 'GET' && path === '/version') {
        sendJson(res, 200, { version });
      } else if (req.method === 'POST' && path === '/v1/chat/completions') {
        await completions(req, res);
      } else if (req.method === 'POST' && path === '/v1/responses') {
        await serveResponses(req, res, {
          provider: o.provider,
          model: o.model,
          contextSize: o.contextSize,
        });
      } else {
        throw new HttpFailure(
          404,
          `no route ${req.method} ${path}`,
          'invalid_request_error',
          'not_found',
        );
      }
    };
    handle().catch((err: unknown) => {
      const f = asHttpFailure(err);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendJson(res, f.status, f.body());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}/v1`,
    info,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
