// bench/engine: items per second of the runner on 10,000 no-op items, against a bare loop doing the
// same SQLite writes (one planned insert per item in batches, one `running` update and one `done`
// update per item, each its own transaction, WAL + synchronous=NORMAL). Both measured in this one
// run, alternating, and printed as a ratio (these machines are noisy).
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
const ROUNDS = 3;

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

async function viaRunner(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-engine-'));
  const state = openState(dir);
  const t0 = performance.now();
  const r = await runPipeline({
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
  const ms = performance.now() - t0;
  if (r.exitCode !== 0 || state.store.counts('bench.noop').byState.done !== N)
    throw new Error('runner bench did not finish');
  state.close();
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

async function bareLoop(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bare-'));
  const store = new Store(join(dir, 'state.db'));
  const t0 = performance.now();
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
  const ms = performance.now() - t0;
  store.close();
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

const runner: number[] = [];
const bare: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  bare.push(await bareLoop());
  runner.push(await viaRunner());
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rRunner = (N * 1000) / median(runner);
const rBare = (N * 1000) / median(bare);
console.log(`bench/engine: ${N} no-op items, median of ${ROUNDS} alternating rounds`);
console.log(`  runner    ${rRunner.toFixed(0)} items/s`);
console.log(`  bare loop ${rBare.toFixed(0)} items/s (same SQLite writes, same durability)`);
console.log(`  ratio runner/bare = ${(rRunner / rBare).toFixed(2)}`);
