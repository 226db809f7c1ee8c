/**
 * GitHub REST client of telebench, on `@octokit/rest` with `@octokit/plugin-throttling` and
 * `@octokit/plugin-retry` (why: GitHub's own client, whose plugins already understand its primary
 * and secondary rate limits and retry 5xx; we only decide how long to wait and report it).
 *
 * - Rate limits: the primary limit (`x-ratelimit-remaining: 0`) waits until `x-ratelimit-reset`, the
 *   secondary limit (403 "secondary rate limit") waits `retry-after`; both as long as it takes (up
 *   to `maxWaitSeconds` per wait), emitting a `rate-limit` event each time. The throttling plugin
 *   knows only those two shapes; any other 403/429 that asks to wait ({@link rateLimitWaitSeconds}:
 *   a `retry-after` header, or a rate-limit message in any wording, such as the older "You have
 *   triggered an abuse detection mechanism") is waited out here the same way, up to
 *   `maxRateLimitWaits` times per request (issue 14, section 5).
 * - Retry events are emitted only for retries that happen (never for the last failed attempt or
 *   for an error that is not retried).
 * - Token pool: `GITHUB_TOKENS` (comma/space separated) or `GITHUB_TOKEN`, used in turn per request.
 *   Without a token the client works unauthenticated (60 requests/hour) and says so.
 * - Conditional requests: the ETag of every GET is stored in the key-value cache (namespace
 *   `github.etag`) with the digest of the stored body blob; a later GET sends `If-None-Match` and a
 *   304 (which GitHub does not count against the limit) is answered from the blob.
 * - Pagination by `page`, each page conditional on its own ETag.
 * - Bodies that are not the JSON the caller expects (malformed JSON, HTML error pages) raise
 *   `github_malformed_response` after retries; nothing cached is overwritten by them.
 */
import type * as OctokitRest from '@octokit/rest';
import type * as PluginThrottling from '@octokit/plugin-throttling';
import type * as PluginRetry from '@octokit/plugin-retry';
import pRetry from 'p-retry';
import { TelebenchError } from '../../errors.js';
import type { TelebenchEvent } from '../../events.js';
import type { KeyValue } from '../../store/store.js';
import type { BlobStore } from '../../store/blobs.js';
import { secret, redact } from '../../secrets.js';
import { lazy } from '../../lazy.js';
import { parseRetryAfter } from '../llm/http.js';

/** Octokit with the throttling and retry plugins, loaded on first use (see pipeline/lazy.ts). */
const throttledOctokit = (() => {
  let cls: ReturnType<typeof build> | undefined;
  const build = () =>
    lazy<typeof OctokitRest>('@octokit/rest')().Octokit.plugin(
      lazy<typeof PluginThrottling>('@octokit/plugin-throttling')().throttling,
      lazy<typeof PluginRetry>('@octokit/plugin-retry')().retry,
    );
  return () => (cls ??= build());
})();
type Client = InstanceType<ReturnType<typeof throttledOctokit>>;

/** Options of {@link GithubClient}. */
export interface GithubClientOptions {
  /** REST base URL (`https://api.github.com`, or a local test server). */
  baseUrl: string;
  /** Tokens used in turn; [] means unauthenticated. See {@link tokensFromEnv}. */
  tokens: readonly string[];
  /** Cache for ETags (namespace `github.etag`). */
  kv: KeyValue;
  /** Where raw response bodies are stored (content-addressed). */
  blobs: Pick<BlobStore, 'put' | 'getText' | 'has'>;
  /** Per-request timeout in milliseconds (default 30 000). */
  requestTimeoutMs?: number;
  /** Retries of 5xx and dropped connections (default 4). */
  maxRetries?: number;
  /** Base of the retry backoff in ms: retry n waits n² × this (default 1000). */
  retryBaseMs?: number;
  /** Longest rate-limit wait accepted, seconds (default 6 h); longer waits fail with tier `rate-limit`. */
  maxWaitSeconds?: number;
  /**
   * Wait in seconds for a 403/429 that says it is a rate limit but gives neither `retry-after`
   * nor `x-ratelimit-reset` (default 60, GitHub's advice for secondary limits).
   */
  fallbackRateLimitSeconds?: number;
  /** Rate-limit waits of one request outside the throttling plugin before giving up (default 10). */
  maxRateLimitWaits?: number;
  /** Receives `rate-limit`, `retry` and `log` events. */
  onEvent?: (event: TelebenchEvent) => void;
  signal?: AbortSignal;
}

