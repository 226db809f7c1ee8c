import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../../pipeline/store/store.js';
import { BlobStore } from '../../../../pipeline/store/blobs.js';
import { PreflightError, TelebenchError } from '../../../../pipeline/errors.js';
import {
  createProvider,
  llmConfigSchema,
  loadedModels,
  providerCapacity,
} from '../../../../pipeline/providers/llm/config.js';
import {
  CachedProvider,
  RESPONSE_CACHE_NAMESPACE,
  responseCacheKey,
} from '../../../../pipeline/providers/llm/cache.js';
import { LlmPool } from '../../../../pipeline/providers/llm/pool.js';
import { parseConfigText } from '../../../../pipeline/config/load.js';
import { startLlmServer, type LlmServer } from '../../../servers/llm-server.js';
import type { ChatRequest } from '../../../../pipeline/providers/llm/types.js';
import { chatRequest, type FlatRequest } from '../../../fixtures/chat-request.js';

const MODEL = 'qwen3.5:2b';
const OLLAMA_SCOPE = { provider: 'ollama', modelDigest: 'a'.repeat(64) };
const fast = (kind: 'ollama' | 'openai-compatible', base_url: string, extra = {}) => ({
  kind,
  base_url,
  idle_timeout_ms: 2000,
  min_backoff_ms: 5,
  max_backoff_ms: 20,
  ...extra,
});
const ask = (text: string, extra: Partial<FlatRequest> = {}): ChatRequest =>
  chatRequest({
    model: MODEL,
    messages: [{ role: 'user', content: text }],
    think: true,
    temperature: 0,
    numCtx: 4096,
    ...extra,
  });

