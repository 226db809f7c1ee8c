// bench/resilience: two figures of the TeleResilienceBench construction, each a ratio measured
// side by side in this one run (these machines are noisy).
//
// 1. HalfTrace throughput (traces per second) on the 77 published TeleMath half traces and on
//    long synthetic traces (about 4,000 cl100k tokens, the generator's output budget), for the
//    reference boundary and the Intl.Segmenter boundary, against encoding alone (the floor: every
//    HalfTrace encodes the trace once).
// 2. The generation stage's request rate over the model server's capacity. The scripted server
//    (test/servers/llm-server.ts) answers each request after a fixed delay with `parallel` slots, so
//    its capacity is parallel / delay requests per second; the stage runs at the configured
//    concurrency (= parallel) through the real runner, provider, pool and response cache. Goal > 0.9.
//    Beside it, a bare provider loop (p-limit, no runner, no store) on the same server shows what
//    the transport alone reaches. The default delay is 500 ms (a real generator answer takes
//    seconds); at 200 ms (BENCH_DELAY_MS=200) the local server's fixed cost per request (about
//    15 ms here) already holds the bare loop near 0.93 of capacity.
import { everyProvider } from '../pipeline/providers/llm/options.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { halfTrace } from '../stages/resilience/half-trace.js';
import { encodeCl100k } from '../pipeline/providers/tokenizer/cl100k.js';
import { startLlmServer } from '../test/servers/llm-server.js';
import { writeResilienceWorkdir } from '../test/fixtures/resilience-workdir.js';
import { realDataRoot } from '../test/fixtures/real-data.js';
import { runPipeline } from '../pipeline/runner.js';
import { openState } from '../pipeline/state.js';
import { EventBus } from '../pipeline/events.js';
import { resiliencePipeline, resilienceStages } from '../stages/resilience/pipeline.js';
import { resilienceConfigSchema } from '../stages/resilience/config.js';
import { engineConfigShape } from '../pipeline/config/schema.js';
import { z } from 'zod';
import { parseConfigText } from '../pipeline/config/load.js';
import { createProvider } from '../pipeline/providers/llm/config.js';
import pLimit from 'p-limit';

// ---------------------------------------------------------------- 1. HalfTrace
/**
 * Traces per second of each function, measured interleaved: round after round, every function runs
 * once over the set, so a change of machine load during the run hits all of them alike.
 */
function rates(fns: ((t: string) => unknown)[], traces: string[], minMs = 8000): number[] {
  const spent = fns.map(() => 0);
  const started = performance.now();
  let rounds = 0;
  while (performance.now() - started < minMs || rounds < 6) {
    // the order turns each round, so none always pays the garbage of the one before it
    for (let k = 0; k < fns.length; k++) {
      const i = (k + rounds) % fns.length;
      const t0 = performance.now();
      for (const t of traces) fns[i]!(t);
      spent[i]! += performance.now() - t0;
    }
    rounds++;
  }
  return spent.map((ms) => (rounds * traces.length) / (ms / 1000));
}

// the published TeleMath instances, found like the product finds them (test/fixtures/real-data.ts)
const AUX_FILE = 'teleresiliencebench/AuxiliaryBenchmark.json';
const aux = JSON.parse(readFileSync(join(await realDataRoot(AUX_FILE), AUX_FILE), 'utf8')) as {
  half_reasoning_trace: string;
}[];
const published = aux.map((r) => r.half_reasoning_trace);
const long = published.slice(0, 10).map((t) => {
  let s = t;
  while (encodeCl100k(s).length < 4000) s += `\n${t}`;
  return s;
});
halfTrace(published[0]!); // warm the encoder
console.log('HalfTrace (traces/s; ratio to encode-only in the same run)');
for (const [name, set] of [
  ['published TeleMath halves (77)', published],
  ['synthetic ~4000-token traces (10)', long],
] as const) {
  const [enc, ref, intl] = rates(
    [(t) => encodeCl100k(t), (t) => halfTrace(t), (t) => halfTrace(t, { boundary: 'intl' })],
    set,
  ) as [number, number, number];
  console.log(
    `  ${name}: encode-only ${enc.toFixed(0)}/s, reference ${ref.toFixed(0)}/s (ratio ${(ref / enc).toFixed(2)}, goal >= 0.8), intl ${intl.toFixed(0)}/s (ratio ${(intl / enc).toFixed(2)})`,
  );
}

