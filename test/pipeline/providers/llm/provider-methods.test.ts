import { describe, it, expect, afterEach, beforeEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProvider } from '../../../../pipeline/providers/llm/config.js';
import { everyProvider } from '../../../../pipeline/providers/llm/options.js';
import { chatWarnings } from '../../../../pipeline/providers/llm/result.js';
import { Store } from '../../../../pipeline/store/store.js';
import { startLlmServer, type LlmServer } from '../../../servers/llm-server.js';

const MODEL = 'qwen3.5:2b';
let dir: string;
let store: Store;
const servers: LlmServer[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-provider-methods-'));
  store = new Store(join(dir, 'state.db'));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('capacity and loaded models are methods: the decorators answer, nothing unwraps them', () => {
  it('cache over fallback over pool: the answering side tells, before and after the switch', async () => {
    const fallback = await startLlmServer();
    servers.push(fallback);
    const p = createProvider(
      {
        // nothing listens on port 9: the primary fails its preflight
        endpoints: [{ kind: 'ollama', base_url: 'http://127.0.0.1:9', concurrency: 4, retries: 0 }],
        fallback: [{ kind: 'ollama', base_url: fallback.url, concurrency: 2 }],
      },
      { kv: store },
    );
    expect(p.capacity()).toBe(4);
    await p.preflight(MODEL);
    expect(p.capacity()).toBe(2);
    await p.chat({ model: MODEL, messages: [{ role: 'user', content: 'q' }] });
    const loaded = await p.loadedModels();
    expect(loaded.map((l) => l.endpoint)).toEqual([fallback.url]);
    expect(loaded[0]!.models[0]!.name).toBe(MODEL);
  });

  it('an OpenAI-compatible endpoint reports no loaded models', async () => {
    const s = await startLlmServer();
    servers.push(s);
    const p = createProvider({
      endpoints: [{ kind: 'openai-compatible', base_url: s.url, concurrency: 3 }],
      cache: false,
    });
    expect(p.capacity()).toBe(3);
    expect(await p.loadedModels()).toEqual([]);
  });
});

describe('provider options and warnings', () => {
  it('everyProvider names only what is set, and no shift or cut for OpenAI-compatible servers', () => {
    expect(everyProvider({ think: false })).toEqual({
      ollama: { think: false },
      embedded: { think: false },
      openai: { think: false },
    });
    expect(everyProvider({ numCtx: 512, contextShift: true }).openai).toEqual({ numCtx: 512 });
  });

  it('the Ollama provider sends only its own namespace and returns the shift as a warning', async () => {
    const s = await startLlmServer();
    servers.push(s);
    s.enqueue({ thinking: 'step '.repeat(400), content: 'Final Answer: 1' });
    const p = createProvider({ endpoints: [{ kind: 'ollama', base_url: s.url }], cache: false });
    const r = await p.chat({
      model: MODEL,
      messages: [{ role: 'user', content: 'q' }],
      maxTokens: 4096,
      providerOptions: {
        ollama: { numCtx: 256, contextShift: true, think: true },
        embedded: { numCtx: 99_999 },
      },
    });
    const sent = s.chatRequests()[0]!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ think: true, shift: true, options: { num_ctx: 256 } });
    expect(r.warnings.map((w) => w.type)).toEqual(['context-shifted']);
    expect(r.warnings[0]!.message).toContain('256 tokens');
  });

  it('chatWarnings says nothing when nothing happened', () => {
    expect(chatWarnings({ promptTruncated: false, contextShifted: false, window: 10 })).toEqual([]);
  });
});
