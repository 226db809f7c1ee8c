/**
 * The embedded runtime on a real model: SmolLM2-135M-Instruct through node-llama-cpp in this
 * process (fetched by scripts/setup.mjs). Rules are those of pipeline/providers/llm/embedded.ts.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import { Store } from '../../../../pipeline/store/store.js';
import { BlobStore } from '../../../../pipeline/store/blobs.js';
import { PreflightError, TelebenchError } from '../../../../pipeline/errors.js';
import { createProvider, llmConfigSchema } from '../../../../pipeline/providers/llm/config.js';
import { RESPONSE_CACHE_NAMESPACE } from '../../../../pipeline/providers/llm/cache.js';
import {
  DEFAULT_SEED,
  type EmbeddedProvider,
  prebuiltBinaryPackage,
} from '../../../../pipeline/providers/llm/embedded.js';
import type { TelebenchEvent } from '../../../../pipeline/events.js';
import type { ChatRequest } from '../../../../pipeline/providers/llm/types.js';
import { SMOLLM2_NAME, SMOLLM2_SHA256, smollm2Path } from '../../../fixtures/smollm2.js';
import { smollm2Provider } from '../../../fixtures/smollm2-provider.js';
import { chatRequest, type FlatRequest } from '../../../fixtures/chat-request.js';
import { hasWarning } from '../../../../pipeline/providers/llm/types.js';

const ask = (text: string, extra: Partial<FlatRequest> = {}): ChatRequest =>
  chatRequest({
    model: SMOLLM2_NAME,
    messages: [{ role: 'user', content: text }],
    temperature: 0,
    numCtx: 1024,
    maxTokens: 48,
    ...extra,
  });

const QUESTIONS = [
  'What is 2 + 3? End with "Final Answer: <n>".',
  'Name the capital of France in one word.',
  'Which network function in a 5G core handles registration? Answer briefly.',
];

describe('embedded provider (SmolLM2-135M, node-llama-cpp)', () => {
  let dir: string;
  let provider: EmbeddedProvider;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tb-embedded-'));
    provider = smollm2Provider(dir, { sequences: 3, threads: 1 });
  });
  afterAll(async () => {
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('preflight reports the runtime version, the model file sha256 and the chat template', async () => {
    const info = await provider.preflight(SMOLLM2_NAME);
    expect(info.modelDigest).toBe(`sha256:${SMOLLM2_SHA256}`);
    // llama.cpp's own release tag (its CMake LLAMA_VERSION 0.4.0), the prebuilt npm binary it came
    // from and ggml's CPU feature line: the build that made the answers
    expect(info.serverVersion).toBe('node-llama-cpp 3.21.1 (llama.cpp v0.4.0 prebuilt, cpu)');
    expect(info.embedded?.llamaCppBuild).toMatchObject({
      release: 'v0.4.0',
      repo: 'ggml-org/llama.cpp',
      buildType: 'prebuilt',
      binaryPackage: `${prebuiltBinaryPackage(process.platform, process.arch, 'cpu')}@3.21.1`,
    });
    expect(info.embedded?.llamaCppBuild.systemInfo).toMatch(/^CPU : /);
    expect(info.contextLength).toBe(8192);
    expect(info.embedded?.chatWrapper).toBe('JinjaTemplate');
    expect(info.embedded?.chatTemplate).toContain('<|im_start|>');
    expect(info.embedded?.chatTemplateSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(info.embedded?.model.kind).toBe('path');
    expect(info.embedded?.threads).toBe(1);
  });

  it('refuses another model name at preflight and at chat (never a swap)', async () => {
    await expect(provider.preflight('qwen3.5:2b')).rejects.toBeInstanceOf(PreflightError);
    await expect(provider.chat(ask('hi', { model: 'qwen3.5:2b' }))).rejects.toMatchObject({
      code: 'model_not_found',
      tier: 'config',
    });
  });

  it('answers with empty thinking and exact token counts from the model tokenizer', async () => {
    const r = await provider.chat(ask(QUESTIONS[0]!));
    expect(r.thinking).toBe('');
    expect(r.content.trim().length).toBeGreaterThan(0);
    expect(r.doneReason).toBe('stop');
    expect(r.budgetExhausted).toBe(false);
    expect(hasWarning(r, 'prompt-truncated')).toBe(false);
    expect(r.endpoint).toBe(`embedded:${SMOLLM2_NAME}`);
    // The prompt as SmolLM2's own template renders it (its default system prompt included; the
    // template adds no BOS), tokenized independently with special tokens.
    const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath: smollm2Path() });
    const text =
      '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' +
      `<|im_start|>user\n${QUESTIONS[0]}<|im_end|>\n<|im_start|>assistant\n`;
    expect(r.promptTokens).toBe(model.tokenize(text, true).length);
    expect(r.outputTokens).toBe(model.tokenize(r.content).length);
    expect(r.promptTokensLocal).toBeGreaterThan(0);
    // no seed in the request nor the endpoint: the default seed, recorded
    expect(r.seed).toBe(DEFAULT_SEED);
    const seeded = await provider.chat(ask(QUESTIONS[0]!, { seed: 7 }));
    expect(seeded.seed).toBe(7);
    expect(seeded.content).toBe(r.content); // temperature 0: greedy, the seed changes nothing
  });

  it('names the npm package of each prebuilt binary (provenance of the build)', () => {
    expect(prebuiltBinaryPackage('linux', 'x64', 'cpu')).toBe('@node-llama-cpp/linux-x64');
    expect(prebuiltBinaryPackage('linux', 'x64', 'cuda')).toBe('@node-llama-cpp/linux-x64-cuda');
    expect(prebuiltBinaryPackage('win32', 'x64', 'vulkan')).toBe('@node-llama-cpp/win-x64-vulkan');
    expect(prebuiltBinaryPackage('darwin', 'arm64', 'metal')).toBe(
      '@node-llama-cpp/mac-arm64-metal',
    );
    expect(prebuiltBinaryPackage('linux', 'arm', 'cpu')).toBe('@node-llama-cpp/linux-armv7l');
    expect(prebuiltBinaryPackage('darwin', 'arm64', 'cpu')).toBeNull();
    expect(prebuiltBinaryPackage('freebsd', 'x64', 'cpu')).toBeNull();
  });

  it('refuses an oversize prompt before evaluating it (prompt_too_long, never cut)', async () => {
    const long = 'The AMF forwards the NAS message to the SMF. '.repeat(40);
    const err = await provider.chat(ask(long, { numCtx: 128 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect(err).toMatchObject({ code: 'prompt_too_long', tier: 'content' });
    const ctx = (err as TelebenchError).context;
    expect(ctx.numCtx).toBe(128);
    expect(ctx.promptTokens as number).toBeGreaterThan(128);
  });

  it('a budget stop is budget_exhausted with done reason length', async () => {
    const r = await provider.chat(ask('Describe the 5G core in detail.', { maxTokens: 5 }));
    expect(r.doneReason).toBe('length');
    expect(r.budgetExhausted).toBe(true);
    expect(r.outputTokens).toBe(5);
  });

  it('concurrent requests on separate sequences give the outputs of sequential ones', async () => {
    const sequential = [];
    for (const q of QUESTIONS) sequential.push((await provider.chat(ask(q))).content);
    const parallel = await Promise.all(QUESTIONS.map((q) => provider.chat(ask(q))));
    expect(parallel.map((r) => r.content)).toEqual(sequential);
    expect(new Set(sequential).size).toBe(QUESTIONS.length);
  });
});

describe('embedded provider through createProvider (cache, fallback)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tb-embedded-cfg-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const embedded = () => ({
    kind: 'embedded' as const,
    model: SMOLLM2_NAME,
    source: [{ path: smollm2Path() }],
    gpu: false as const,
  });

  it('a re-run on the same store answers from the cache without generating', async () => {
    const store = new Store(join(dir, 'state.db'));
    const blobs = new BlobStore(join(dir, 'blobs'));
    try {
      const first = await createProvider({ endpoints: [embedded()] }, { kv: store, blobs }).chat(
        ask(QUESTIONS[1]!),
      );
      expect(first.cached).toBe(false);
      expect(first.rawDigest).toMatch(/^[0-9a-f]{64}$/);
      const again = await createProvider({ endpoints: [embedded()] }, { kv: store, blobs }).chat(
        ask(QUESTIONS[1]!),
      );
      expect(again.cached).toBe(true);
      expect(again.latencyMs).toBe(0);
      expect(again.content).toBe(first.content);
      expect(again.outputTokens).toBe(first.outputTokens);
    } finally {
      store.close();
    }
  });

  it("changing only the endpoint's seed misses the cache; the same seed hits it", async () => {
    const store = new Store(join(dir, 'seed.db'));
    try {
      const chat = async (seed: number) =>
        createProvider({ endpoints: [{ ...embedded(), seed }] }, { kv: store }).chat(
          ask(QUESTIONS[2]!, { maxTokens: 8 }),
        );
      const first = await chat(1);
      expect(first.cached).toBe(false);
      expect(first.seed).toBe(1);
      const other = await chat(2);
      expect(other.cached).toBe(false);
      expect(other.seed).toBe(2);
      expect((await chat(1)).cached).toBe(true);
      expect(store.count(RESPONSE_CACHE_NAMESPACE)).toBe(2);
    } finally {
      store.close();
    }
  });

  it('falls back from an Ollama endpoint that does not answer to the embedded runtime, and says so', async () => {
    const events: TelebenchEvent[] = [];
    const config = llmConfigSchema.parse({
      endpoints: [{ kind: 'ollama', base_url: 'http://127.0.0.1:9', retries: 0 }],
      fallback: [embedded()],
    });
    const p = createProvider(config, { onEvent: (e) => events.push(e) });
    expect(p.provider).toBe('ollama');
    const info = await p.preflight(SMOLLM2_NAME);
    expect(info.modelDigest).toBe(`sha256:${SMOLLM2_SHA256}`);
    expect(p.provider).toBe('embedded');
    const log = events.find((e) => e.kind === 'log');
    expect(log && 'message' in log ? log.message : '').toMatch(
      /not reachable.*using the fallback embedded embedded:smollm2:135m/,
    );
    const r = await p.chat(ask(QUESTIONS[0]!));
    expect(r.endpoint).toBe(`embedded:${SMOLLM2_NAME}`);
  });

  it('a missing model stops at preflight naming both causes and what to set', async () => {
    const config = llmConfigSchema.parse({
      endpoints: [{ kind: 'ollama', base_url: 'http://127.0.0.1:9', retries: 0 }],
      fallback: [
        { ...embedded(), source: [{ path: join(dir, 'absent.gguf') }], model: 'qwen3.5:2b' },
      ],
    });
    const err = await createProvider(config)
      .preflight('qwen3.5:2b')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PreflightError);
    const e = err as PreflightError;
    expect(e.message).toMatch(/not reachable/);
    expect(e.message).toContain(`no file ${join(dir, 'absent.gguf')}`);
    expect(e.hint).toMatch(/ollama serve/);
    expect(e.hint).toMatch(/set `source` of this embedded endpoint/);
  });
});