describe('response cache in the store', () => {
  let server: LlmServer;
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    server = await startLlmServer();
    dir = mkdtempSync(join(tmpdir(), 'tb-llm-cache-'));
    store = new Store(join(dir, 'state.db'));
  });
  afterEach(async () => {
    store.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a re-run with a fresh provider on the same store makes no HTTP request', async () => {
    server.enqueue({ thinking: 'Think.', content: 'Final Answer: 3' });
    const blobs = new BlobStore(join(dir, 'blobs'));
    const config = { endpoints: [fast('ollama', server.url)] };
    const first = await createProvider(config, { kv: store, blobs }).chat(ask('q1'));
    expect(first.cached).toBe(false);
    expect(server.chatRequests()).toHaveLength(1);

    // A second "run": new provider objects, same store (reopened from disk).
    store.close();
    store = new Store(join(dir, 'state.db'));
    const again = await createProvider(config, { kv: store, blobs }).chat(ask('q1'));
    expect(server.chatRequests()).toHaveLength(1);
    expect(again.cached).toBe(true);
    expect(again.latencyMs).toBe(0);
    expect(again).toMatchObject({
      thinking: 'Think.',
      content: 'Final Answer: 3',
      rawDigest: first.rawDigest,
    });
    expect(blobs.getText(again.rawDigest!)).toContain('"done":true');
    expect(store.count(RESPONSE_CACHE_NAMESPACE)).toBe(1);
  });

  it('every output-changing option is in the key; a changed option makes a new call', async () => {
    const p = createProvider({ endpoints: [fast('ollama', server.url)] }, { kv: store });
    await p.chat(ask('q'));
    await p.chat(ask('q', { seed: 1 }));
    await p.chat(ask('q', { temperature: 0.7 }));
    await p.chat(ask('q', { numCtx: 8192 }));
    await p.chat(ask('q', { think: false }));
    await p.chat(ask('q', { maxTokens: 100 }));
    await p.chat(ask('q', { topP: 0.5 }));
    await p.chat(ask('q', { model: 'qwen3.5:2b' }));
    expect(server.chatRequests()).toHaveLength(7);
    expect(responseCacheKey(ask('q'), OLLAMA_SCOPE)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the key holds the provider kind and the model digest, not the endpoint', () => {
    const key = responseCacheKey(ask('q'), OLLAMA_SCOPE);
    expect(responseCacheKey(ask('q'), { ...OLLAMA_SCOPE })).toBe(key);
    expect(responseCacheKey(ask('q'), { ...OLLAMA_SCOPE, provider: 'openai-compatible' })).not.toBe(
      key,
    );
    expect(responseCacheKey(ask('q'), { ...OLLAMA_SCOPE, modelDigest: 'b'.repeat(64) })).not.toBe(
      key,
    );
    expect(responseCacheKey(ask('q'), { ...OLLAMA_SCOPE, modelDigest: null })).not.toBe(key);
  });

  it('a re-pulled model (new digest at preflight) misses the cache; the same digest hits', async () => {
    const run = async (digest: string, content: string) => {
      const s = await startLlmServer({ models: [{ name: MODEL, digest }] });
      s.enqueue({ content });
      try {
        // A fresh provider per "run", as a stage builds it: preflight first, then the chat.
        const p = createProvider({ endpoints: [fast('ollama', s.url)] }, { kv: store });
        expect((await p.preflight(MODEL)).modelDigest).toBe(digest);
        const r = await p.chat(ask('q'));
        return { r, calls: s.chatRequests().length };
      } finally {
        await s.close();
      }
    };
    const first = await run('a'.repeat(64), 'Final Answer: 1');
    expect(first).toMatchObject({ calls: 1, r: { cached: false, content: 'Final Answer: 1' } });
    // Same name, new build: the old answer must not be served.
    const repulled = await run('b'.repeat(64), 'Final Answer: 2');
    expect(repulled).toMatchObject({ calls: 1, r: { cached: false, content: 'Final Answer: 2' } });
    // Back to the first build on another endpoint URL: its answer is served from the store.
    const again = await run('a'.repeat(64), 'never sent');
    expect(again).toMatchObject({ calls: 0, r: { cached: true, content: 'Final Answer: 1' } });
    expect(store.count(RESPONSE_CACHE_NAMESPACE)).toBe(2);
  });

  it('without an earlier preflight, the first chat runs one to learn the digest', async () => {
    const digest = 'c'.repeat(64);
    const s = await startLlmServer({ models: [{ name: MODEL, digest }] });
    const p = createProvider({ endpoints: [fast('ollama', s.url)] }, { kv: store });
    await Promise.all([p.chat(ask('q1')), p.chat(ask('q2'))]);
    const preflights = s.requests.filter((r) => r.path === '/api/tags');
    await s.close();
    expect(preflights).toHaveLength(1);
    const rows = store.db.prepare('SELECT key FROM kv').all() as { key: string }[];
    expect(rows.map((r) => r.key).sort()).toEqual(
      [
        responseCacheKey(ask('q1'), { provider: 'ollama', modelDigest: digest }),
        responseCacheKey(ask('q2'), { provider: 'ollama', modelDigest: digest }),
      ].sort(),
    );
  });

  it('errors are never cached: a failed request is sent again next time', async () => {
    server.enqueue({ status: 400, error: 'bad option' }, { content: 'fine now' });
    const p = createProvider({ endpoints: [fast('ollama', server.url)] }, { kv: store });
    await expect(p.chat(ask('q'))).rejects.toThrow(/bad option/);
    expect(store.count(RESPONSE_CACHE_NAMESPACE)).toBe(0);
    expect((await p.chat(ask('q'))).content).toBe('fine now');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('no secret reaches the stored cache entries', async () => {
    await server.close();
    server = await startLlmServer({ apiKey: 'sk-secret-abcdef' });
    const env = { TELEBENCH_LLM_API_KEY: 'sk-secret-abcdef' };
    const p = createProvider(
      { endpoints: [fast('openai-compatible', server.url, { context_length: 4096 })] },
      { kv: store, env },
    );
    const info = await p.preflight(MODEL);
    await p.chat(ask('q'));
    const rows = store.db.prepare('SELECT key, value FROM kv').all() as {
      key: string;
      value: string;
    }[];
    expect(rows.length).toBe(1);
    expect(JSON.stringify(rows)).not.toContain('sk-secret');
    expect(rows[0]!.key).toBe(
      responseCacheKey(ask('q'), { provider: 'openai-compatible', modelDigest: info.modelDigest }),
    );
  });

  it('identical requests in flight share one call', async () => {
    server.enqueue({ content: 'once', delayMs: 50 });
    const p = new CachedProvider(
      createProvider({ endpoints: [fast('ollama', server.url)], cache: false }),
      store,
    );
    const [a, b] = await Promise.all([p.chat(ask('same')), p.chat(ask('same'))]);
    expect(a.content).toBe('once');
    expect(b.content).toBe('once');
    expect(server.chatRequests()).toHaveLength(1);
  });
});

describe('pool of endpoints', () => {
  const servers: LlmServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('spreads requests over endpoints and keeps each under its concurrency limit', async () => {
    const a = await startLlmServer({ delayMs: 30 });
    const b = await startLlmServer({ delayMs: 30 });
    servers.push(a, b);
    const p = createProvider({
      endpoints: [
        fast('ollama', a.url, { concurrency: 2 }),
        fast('ollama', b.url, { concurrency: 3 }),
      ],
      cache: false,
    });
    expect(providerCapacity(p)).toBe(5);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => p.chat(ask(`q${i}`))));
    expect(a.chatRequests().length + b.chatRequests().length).toBe(20);
    // Each endpoint was driven up to its limit and never beyond it.
    expect(a.stats.peakInFlight).toBe(2);
    expect(b.stats.peakInFlight).toBe(3);
    expect(b.chatRequests().length).toBeGreaterThan(a.chatRequests().length);
    expect(new Set(results.map((r) => r.endpoint))).toEqual(new Set([a.url, b.url]));
  });

  it('moves a request to another endpoint when one keeps failing', async () => {
    const bad = await startLlmServer({ fallback: { status: 503, error: 'overloaded' } });
    const good = await startLlmServer();
    servers.push(bad, good);
    const p = createProvider({
      endpoints: [
        fast('ollama', bad.url, { retries: 1 }),
        fast('ollama', good.url, { retries: 1 }),
      ],
      cache: false,
    });
    for (let i = 0; i < 4; i++) {
      const r = await p.chat(ask(`q${i}`));
      expect(r.endpoint).toBe(good.url);
    }
    expect(bad.chatRequests().length).toBeGreaterThan(0);
  });

  it('preflight checks every endpoint and rejects different digests of one model', async () => {
    const a = await startLlmServer({ models: [{ name: MODEL, digest: 'a'.repeat(64) }] });
    const b = await startLlmServer({ models: [{ name: MODEL, digest: 'b'.repeat(64) }] });
    servers.push(a, b);
    const p = createProvider({ endpoints: [fast('ollama', a.url), fast('ollama', b.url)] });
    const e = await p.preflight(MODEL).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(PreflightError);
    expect((e as Error).message).toContain('different builds');
    const same = createProvider({ endpoints: [fast('ollama', a.url), fast('ollama', a.url)] });
    const info = await same.preflight(MODEL);
    expect(info.modelDigest).toBe('a'.repeat(64));
    expect(info.endpoint).toBe(`${a.url}, ${a.url}`);
  });

  it('reports VRAM of the loaded models through /api/ps', async () => {
    const a = await startLlmServer();
    servers.push(a);
    const p = createProvider({ endpoints: [fast('ollama', a.url)] });
    await p.chat(ask('q'));
    const vram = await loadedModels(p);
    expect(vram).toHaveLength(1);
    expect(vram[0]!.models[0]!.sizeVram).toBe(2_400_000_000);
  });

  it('an empty pool is refused', () => {
    expect(() => new LlmPool([])).toThrow(/at least one endpoint/);
  });
});