// ---------------------------------------------------------------- 2. generation request rate
// BENCH_ONLY=halftrace stops here (the HalfTrace figures alone, in seconds).
if (process.env.BENCH_ONLY === 'halftrace') process.exit(0);

const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 500);
const PARALLEL = Number(process.env.BENCH_PARALLEL ?? 4);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 120);

const server = await startLlmServer({ delayMs: DELAY_MS, parallel: PARALLEL });
const dir = mkdtempSync(join(tmpdir(), 'bench-resilience-'));
try {
  const { configFile, text } = writeResilienceWorkdir({
    dir,
    rows: Array.from({ length: ITEMS }, (_, i) => [
      `Benchmark question number ${i}: which option?`,
      ['1. A', '2. B', '3. C', '4. D'],
      '2',
    ]),
    source: 'bench',
    llmUrl: server.url,
    concurrency: PARALLEL,
  });
  // Only this branch's stages and configuration section (the bench does not depend on the others).
  const config = parseConfigText(
    text,
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
  const result = await runPipeline({
    pipeline: resiliencePipeline as never,
    registry,
    config,
    configFile,
    stateDir: join(dir, 'state'),
    store: state.store,
    blobs: state.blobs,
    bus,
    signal: new AbortController().signal,
    only: 'resilience.load',
  }).then(() =>
    runPipeline({
      pipeline: resiliencePipeline as never,
      registry,
      config,
      configFile,
      stateDir: join(dir, 'state'),
      store: state.store,
      blobs: state.blobs,
      bus,
      signal: new AbortController().signal,
      only: 'resilience.generate',
    }),
  );
  const done = state.store.counts('resilience.generate').byState.done ?? 0;
  if (result.exitCode !== 0 || done !== ITEMS)
    throw new Error(`generation did not finish (${done}/${ITEMS})`);
  // Side by side: the bare provider (same server, same concurrency, no runner, no store, no cache)
  // on the same number of distinct prompts.
  const bare = createProvider({
    endpoints: [{ kind: 'ollama', base_url: server.url, concurrency: PARALLEL }],
    cache: false,
  });
  const limit = pLimit(PARALLEL);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: ITEMS }, (_, i) =>
      limit(() =>
        bare.chat({
          model: 'qwen3.5:2b',
          messages: [{ role: 'user', content: `Bare question number ${i}: which option?` }],
          maxTokens: 4096,
          temperature: 0,
          providerOptions: everyProvider({ think: true, numCtx: 8192 }),
        }),
      ),
    ),
  );
  const bareRate = ITEMS / ((performance.now() - t0) / 1000);
  const capacity = (PARALLEL * 1000) / DELAY_MS;
  const measured = ITEMS / (generateMs / 1000);
  console.log(
    `Generation stage: ${ITEMS} requests, concurrency ${PARALLEL}, server ${PARALLEL} slots x ${DELAY_MS} ms = capacity ${capacity.toFixed(1)} req/s`,
  );
  console.log(
    `  (planning ${(generateMs - runMs).toFixed(0)} ms of the stage's ${generateMs} ms; items alone ${(ITEMS / (runMs / 1000)).toFixed(1)} req/s)`,
  );
  console.log(
    `  stage ${measured.toFixed(1)} req/s: ratio to capacity ${(measured / capacity).toFixed(3)} (goal > 0.9); bare provider loop ${bareRate.toFixed(1)} req/s (ratio ${(bareRate / capacity).toFixed(3)}); stage / bare ${(measured / bareRate).toFixed(3)}`,
  );
  state.close();
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
