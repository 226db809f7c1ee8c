/**
 * `POST /v1/responses` of `telebench serve-model`: OpenAI's Responses API over the embedded
 * runtime, the API Inspect AI's `openai/<model>` provider calls by default (so `inspect eval
 * --model openai/smollm2:135m` with `OPENAI_BASE_URL` at this server works without
 * `-M responses_api=false`).
 *
 * Request (the fields a text generation uses; others, such as `store`, `include`, `reasoning` or
 * `text`, are accepted and ignored): `model`, `input` (a string, or message items
 * `{type?: 'message', role: user|system|developer|assistant, content: string | [{type:
 * input_text|output_text|text, text}]}`; `developer` is a system message), `instructions` (a
 * system message first), `max_output_tokens`, `temperature`, `top_p`, `stream`. Another item type
 * (a tool call, an image) is refused with 400 naming it: the embedded runtime generates text only.
 *
 * Answer: a `response` object with `status` `completed`, or `incomplete` with
 * `incomplete_details.reason` `max_output_tokens` when the budget or window stopped it; `output`
 * holds a `reasoning` item (`content: [{type: 'reasoning_text'}]`) when the model thought and one
 * assistant `message` with an `output_text` part; `usage` has the exact token counts. With
 * `stream: true`: SSE events `response.created`, `response.in_progress`, the output item and part
 * added, `response.reasoning_text.delta` / `response.output_text.delta` as llama.cpp produces
 * them, `response.output_text.done`, the part and item done, then `response.completed` (or
 * `response.incomplete`) carrying the whole response, as OpenAI's API streams them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { EmbeddedProvider } from './embedded.js';
import type { ChatMessage, ChatRequest, ChatResult } from './types.js';
import {
  asHttpFailure,
  clientGone,
  HttpFailure,
  readJsonBody,
  sendJson,
  startSse,
  stoppedByLength,
} from './serve-http.js';

/** What the route needs of the server: the provider, the model it serves, its window. */
export interface ResponsesRouteOptions {
  provider: EmbeddedProvider;
  model: string;
  contextSize: number;
}

const part = z.looseObject({ type: z.string(), text: z.string().optional() });
const item = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content: z.union([z.string(), z.array(part)]).optional(),
});
const bodySchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(item).min(1)]),
  instructions: z.string().nullish(),
  max_output_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stream: z.boolean().nullish(),
});
type Body = z.output<typeof bodySchema>;

const refuse = (message: string): HttpFailure =>
  new HttpFailure(400, message, 'invalid_request_error', 'bad_request');

const ROLES: Record<string, ChatMessage['role']> = {
  user: 'user',
  system: 'system',
  developer: 'system',
  assistant: 'assistant',
};

/**
 * The chat messages of a Responses request: `instructions` as a system message first, then each
 * input item.
 * @throws HttpFailure 400 for an item that is not a text message, naming its place and type
 */
export function responsesMessages(b: Pick<Body, 'input' | 'instructions'>): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (b.instructions) out.push({ role: 'system', content: b.instructions });
  if (typeof b.input === 'string') return [...out, { role: 'user', content: b.input }];
  b.input.forEach((it, k) => {
    const type = it.type ?? 'message';
    const role = ROLES[it.role ?? ''];
    if (type !== 'message' || !role)
      throw refuse(
        `input[${k}]: only text messages (role user, system, developer or assistant) are served, got type ${type}${it.role ? ` role ${it.role}` : ''}`,
      );
    const parts = typeof it.content === 'string' ? [{ type: 'input_text', text: it.content }] : [];
    for (const [j, p] of (Array.isArray(it.content) ? it.content : []).entries()) {
      if (!['input_text', 'output_text', 'text'].includes(p.type) || p.text === undefined)
        throw refuse(`input[${k}].content[${j}]: only text parts are served, got type ${p.type}`);
      parts.push({ type: p.type, text: p.text });
    }
    out.push({ role, content: parts.map((p) => p.text).join('') });
  });
  return out;
}

/** The ids one answer's items carry (the same in the stream and the final object). */
interface ResponseIds {
  response: string;
  message: string;
  reasoning: string;
  created: number;
}