describe('llm configuration', () => {
  it('defaults to one local Ollama with streaming, cache on and the documented prompt margins', () => {
    const c = llmConfigSchema.parse({});
    expect(c.endpoints).toEqual([
      expect.objectContaining({
        kind: 'ollama',
        base_url: 'http://127.0.0.1:11434',
        stream: true,
        concurrency: 1,
      }),
    ]);
    expect(c.cache).toBe(true);
    expect(c.prompt_check).toEqual({
      margin_ratio: 0.15,
      margin_tokens: 32,
      limit_slack_tokens: 1,
    });
  });

  it('a wrong kind or URL is a ConfigError naming the path and line', () => {
    // The endpoint list is a union on `kind` (ollama | openai-compatible | embedded): an unknown
    // kind is reported on `kind`; a bad URL under a known kind on `base_url`.
    const messageOf = (yaml: string) => {
      try {
        parseConfigText(yaml, 'llm.yaml', llmConfigSchema);
      } catch (e) {
        expect(e).toBeInstanceOf(TelebenchError);
        return (e as Error).message;
      }
      throw new Error('expected a ConfigError');
    };
    expect(
      messageOf(
        'endpoints:\n  - kind: ollama\n    base_url: http://127.0.0.1:11434\n  - kind: vllm\n    base_url: nope\n',
      ),
    ).toContain('llm.yaml:4: endpoints[1].kind');
    expect(
      messageOf(
        'endpoints:\n  - kind: ollama\n    base_url: http://127.0.0.1:11434\n  - kind: openai-compatible\n    base_url: nope\n',
      ),
    ).toContain('endpoints[1].base_url');
  });

  it('createProvider without kv has no cache; with kv it has', () => {
    const url = 'http://127.0.0.1:9';
    expect(createProvider({ endpoints: [{ kind: 'ollama', base_url: url }] })).toBeInstanceOf(
      LlmPool,
    );
    const dir = mkdtempSync(join(tmpdir(), 'tb-llm-cfg-'));
    const store = new Store(join(dir, 'state.db'));
    expect(
      createProvider({ endpoints: [{ kind: 'ollama', base_url: url }] }, { kv: store }),
    ).toBeInstanceOf(CachedProvider);
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
