/**
 * HTTP plumbing shared by the LLM providers: one request with an idle timeout (reset on every body
 * chunk, so a slow but streaming server is never cut), error classification by status (after
 * vercel/ai: 408/409/429/5xx retryable), `retry-after` parsing (RFC 9110 section 10.2.3), and the
 * retry loop (p-retry, why: a well-kept retry with backoff and abort support).
 */
import pRetry from 'p-retry';
import { setTimeout as sleep } from 'node:timers/promises';
import { TelebenchError } from '../../errors.js';
import { redact } from '../../secrets.js';
import type { TelebenchEvent } from '../../events.js';
import type { z } from 'zod';

/**
 * Waits `ms` milliseconds, rejecting with the abort reason when `signal` aborts. The retry loop's
 * wait for a `retry-after`; tests inject one that records the requested delay instead of waiting.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real wait: `node:timers/promises` setTimeout. */
export const realSleep: Sleep = async (ms, signal) => {
  await sleep(ms, undefined, { signal });
};

/** Retry and timeout settings of one endpoint. All times in milliseconds. */
export interface HttpPolicy {
  /** Abort when no byte arrives for this long (covers time to headers and gaps between chunks). */
  idleTimeoutMs: number;
  /** Abort after this total time (0: no total limit; streaming relies on the idle timeout). */
  totalTimeoutMs: number;
  /** Retries after the first attempt for retryable errors (408/409/429/5xx, network, timeout). */
  retries: number;
  /** Backoff of the first retry; doubles each time (randomised by p-retry), capped by maxBackoffMs. */
  minBackoffMs: number;
  maxBackoffMs: number;
  /** A `retry-after` longer than this is not waited for: the error escapes with tier `rate-limit`. */
  maxRetryAfterMs: number;
}

export const DEFAULT_HTTP_POLICY: HttpPolicy = {
  idleTimeoutMs: 120_000,
  totalTimeoutMs: 0,
  retries: 2,
  minBackoffMs: 500,
  maxBackoffMs: 30_000,
  maxRetryAfterMs: 300_000,
};

/** A received HTTP response: status, headers and the whole body as text. */
export interface HttpResponse {
  status: number;
  headers: Headers;
  body: string;
}

/**
 * Parses a `retry-after` header value: delay-seconds or an HTTP-date (RFC 9110 section 10.2.3).
 * @param value header value or null
 * @param now current time in ms since the epoch (for HTTP-dates)
 * @returns the delay in milliseconds (>= 0), or undefined when absent or unparseable
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const date = Date.parse(v);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Sends one HTTP request and reads its body, calling `onChunk` with each decoded text chunk.
 * The idle timer starts before the request and restarts on every chunk.
 * @param endpoint base URL used in error messages (no secrets in it)
 * @throws TelebenchError `llm_unreachable` (transient) when the connection fails,
 *   `llm_timeout` (transient) on the idle or total timeout, the caller's abort reason when
 *   `signal` aborts
 */
export async function sendRequest(
  url: string,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
  policy: Pick<HttpPolicy, 'idleTimeoutMs' | 'totalTimeoutMs'>,
  endpoint: string,
  options: { signal?: AbortSignal; onChunk?: (text: string) => void } = {},
): Promise<HttpResponse> {
  if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
  const controller = new AbortController();
  let timedOut: 'idle' | 'total' | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdle = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      timedOut = 'idle';
      controller.abort();
    }, policy.idleTimeoutMs);
  };
  const totalTimer =
    policy.totalTimeoutMs > 0
      ? setTimeout(() => {
          timedOut = 'total';
          controller.abort();
        }, policy.totalTimeoutMs)
      : undefined;
  const onAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  armIdle();
  const path = new URL(url).pathname;
  try {
    const res = await fetch(url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal: controller.signal,
    });
    armIdle();
    let body = '';
    if (res.body) {
      const decoder = new TextDecoder();
      for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
        armIdle();
        const text = decoder.decode(bytes, { stream: true });
        body += text;
        if (text) options.onChunk?.(text);
      }
      const rest = decoder.decode();
      body += rest;
      if (rest) options.onChunk?.(rest);
    }
    return { status: res.status, headers: res.headers, body };
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    if (timedOut) {
      const ms = timedOut === 'idle' ? policy.idleTimeoutMs : policy.totalTimeoutMs;
      throw new TelebenchError(
        'llm_timeout',
        `${endpoint}: ${init.method} ${path} timed out (${timedOut === 'idle' ? 'no data for' : 'total time over'} ${ms} ms)`,
        { tier: 'transient', context: { endpoint, path, timeout: timedOut, ms }, cause: err },
      );
    }
    if (err instanceof TelebenchError) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new TelebenchError(
      'llm_unreachable',
      `${endpoint}: ${init.method} ${path} failed: ${redact(cause?.message ?? (err as Error).message)}`,
      {
        tier: 'transient',
        context: { endpoint, path, errno: cause?.code ?? null },
        cause: err,
      },
    );
  } finally {
    if (idleTimer) clearTimeout(idleTimer);
    if (totalTimer) clearTimeout(totalTimer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Extracts a server's error message from a JSON body (`{error: "..."}` or `{error: {message}}`). */
export function errorMessageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    const e = parsed.error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') {
      return (e as { message: string }).message;
    }
    if (typeof parsed.message === 'string') return parsed.message;
    if (typeof parsed.detail === 'string') return parsed.detail;
  } catch (err) {
    // Not JSON: the raw text (shortened) is the message; the parse failure itself says nothing more.
    void err;
  }
  return body.trim().slice(0, 300) || '(empty body)';
}