/** Counters of HTTP traffic (what the benchmark and the 304 test read). */
export interface GithubStats {
  /** Every HTTP request sent, retries included. */
  requests: number;
  /** Requests answered 304 Not Modified (not counted by GitHub). */
  notModified: number;
  /** Requests answered with a body that counted against the limit (2xx). */
  counted: number;
  rateLimitWaits: number;
  retries: number;
}

/** A GET result: `data` parsed from JSON, `blob` the digest of the stored raw body. */
export interface GithubResult<T> {
  data: T;
  blob: string;
  /** True when answered 304 from the cache. */
  cached: boolean;
  /** `rel="next"` URL of a paginated list, if any. */
  next: boolean;
}

interface EtagEntry {
  etag: string;
  blob: string;
  next: boolean;
}

/**
 * Tokens from the environment: `GITHUB_TOKENS` (comma or whitespace separated) else `GITHUB_TOKEN`.
 * @returns [] when neither is set
 */
export function tokensFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const many = secret('GITHUB_TOKENS', env);
  if (many) return many.split(/[,\s]+/).filter(Boolean);
  const one = secret('GITHUB_TOKEN', env);
  return one ? [one] : [];
}

/** See the module comment. One instance per run (`ctx.memo`). */
export class GithubClient {
  readonly stats: GithubStats = {
    requests: 0,
    notModified: 0,
    counted: 0,
    rateLimitWaits: 0,
    retries: 0,
  };
  readonly authenticated: boolean;
  private readonly clients: Client[];
  private turn = 0;
  private readonly opts: Required<
    Pick<
      GithubClientOptions,
      | 'requestTimeoutMs'
      | 'maxRetries'
      | 'retryBaseMs'
      | 'maxWaitSeconds'
      | 'fallbackRateLimitSeconds'
      | 'maxRateLimitWaits'
    >
  > &
    GithubClientOptions;

  /** @throws never; bad tokens show up as 401 on the first request */
  constructor(options: GithubClientOptions) {
    this.opts = {
      requestTimeoutMs: 30_000,
      maxRetries: 4,
      retryBaseMs: 1000,
      maxWaitSeconds: 6 * 3600,
      fallbackRateLimitSeconds: 60,
      maxRateLimitWaits: 10,
      ...options,
    };
    this.authenticated = options.tokens.length > 0;
    const auths: (string | undefined)[] = this.authenticated ? [...options.tokens] : [undefined];
    this.clients = auths.map((auth) => this.makeClient(auth));
    if (!this.authenticated) {
      this.emit({
        kind: 'log',
        message:
          'GitHub: no GITHUB_TOKEN or GITHUB_TOKENS set; working unauthenticated (60 requests/hour). Set GITHUB_TOKEN for 5000/hour.',
      });
    }
  }

  private emit(e: TelebenchEvent): void {
    this.opts.onEvent?.(e);
  }

  private makeClient(auth: string | undefined): Client {
    const countingFetch: typeof fetch = async (input, init) => {
      this.stats.requests++;
      const timeout = AbortSignal.timeout(this.opts.requestTimeoutMs);
      const signal = this.opts.signal ? AbortSignal.any([timeout, this.opts.signal]) : timeout;
      const res = await fetch(input, { ...init, signal });
      if (res.status === 304) this.stats.notModified++;
      else if (res.status < 300) this.stats.counted++;
      return res;
    };
    const maxWait = this.opts.maxWaitSeconds;
    const onLimit =
      (kind: 'primary' | 'secondary') =>
      (retryAfter: number, options: { method: string; url: string }): boolean => {
        const ok = retryAfter <= maxWait;
        this.stats.rateLimitWaits++;
        this.emit({
          kind: 'rate-limit',
          service: 'github',
          waitSeconds: retryAfter,
          reason: `${kind} rate limit on ${options.method} ${options.url}${ok ? '' : ` (longer than max_wait_seconds ${maxWait}: giving up)`}`,
        });
        return ok;
      };
    const ThrottledOctokit = throttledOctokit();
    return new ThrottledOctokit({
      ...(auth ? { auth } : {}),
      baseUrl: this.opts.baseUrl.replace(/\/$/, ''),
      userAgent: 'telebench-mining',
      request: { fetch: countingFetch },
      log: {
        debug: () => undefined,
        info: () => undefined,
        warn: (m: string) => this.emit({ kind: 'log', message: `GitHub: ${redact(m)}` }),
        error: (m: string) => this.emit({ kind: 'log', message: `GitHub: ${redact(m)}` }),
      },
      throttle: {
        onRateLimit: onLimit('primary'),
        onSecondaryRateLimit: onLimit('secondary'),
        fallbackSecondaryRateRetryAfter: 60,
      },
      retry: {
        retries: this.opts.maxRetries,
        retryAfterBaseValue: this.opts.retryBaseMs,
        // 403 and 429 are rate limits or refusals: waited out (or not) by throttling and
        // waitingOutRateLimits, never blindly retried on a fixed backoff
        doNotRetry: [304, 400, 401, 403, 404, 410, 422, 429, 451],
      },
    });
  }

