// bench/engine: items per second of the runner on 10,000 no-op items, against a bare loop doing the
// same SQLite writes (one planned insert per item in batches, one `running` update and one `done`
// update per item, each its own transaction, WAL + synchronous=NORMAL). Both measured in this one
// run, alternating, and printed as a ratio (these machines are noisy). Both wall time and the
// process's CPU time (user + system, `process.cpuUsage`) are printed: on a loaded machine the wall
// ratio swings with the other jobs (0.39-1.11 at load 18-28), while CPU time counts only the work
// each side does, so the CPU ratio is the figure to compare across runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { runPipeline } from '../pipeline/runner.js';
import { openState } from '../pipeline/state.js';
import { EventBus } from '../pipeline/events.js';
import { defineStage } from '../pipeline/stage.js';
import { Store } from '../pipeline/store/store.js';
import { canonicalJson, sha256 } from '../pipeline/hash.js';

const N = Number(process.env.BENCH_ITEMS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

interface Took {
  wall: number;
  cpu: number;
}

/** Wall and CPU milliseconds of `fn` (CPU: user + system of this process). */
async function took(fn: () => Promise<void>): Promise<Took> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

const noop = defineStage<{ i: number }, { i: number }, unknown>({
  name: 'bench.noop',
  version: 1,
  needs: [],
  description: 'no-op',
  concurrency: () => 1,
  *plan() {
    for (let i = 0; i < N; i++) yield { key: `item-${i}`, input: { i } };
  },
  async run(item) {
    return { i: item.input.i };
  },
});

async function viaRunner(): Promise<Took> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-engine-'));
  const state = openState(dir);
  let r: Awaited<ReturnType<typeof runPipeline>> | undefined;
  const t = await took(async () => {
    r = await runPipeline({
      pipeline: { name: 'bench', description: '', stages: ['bench.noop'] },
      registry: new Map([[noop.name, noop]]),
      config: {},
      configFile: join(dir, 'c.yaml'),
      stateDir: dir,
      store: state.store,
      blobs: state.blobs,
      bus: new EventBus(),
      signal: new AbortController().signal,
    });
  });
  if (r?.exitCode !== 0 || state.store.counts('bench.noop').byState.done !== N)
    throw new Error('runner bench did not finish');
  state.close();
  rmSync(dir, { recursive: true, force: true });
  return t;
}

async function bareLoop(): Promise<Took> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bare-'));
  const store = new Store(join(dir, 'state.db'));
  const t = await took(async () => {
    const items: { key: string; json: string }[] = [];
    for (let i = 0; i < N; i++) {
      const json = canonicalJson({ i });
      items.push({ key: `item-${i}`, json });
    }
    for (let b = 0; b < N; b += 256) {
      store.transaction(() => {
        for (const it of items.slice(b, b + 256))
          store.planItem('bare', it.key, 1, sha256(it.json), it.json, false);
      });
    }
    for (const it of items) {
      const attempt = randomUUID();
      store.startItem('bare', it.key, attempt, 'run');
      const out = { i: JSON.parse(it.json).i as number };
      await Promise.resolve(out);
      store.finishItem('bare', it.key, attempt, { state: 'done', output: out });
    }
  });
  store.close();
  rmSync(dir, { recursive: true, force: true });
  return t;
}

const runner: Took[] = [];
const bare: Took[] = [];
for (let r = 0; r < ROUNDS; r++) {
  bare.push(await bareLoop());
  runner.push(await viaRunner());
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rate = (ts: Took[], k: keyof Took) => (N * 1000) / median(ts.map((t) => t[k]));
const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
console.log(
  `bench/engine: ${N} no-op items, median of ${ROUNDS} alternating rounds (load ${load})`,
);
for (const k of ['wall', 'cpu'] as const) {
  const rRunner = rate(runner, k);
  const rBare = rate(bare, k);
  console.log(
    `  ${k.padEnd(4)} runner ${rRunner.toFixed(0)} items/s, bare loop ${rBare.toFixed(0)} items/s`,
  );
  console.log(`  ${k.padEnd(4)} ratio runner/bare = ${(rRunner / rBare).toFixed(2)}`);
}
