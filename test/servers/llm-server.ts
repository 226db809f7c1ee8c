/**
 * A local model server for tests, benchmarks and scripted pipeline runs: real HTTP on
 * 127.0.0.1:<port>, speaking Ollama's native routes (`/api/chat`, `/api/version`, `/api/tags`,
 * `/api/show`, `/api/ps`) and the OpenAI-compatible ones (`/v1/models`, `/v1/chat/completions`),
 * answering chat requests from a script. It records every request so tests can assert on them.
 *
 * What it does like the real servers (the behaviour the providers rely on):
 * - `thinking` (Ollama) / `reasoning` or `reasoning_content` (OpenAI-compatible) fields, or
 *   `<think>...</think>` inside the content; streaming (NDJSON for Ollama, SSE for OpenAI with
 *   `stream_options.include_usage`) and single JSON bodies.
 * - Token counts with a Qwen-like tokenizer ({@link modelTokens}) and a ChatML template (5
 *   tokens per message and 3 for the reply primer). A prompt over `num_ctx` is refused (400
 *   `exceed_context_size_error`) when the request says `truncate: false`, else cut silently: to
 *   about half the window (current Ollama) or to exactly `num_ctx` (`ollamaBehaviour: legacy`).
 *   The output is cut at `num_predict` / `max_tokens`, and with `shift: false` at the window, with
 *   `done_reason: length`. With `promptCache`, a prompt sharing a token prefix with an earlier one
 *   reports only the new tokens (at least 1), as Ollama does.
 * - Unknown model: HTTP 404 `{"error":"model \"x\" not found, try pulling it first"}`.
 * - A script entry can force any status (429 with `retry-after`, 500), a raw body, a delay before
 *   the headers, a stall in the middle of a stream, a stream cut before its final chunk.
 * - `parallel` slots: requests beyond them wait, like `OLLAMA_NUM_PARALLEL`.
 *
 * Run standalone for a pipeline run without a real model:
 *   npx tsx test/servers/llm-server.ts --port 11434 [--script replies.jsonl] [--delay-ms 0]
 *     [--parallel N] [--model qwen3.5:2b]   (port 0 picks a free port; the URL is printed)
 * Each script line is a {@link ScriptedReply}; lines with `match` (a regular expression tested on
 * the last user message) are rules, the others are answered in order, then the default reply.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { encodeCl100k, decodeCl100k } from '../../pipeline/providers/tokenizer/cl100k.js';

/** What the server answers to one chat request. Every field is optional. */
export interface ScriptedReply {
  /** Only in JSONL scripts: a regular expression on the last user message selecting this reply. */
  match?: string;
  /** HTTP status (default 200). A non-200 status sends `error` in the route's error shape. */
  status?: number;
  /** Extra response headers (e.g. `{"retry-after": "1"}`). */
  headers?: Record<string, string>;
  /** Error message for a non-200 status (default: the status text). */
  error?: string;
  /** A literal body sent as is with `status` (for unparseable bodies). */
  body?: string;
  /** Reasoning text (dropped when the request says `think: false`). */
  thinking?: string;
  /** Answer text. */
  content?: string;
  /**
   * OpenAI routes, single JSON bodies only: function calls of the message (`tool_calls`, each
   * with an id `call_<request>_<i>`; `arguments` is the JSON text); `finish_reason` becomes
   * `tool_calls` unless `doneReason` says otherwise. What tool-calling agents (litellm's
   * clients, mini-swe-agent's `bash` tool) read.
   */
  toolCalls?: { name: string; arguments: string }[];
  /**
   * Where the reasoning goes: `field` (Ollama `message.thinking`; OpenAI routes use `reasoning`),
   * `reasoning`, `reasoning_content`, `think-tags` (inside the content), `open-think-tag` (content
   * is `reasoning</think>answer`, the opening tag left to the chat template).
   */
  reasoningAs?: 'field' | 'reasoning' | 'reasoning_content' | 'think-tags' | 'open-think-tag';
  /**
   * OpenAI routes only, overrides `reasoningAs`: the reasoning fields of the message (and of every
   * streamed delta), each carrying the reasoning text (`text`), an empty string (`empty`) or null
   * (`null`), e.g. `{reasoning: 'empty', reasoning_content: 'text'}`. Streamed content deltas carry
   * the `empty`/`null` fields too, as vLLM and SGLang do.
   */
  reasoningFields?: Record<string, 'text' | 'empty' | 'null'>;
  /** Prompt token count to report; null omits it; default: computed (capped at `num_ctx`). */
  promptEvalCount?: number | null;
  /** Output token count to report; null omits it; default: computed. */
  evalCount?: number | null;
  /** Stop reason (default `stop`, or `length` when the output was cut at the budget). */
  doneReason?: string;
  /** Milliseconds before the response headers (a slow prompt evaluation). */
  delayMs?: number;
  /** Milliseconds between streamed chunks. */
  chunkDelayMs?: number;
  /** Streaming only: milliseconds of silence after the first chunk (trips an idle timeout). */
  stallMs?: number;
  /** Streaming only: end the stream without its final chunk (a cut connection). */
  dropFinal?: boolean;
}