  private next(): Client {
    const c = this.clients[this.turn % this.clients.length]!;
    this.turn++;
    return c;
  }

  /**
   * Conditional GET of `path` (`/repos/{owner}/{repo}/pulls`) with `params` (query).
   * @param expect `array` or `object`: the JSON shape the route returns
   * @returns the parsed body (fresh, or from the blob of the stored ETag on 304)
   * @throws TelebenchError `github_not_found` (content) on 404/410; `github_unauthorized` (preflight)
   *   on 401; `github_rate_limited` (rate-limit) when a wait exceeds `maxWaitSeconds`;
   *   `github_malformed_response` (transient) when the body is not the expected JSON after retries;
   *   `github_request_failed` (transient) for 5xx and dropped connections after retries
   */
  async get<T>(
    path: string,
    params: Record<string, string | number> = {},
    expect: 'array' | 'object' = 'object',
  ): Promise<GithubResult<T>> {
    const query = Object.entries(params)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
      .join('&');
    const cacheKey = `${this.opts.baseUrl.replace(/\/$/, '')}${path}${query ? `?${query}` : ''}`;
    return pRetry(
      () =>
        this.waitingOutRateLimits(`GET ${path}`, () =>
          this.getOnce(path, params, expect, cacheKey),
        ),
      {
        retries: this.opts.maxRetries,
        minTimeout: this.opts.retryBaseMs,
        factor: 2,
        // p-retry 6 calls onFailedAttempt also for an error it will not retry and after the last
        // attempt; the retry event is emitted here, only when a retry follows.
        shouldRetry: (err) => {
          const retry =
            err instanceof TelebenchError &&
            err.code === 'github_malformed_response' &&
            err.retriesLeft > 0;
          if (retry) {
            this.stats.retries++;
            this.emit({
              kind: 'retry',
              service: 'github',
              attempt: err.attemptNumber,
              // the retry package's wait before retry n: minTimeout * factor^(n-1)
              waitSeconds: (this.opts.retryBaseMs * 2 ** (err.attemptNumber - 1)) / 1000,
              reason: err.message,
            });
          }
          return retry;
        },
      },
    );
  }

