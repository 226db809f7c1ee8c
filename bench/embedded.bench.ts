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
// does it). The model is loaded once, before both, and not timed. The two phases alternate over
// ROUNDS rounds (pipeline first in odd rounds, bare first in even ones; each pipeline round on a
// fresh state, so the response cache never answers), because on a noisy machine a load swing
// between two single phases decided the ratio (0.71 to 2.25 on the same code): the ratio printed is
// of the summed tokens over the summed times, with each round's own ratio beside it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
import { RESPONSE_CACHE_NAMESPACE } from '../pipeline/providers/llm/cache.js';
import type { GenerateInput } from '../stages/resilience/generate.js';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 16);
const SEQUENCES = Number(process.env.BENCH_SEQUENCES ?? 2);
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const MAX_TOKENS = Number(process.env.BENCH_MAX_TOKENS ?? 64);
const NUM_CTX = 2048;

const gguf = smollm2Path();
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const root = mkdtempSync(join(tmpdir(), 'bench-embedded-'));
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: gguf, gpuLayers: 0 });

/** One pipeline phase on a fresh state: tokens generated, stage time (ms), the prompts it sent. */
async function pipelinePhase(round: number) {
  const dir = join(root, `round-${round}`);
  mkdirSync(dir);
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
  bus.on((e) => {
    if (e.kind === 'stage-end' && e.stage === 'resilience.generate') generateMs = e.ms;
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
  await runPipeline({ ...common, only: 'resilience.generate' });
  const items = [...state.store.items('resilience.generate')];
  const unfinished = items.filter((it) => it.state !== 'done' && it.state !== 'skipped');
  if (unfinished.length > 0)
    throw new Error(`generation did not finish: ${unfinished.length} items`);
  // Every answer (done, unparsed, budget_exhausted) generated tokens: count them from the response
  // cache the stage filled (one entry per request).
  const db = new Database(join(dir, 'state', 'state.db'), { readonly: true });
  let tokens = 0;
  const rows = db.prepare('SELECT value FROM kv WHERE ns = ?').all(RESPONSE_CACHE_NAMESPACE) as {
    value: string;
  }[];
  for (const row of rows) {
    tokens += (JSON.parse(row.value) as { outputTokens: number }).outputTokens;
  }
  db.close();
  const prompts = items.map((it) => (it.input as GenerateInput).request.messages);
  state.close();
  return { tokens, ms: generateMs, prompts };
}

/** One bare node-llama-cpp phase over `prompts`: tokens generated and wall time (ms). */
async function barePhase(prompts: Parameters<typeof toChatHistory>[0][]) {
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
  let tokens = 0;
  const t0 = performance.now();
  await Promise.all(
    prompts.map((messages) =>
      limit(async () => {
        const seq = free.pop()!;
        // as the provider does: erasing an empty sequence waits on the context lock for nothing
        if (seq.nextTokenIndex > 0) await seq.clearHistory();
        const chat = new LlamaChat({ contextSequence: seq, chatWrapper: wrapper });
        await chat.generateResponse(toChatHistory(messages), {
          maxTokens: MAX_TOKENS,
          temperature: 0,
          budgets: { thoughtTokens: Infinity, commentTokens: Infinity },
          onResponseChunk: (c) => {
            tokens += c.tokens.length;
          },
        });
        chat.dispose({ disposeSequence: false });
        free.push(seq);
      }),
    ),
  );
  const ms = performance.now() - t0;
  await context.dispose();
  return { tokens, ms };
}

try {
  console.log(
    `Embedded generation (SmolLM2-135M Q4_1, ${ITEMS} prompts, ${SEQUENCES} sequences, ${THREADS} thread(s), max ${MAX_TOKENS} tokens, ${ROUNDS} alternating rounds)`,
  );
  // The prompts the stage sends are fixed by the rows: learn them once (untimed warm-up round).
  const warm = await pipelinePhase(0);
  const sum = { pTokens: 0, pMs: 0, bTokens: 0, bMs: 0 };
  for (let r = 1; r <= ROUNDS; r++) {
    let p: { tokens: number; ms: number };
    let b: { tokens: number; ms: number };
    if (r % 2 === 1) {
      p = await pipelinePhase(r);
      b = await barePhase(warm.prompts);
    } else {
      b = await barePhase(warm.prompts);
      p = await pipelinePhase(r);
    }
    sum.pTokens += p.tokens;
    sum.pMs += p.ms;
    sum.bTokens += b.tokens;
    sum.bMs += b.ms;
    const ratio = p.tokens / p.ms / (b.tokens / b.ms);
    console.log(
      `  round ${r} (${r % 2 === 1 ? 'pipeline first' : 'bare first'}): pipeline ${p.tokens} tokens in ${p.ms.toFixed(0)} ms, bare ${b.tokens} tokens in ${b.ms.toFixed(0)} ms, ratio ${ratio.toFixed(3)}`,
    );
  }
  const pipelineRate = sum.pTokens / (sum.pMs / 1000);
  const bareRate = sum.bTokens / (sum.bMs / 1000);
  console.log(`  pipeline stage: ${pipelineRate.toFixed(1)} tokens/s over ${ROUNDS} rounds`);
  console.log(`  bare node-llama-cpp loop: ${bareRate.toFixed(1)} tokens/s over ${ROUNDS} rounds`);
  console.log(`  ratio pipeline / bare: ${(pipelineRate / bareRate).toFixed(3)} (goal >= 0.9)`);
} finally {
  await model.dispose();
  rmSync(root, { recursive: true, force: true });
}
