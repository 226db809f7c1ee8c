/**
 * `telebench serve-model` (pipeline/providers/llm/serve.ts): the embedded runtime with the real
 * SmolLM2 behind an OpenAI-compatible endpoint, used through the project's own
 * OpenAI-compatible provider (SSE and one-body answers), raw SSE framing, errors, and the CLI.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TelebenchError } from '../../../../pipeline/errors.js';
import type { EmbeddedProvider } from '../../../../pipeline/providers/llm/embedded.js';
import { OpenAiCompatibleProvider } from '../../../../pipeline/providers/llm/openai.js';
import { startModelServer, type ModelServer } from '../../../../pipeline/providers/llm/serve.js';
import type { ChatRequest } from '../../../../pipeline/providers/llm/types.js';
import { SMOLLM2_NAME, SMOLLM2_SHA256, smollm2Path } from '../../../fixtures/smollm2.js';
import { smollm2Provider } from '../../../fixtures/smollm2-provider.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const ask = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: SMOLLM2_NAME,
  messages: [{ role: 'user', content: text }],
  temperature: 0,
  maxTokens: 24,
  ...extra,
});
const QUESTION = 'What does the AMF do in a 5G core? One sentence.';

describe('serve-model: OpenAI-compatible endpoint over the embedded runtime', () => {
  let dir: string;
  let provider: EmbeddedProvider;
  let server: ModelServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tb-serve-'));
    provider = smollm2Provider(dir, { contextSize: 1024, sequences: 2 });
    server = await startModelServer({ provider, model: SMOLLM2_NAME, contextSize: 1024 });
  });
  afterAll(async () => {
    await server.close();
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = (stream: boolean) =>
    new OpenAiCompatibleProvider({
      baseUrl: server.url,
      stream,
      contextLength: 1024,
      http: { retries: 0, idleTimeoutMs: 600_000 },
      env: {},
    });

  it('the OpenAI-compatible provider preflights it and gets the embedded answer, streamed or not', async () => {
    const info = await client(true).preflight(SMOLLM2_NAME);
    expect(info.serverVersion).toContain('telebench-serve-model node-llama-cpp 3.21.1');
    expect(info.serverVersion).toContain(`sha256:${SMOLLM2_SHA256}`);
    const direct = await provider.chat({
      ...ask(QUESTION),
      providerOptions: { embedded: { numCtx: 1024 } },
    });
    const streamed = await client(true).chat(ask(QUESTION));
    const whole = await client(false).chat(ask(QUESTION));
    for (const r of [streamed, whole]) {
      expect(r.content).toBe(direct.content);
      expect(r.thinking).toBe('');
      expect(r.promptTokens).toBe(direct.promptTokens);
      expect(r.outputTokens).toBe(direct.outputTokens);
      expect(r.doneReason).toBe(direct.doneReason);
    }
    const cut = await client(true).chat(ask(QUESTION, { maxTokens: 3 }));
    expect(cut).toMatchObject({ doneReason: 'length', budgetExhausted: true, outputTokens: 3 });
  });

  it('streams SSE chunks with deltas, a finish_reason, usage and [DONE]', async () => {
    const res = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: SMOLLM2_NAME,
        messages: [{ role: 'user', content: QUESTION }],
        max_tokens: 20,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as Record<string, unknown>);
    const deltas = chunks.flatMap((c) =>
      (c.choices as { delta: { content?: string } }[]).map((x) => x.delta.content ?? ''),
    );
    expect(deltas.filter((d) => d !== '').length).toBeGreaterThan(1);
    const usage = chunks.at(-1)!.usage as { completion_tokens: number };
    expect(usage.completion_tokens).toBeGreaterThan(0);
  });

  it('a prompt over the context is prompt_too_long through the client; another model is refused', async () => {
    const big = client(false);
    const long = 'The SMF selects the UPF for the PDU session. '.repeat(120);
    // The client's own cl100k check passes with a large context_length: the server's exact count refuses.
    const loose = new OpenAiCompatibleProvider({
      baseUrl: server.url,
      stream: false,
      contextLength: 100_000,
      http: { retries: 0 },
      env: {},
    });
    const err = await loose.chat(ask(long)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect(err).toMatchObject({ code: 'prompt_too_long' });
    const other = await big.chat(ask('hi', { model: 'qwen3.5:2b' })).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(TelebenchError);
    expect((other as Error).message).toMatch(/404/);
  });

  it('the CLI serves until SIGTERM and exits 0', async () => {
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin/telebench.js'),
        '--state',
        dir,
        'serve-model',
        '--name',
        SMOLLM2_NAME,
        '--gguf',
        smollm2Path(),
        '--port',
        '0',
        '--gpu',
        'cpu',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /serving \S+ at (http:\/\/\S+\/v1)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
    });
    const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual([SMOLLM2_NAME]);
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
  });
});