  /**
   * Runs `fn`; when it fails with a rate limit the throttling plugin did not handle
   * ({@link rateLimitWaitSeconds}), waits as asked (a `rate-limit` event first) and runs it again,
   * up to `maxRateLimitWaits` times.
   * @throws TelebenchError `github_rate_limited` (rate-limit) when a wait exceeds
   *   `maxWaitSeconds` or the waits are used up; whatever `fn` throws otherwise
   */
  private async waitingOutRateLimits<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let waits = 0; ; waits++) {
      try {
        return await fn();
      } catch (err) {
        const raw = err instanceof TelebenchError ? err.cause : err;
        const wait = rateLimitWaitSeconds(raw, this.opts.fallbackRateLimitSeconds);
        if (wait === undefined || handledByThrottling(raw)) throw err;
        const tooLong = wait > this.opts.maxWaitSeconds;
        const usedUp = waits >= this.opts.maxRateLimitWaits;
        const status = (raw as { status?: number }).status;
        if (tooLong || usedUp) {
          const why = tooLong
            ? `longer than max_wait_seconds ${this.opts.maxWaitSeconds}`
            : `still limited after ${waits} waits`;
          this.emit({
            kind: 'rate-limit',
            service: 'github',
            waitSeconds: wait,
            reason: `rate limit (${status}) on ${what} (${why}: giving up)`,
          });
          throw err;
        }
        this.stats.rateLimitWaits++;
        this.emit({
          kind: 'rate-limit',
          service: 'github',
          waitSeconds: wait,
          reason: `rate limit (${status}: ${redact(errorMessage(raw)).slice(0, 120)}) on ${what}`,
        });
        await abortableSleep(wait * 1000, this.opts.signal);
      }
    }
  }

  private async getOnce<T>(
    path: string,
    params: Record<string, string | number>,
    expect: 'array' | 'object',
    cacheKey: string,
  ): Promise<GithubResult<T>> {
    const stored = this.opts.kv.get<EtagEntry>('github.etag', cacheKey);
    const usable = stored && this.opts.blobs.has(stored.blob) ? stored : undefined;
    const headers: Record<string, string> = { accept: 'application/vnd.github+json' };
    if (usable) headers['if-none-match'] = usable.etag;
    let res: { data: unknown; headers: Record<string, string | number | undefined> };
    try {
      res = await this.next().request(`GET ${path}`, { ...params, headers });
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status === 304 && usable) {
        return {
          data: JSON.parse(this.opts.blobs.getText(usable.blob)) as T,
          blob: usable.blob,
          cached: true,
          next: usable.next,
        };
      }
      throw this.wrap(err, path);
    }
    const data = res.data;
    const okShape = expect === 'array' ? Array.isArray(data) : isObject(data);
    if (!okShape) {
      const sample = typeof data === 'string' ? data.slice(0, 120) : JSON.stringify(data);
      throw new TelebenchError(
        'github_malformed_response',
        `GitHub GET ${path}: expected a JSON ${expect}, got ${typeof data === 'string' ? 'unparseable text' : typeof data}: ${JSON.stringify(sample)}`,
        { tier: 'transient', context: { path, params } },
      );
    }
    const raw = JSON.stringify(data);
    const blob = this.opts.blobs.put(raw);
    const link = String(res.headers.link ?? '');
    const next = /rel="next"/.test(link);
    const etag = res.headers.etag;
    if (typeof etag === 'string' && etag !== '') {
      this.opts.kv.set('github.etag', cacheKey, { etag, blob, next } satisfies EtagEntry);
    }
    return { data: data as T, blob, cached: false, next };
  }

  /**
   * Every page of a list route, in order (`per_page` from `params`, default 100).
   * @param stop called after each page; returning true stops before the next page
   * @throws as {@link get}
   */
  async *paginate<T>(
    path: string,
    params: Record<string, string | number> = {},
    stop?: (page: T[]) => boolean,
  ): AsyncGenerator<GithubResult<T[]>> {
    for (let page = 1; ; page++) {
      const r = await this.get<T[]>(path, { per_page: 100, ...params, page }, 'array');
      yield r;
      if (!r.next || r.data.length === 0) return;
      if (stop?.(r.data)) return;
    }
  }

  /**
   * A GraphQL query (`POST {baseUrl}/graphql`). GraphQL cannot answer 304: callers cache results
   * themselves (e.g. by a PR's `updated_at`).
   * @returns the `data` object of the answer
   * @throws TelebenchError `github_graphql_failed` (transient) when the answer has `errors` or the
   *   request fails after retries; `github_unauthorized` (preflight) on 401
   */
  async graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    try {
      return await this.waitingOutRateLimits('POST /graphql', () =>
        this.next().graphql<T>(query, variables),
      );
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status === 401 || status === 403 || status === 429) throw this.wrap(err, '/graphql');
      throw new TelebenchError(
        'github_graphql_failed',
        `GitHub GraphQL query failed: ${redact((err as Error).message ?? String(err))}`,
        { tier: 'transient', context: { baseUrl: this.opts.baseUrl }, cause: err },
      );
    }
  }

  /**
   * `GET /rate_limit` (free: not counted), for preflight.
   * @returns the core limit and what remains
   * @throws TelebenchError as {@link get} (a dropped connection becomes `github_request_failed`)
   */
  async rateLimit(): Promise<{ limit: number; remaining: number; reset: number }> {
    try {
      const r = await this.clients[0]!.request('GET /rate_limit', {
        request: { retries: 0 },
      });
      const core = (r.data as { resources?: { core?: Record<string, number> } }).resources?.core;
      return { limit: core?.limit ?? 0, remaining: core?.remaining ?? 0, reset: core?.reset ?? 0 };
    } catch (err) {
      throw this.wrap(err, '/rate_limit');
    }
  }

  private wrap(err: unknown, path: string): TelebenchError {
    if (err instanceof TelebenchError) return err;
    const status = (err as { status?: number }).status;
    const message = redact((err as Error).message ?? String(err));
    const context = { path, status, baseUrl: this.opts.baseUrl };
    if (status === 404 || status === 410)
      return new TelebenchError('github_not_found', `GitHub GET ${path}: ${status} ${message}`, {
        tier: 'content',
        context,
      });
    if (status === 401)
      return new TelebenchError(
        'github_unauthorized',
        `GitHub GET ${path}: 401 (bad credentials): check GITHUB_TOKEN / GITHUB_TOKENS`,
        { tier: 'preflight', context },
      );
    if (status === 403 || status === 429)
      return new TelebenchError(
        'github_rate_limited',
        `GitHub GET ${path}: ${status} ${message} (rate limit wait refused or access denied)`,
        { tier: 'rate-limit', context, cause: err },
      );
    return new TelebenchError(
      'github_request_failed',
      `GitHub GET ${path} failed after ${this.opts.maxRetries} retries: ${status ?? ''} ${message}`.trim(),
      { tier: 'transient', context, cause: err },
    );
  }
}