/**
 * Turns a non-2xx response into the error the retry loop and the runner act on.
 * 429 -> `rate-limit`; 408/409/5xx -> `transient`; 404 naming a model -> `model_not_found`
 * (`config`); other 4xx -> `config`.
 * @returns the error (not thrown) with `status` and `retryAfterMs` in its context
 */
export function httpError(
  res: HttpResponse,
  endpoint: string,
  path: string,
  model?: string,
): TelebenchError {
  const message = redact(errorMessageOf(res.body));
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
  const context = { endpoint, path, status: res.status, model: model ?? null, retryAfterMs };
  const where = `${endpoint}: ${path} answered HTTP ${res.status}`;
  if (res.status === 429) {
    return new TelebenchError('llm_rate_limited', `${where}: ${message}`, {
      tier: 'rate-limit',
      context,
    });
  }
  if (res.status === 408 || res.status === 409 || res.status >= 500) {
    return new TelebenchError('llm_server_error', `${where}: ${message}`, {
      tier: 'transient',
      context,
    });
  }
  if (res.status === 404 && /model/i.test(message)) {
    return new TelebenchError(
      'model_not_found',
      `${where}: ${message}${model ? ` (pull or serve model "${model}" there)` : ''}`,
      { tier: 'config', context },
    );
  }
  if (res.status === 401 || res.status === 403) {
    return new TelebenchError(
      'llm_unauthorized',
      `${where}: ${message} (set TELEBENCH_LLM_API_KEY or OPENAI_API_KEY)`,
      { tier: 'config', context },
    );
  }
  return new TelebenchError('llm_request_rejected', `${where}: ${message}`, {
    tier: 'config',
    context,
  });
}

/** True for the tiers the retry loop retries. */
export function isRetryable(err: unknown): boolean {
  return err instanceof TelebenchError && (err.tier === 'rate-limit' || err.tier === 'transient');
}

/**
 * Runs `attempt` with retries for retryable errors: exponential backoff (p-retry) and, when the
 * error carries a `retry-after`, at least that long before the next attempt (the wait is the
 * retry-after plus the backoff). A retry-after above `maxRetryAfterMs` stops the retries.
 * @param service name for `retry` / `rate-limit` events (`ollama http://...`)
 * @param options.sleep how to wait for a `retry-after` (default {@link realSleep}; the backoff
 *   between attempts is p-retry's own timer)
 * @throws the last error when the retries are used up or the error is not retryable; the abort
 *   reason when `signal` aborts
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: Pick<HttpPolicy, 'retries' | 'minBackoffMs' | 'maxBackoffMs' | 'maxRetryAfterMs'>,
  service: string,
  options: {
    signal?: AbortSignal;
    onEvent?: (event: TelebenchEvent) => void;
    sleep?: Sleep;
  } = {},
): Promise<T> {
  const wait = options.sleep ?? realSleep;
  return pRetry(attempt, {
    retries: policy.retries,
    minTimeout: policy.minBackoffMs,
    maxTimeout: policy.maxBackoffMs,
    factor: 2,
    randomize: true,
    signal: options.signal,
    shouldRetry: (err) => {
      if (!isRetryable(err)) return false;
      const after = (err as unknown as TelebenchError).context.retryAfterMs;
      return !(typeof after === 'number' && after > policy.maxRetryAfterMs);
    },
    onFailedAttempt: async (err) => {
      // p-retry calls this even after shouldRetry said no: wait only before a real retry.
      if (err.retriesLeft <= 0 || !isRetryable(err)) return;
      const e = err as unknown as TelebenchError;
      const after = typeof e.context.retryAfterMs === 'number' ? e.context.retryAfterMs : 0;
      if (after > policy.maxRetryAfterMs) return;
      options.onEvent?.(
        e.tier === 'rate-limit'
          ? { kind: 'rate-limit', service, waitSeconds: after / 1000, reason: e.message }
          : {
              kind: 'retry',
              service,
              attempt: err.attemptNumber,
              waitSeconds: Math.max(after, policy.minBackoffMs) / 1000,
              reason: e.message,
            },
      );
      if (after > 0) await wait(after, options.signal);
    },
  });
}

/**
 * Parses a JSON body against a schema. A body that is not the JSON expected (garbled, cut short by
 * a proxy or a dropped connection, an HTML error page) is a transport fault, not an answer: tier
 * `transient`, so the retry loop retries it like a 5xx and, after the retries, the item fails (and
 * `--retry-failed` runs it again) instead of being skipped for good.
 * @throws TelebenchError `bad_response` (tier `transient`) naming the endpoint, the path and the
 *   first problem
 */
export function parseBody<S extends z.ZodType>(
  text: string,
  schema: S,
  endpoint: string,
  path: string,
): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TelebenchError(
      'bad_response',
      `${endpoint}: ${path} returned a body that is not JSON: ${JSON.stringify(text.slice(0, 120))}`,
      { tier: 'transient', context: { endpoint, path, bodyStart: text.slice(0, 300) }, cause: err },
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TelebenchError(
      'bad_response',
      `${endpoint}: ${path} returned an unexpected JSON shape at ${issue.path.join('.') || '(top)'}: ${issue.message}`,
      { tier: 'transient', context: { endpoint, path, bodyStart: text.slice(0, 300) } },
    );
  }
  return parsed.data as z.output<S>;
}
