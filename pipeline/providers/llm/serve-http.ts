/**
 * HTTP pieces shared by the routes of `telebench serve-model` (serve.ts: Chat Completions,
 * serve-responses.ts: the Responses API): the OpenAI error shape, reading a JSON body, writing a
 * JSON answer, and a provider error mapped to its HTTP status.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TelebenchError } from '../../errors.js';
import type { ChatResult } from './types.js';

/** A request the server refuses, with the OpenAI error body `{error: {message, type, code}}`. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string,
  ) {
    super(message);
  }

  /** The OpenAI error body `{error: {message, type, code}}`. */
  body(): { error: { message: string; type: string; code: string } } {
    return { error: { message: this.message, type: this.type, code: this.code } };
  }
}

/**
 * The request body parsed as JSON.
 * @throws HttpFailure 400 `bad_json` when it is not JSON
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpFailure(400, 'the body is not JSON', 'invalid_request_error', 'bad_json');
  }
}

/** Writes `body` as a JSON answer with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Starts an SSE answer (`text/event-stream`). */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

/** True when the budget or the window stopped the answer (OpenAI `length`). */
export const stoppedByLength = (r: ChatResult): boolean => r.doneReason === 'length';

/**
 * Maps a provider error to the OpenAI error shape: a prompt over the context is 400
 * `context_length_exceeded`, an unknown model 404 `model_not_found`, anything else 500.
 */
export function asHttpFailure(err: unknown): HttpFailure {
  if (err instanceof HttpFailure) return err;
  if (err instanceof TelebenchError) {
    if (err.code === 'prompt_too_long') {
      return new HttpFailure(
        400,
        `This model's maximum context length is exceeded: ${err.message}`,
        'invalid_request_error',
        'context_length_exceeded',
      );
    }
    if (err.code === 'model_not_found') {
      return new HttpFailure(404, err.message, 'invalid_request_error', 'model_not_found');
    }
  }
  return new HttpFailure(500, (err as Error)?.message ?? String(err), 'server_error', 'internal');
}

/** An AbortSignal that fires when the client goes away before the answer is written. */
export function clientGone(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort(new Error('client went away'));
  });
  return abort.signal;
}