/** A script entry: a fixed reply or a function of the recorded request. */
export type ScriptEntry = ScriptedReply | ((request: RecordedRequest) => ScriptedReply);

/** One request the server received. `body` is the parsed JSON (or the raw text when not JSON). */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** `Date.now()` when the request arrived. */
  receivedAt: number;
}

/** A model the server "has". */
export interface ServedModel {
  name: string;
  digest: string;
  /** Trained context length reported by `/api/show`; OpenAI routes reject longer prompts. */
  contextLength?: number;
  /** Bytes reported as `size_vram` by `/api/ps` once the model was used. */
  sizeVram?: number;
}

export interface LlmServerOptions {
  /** Default: one model `qwen3.5:2b`. */
  models?: ServedModel[];
  /** `/api/version` answer (default `0.12.6`). */
  version?: string;
  /** Chat replies, consumed in order (both routes share the queue). */
  script?: ScriptEntry[];
  /** Reply when the script is used up (default: a short reasoning and `Final Answer: 1`). */
  fallback?: ScriptEntry;
  /** Rules tried before the queue: the first whose `match` matches the last user message. */
  rules?: ScriptedReply[];
  /**
   * `current` (default): honours Ollama's `truncate: false` (400 `exceed_context_size_error`) and
   * `shift: false` (the answer stops at the window with `length`); a prompt over num_ctx otherwise
   * keeps about half the window. `legacy`: ignores both fields and keeps exactly num_ctx tokens.
   */
  ollamaBehaviour?: 'current' | 'legacy';
  /** Simulate Ollama's prompt cache (see the module comment). */
  promptCache?: boolean;
  /** Milliseconds every chat request takes before its headers (added to a reply's `delayMs`). */
  delayMs?: number;
  /** Chat requests served at once; the others queue (default unlimited). */
  parallel?: number;
  /** When set, OpenAI routes require `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Port (default 0: a free one). */
  port?: number;
}

export interface LlmServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Only the chat requests (`/api/chat`, `/v1/chat/completions`). */
  chatRequests(): RecordedRequest[];
  /** Chat requests being answered now, and the most ever answered at once (queued ones excluded). */
  readonly stats: { inFlight: number; peakInFlight: number };
  /** Appends replies to the script queue. */
  enqueue(...entries: ScriptEntry[]): void;
  close(): Promise<void>;
}

const DEFAULT_MODEL: ServedModel = {
  name: 'qwen3.5:2b',
  digest: 'b2f1ac4e8c1ad5d3f7e0c0a2c8b77a3b1b0f2d4b7d5fbd1c1ef0f6b7c8a9d0e1',
  contextLength: 32768,
  sizeVram: 2_400_000_000,
};