/** The message of an Octokit request error (the body's `message`), or of any error. */
function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Whether @octokit/plugin-throttling already waited for (or refused to wait for) this error: its
 * own two shapes, a message with "secondary rate" or `x-ratelimit-remaining: 0` (see the plugin's
 * `retryLimiter.on('failed')`).
 */
function handledByThrottling(err: unknown): boolean {
  const e = err as { message?: string; response?: { headers?: Record<string, unknown> } };
  return (
    /\bsecondary rate\b/i.test(e.message ?? '') ||
    String(e.response?.headers?.['x-ratelimit-remaining'] ?? '') === '0'
  );
}

/**
 * How long a GitHub answer asks to wait before the next request, whatever its wording: a 403 or
 * 429 with a `retry-after` header (RFC 9110 section 10.2.3), or with `x-ratelimit-remaining: 0`
 * (until `x-ratelimit-reset` + 1 s), or whose message speaks of a rate limit or abuse detection
 * (`fallbackSeconds`); a 429 is a rate limit by definition (RFC 6585 section 4). GitHub's docs
 * ("Rate limits for the REST API"): on a 403 or 429 with `retry-after`, wait that long.
 * @param err an Octokit RequestError (`status`, `message`, `response.headers`), or anything
 * @returns seconds (>= 0), or undefined when `err` is not a rate limit (e.g. a 403 access denied)
 */
export function rateLimitWaitSeconds(
  err: unknown,
  fallbackSeconds: number,
  now = Date.now(),
): number | undefined {
  const e = err as {
    status?: number;
    message?: string;
    response?: { headers?: Record<string, unknown>; data?: unknown };
  };
  if (e?.status !== 403 && e?.status !== 429) return undefined;
  const h = e.response?.headers ?? {};
  const header = (k: string): string | null => (h[k] === undefined ? null : String(h[k]));
  const after = parseRetryAfter(header('retry-after'), now);
  if (after !== undefined) return Math.ceil(after / 1000);
  if (header('x-ratelimit-remaining') === '0' && header('x-ratelimit-reset') !== null)
    return Math.max(0, Math.ceil(Number(header('x-ratelimit-reset')) - now / 1000) + 1);
  const data = e.response?.data;
  const text = `${e.message ?? ''} ${
    typeof data === 'object' && data !== null ? String((data as { message?: unknown }).message) : ''
  }`;
  if (e.status === 429 || /rate[\s-]?limit|abuse|too many requests/i.test(text))
    return fallbackSeconds;
  return undefined;
}

/** Sleeps `ms`; rejects with the signal's reason when `signal` aborts. */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
