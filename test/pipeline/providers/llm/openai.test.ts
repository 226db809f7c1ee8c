import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { OpenAiCompatibleProvider } from '../../../../pipeline/providers/llm/openai.js';
import { PreflightError, TelebenchError } from '../../../../pipeline/errors.js';
import { startLlmServer, type LlmServer } from '../../../servers/llm-server.js';
import type { ChatRequest } from '../../../../pipeline/providers/llm/types.js';
import type { TelebenchEvent } from '../../../../pipeline/events.js';
import { chatRequest, type FlatRequest } from '../../../fixtures/chat-request.js';
import { hasWarning } from '../../../../pipeline/providers/llm/types.js';

const MODEL = 'qwen3.5:2b';
const FAST = { idleTimeoutMs: 2000, minBackoffMs: 5, maxBackoffMs: 20, retries: 3 };
const NO_KEY = {};
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

describe('OpenAiCompatibleProvider against the scripted server', () => {
  let server: LlmServer;
  beforeEach(async () => {
    server = await startLlmServer();
  });
  afterEach(async () => {
    await server.close();
  });
  const provider = (
    extra: Partial<ConstructorParameters<typeof OpenAiCompatibleProvider>[0]> = {},
  ) => new OpenAiCompatibleProvider({ baseUrl: server.url, http: FAST, env: NO_KEY, ...extra });

  for (const stream of [true, false]) {
    for (const reasoningAs of [
      'reasoning',
      'reasoning_content',
      'think-tags',
      'open-think-tag',
    ] as const) {
      it(`reads the reasoning from ${reasoningAs} (${stream ? 'SSE stream' : 'one JSON body'})`, async () => {
        server.enqueue({
          thinking: 'First this. Then that.',
          content: 'Final Answer: 2',
          reasoningAs,
        });
        const r = await provider({ stream }).chat(ask('q', { maxTokens: 300, seed: 3 }));
        expect(r.thinking).toBe('First this. Then that.');
        expect(r.content).toBe('Final Answer: 2');
        expect(r.doneReason).toBe('stop');
        expect(r.promptTokens).toBeGreaterThan(0);
        expect(r.outputTokens).toBeGreaterThan(5);
        expect(r.budgetExhausted).toBe(false);
        const sent = server.chatRequests()[0]!;
        expect(sent.path).toBe('/v1/chat/completions');
        expect(sent.body).toMatchObject({
          model: MODEL,
          stream,
          max_tokens: 300,
          seed: 3,
          temperature: 0,
        });
        if (stream) expect(sent.body).toMatchObject({ stream_options: { include_usage: true } });
      });
    }
  }

  // Each OpenAI-compatible server family's documented reasoning shape (issue 14, section 3): the
  // reader takes the field that has text; an empty or null field never shadows a filled one.
  const families: [string, Record<string, 'text' | 'empty' | 'null'>][] = [
    [
      'a server sending reasoning "" beside reasoning_content',
      { reasoning: 'empty', reasoning_content: 'text' },
    ],
    [
      'a server sending reasoning_content "" beside reasoning',
      { reasoning_content: 'empty', reasoning: 'text' },
    ],
    ['vLLM >= 0.10 (both fields, same text)', { reasoning: 'text', reasoning_content: 'text' }],
    [
      'vLLM < 0.10 / SGLang / llama.cpp deepseek format (reasoning_content, reasoning null)',
      { reasoning_content: 'text', reasoning: 'null' },
    ],
    [
      'Ollama /v1 and LM Studio (reasoning, reasoning_content null)',
      { reasoning: 'text', reasoning_content: 'null' },
    ],
  ];
  for (const stream of [true, false]) {
    for (const [family, reasoningFields] of families) {
      it(`reads the reasoning of ${family} (${stream ? 'SSE stream' : 'one JSON body'})`, async () => {
        server.enqueue({
          thinking: 'The slot is 0.5 ms. So option 2 fits.',
          content: 'Final Answer: 2',
          reasoningFields,
        });
        const r = await provider({ stream }).chat(ask('q'));
        expect(r.thinking).toBe('The slot is 0.5 ms. So option 2 fits.');
        expect(r.content).toBe('Final Answer: 2');
      });
    }
  }

  it('accepts a base_url ending in /v1', async () => {
    const r = await new OpenAiCompatibleProvider({
      baseUrl: `${server.url}/v1/`,
      http: FAST,
      env: NO_KEY,
    }).chat(ask('q'));
    expect(r.content).toBe('Final Answer: 1');
    expect(server.chatRequests()[0]!.path).toBe('/v1/chat/completions');
  });

  it('finish_reason length is budgetExhausted; an unterminated <think> is all reasoning', async () => {
    server.enqueue({
      thinking: 'long '.repeat(100),
      content: 'Final Answer: 1',
      reasoningAs: 'think-tags',
    });
    const r = await provider().chat(ask('q', { maxTokens: 20 }));
    expect(r.doneReason).toBe('length');
    expect(r.budgetExhausted).toBe(true);
    expect(r.content).toBe('');
    expect(r.thinking.startsWith('long long')).toBe(true);
  });

  it('usage at the configured context length flags promptTruncated', async () => {
    server.enqueue({ content: 'x', promptEvalCount: 4096 });
    const r = await provider({ contextLength: 4096 }).chat(ask('q'));
    expect(hasWarning(r, 'prompt-truncated')).toBe(true);
  });

  it('refuses locally a prompt over the configured context length; a server 400 about context length is prompt_too_long too', async () => {
    const e1 = await expectError(provider({ contextLength: 100 }).chat(ask('word '.repeat(200))));
    expect(e1.code).toBe('prompt_too_long');
    expect(server.chatRequests()).toHaveLength(0);
    await server.close();
    server = await startLlmServer({
      models: [{ name: MODEL, digest: 'd'.repeat(64), contextLength: 50 }],
    });
    const e2 = await expectError(provider().chat(ask('word '.repeat(200))));
    expect(e2.code).toBe('prompt_too_long');
    expect(e2.tier).toBe('content');
    expect(e2.message).toContain('maximum context length is 50');
  });

  it('sends the API key from TELEBENCH_LLM_API_KEY as a bearer header', async () => {
    await server.close();
    server = await startLlmServer({ apiKey: 'sk-test-123456' });
    const r = await provider({ env: { TELEBENCH_LLM_API_KEY: 'sk-test-123456' } }).chat(ask('q'));
    expect(r.content).toBe('Final Answer: 1');
    expect(server.chatRequests()[0]!.headers.authorization).toBe('Bearer sk-test-123456');
    const e = await expectError(
      provider({ env: { OPENAI_API_KEY: 'sk-wrong-000000' } }).chat(ask('q')),
    );
    expect(e.code).toBe('llm_unauthorized');
    expect(e.message).not.toContain('sk-wrong-000000');
  });

  it('429 with retry-after is waited for, 500 is retried', async () => {
    server.enqueue(
      { status: 429, headers: { 'retry-after': '1' }, error: 'rate limited' },
      { status: 500, error: 'engine crashed' },
      { content: 'ok' },
    );
    const waits: number[] = [];
    const events: TelebenchEvent[] = [];
    const r = await provider({
      // Record the requested wait instead of sleeping: the test checks the delay, not the clock.
      sleep: async (ms) => {
        waits.push(ms);
      },
      onEvent: (e) => events.push(e),
    }).chat(ask('q'));
    expect(r.content).toBe('ok');
    expect(server.chatRequests()).toHaveLength(3);
    // Only the 429 carried a retry-after; the 500 is retried after p-retry's backoff alone.
    expect(waits).toEqual([1000]);
    expect(events.map((e) => e.kind)).toEqual(['rate-limit', 'retry']);
    expect(events[0]).toMatchObject({ kind: 'rate-limit', waitSeconds: 1 });
  });

  it('an unparseable body is retried like a 5xx, then is bad_response (transient) naming the endpoint', async () => {
    const bad = { body: '{"choices": "nope"}' };
    server.enqueue(bad, bad, bad, bad);
    const e = await expectError(provider({ stream: false }).chat(ask('q')));
    expect(e.code).toBe('bad_response');
    expect(e.tier).toBe('transient');
    expect(e.message).toContain(server.url);
    expect(e.message).toContain('choices');
    expect(server.chatRequests()).toHaveLength(4);
  });

  for (const stream of [true, false]) {
    it(`a garbled or truncated body once is retried and the answer read (${stream ? 'SSE stream' : 'one JSON body'})`, async () => {
      server.enqueue(
        {
          body: stream
            ? 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Fin'
            : '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assi',
          headers: stream ? { 'content-type': 'text/event-stream' } : {},
        },
        { thinking: 'Checked.', content: 'Final Answer: 3' },
      );
      const events: TelebenchEvent[] = [];
      const r = await provider({ stream, onEvent: (e) => events.push(e) }).chat(ask('q'));
      expect(r.content).toBe('Final Answer: 3');
      expect(server.chatRequests()).toHaveLength(2);
      expect(events.map((e) => e.kind)).toEqual(['retry']);
    });
  }

  it('an error event inside the stream is retried as a transient failure', async () => {
    server.enqueue(
      {
        body: 'data: {"error":{"message":"CUDA out of memory"}}\n\n',
        headers: { 'content-type': 'text/event-stream' },
      },
      { content: 'recovered' },
    );
    const r = await provider().chat(ask('q'));
    expect(r.content).toBe('recovered');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('unknown model is model_not_found', async () => {
    const e = await expectError(provider().chat(ask('q', { model: 'gpt-9' })));
    expect(e.code).toBe('model_not_found');
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('preflight lists /v1/models and reads the version; a missing model names what to serve', async () => {
    const info = await provider({ contextLength: 32768 }).preflight(MODEL);
    expect(info).toEqual({
      endpoint: server.url,
      serverVersion: '0.12.6',
      modelDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const e = await provider()
      .preflight('mistral:7b')
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(PreflightError);
    expect((e as PreflightError).message).toContain('serves: qwen3.5:2b');
    expect((e as PreflightError).hint).toContain('ollama pull mistral:7b');
  });

  it('preflight: Ollama behind /v1 without context_length is refused (its /v1 ignores num_ctx)', async () => {
    const e = await provider()
      .preflight(MODEL)
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(PreflightError);
    expect((e as PreflightError).message).toContain('ignore num_ctx');
    expect((e as PreflightError).hint).toContain('kind: ollama');
  });

  it('preflight: a refused key says which variable to set; an unreachable server what to start', async () => {
    await server.close();
    server = await startLlmServer({ apiKey: 'sk-right-123456' });
    const e = await provider()
      .preflight(MODEL)
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(PreflightError);
    expect((e as PreflightError).hint).toContain('TELEBENCH_LLM_API_KEY');
    const url = server.url;
    await server.close();
    server = await startLlmServer();
    const e2 = await new OpenAiCompatibleProvider({ baseUrl: url, http: FAST, env: NO_KEY })
      .preflight(MODEL)
      .catch((err: unknown) => err);
    expect(e2).toBeInstanceOf(PreflightError);
    expect((e2 as PreflightError).hint).toContain(`at ${url}`);
  });
});
