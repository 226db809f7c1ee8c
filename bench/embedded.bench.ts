// bench/embedded: the generation stage's throughput with the embedded runtime (real SmolLM2-135M,
// node-llama-cpp in this process) over a bare node-llama-cpp loop on the same prompts, the same
// threads and the same number of sequences, measured side by side in this one run (goal >= 0.9).
//
// 1. Pipeline: `resilience.generate` through the real runner, store, response cache (empty) and
//    the embedded provider, ITEMS rows at `concurrency` = SEQUENCES, output budget MAX_TOKENS.
// 2. Bare: the prompts the stage sent (read back from the store), rendered by the same GGUF chat
//    template, through node-llama-cpp's LlamaChat on a context with the same sequences and threads,
//    the same budget, with a plain p-limit loop: no runner, no store, no provider.
// Throughput = generated tokens per second (prompt evaluation included in the time, as the stage
// does it). The model is loaded once, before both, and not timed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import pLimit from 'p-limit';
import Database from 'better-sqlite3';
import { getLlama, JinjaTemplateChatWrapper, LlamaChat, LlamaLogLevel } from 'node-llama-cpp';
import { writeResilienceWorkdir } from '../test/fixtures/resilience-workdir.js';
import { smollm2Path } from '../test/fixtures/smollm2.js';
import { runPipeline } from '../pipeline/runner.js';
import { openState } from '../pipeline/state.js';
import { EventBus } from '../pipeline/events.js';
import { resiliencePipeline, resilienceStages } from '../stages/resilience/pipeline.js';
import { resilienceConfigSchema } from '../stages/resilience/config.js';
import { engineConfigShape } from '../pipeline/config/schema.js';
import { parseConfigText } from '../pipeline/config/load.js';
import { toChatHistory } from '../pipeline/providers/llm/embedded.js';
import type { GenerateInput } from '../stages/resilience/generate.js';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 16);
const SEQUENCES = Number(process.env.BENCH_SEQUENCES ?? 2);
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const MAX_TOKENS = Number(process.env.BENCH_MAX_TOKENS ?? 64);
const NUM_CTX = 2048;

const gguf = smollm2Path();
const dir = mkdtempSync(join(tmpdir(), 'bench-embedded-'));
try {
  const { configFile, text } = writeResilienceWorkdir({
    dir,
    rows: Array.from({ length: ITEMS }, (_, i) => [
      `Benchmark question ${i}: which 5G core network function handles session management?`,
      ['1. AMF', '2. SMF', '3. UPF', '4. NRF'],
      '2',
    ]),
    source: 'bench',
    llmUrl: 'http://127.0.0.1:9',
    concurrency: SEQUENCES,
  });
  const embeddedText = text.replace(
    /endpoints: \[.*\]/,
    `endpoints: [{ kind: embedded, model: smollm2:135m, source: [{ path: ${gguf} }], concurrency: ${SEQUENCES}, threads: ${THREADS}, context_size: ${NUM_CTX}, gpu: false }]
    model: smollm2:135m
    think: false
    trace: reply
    num_predict: ${MAX_TOKENS}
    num_ctx: ${NUM_CTX}`,
  );
  writeFileSync(configFile, embeddedText);
  const config = parseConfigText(
    embeddedText,
    configFile,
    z.strictObject({ ...engineConfigShape, resilience: resilienceConfigSchema }),
  );
  const registry = new Map(resilienceStages.map((st) => [st.name, st]));
  const state = openState(join(dir, 'state'));
  const bus = new EventBus();
  let generateMs = 0;
  let runStarted = 0;
  let runMs = 0;
  bus.on((e) => {
    if (e.kind === 'stage-start' && e.stage === 'resilience.generate')
      runStarted = performance.now();
    if (e.kind === 'stage-end' && e.stage === 'resilience.generate') {
      generateMs = e.ms;
      runMs = performance.now() - runStarted;
    }
  });
  const common = {
    pipeline: resiliencePipeline as never,
    registry,
    config,
    configFile,
    stateDir: join(dir, 'state'),
    store: state.store,
    blobs: state.blobs,
    bus,
    signal: new AbortController().signal,
  };
  await runPipeline({ ...common, only: 'resilience.load' });
  // Load the model (and its native library) before timing anything: the preflight of the stage
  // would do it inside the stage's time otherwise.
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: gguf, gpuLayers: 0 });
  await runPipeline({ ...common, only: 'resilience.generate' });
  const items = [...state.store.items('resilience.generate')];
  const unfinished = items.filter((it) => it.state !== 'done' && it.state !== 'skipped');
  if (unfinished.length > 0)
    throw new Error(`generation did not finish: ${unfinished.length} items`);
  // Every answer (done, unparsed, budget_exhausted) generated tokens: count them from the response
  // cache the stage filled (one entry per request).
  const db = new Database(join(dir, 'state', 'state.db'), { readonly: true });
  let pipelineTokens = 0;
  for (const row of db.prepare("SELECT value FROM kv WHERE ns = 'llm.chat.v2'").all() as {
    value: string;
  }[]) {
    pipelineTokens += (JSON.parse(row.value) as { outputTokens: number }).outputTokens;
  }
  db.close();
  const prompts = items.map((it) => (it.input as GenerateInput).request.messages);

  const context = await model.createContext({
    contextSize: NUM_CTX,
    sequences: SEQUENCES,
    threads: THREADS,
  });
  const template = model.fileInfo.metadata.tokenizer?.chat_template as string;
  const wrapper = new JinjaTemplateChatWrapper({
    template,
    reasoning: false,
    tokenizer: model.tokenizer,
  });
  const free = Array.from({ length: SEQUENCES }, () => context.getSequence());
  const limit = pLimit(SEQUENCES);
  let bareTokens = 0;
  const t0 = performance.now();
  await Promise.all(
    prompts.map((messages) =>
      limit(async () => {
        const seq = free.pop()!;
        await seq.clearHistory();
        const chat = new LlamaChat({ contextSequence: seq, chatWrapper: wrapper });
        await chat.generateResponse(toChatHistory(messages), {
          maxTokens: MAX_TOKENS,
          temperature: 0,
          budgets: { thoughtTokens: Infinity, commentTokens: Infinity },
          onResponseChunk: (c) => {
            bareTokens += c.tokens.length;
          },
        });
        chat.dispose({ disposeSequence: false });
        free.push(seq);
      }),
    ),
  );
  const bareMs = performance.now() - t0;
  const pipelineRate = pipelineTokens / (generateMs / 1000);
  const bareRate = bareTokens / (bareMs / 1000);
  console.log(
    `Embedded generation (SmolLM2-135M Q4_1, ${ITEMS} prompts, ${SEQUENCES} sequences, ${THREADS} thread(s), max ${MAX_TOKENS} tokens)`,
  );
  console.log(
    `  pipeline stage: ${pipelineTokens} tokens in ${generateMs} ms (items alone ${runMs.toFixed(0)} ms) = ${pipelineRate.toFixed(1)} tokens/s`,
  );
  console.log(
    `  bare node-llama-cpp loop: ${bareTokens} tokens in ${bareMs.toFixed(0)} ms = ${bareRate.toFixed(1)} tokens/s`,
  );
  console.log(`  ratio pipeline / bare: ${(pipelineRate / bareRate).toFixed(3)} (goal >= 0.9)`);
  await context.dispose();
  state.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