/** The `response` object of a finished (or, with `r` null, just started) answer. */
function responseObject(ids: ResponseIds, model: string, b: Body, r: ChatResult | null) {
  const incomplete = r !== null && stoppedByLength(r);
  const output =
    r === null
      ? []
      : [
          ...(r.thinking !== ''
            ? [
                {
                  type: 'reasoning',
                  id: ids.reasoning,
                  summary: [],
                  content: [{ type: 'reasoning_text', text: r.thinking }],
                },
              ]
            : []),
          {
            type: 'message',
            id: ids.message,
            status: incomplete ? 'incomplete' : 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: r.content, annotations: [], logprobs: [] }],
          },
        ];
  return {
    id: ids.response,
    object: 'response',
    created_at: ids.created,
    status: r === null ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    model,
    output,
    parallel_tool_calls: false,
    temperature: b.temperature ?? null,
    top_p: b.top_p ?? null,
    tool_choice: 'auto',
    tools: [],
    store: false,
    text: { format: { type: 'text' } },
    usage:
      r === null
        ? null
        : {
            input_tokens: r.promptTokens ?? 0,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: r.outputTokens ?? 0,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: (r.promptTokens ?? 0) + (r.outputTokens ?? 0),
          },
  };
}

/**
 * Serves one `POST /v1/responses` (see the module comment for the shapes).
 * @throws HttpFailure 400 for a bad body; the provider's errors (mapped by the server through
 *   {@link asHttpFailure}) before anything was written
 */
export async function serveResponses(
  req: IncomingMessage,
  res: ServerResponse,
  o: ResponsesRouteOptions,
): Promise<void> {
  const parsed = bodySchema.safeParse(await readJsonBody(req));
  if (!parsed.success) throw refuse(parsed.error.message);
  const b = parsed.data;
  const request: ChatRequest = {
    model: b.model,
    messages: responsesMessages(b),
    ...(b.max_output_tokens != null ? { maxTokens: b.max_output_tokens } : {}),
    ...(b.temperature != null ? { temperature: b.temperature } : {}),
    ...(b.top_p != null ? { topP: b.top_p } : {}),
    providerOptions: { embedded: { numCtx: o.contextSize } },
  };
  const ids: ResponseIds = {
    response: `resp_${randomUUID().replaceAll('-', '')}`,
    message: `msg_${randomUUID().replaceAll('-', '')}`,
    reasoning: `rs_${randomUUID().replaceAll('-', '')}`,
    created: Math.floor(Date.now() / 1000),
  };
  const signal = clientGone(res);
  if (!b.stream) {
    const r = await o.provider.chat(request, { signal });
    sendJson(res, 200, responseObject(ids, o.model, b, r));
    return;
  }
  await streamResponse(res, o, b, request, ids, signal);
}

/** The SSE form of {@link serveResponses}. */
async function streamResponse(
  res: ServerResponse,
  o: ResponsesRouteOptions,
  b: Body,
  request: ChatRequest,
  ids: ResponseIds,
  signal: AbortSignal,
): Promise<void> {
  let seq = 0;
  const send = (type: string, fields: Record<string, unknown>) =>
    res.write(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`,
    );
  const pending = responseObject(ids, o.model, b, null);
  startSse(res);
  send('response.created', { response: pending });
  send('response.in_progress', { response: pending });
  const at = { item_id: ids.message, output_index: 0, content_index: 0 };
  const emptyMessage = {
    type: 'message',
    id: ids.message,
    status: 'in_progress',
    role: 'assistant',
    content: [],
  };
  send('response.output_item.added', { output_index: 0, item: emptyMessage });
  const emptyText = { type: 'output_text', text: '', annotations: [], logprobs: [] };
  send('response.content_part.added', { ...at, part: emptyText });
  let r: ChatResult;
  try {
    r = await o.provider.chat(request, {
      signal,
      onDelta: (d) => {
        if (d.thinking !== undefined)
          send('response.reasoning_text.delta', {
            ...at,
            item_id: ids.reasoning,
            delta: d.thinking,
          });
        else send('response.output_text.delta', { ...at, delta: d.content ?? '', logprobs: [] });
      },
    });
  } catch (err) {
    const f = asHttpFailure(err);
    send('error', { code: f.code, message: f.message, param: null });
    res.end();
    return;
  }
  const done = responseObject(ids, o.model, b, r);
  const message = done.output.at(-1)!;
  send('response.output_text.done', { ...at, text: r.content, logprobs: [] });
  send('response.content_part.done', { ...at, part: { ...emptyText, text: r.content } });
  send('response.output_item.done', { output_index: 0, item: message });
  send(done.status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
    response: done,
  });
  res.end();
}
