import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OllamaProvider } from '../../../../pipeline/providers/llm/ollama.js';
import { PreflightError, TelebenchError } from '../../../../pipeline/errors.js';
import { BlobStore } from '../../../../pipeline/store/blobs.js';
import { startLlmServer, type LlmServer } from '../../../servers/llm-server.js';
import type { ChatRequest } from '../../../../pipeline/providers/llm/types.js';
import type { TelebenchEvent } from '../../../../pipeline/events.js';
import { chatRequest, type FlatRequest } from '../../../fixtures/chat-request.js';
import { hasWarning } from '../../../../pipeline/providers/llm/types.js';

const MODEL = 'qwen3.5:2b';
const FAST = { idleTimeoutMs: 2000, minBackoffMs: 5, maxBackoffMs: 20, retries: 3 };
const ask = (text: string, extra: Partial<FlatRequest> = {}): ChatRequest =>
  chatRequest({
    model: MODEL,
    messages: [{ role: 'user', content: text }],
    think: true,
    temperature: 0,
    ...extra,
  });

async function expectError(p: Promise<unknown>): Promise<TelebenchError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TelebenchError);
    return err as TelebenchError;
  }
  throw new Error('expected the call to fail');
}

describe('OllamaProvider against the scripted server', () => {
  let server: LlmServer;
  let dir: string;
  beforeEach(async () => {
    server = await startLlmServer();
    dir = mkdtempSync(join(tmpdir(), 'tb-ollama-'));
  });
  afterEach(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams thinking and content, sends num_ctx/num_predict/temperature/seed/top_p and think', async () => {
    server.enqueue({ thinking: 'Step one. Step two. So option 3.', content: 'Final Answer: 3' });
    const blobs = new BlobStore(join(dir, 'blobs'));
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST, blobs });
    const r = await p.chat(
      ask('Which option?', { numCtx: 4096, maxTokens: 512, seed: 7, topP: 0.9 }),
    );
    expect(r.thinking).toBe('Step one. Step two. So option 3.');
    expect(r.content).toBe('Final Answer: 3');
    expect(r.doneReason).toBe('stop');
    expect(r.promptTokens).toBeGreaterThan(2);
    expect(r.outputTokens).toBeGreaterThan(5);
    expect(hasWarning(r, 'prompt-truncated')).toBe(false);
    expect(r.budgetExhausted).toBe(false);
    expect(r.cached).toBe(false);
    expect(r.endpoint).toBe(server.url);
    const sent = server.chatRequests()[0]!.body as Record<string, unknown>;
    expect(sent).toMatchObject({
      model: MODEL,
      stream: true,
      think: true,
      options: { num_ctx: 4096, num_predict: 512, temperature: 0, seed: 7, top_p: 0.9 },
    });
    // The raw NDJSON body is kept: several chunk lines and the final done line.
    const raw = blobs.getText(r.rawDigest!);
    expect(raw.trim().split('\n').length).toBeGreaterThan(3);
    expect(raw).toContain('"done":true');
  });

  it('non-streaming mode reads one JSON body', async () => {
    server.enqueue({ thinking: 'Because.', content: 'Final Answer: 2' });
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST, stream: false });
    const r = await p.chat(ask('q'));
    expect(r).toMatchObject({ thinking: 'Because.', content: 'Final Answer: 2' });
    expect((server.chatRequests()[0]!.body as { stream: boolean }).stream).toBe(false);
  });

  it('splits <think> tags out of the content when the thinking field is empty', async () => {
    server.enqueue({
      thinking: 'Hidden reasoning.',
      content: 'Final Answer: 4',
      reasoningAs: 'think-tags',
    });
    const r = await new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(ask('q'));
    expect(r.thinking).toBe('Hidden reasoning.');
    expect(r.content).toBe('Final Answer: 4');
  });

  it('flags done_reason length as budgetExhausted', async () => {
    server.enqueue({ thinking: 'word '.repeat(200), content: 'Final Answer: 1' });
    const r = await new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(
      ask('q', { maxTokens: 50 }),
    );
    expect(r.doneReason).toBe('length');
    expect(r.budgetExhausted).toBe(true);
    expect(r.outputTokens).toBe(50);
    expect(r.content).toBe('');
  });

  it('flags a prompt at the context limit (prompt_eval_count == num_ctx) as promptTruncated', async () => {
    // The local estimate fits (the server "tokenizer" counts differently); the server reports the
    // whole window used: the prompt may have been cut silently.
    server.enqueue({ content: 'Final Answer: 1', promptEvalCount: 1024 });
    const r = await new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(
      ask('short question', { numCtx: 1024 }),
    );
    expect(r.promptTokens).toBe(1024);
    expect(hasWarning(r, 'prompt-truncated')).toBe(true);
  });

  // The scripted model splits digits one per token (like Qwen); cl100k groups three. A table of
  // long numbers therefore passes the local check (even with the 15 % margin) but overflows the
  // window on the server.
  const numberTable = Array.from({ length: 60 }, (_, i) => `${1234567 + i} ${89012345 + i}`).join(
    '\n',
  );

  it('a number-dense prompt over the window: current Ollama refuses it (truncate: false) -> prompt_too_long', async () => {
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const e = await expectError(p.chat(ask(numberTable, { numCtx: 1024 })));
    expect(e.code).toBe('prompt_too_long');
    expect(e.tier).toBe('content');
    expect(e.context.serverPromptTokens as number).toBeGreaterThan(1024);
    expect(e.context.estimate as number).toBeLessThan(1024 / 1.15 - 32);
    expect(e.message).toContain('num_ctx 1024');
    expect(server.chatRequests()).toHaveLength(1); // not retried
  });

  it('the same prompt on a legacy Ollama (ignores truncate, keeps num_ctx tokens) is flagged promptTruncated', async () => {
    await server.close();
    server = await startLlmServer({ ollamaBehaviour: 'legacy' });
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const r = await p.chat(ask(numberTable, { numCtx: 1024 }));
    expect(r.promptTokensLocal!).toBeLessThan(1024 / 1.15 - 32);
    expect(r.promptTokens).toBe(1024);
    expect(hasWarning(r, 'prompt-truncated')).toBe(true);
  });

  it('a v0.30-style count of num_ctx - 1 is flagged too (default slack 1)', async () => {
    server.enqueue({ content: 'x', promptEvalCount: 2047 });
    const r = await new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(
      ask('q', { numCtx: 2048 }),
    );
    expect(hasWarning(r, 'prompt-truncated')).toBe(true);
  });

  it('sends truncate: false and shift: false; an answer reaching the window stops with length', async () => {
    server.enqueue({ thinking: 'step '.repeat(400), content: 'Final Answer: 1' });
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const r = await p.chat(ask('q', { numCtx: 256, maxTokens: 4096 }));
    expect(server.chatRequests()[0]!.body).toMatchObject({ truncate: false, shift: false });
    expect(r.doneReason).toBe('length');
    expect(r.budgetExhausted).toBe(true);
    expect(r.promptTokens! + r.outputTokens!).toBe(256);
    expect(hasWarning(r, 'context-shifted')).toBe(false);
  });

  it('contextShift: true lets the server slide the window, and the result says so', async () => {
    server.enqueue({ thinking: 'step '.repeat(400), content: 'Final Answer: 1' });
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const r = await p.chat(ask('q', { numCtx: 256, maxTokens: 4096, contextShift: true }));
    expect(server.chatRequests()[0]!.body).toMatchObject({ shift: true });
    expect(r.doneReason).toBe('stop');
    expect(r.content).toBe('Final Answer: 1');
    expect(hasWarning(r, 'context-shifted')).toBe(true);
  });

  it('truncatePrompt (paper profiles): an over-long prompt is sent, Ollama cuts it, and it is flagged', async () => {
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const long = 'The AMF keeps the timer. '.repeat(120);
    await expect(p.chat(ask(long, { numCtx: 256 }))).rejects.toMatchObject({
      code: 'prompt_too_long',
    });
    expect(server.chatRequests()).toHaveLength(0);
    const r = await p.chat(ask(long, { numCtx: 256, truncatePrompt: true, contextShift: true }));
    expect(server.chatRequests()[0]!.body).toMatchObject({ truncate: true, shift: true });
    // current Ollama keeps about half the window, so its count is under it: the estimate flags it
    expect(r.promptTokens!).toBeLessThan(255);
    expect(hasWarning(r, 'prompt-truncated')).toBe(true);
    // a prompt that fits is not flagged
    const short = await p.chat(ask('q', { numCtx: 256, truncatePrompt: true }));
    expect(hasWarning(short, 'prompt-truncated')).toBe(false);
  });

  it('text without digits: the server count equals the local estimate, well under the window', async () => {
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const r = await p.chat(
      ask('Which network function handles mobility management in 5GC?', { numCtx: 2048 }),
    );
    expect(r.promptTokens).toBe(r.promptTokensLocal);
    expect(hasWarning(r, 'prompt-truncated')).toBe(false);
  });

  it('refuses to send a prompt that cannot fit num_ctx (prompt_too_long, tier content)', async () => {
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const e = await expectError(p.chat(ask('token '.repeat(600), { numCtx: 512 })));
    expect(e.code).toBe('prompt_too_long');
    expect(e.tier).toBe('content');
    expect(e.context).toMatchObject({ numCtx: 512 });
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('keeps a missing prompt_eval_count as null without flagging, with the local estimate beside it', async () => {
    server.enqueue({ content: 'Final Answer: 1', promptEvalCount: null });
    const r = await new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(
      ask('a question of a few words', { numCtx: 2048 }),
    );
    expect(r.promptTokens).toBeNull();
    expect(hasWarning(r, 'prompt-truncated')).toBe(false);
    expect(r.promptTokensLocal).toBeGreaterThan(5);
  });

  it('reports the lower prompt_eval_count of a prompt-cache hit as the server gives it', async () => {
    await server.close();
    server = await startLlmServer({ promptCache: true });
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const q = ask('The same long shared prefix. '.repeat(20), { numCtx: 4096 });
    const first = await p.chat(q);
    const second = await p.chat(q);
    expect(second.promptTokens!).toBeLessThan(first.promptTokens!);
    expect(hasWarning(second, 'prompt-truncated')).toBe(false);
    expect(second.promptTokensLocal).toBe(first.promptTokensLocal);
  });

  it('waits for retry-after on 429 before retrying', async () => {
    server.enqueue(
      { status: 429, error: 'too many requests', headers: { 'retry-after': '1' } },
      { content: 'Final Answer: 1' },
    );
    const waits: number[] = [];
    const events: TelebenchEvent[] = [];
    const p = new OllamaProvider({
      baseUrl: server.url,
      http: FAST,
      // Record the requested wait instead of sleeping: the test checks the delay, not the clock.
      sleep: async (ms) => {
        waits.push(ms);
      },
      onEvent: (e) => events.push(e),
    });
    const r = await p.chat(ask('q'));
    expect(r.content).toBe('Final Answer: 1');
    expect(server.chatRequests()).toHaveLength(2);
    expect(waits).toEqual([1000]);
    expect(events).toContainEqual(expect.objectContaining({ kind: 'rate-limit', waitSeconds: 1 }));
  });

  it('retries a 500 and then succeeds', async () => {
    server.enqueue({ status: 500, error: 'boom' }, { status: 503 }, { content: 'ok' });
    const r = await new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(ask('q'));
    expect(r.content).toBe('ok');
    expect(server.chatRequests()).toHaveLength(3);
  });

  it('gives up after the retries with tier transient', async () => {
    server.enqueue({ status: 500 }, { status: 500 }, { status: 500 });
    const p = new OllamaProvider({ baseUrl: server.url, http: { ...FAST, retries: 2 } });
    const e = await expectError(p.chat(ask('q')));
    expect(e.code).toBe('llm_server_error');
    expect(e.tier).toBe('transient');
    expect(server.chatRequests()).toHaveLength(3);
  });

  it('an unparseable body is retried like a 5xx, then is a clear bad_response naming the endpoint', async () => {
    const html = { body: '<html>proxy error</html>' };
    server.enqueue(html, html, html, html);
    const e = await expectError(
      new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(ask('q')),
    );
    expect(e.code).toBe('bad_response');
    expect(e.tier).toBe('transient');
    expect(e.message).toContain(server.url);
    expect(e.message).toContain('/api/chat');
    expect(server.chatRequests()).toHaveLength(FAST.retries + 1);
  });

  it('a truncated NDJSON body once is retried and the answer read', async () => {
    server.enqueue(
      { body: '{"model":"qwen3.5:2b","message":{"role":"assistant","content":"Fin' },
      { thinking: 'Checked.', content: 'Final Answer: 3' },
    );
    const r = await new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(ask('q'));
    expect(r.content).toBe('Final Answer: 3');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('a slow response past the idle timeout is retried, then fails with llm_timeout', async () => {
    server.enqueue({ delayMs: 400 }, { content: 'x', stallMs: 400 });
    const p = new OllamaProvider({
      baseUrl: server.url,
      http: { ...FAST, idleTimeoutMs: 150, retries: 1 },
    });
    const e = await expectError(p.chat(ask('q')));
    expect(e.code).toBe('llm_timeout');
    expect(e.tier).toBe('transient');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('a streaming server that keeps sending chunks is not cut by the idle timeout', async () => {
    // 11 chunks 100 ms apart: the whole answer takes over a second, twice the idle timeout.
    server.enqueue({ thinking: 'word '.repeat(30), content: 'done', chunkDelayMs: 100 });
    const p = new OllamaProvider({ baseUrl: server.url, http: { ...FAST, idleTimeoutMs: 500 } });
    const r = await p.chat(ask('q'));
    expect(r.content).toBe('done');
    expect(r.thinking).toBe('word '.repeat(30));
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('a stream cut before its final chunk is an error, not a short answer', async () => {
    server.enqueue(
      { thinking: 'partial thinking here', content: 'x', dropFinal: true },
      { content: 'full' },
    );
    const r = await new OllamaProvider({ baseUrl: server.url, http: FAST }).chat(ask('q'));
    expect(r.content).toBe('full');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('unknown model: 404 model_not_found, tier config, not retried', async () => {
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    const e = await expectError(p.chat(ask('q', { model: 'nope:1b' })));
    expect(e.code).toBe('model_not_found');
    expect(e.tier).toBe('config');
    expect(e.message).toContain('nope:1b');
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('preflight returns version, digest and context length', async () => {
    const info = await new OllamaProvider({ baseUrl: server.url, http: FAST }).preflight(MODEL);
    expect(info).toEqual({
      endpoint: server.url,
      serverVersion: '0.12.6',
      modelDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      contextLength: 32768,
    });
  });

  it('preflight: missing model says to pull it', async () => {
    const e = await new OllamaProvider({ baseUrl: server.url, http: FAST })
      .preflight('llama9:70b')
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(PreflightError);
    expect((e as PreflightError).hint).toBe('run `ollama pull llama9:70b`');
  });

  it('preflight: unreachable endpoint says to start ollama serve', async () => {
    const url = server.url;
    await server.close();
    server = await startLlmServer();
    const e = await new OllamaProvider({ baseUrl: url, http: { ...FAST, idleTimeoutMs: 1000 } })
      .preflight(MODEL)
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(PreflightError);
    expect((e as PreflightError).hint).toContain('start Ollama (`ollama serve`) at ' + url);
  });

  it('/api/ps reports size_vram of loaded models', async () => {
    const p = new OllamaProvider({ baseUrl: server.url, http: FAST });
    expect(await p.psModels()).toEqual([]);
    await p.chat(ask('q'));
    expect(await p.loadedModels()).toEqual([{ endpoint: p.endpoint, models: await p.psModels() }]);
    const ps = await p.psModels();
    expect(ps).toHaveLength(1);
    expect(ps[0]!.name).toBe(MODEL);
    expect(ps[0]!.sizeVram).toBeGreaterThan(0);
  });
});