const DEFAULT_REPLY: ScriptedReply = {
  thinking: 'The question asks for one option. Option 1 fits best.',
  content: 'Final Answer: 1',
};

/**
 * A deterministic stand-in answer for pipeline runs without a model (the CLI's default reply):
 * a few sentences of reasoning that quote the question, then `Final Answer: <n>`, where n is an
 * option number listed in the prompt (lines like `1. ...`, `2) ...`, `Option 3: ...`) chosen by a
 * hash of the question, or a number for questions without options. Some answers are right and some
 * wrong, like a small model's.
 */
export function standInAnswer(request: RecordedRequest): ScriptedReply {
  const body = request.body as ChatBody;
  const question =
    [...(body.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '';
  const options = new Set<number>();
  for (const m of question.matchAll(/^\s*(?:option\s*)?(\d{1,2})\s*[.):]\s+\S/gim))
    options.add(Number(m[1]));
  let hash = 0;
  for (const ch of question) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  const opts = [...options].sort((a, b) => a - b);
  const answer = opts.length > 0 ? opts[hash % opts.length]! : (hash % 1000) / 10;
  const start = question.replace(/\s+/g, ' ').trim().slice(0, 80);
  return {
    thinking:
      `The question reads: "${start}". ` +
      'First, recall the relevant 3GPP procedure and the role of each network function. ' +
      `There are ${opts.length || 'no'} listed options, so each one is weighed against the procedure. ` +
      `1. The first reading suggests ${answer} is consistent with the specification. ` +
      'Checking the remaining details does not change that conclusion. ' +
      `Therefore the answer is ${answer}.`,
    content: `Final Answer: ${answer}`,
  };
}

interface ChatBody {
  model?: string;
  messages?: { role: string; content: string }[];
  stream?: boolean;
  think?: boolean;
  truncate?: boolean;
  shift?: boolean;
  options?: { num_ctx?: number; num_predict?: number };
  max_tokens?: number;
  max_completion_tokens?: number;
  stream_options?: { include_usage?: boolean };
}

function sameModel(a: string, b: string): boolean {
  const norm = (s: string) => (s.includes(':') ? s : `${s}:latest`);
  return norm(a) === norm(b);
}

/** Splits text into stream pieces of about three words. */
function pieces(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 3) out.push(words.slice(i, i + 3).join(''));
  return out;
}

/**
 * The scripted model's tokenizer: cl100k_base, except that every digit is its own token (as in the
 * Qwen tokenizers; cl100k groups up to three digits), so number-dense prompts count more tokens
 * on the server than the client's cl100k estimate, as they do on a real Qwen model.
 */
export function modelTokens(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(/(\d+)/)) {
    if (part === '') continue;
    if (/^\d+$/.test(part)) for (const d of part) out.push(15 + Number(d));
    else out.push(...encodeCl100k(part));
  }
  return out;
}

/**
 * Starts the server.
 * @returns its URL, the request log and `close()`
 */
