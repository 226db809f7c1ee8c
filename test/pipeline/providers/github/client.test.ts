/**
 * GithubClient against the local GitHub REST server with faults: secondary limit (403 +
 * retry-after), primary limit (x-ratelimit-remaining 0, reset a few seconds ahead), 502s, a dropped
 * connection, malformed JSON; ETag caching; pagination.
 */
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GithubClient, tokensFromEnv } from '../../../../pipeline/providers/github/client.js';
import { listClosedPulls } from '../../../../pipeline/providers/github/pulls.js';
import { Store } from '../../../../pipeline/store/store.js';
import { BlobStore } from '../../../../pipeline/store/blobs.js';
import type { TelebenchEvent } from '../../../../pipeline/events.js';
import { TelebenchError } from '../../../../pipeline/errors.js';
import { startGithubServer, type GithubServer } from '../../../servers/github-server.js';
import { free5gcCorpus, nfRepo } from '../../../servers/github-fixtures.js';

let dir: string;
let store: Store;
let blobs: BlobStore;
let server: GithubServer;
let events: TelebenchEvent[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-gh-'));
  store = new Store(join(dir, 'state.db'));
  blobs = new BlobStore(join(dir, 'blobs'));
  server = await startGithubServer(free5gcCorpus());
  events = [];
});
afterEach(async () => {
  store.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function client(extra: Partial<ConstructorParameters<typeof GithubClient>[0]> = {}) {
  return new GithubClient({
    baseUrl: server.url,
    tokens: ['ghp_faulttest'],
    kv: store,
    blobs,
    retryBaseMs: 5,
    maxRetries: 3,
    onEvent: (e) => events.push(e),
    ...extra,
  });
}

const ISSUE = '/repos/free5gc/free5gc/issues/641';

describe('GithubClient', () => {
  it('waits out a secondary rate limit (403 + retry-after) and reports it', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'secondary', times: 1, seconds: 1 });
    const gh = client();
    const t0 = Date.now();
    const r = await gh.get<{ number: number }>(ISSUE);
    expect(r.data.number).toBe(641);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(server.requests.map((q) => q.status)).toEqual([403, 200]);
    const rl = events.filter((e) => e.kind === 'rate-limit');
    expect(rl).toEqual([
      expect.objectContaining({
        service: 'github',
        waitSeconds: 1,
        reason: expect.stringMatching(/^secondary/),
      }),
    ]);
  });

  it('waits out a 403 in the older abuse-detection wording with retry-after (issue 14, section 5)', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'abuse', times: 1, seconds: 1 });
    const gh = client();
    const r = await gh.get<{ number: number }>(ISSUE);
    expect(r.data.number).toBe(641);
    expect(server.requests.map((q) => q.status)).toEqual([403, 200]);
    expect(events.filter((e) => e.kind === 'rate-limit')).toEqual([
      expect.objectContaining({
        service: 'github',
        waitSeconds: 1,
        reason: expect.stringMatching(/abuse detection/),
      }),
    ]);
    // the wait happened, and it is the only thing reported: no retry line
    expect(events.filter((e) => e.kind === 'retry')).toEqual([]);
    expect(gh.stats.rateLimitWaits).toBe(1);
  });

  it('waits out a rate limit in any wording: abuse without retry-after, a 429', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'abuse', times: 1, seconds: 0 });
    server.faults.push({ match: /issues\/700$/, kind: 'too-many', times: 2, seconds: 1 });
    const gh = client({ fallbackRateLimitSeconds: 1 });
    expect((await gh.get<{ number: number }>(ISSUE)).data.number).toBe(641);
    expect(
      (await gh.get<{ number: number }>('/repos/free5gc/free5gc/issues/700')).data.number,
    ).toBe(700);
    expect(server.requests.map((q) => q.status)).toEqual([403, 200, 429, 429, 200]);
    expect(events.filter((e) => e.kind === 'rate-limit').map((e) => e.waitSeconds)).toEqual([
      1, 1, 1,
    ]);
  });

  it('a 403 that is not a rate limit fails after one request and logs no retry', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'denied', times: 5 });
    const err = await client()
      .get(ISSUE)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'github_rate_limited', tier: 'rate-limit' });
    expect(server.requests.length).toBe(1);
    expect(events.filter((e) => e.kind === 'retry' || e.kind === 'rate-limit')).toEqual([]);
  });

  it('gives up on a rate-limit wait in any wording longer than max_wait_seconds', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'abuse', times: 5, seconds: 120 });
    const err = await client({ maxWaitSeconds: 60 })
      .get(ISSUE)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'github_rate_limited', tier: 'rate-limit' });
    expect(server.requests.length).toBe(1);
    expect(events.filter((e) => e.kind === 'retry')).toEqual([]);
    expect(events.filter((e) => e.kind === 'rate-limit')).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/giving up/) }),
    ]);
  });

  it('reports a retry only when one follows (not for the last attempt, not for a 404)', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'malformed', times: 100 });
    await client({ maxRetries: 2 })
      .get(ISSUE)
      .catch((e: unknown) => e);
    expect(server.requests.length).toBe(3);
    const retries = events.filter((e) => e.kind === 'retry');
    expect(retries.map((e) => (e as { attempt: number }).attempt)).toEqual([1, 2]);
    // the reported wait is the backoff the retry package uses: base x 2^(n-1)
    expect(retries.map((e) => e.waitSeconds)).toEqual([0.005, 0.01]);
    events.length = 0;
    const missing = await client()
      .get('/repos/free5gc/free5gc/issues/999999')
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'github_not_found' });
    expect(events.filter((e) => e.kind === 'retry')).toEqual([]);
  });

  it('waits for x-ratelimit-reset on the primary limit and reports it', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'primary', times: 1, seconds: 1 });
    const gh = client();
    const r = await gh.get<{ number: number }>(ISSUE);
    expect(r.data.number).toBe(641);
    const rl = events.find((e) => e.kind === 'rate-limit');
    expect(rl).toMatchObject({ reason: expect.stringMatching(/^primary/) });
    expect((rl as { waitSeconds: number }).waitSeconds).toBeGreaterThanOrEqual(1);
    expect((rl as { waitSeconds: number }).waitSeconds).toBeLessThanOrEqual(3);
    expect(server.requests.map((q) => q.status)).toEqual([403, 200]);
  });

  it('gives up with tier rate-limit when the wait exceeds max_wait_seconds', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'secondary', times: 5, seconds: 120 });
    const gh = client({ maxWaitSeconds: 60 });
    const err = await gh.get(ISSUE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect(err).toMatchObject({ code: 'github_rate_limited', tier: 'rate-limit' });
    expect(server.requests.length).toBe(1);
  });

  it('retries 502s and a dropped connection', async () => {
    server.faults.push({ match: /issues\/641$/, kind: '502', times: 2 });
    const gh = client();
    expect((await gh.get<{ number: number }>(ISSUE)).data.number).toBe(641);
    expect(server.requests.map((q) => q.status)).toEqual([502, 502, 200]);
    server.faults.push({ match: /issues\/700$/, kind: 'drop', times: 1 });
    expect(
      (await gh.get<{ number: number }>('/repos/free5gc/free5gc/issues/700')).data.number,
    ).toBe(700);
    expect(server.requests.slice(3).map((q) => q.status)).toEqual([0, 200]);
  });

  it('fails with github_request_failed after the retries of persistent 502s', async () => {
    server.faults.push({ match: /issues\/641$/, kind: '502', times: 50 });
    const err = await client({ maxRetries: 2 })
      .get(ISSUE)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'github_request_failed', tier: 'transient' });
    expect(server.requests.length).toBe(3);
  });

  it('a malformed JSON body is a clear error and loses nothing cached', async () => {
    const gh = client();
    const first = await gh.get<{ title: string }>(ISSUE);
    // malformed on every attempt: the error names the route; the cached ETag and blob survive
    server.faults.push({ match: /issues\/641$/, kind: 'malformed', times: 100 });
    const err = await client({ maxRetries: 1 })
      .get(ISSUE)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'github_malformed_response', tier: 'transient' });
    expect((err as Error).message).toMatch(
      /GET \/repos\/free5gc\/free5gc\/issues\/641: expected a JSON object/,
    );
    server.faults.length = 0;
    const before = server.requests.length;
    const again = await client().get<{ title: string }>(ISSUE);
    expect(again.cached).toBe(true);
    expect(again.data.title).toBe(first.data.title);
    expect(server.requests.slice(before).map((q) => q.status)).toEqual([304]);
  });

  it('a malformed body once is retried and then succeeds', async () => {
    server.faults.push({ match: /issues\/641$/, kind: 'malformed', times: 1 });
    const r = await client().get<{ number: number }>(ISSUE);
    expect(r.data.number).toBe(641);
    expect(events.some((e) => e.kind === 'retry')).toBe(true);
  });

  it('answers an unchanged resource from the cache on 304 and counts it', async () => {
    const gh = client();
    await gh.get(ISSUE);
    const r = await gh.get(ISSUE);
    expect(r.cached).toBe(true);
    expect(gh.stats).toMatchObject({ requests: 2, notModified: 1, counted: 1 });
  });

  it('follows Link pagination, each page conditional', async () => {
    const many = nfRepo(
      'free5gc/big',
      Array.from({ length: 25 }, (_, i) => ({
        number: i + 1,
        title: `fix ${i}`,
        body: '',
        login: 'dev',
        branch: `b${i}`,
        merged: true,
        files: [['a.go', 1, 1] as [string, number, number]],
        day: i,
      })),
    );
    server.corpus['free5gc/big'] = many;
    const gh = client();
    const l = await listClosedPulls(gh, 'free5gc', 'big', { base: 'main', perPage: 10 });
    expect(l.merged.map((p) => p.number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    expect(server.requests.length).toBe(3);
    await listClosedPulls(gh, 'free5gc', 'big', { base: 'main', perPage: 10 });
    expect(server.requests.slice(3).map((q) => q.status)).toEqual([304, 304, 304]);
    // since: stops after the first page holding an older PR
    const recent = await listClosedPulls(gh, 'free5gc', 'big', {
      base: 'main',
      perPage: 10,
      since: new Date(Date.UTC(2025, 0, 20)),
    });
    expect(recent.merged.length).toBeLessThan(10);
    expect(server.requests.length).toBe(7);
  });

  it('reads tokens from GITHUB_TOKENS, else GITHUB_TOKEN, and works unauthenticated saying so', async () => {
    expect(tokensFromEnv({ GITHUB_TOKENS: 'a1,b2 c3', GITHUB_TOKEN: 'x' })).toEqual([
      'a1',
      'b2',
      'c3',
    ]);
    expect(tokensFromEnv({ GITHUB_TOKEN: 'x' })).toEqual(['x']);
    expect(tokensFromEnv({})).toEqual([]);
    const gh = client({ tokens: [] });
    expect(gh.authenticated).toBe(false);
    expect(events.some((e) => e.kind === 'log' && /60 requests\/hour/.test(e.message))).toBe(true);
    await gh.get(ISSUE);
    expect(server.requests[0]!.auth).toBeNull();
  });
});