export async function startLlmServer(options: LlmServerOptions = {}): Promise<LlmServer> {
  const models = options.models ?? [DEFAULT_MODEL];
  const queue: ScriptEntry[] = [...(options.script ?? [])];
  const requests: RecordedRequest[] = [];
  const seenPrompts: number[][] = [];
  const loaded = new Set<string>();
  const slots = pLimit(options.parallel ?? Number.POSITIVE_INFINITY);

  const send = (res: ServerResponse, status: number, body: unknown, headers = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
      ...headers,
    });
    res.end(text);
  };

  const promptTokens = (messages: { role: string; content: string }[]): number[] => {
    const out: number[] = [];
    for (const m of messages)
      // an assistant message with tool calls has content null; a multimodal one a list of parts
      out.push(
        -1,
        ...modelTokens(m.role),
        198,
        ...modelTokens(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')),
        -3,
        198,
      );
    out.push(-1, ...modelTokens('assistant'), 198);
    return out;
  };

  const findModel = (name: unknown) =>
    typeof name === 'string' ? models.find((m) => sameModel(m.name, name)) : undefined;

  function pickReply(rec: RecordedRequest): ScriptedReply {
    const body = rec.body as ChatBody;
    const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
    for (const rule of options.rules ?? []) {
      if (rule.match !== undefined && new RegExp(rule.match).test(lastUser?.content ?? ''))
        return rule;
    }
    const entry = queue.shift() ?? options.fallback ?? DEFAULT_REPLY;
    return typeof entry === 'function' ? entry(rec) : entry;
  }

  async function chat(rec: RecordedRequest, res: ServerResponse, route: 'ollama' | 'openai') {
    const body = rec.body as ChatBody;
    if (route === 'openai' && options.apiKey !== undefined) {
      if (rec.headers.authorization !== `Bearer ${options.apiKey}`) {
        send(res, 401, { error: { message: 'invalid api key', type: 'invalid_request_error' } });
        return;
      }
    }
    if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) {
      send(
        res,
        400,
        route === 'ollama'
          ? { error: 'invalid request' }
          : { error: { message: 'invalid request' } },
      );
      return;
    }
    const model = findModel(body.model);
    if (!model) {
      const message = `model "${String(body.model)}" not found, try pulling it first`;
      send(
        res,
        404,
        route === 'ollama' ? { error: message } : { error: { message, type: 'api_error' } },
      );
      return;
    }
    const reply = pickReply(rec);
    const delay = (options.delayMs ?? 0) + (reply.delayMs ?? 0);
    if (delay > 0) await sleep(delay);
    if (reply.body !== undefined || (reply.status ?? 200) !== 200) {
      const status = reply.status ?? 200;
      const message = reply.error ?? `HTTP ${status}`;
      const errBody =
        reply.body ??
        JSON.stringify(route === 'ollama' ? { error: message } : { error: { message } });
      res.writeHead(status, { 'content-type': 'application/json', ...reply.headers });
      res.end(errBody);
      return;
    }
    loaded.add(model.name);

    // Prompt size as the "model" sees it, with Ollama's silent truncation to num_ctx.
    const tokens = promptTokens(body.messages!);
    const numCtx = route === 'ollama' ? body.options?.num_ctx : undefined;
    if (
      route === 'openai' &&
      model.contextLength !== undefined &&
      tokens.length > model.contextLength
    ) {
      send(res, 400, {
        error: {
          message: `This model's maximum context length is ${model.contextLength} tokens. However, you requested ${tokens.length} tokens.`,
          type: 'BadRequestError',
        },
      });
      return;
    }
    // Context overflow, as Ollama does it. Legacy servers ignore `truncate`/`shift` and keep
    // num_ctx tokens; current ones refuse with 400 when `truncate: false`, else keep num_keep (4)
    // plus half of the rest (about num_ctx / 2), so prompt_eval_count drops to about half.
    const legacy = options.ollamaBehaviour === 'legacy';
    let promptCount = tokens.length;
    if (numCtx !== undefined && tokens.length >= numCtx) {
      if (!legacy && body.truncate === false) {
        const message = `request (${tokens.length} tokens) exceeds the available context size (${numCtx} tokens), try increasing it`;
        send(res, 400, {
          error: JSON.stringify({
            error: {
              code: 400,
              message,
              type: 'exceed_context_size_error',
              n_prompt_tokens: tokens.length,
              n_ctx: numCtx,
            },
          }),
        });
        return;
      }
      promptCount = legacy ? numCtx : numCtx - Math.floor((numCtx - 4) / 2);
    }
    if (options.promptCache) {
      let best = 0;
      for (const prev of seenPrompts) {
        let i = 0;
        while (i < prev.length && i < tokens.length && prev[i] === tokens[i]) i++;
        best = Math.max(best, i);
      }
      seenPrompts.push(tokens);
      promptCount = Math.max(1, promptCount - best);
    }

    // Output, cut at the budget.
    let thinking = body.think === false ? '' : (reply.thinking ?? '');
    let content = reply.content ?? '';
    let budget =
      route === 'ollama'
        ? body.options?.num_predict
        : (body.max_completion_tokens ?? body.max_tokens);
    // `shift: false` (honoured by current servers): generation stops when the window is full.
    if (route === 'ollama' && numCtx !== undefined && !legacy && body.shift === false) {
      budget = Math.min(budget ?? Number.POSITIVE_INFINITY, Math.max(0, numCtx - promptCount));
    }
    const thinkTokens = encodeCl100k(thinking);
    const contentTokens = encodeCl100k(content);
    let outCount = thinkTokens.length + contentTokens.length;
    let doneReason = reply.doneReason ?? 'stop';
    if (budget !== undefined && budget >= 0 && outCount > budget) {
      if (thinkTokens.length >= budget) {
        thinking = decodeCl100k(thinkTokens.slice(0, budget));
        content = '';
      } else {
        content = decodeCl100k(contentTokens.slice(0, budget - thinkTokens.length));
      }
      outCount = budget;
      doneReason = reply.doneReason ?? 'length';
    }
    const promptEval = reply.promptEvalCount === undefined ? promptCount : reply.promptEvalCount;
    const evalCount = reply.evalCount === undefined ? outCount : reply.evalCount;

    let reasoningAs = reply.reasoningAs ?? 'field';
    if (route === 'openai' && reasoningAs === 'field') reasoningAs = 'reasoning';
    if (route === 'ollama' && (reasoningAs === 'reasoning' || reasoningAs === 'reasoning_content'))
      reasoningAs = 'field';
    if (thinking !== '' && reasoningAs === 'think-tags') {
      content = `<think>${thinking}</think>\n\n${content}`;
      thinking = '';
    } else if (thinking !== '' && reasoningAs === 'open-think-tag') {
      content = `${thinking}</think>\n\n${content}`;
      thinking = '';
    }
    const stream = route === 'ollama' ? body.stream !== false : body.stream === true;
    const created = new Date().toISOString();

    if (route === 'ollama') {
      const counts = {
        total_duration: delay * 1e6,
        load_duration: 1000,
        ...(promptEval !== null ? { prompt_eval_count: promptEval } : {}),
        prompt_eval_duration: 1000,
        ...(evalCount !== null ? { eval_count: evalCount } : {}),
        eval_duration: 1000,
      };
      if (!stream) {
        send(res, 200, {
          model: model.name,
          created_at: created,
          message: { role: 'assistant', content, ...(thinking !== '' ? { thinking } : {}) },
          done_reason: doneReason,
          done: true,
          ...counts,
        });
        return;
      }
      const lines: unknown[] = [
        ...pieces(thinking).map((t) => ({
          model: model.name,
          created_at: created,
          message: { role: 'assistant', content: '', thinking: t },
          done: false,
        })),
        ...pieces(content).map((c) => ({
          model: model.name,
          created_at: created,
          message: { role: 'assistant', content: c },
          done: false,
        })),
      ];
      const final = {
        model: model.name,
        created_at: created,
        message: { role: 'assistant', content: '' },
        done_reason: doneReason,
        done: true,
        ...counts,
      };
      await streamOut(
        res,
        'application/x-ndjson',
        lines.map((l) => `${JSON.stringify(l)}\n`),
        reply.dropFinal ? undefined : `${JSON.stringify(final)}\n`,
        reply,
      );
      return;
    }

    // OpenAI-compatible.
    const finish = doneReason;
    const usage =
      promptEval !== null
        ? {
            prompt_tokens: promptEval,
            completion_tokens: evalCount ?? 0,
            total_tokens: promptEval + (evalCount ?? 0),
          }
        : undefined;
    const fieldShape: Record<string, 'text' | 'empty' | 'null'> | undefined =
      reply.reasoningFields ??
      (reasoningAs === 'reasoning' || reasoningAs === 'reasoning_content'
        ? { [reasoningAs]: 'text' }
        : undefined);
    // The reasoning fields of one message/delta: `text` fields get `t`, the others ''/null.
    const reasoningPart = (t: string | undefined): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(fieldShape ?? {})) {
        if (v === 'text') {
          if (t !== undefined) out[k] = t;
        } else out[k] = v === 'empty' ? '' : null;
      }
      return out;
    };
    const id = `chatcmpl-${requests.length}`;
    const createdS = Math.floor(Date.now() / 1000);
    if (!stream) {
      send(res, 200, {
        id,
        object: 'chat.completion',
        created: createdS,
        model: model.name,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content,
              ...(fieldShape && (thinking !== '' || reply.reasoningFields)
                ? reasoningPart(thinking)
                : {}),
              ...(reply.toolCalls?.length
                ? {
                    tool_calls: reply.toolCalls.map((t, i) => ({
                      id: `call_${requests.length}_${i}`,
                      type: 'function',
                      function: { name: t.name, arguments: t.arguments },
                    })),
                  }
                : {}),
            },
            finish_reason: reply.toolCalls?.length && !reply.doneReason ? 'tool_calls' : finish,
          },
        ],
        ...(usage ? { usage } : {}),
      });
      return;
    }
    const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: createdS, model: model.name, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
    const events: string[] = [chunk({ role: 'assistant', content: '' }, null)];
    if (fieldShape) for (const t of pieces(thinking)) events.push(chunk(reasoningPart(t), null));
    for (const c of pieces(content))
      events.push(
        chunk({ content: c, ...(reply.reasoningFields ? reasoningPart(undefined) : {}) }, null),
      );
    events.push(chunk({}, finish));
    let tail = '';
    if (usage && body.stream_options?.include_usage) {
      tail += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: createdS, model: model.name, choices: [], usage })}\n\n`;
    }
    tail += 'data: [DONE]\n\n';
    await streamOut(res, 'text/event-stream', events, reply.dropFinal ? undefined : tail, reply);
  }

  async function streamOut(
    res: ServerResponse,
    contentType: string,
    parts: string[],
    final: string | undefined,
    reply: ScriptedReply,
  ) {
    res.writeHead(200, { 'content-type': contentType, ...reply.headers });
    for (const [i, p] of parts.entries()) {
      if (res.destroyed) return;
      res.write(p);
      if (i === 0 && reply.stallMs) await sleep(reply.stallMs);
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
    }
    if (final === undefined) {
      res.destroy();
      return;
    }
    res.end(final);
  }

  const stats = { inFlight: 0, peakInFlight: 0 };
  /** Counts a chat request as in flight from its slot start until its response is finished. */
  async function tracked(res: ServerResponse, answer: () => Promise<void>) {
    stats.inFlight++;
    stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
    try {
      await answer();
    } finally {
      stats.inFlight--;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch (err) {
        body = text; // recorded raw; the route answers 400 below
        void err;
      }
    }
    const path = (req.url ?? '/').split('?')[0]!;
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body,
      receivedAt: Date.now(),
    };
    requests.push(rec);
    const route = `${rec.method} ${path}`;
    switch (route) {
      case 'GET /api/version':
        return send(res, 200, { version: options.version ?? '0.12.6' });
      case 'GET /api/tags':
        return send(res, 200, {
          models: models.map((m) => ({
            name: m.name,
            model: m.name,
            modified_at: '2026-01-01T00:00:00Z',
            size: m.sizeVram ?? 1,
            digest: m.digest,
            details: {
              format: 'gguf',
              family: 'qwen3',
              parameter_size: '2B',
              quantization_level: 'Q4_K_M',
            },
          })),
        });
      case 'POST /api/show': {
        const m = findModel((body as { model?: unknown })?.model);
        if (!m)
          return send(res, 404, {
            error: `model '${String((body as { model?: unknown })?.model)}' not found`,
          });
        return send(res, 200, {
          modelfile: '',
          template: '{{ .Prompt }}',
          details: { format: 'gguf', family: 'qwen3' },
          model_info: {
            'general.architecture': 'qwen3',
            ...(m.contextLength ? { 'qwen3.context_length': m.contextLength } : {}),
          },
          capabilities: ['completion', 'thinking'],
        });
      }
      case 'GET /api/ps':
        return send(res, 200, {
          models: models
            .filter((m) => loaded.has(m.name))
            .map((m) => ({
              name: m.name,
              model: m.name,
              size: m.sizeVram ?? 0,
              digest: m.digest,
              size_vram: m.sizeVram ?? 0,
              context_length: 4096,
              expires_at: '2026-01-01T00:05:00Z',
            })),
        });
      case 'GET /v1/models':
        if (
          options.apiKey !== undefined &&
          rec.headers.authorization !== `Bearer ${options.apiKey}`
        ) {
          return send(res, 401, {
            error: { message: 'invalid api key', type: 'invalid_request_error' },
          });
        }
        return send(res, 200, {
          object: 'list',
          data: models.map((m) => ({
            id: m.name,
            object: 'model',
            created: 0,
            owned_by: 'library',
          })),
        });
      case 'POST /api/chat':
        return slots(() => tracked(res, () => chat(rec, res, 'ollama')));
      case 'POST /v1/chat/completions':
        return slots(() => tracked(res, () => chat(rec, res, 'openai')));
      default:
        return send(res, 404, '404 page not found');
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: `test server: ${(err as Error).message}` });
      else res.destroy(err as Error);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stats,
    chatRequests: () =>
      requests.filter((r) => r.path === '/api/chat' || r.path === '/v1/chat/completions'),
    enqueue: (...entries) => queue.push(...entries),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/**
 * Parses a JSON Lines script: lines with `match` become rules, the others the queue.
 * @throws Error naming the line for a line that is not a JSON object
 */
export function parseScript(
  text: string,
  file = 'script',
): { rules: ScriptedReply[]; queue: ScriptedReply[] } {
  const rules: ScriptedReply[] = [];
  const queue: ScriptedReply[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new Error(`${file}:${i + 1}: not JSON: ${(err as Error).message}`, { cause: err });
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error(`${file}:${i + 1}: expected a JSON object`);
    ((value as ScriptedReply).match !== undefined ? rules : queue).push(value as ScriptedReply);
  }
  return { rules, queue };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? undefined : process.argv[i + 1];
  };
  const scriptFile = arg('script');
  const script = scriptFile
    ? parseScript(readFileSync(scriptFile, 'utf8'), scriptFile)
    : { rules: [], queue: [] };
  const model = arg('model');
  const parallel = arg('parallel');
  const server = await startLlmServer({
    port: Number(arg('port') ?? 11434),
    delayMs: Number(arg('delay-ms') ?? 0),
    ...(parallel !== undefined ? { parallel: Number(parallel) } : {}),
    rules: script.rules,
    script: script.queue,
    fallback: standInAnswer,
    // The version marks everything this server answered (it lands in instances, manifests and
    // dataset cards), so synthetic data can never pass for a real model's.
    version: '0.12.6-telebench-scripted',
    ...(model ? { models: [{ ...DEFAULT_MODEL, name: model }] } : {}),
  });
  console.log(`scripted LLM server listening on ${server.url}`);
  console.log(
    'its answers are synthetic stand-ins: use them to exercise the pipeline, never to release or publish a dataset',
  );
}
