import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { notStarted } from '../../pipeline/cli/reports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline, selectStages, type StageRegistry } from '../../pipeline/runner.js';
import { openState, type OpenState } from '../../pipeline/state.js';
import { EventBus, type StampedEvent } from '../../pipeline/events.js';
import { defineStage, type Pipeline, type Stage } from '../../pipeline/stage.js';
import { PreflightError, SkipItem, TelebenchError, ConfigError } from '../../pipeline/errors.js';

interface Cfg {
  n: number;
  failKeys?: Set<string>;
  version?: number;
}

let dir: string;
let state: OpenState;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-runner-'));
  state = openState(dir);
});
afterEach(() => {
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function registryOf(...stages: Stage<any, any, any>[]): StageRegistry {
  return new Map(stages.map((s) => [s.name, s]));
}

/** A stage named `name` (after `needs`) that plans one item `x` and returns null; `extra` adds hooks. */
function oneItemStage(name: string, needs: string[], extra: Partial<Stage<null, null, Cfg>> = {}) {
  return defineStage<null, null, Cfg>({
    name,
    version: 1,
    needs,
    description: '',
    plan: () => [{ key: 'x', input: null }],
    run: async () => null,
    ...extra,
  });
}

async function run(
  pipeline: Pipeline<Cfg>,
  registry: StageRegistry,
  config: Cfg,
  extra: Partial<Parameters<typeof runPipeline<Cfg>>[0]> = {},
) {
  const bus = new EventBus();
  const events: StampedEvent[] = [];
  bus.on((e) => events.push(e));
  const result = await runPipeline<Cfg>({
    pipeline,
    registry,
    config,
    configFile: join(dir, 'config.yaml'),
    stateDir: dir,
    store: state.store,
    blobs: state.blobs,
    bus,
    signal: new AbortController().signal,
    ...extra,
  });
  return { result, events };
}

function counter() {
  const calls: string[] = [];
  const stage = (version = 1) =>
    defineStage<{ i: number }, { doubled: number }, Cfg>({
      name: 'a.items',
      version,
      needs: [],
      description: 'test items',
      concurrency: () => 3,
      *plan(ctx) {
        for (let i = 0; i < ctx.config.n; i++) yield { key: `k${i}`, input: { i } };
      },
      async run(item, ctx) {
        calls.push(item.key);
        if (ctx.config.failKeys?.has(item.key))
          throw new TelebenchError('boom', `item ${item.key} failed`, { tier: 'infra' });
        if (item.input.i === 1) throw new SkipItem('odd_one', 'item 1 is skipped on purpose');
        ctx.artifact('log', `log of ${item.key}`);
        return { doubled: item.input.i * 2 };
      },
    });
  return { calls, stage };
}

describe('runner', () => {
  it('runs items, records done/skipped with reasons, and does nothing on a second run', async () => {
    const { calls, stage } = counter();
    const reg = registryOf(stage());
    const p: Pipeline<Cfg> = { name: 'p', description: '', stages: ['a.items'] };
    const first = await run(p, reg, { n: 5 });
    expect(first.result.exitCode).toBe(0);
    expect(calls.sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
    const c = state.store.counts('a.items');
    expect(c.byState).toEqual({ done: 4, skipped: 1 });
    expect(c.bySkipReason).toEqual({ odd_one: 1 });
    expect(state.store.item('a.items', 'k3')?.output).toEqual({ doubled: 6 });
    const art = state.store.artifacts('a.items', 'k3');
    expect(art).toHaveLength(1);
    expect(state.blobs.getText(art[0]!.digest)).toBe('log of k3');

    calls.length = 0;
    const second = await run(p, reg, { n: 5 });
    expect(second.result.exitCode).toBe(0);
    expect(calls).toEqual([]);
  });

  it('marks outputs stale after a version bump and re-runs them', async () => {
    const { calls, stage } = counter();
    const p: Pipeline<Cfg> = { name: 'p', description: '', stages: ['a.items'] };
    await run(p, registryOf(stage(1)), { n: 3 });
    calls.length = 0;
    await run(p, registryOf(stage(2)), { n: 3 });
    expect(calls.sort()).toEqual(['k0', 'k1', 'k2']);
    expect(state.store.item('a.items', 'k0')?.stageVersion).toBe(2);
  });

  it('re-runs an item whose input changed, and orphans items no longer planned', async () => {
    const { calls, stage } = counter();
    const reg = registryOf(stage());
    const p: Pipeline<Cfg> = { name: 'p', description: '', stages: ['a.items'] };
    await run(p, reg, { n: 4 });
    calls.length = 0;
    await run(p, reg, { n: 2 });
    expect(calls).toEqual([]);
    expect(state.store.item('a.items', 'k3')?.state).toBe('orphaned');
    expect(state.store.counts('a.items').total).toBe(2);
  });

  it('re-widening after a narrowing redoes nothing whose input did not change', async () => {
    const { calls, stage } = counter();
    const reg = registryOf(stage());
    const p: Pipeline<Cfg> = { name: 'p', description: '', stages: ['a.items'] };
    await run(p, reg, { n: 4, failKeys: new Set(['k2']) });
    calls.length = 0;
    await run(p, reg, { n: 1 }); // narrowed: k1 (skipped), k2 (failed), k3 (done) orphaned
    expect(state.store.item('a.items', 'k3')?.state).toBe('orphaned');
    const widened = await run(p, reg, { n: 4 });
    expect(calls).toEqual([]);
    expect(state.store.item('a.items', 'k3')).toMatchObject({
      state: 'done',
      output: { doubled: 6 },
    });
    expect(state.store.item('a.items', 'k1')).toMatchObject({
      state: 'skipped',
      skipReason: 'odd_one',
    });
    expect(state.store.item('a.items', 'k2')?.state).toBe('failed');
    expect(widened.result.exitCode).toBe(1);
    // an orphaned item whose stage version changed meanwhile does run again
    await run(p, reg, { n: 1 });
    await run(p, registryOf(stage(2)), { n: 4 });
    expect(calls.sort()).toEqual(['k0', 'k1', 'k2', 'k3']);
  });

  it('records failures, exits 1, and retries them only with retryFailed', async () => {
    const { calls, stage } = counter();
    const reg = registryOf(stage());
    const p: Pipeline<Cfg> = { name: 'p', description: '', stages: ['a.items'] };
    const first = await run(p, reg, { n: 4, failKeys: new Set(['k2']) });
    expect(first.result.exitCode).toBe(1);
    const failed = state.store.item('a.items', 'k2')!;
    expect(failed.state).toBe('failed');
    expect(failed.error).toMatchObject({ code: 'boom', tier: 'infra' });

    calls.length = 0;
    const again = await run(p, reg, { n: 4 });
    expect(calls).toEqual([]);
    expect(again.result.exitCode).toBe(1);

    const retried = await run(p, reg, { n: 4 }, { retryFailed: true });
    expect(calls).toEqual(['k2']);
    expect(retried.result.exitCode).toBe(0);
    expect(state.store.item('a.items', 'k2')?.state).toBe('done');
  });

  it("exit 1 counts the failed items of this run's plan, not older ones a --limit sample leaves out (new-user trial)", async () => {
    const { calls, stage } = counter();
    const reg = registryOf(stage());
    const p: Pipeline<Cfg> = { name: 'p', description: '', stages: ['a.items'] };
    expect((await run(p, reg, { n: 4, failKeys: new Set(['k3']) })).result.exitCode).toBe(1);
    calls.length = 0;
    // k0, k1 planned (done, skipped): k3's failure is not this run's; before, exit 1, and the
    // printed resume (--retry-failed with the same --limit) never reached k3 and exited 1 again
    const sample = await run(p, reg, { n: 4 }, { limit: 2, retryFailed: true });
    expect(sample.result.exitCode).toBe(0);
    expect(sample.result.stages['a.items']).toMatchObject({ failedInPlan: 0 });
    expect(state.store.item('a.items', 'k3')?.state).toBe('failed'); // still there, still counted
    expect(sample.result.stages['a.items']).toMatchObject({ counts: { failed: 1 } });
    // a sample that takes it in: not retried -> exit 1; retried and failing again -> exit 1
    expect((await run(p, reg, { n: 4 }, { limit: 4 })).result).toMatchObject({
      exitCode: 1,
      stages: { 'a.items': { failedInPlan: 1, notRetried: 1 } },
    });
    const retried = await run(p, reg, { n: 4, failKeys: new Set(['k3']) }, { retryFailed: true });
    expect(calls).toEqual(['k3']);
    expect(retried.result).toMatchObject({
      exitCode: 1,
      stages: { 'a.items': { failedInPlan: 1 } },
    });
  });

  it('honours the concurrency limit', async () => {
    let inFlight = 0;
    let peak = 0;
    const s = defineStage<{ i: number }, null, Cfg>({
      name: 'c.items',
      version: 1,
      needs: [],
      description: '',
      concurrency: () => 3,
      *plan() {
        for (let i = 0; i < 20; i++) yield { key: `k${i}`, input: { i } };
      },
      async run() {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return null;
      },
    });
    await run({ name: 'p', description: '', stages: ['c.items'] }, registryOf(s), { n: 0 });
    expect(peak).toBe(3);
    peak = 0;
    state.store.db.exec(`DELETE FROM items`);
    await run(
      { name: 'p', description: '', stages: ['c.items'] },
      registryOf(s),
      { n: 0 },
      { concurrency: { 'c.items': 5 } },
    );
    expect(peak).toBe(5);
  });

  it('orders stages by needs and runs independent stages at the same time', async () => {
    const log: string[] = [];
    const mk = (name: string, needs: string[], ms: number) =>
      defineStage<null, string, Cfg>({
        name,
        version: 1,
        needs,
        description: '',
        *plan(ctx) {
          // a stage sees the outputs of what it needs
          for (const n of needs) expect([...ctx.store.outputsNamed(n)].length).toBe(1);
          yield { key: 'only', input: null };
        },
        async run() {
          log.push(`${name}:start`);
          await new Promise((r) => setTimeout(r, ms));
          log.push(`${name}:end`);
          return name;
        },
      });
    const reg = registryOf(
      mk('x.final', ['x.left', 'x.right'], 1),
      mk('x.left', [], 30),
      mk('x.right', [], 30),
    );
    const p: Pipeline<Cfg> = {
      name: 'p',
      description: '',
      stages: ['x.final', 'x.left', 'x.right'],
    };
    expect(selectStages(p as Pipeline<unknown>, reg)).toEqual(['x.left', 'x.right', 'x.final']);
    const { result } = await run(p, reg, { n: 0 });
    expect(result.exitCode).toBe(0);
    // left and right overlap: both start before either ends; final starts after both end
    expect(log.slice(0, 2).sort()).toEqual(['x.left:start', 'x.right:start']);
    expect(log.slice(4)).toEqual(['x.final:start', 'x.final:end']);
    expect(selectStages(p as Pipeline<unknown>, reg, { from: 'x.right' })).toEqual([
      'x.right',
      'x.final',
    ]);
    expect(selectStages(p as Pipeline<unknown>, reg, { only: 'x.left' })).toEqual(['x.left']);
  });

  it('rejects cycles and unknown stages with a ConfigError', () => {
    const mk = (name: string, needs: string[]) =>
      defineStage<null, null, Cfg>({
        name,
        version: 1,
        needs,
        description: '',
        plan: () => [],
        run: async () => null,
      });
    const reg = registryOf(mk('a', ['b']), mk('b', ['a']));
    expect(() => selectStages({ name: 'p', description: '', stages: ['a', 'b'] }, reg)).toThrow(
      /cycle: a -> b -> a/,
    );
    expect(() => selectStages({ name: 'p', description: '', stages: ['nope'] }, reg)).toThrow(
      ConfigError,
    );
    const ok = registryOf(mk('c', []));
    expect(() =>
      selectStages({ name: 'p', description: '', stages: ['c'] }, ok, { only: 'zzz' }),
    ).toThrow(/not part of pipeline/);
  });

  it('stops a stage at preflight, blocks its dependents, finishes independent stages, exits 3', async () => {
    const { stage } = counter();
    const needsService = oneItemStage('b.remote', [], {
      async preflight() {
        throw new PreflightError(
          'model server http://127.0.0.1:9',
          'cannot reach the model server',
          'start it with `ollama serve`',
        );
      },
    });
    const after = oneItemStage('b.after', ['b.remote']);
    const later = oneItemStage('b.later', ['b.after']);
    const reg = registryOf(stage(), needsService, after, later);
    const p: Pipeline<Cfg> = {
      name: 'p',
      description: '',
      stages: ['a.items', 'b.remote', 'b.after', 'b.later'],
    };
    const { result, events } = await run(p, reg, { n: 3 });
    expect(result.exitCode).toBe(3);
    expect(result.stages['a.items']?.status).toBe('completed');
    expect(result.stages['b.remote']).toMatchObject({
      status: 'blocked',
      hint: 'start it with `ollama serve`',
    });
    expect(result.stages['b.after']?.status).toBe('blocked');
    // the stage-blocked events name the stage whose preflight stopped (the summary folds by it)
    expect(events.filter((e) => e.kind === 'stage-blocked').map((e) => [e.stage, e.root])).toEqual([
      ['b.after', 'b.remote'],
      ['b.later', 'b.remote'],
    ]);
    expect(events.some((e) => e.kind === 'stage-preflight-failed' && e.stage === 'b.remote')).toBe(
      true,
    );
    expect(state.store.counts('a.items').byState.done).toBe(2);
    expect(state.store.counts('b.after').total).toBe(0);
    // the stage-end of a stage stopped at preflight says what happened: nothing ran, and why
    // (the read-only plan that checks for finished work does not report its would-run count)
    const ends = events.filter((e) => e.kind === 'stage-end' && e.stage === 'b.remote');
    expect(ends).toEqual([
      expect.objectContaining({
        counts: { total: 0 },
        ran: 0,
        stopped: {
          at: 'preflight',
          service: 'model server http://127.0.0.1:9',
          reason: 'cannot reach the model server',
          hint: 'start it with `ollama serve`',
        },
      }),
    ]);
    expect(events.find((e) => e.kind === 'stage-end' && e.stage === 'a.items')).toMatchObject({
      ran: 3, // k0..k2 started (two done, one skipped)
    });
    // what `telebench report run` reads back from the run's event log
    const file = join(dir, 'events.jsonl');
    writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n{"kind":"stage-blo`);
    expect(notStarted(file)).toEqual({
      'b.remote':
        'stopped at preflight: cannot reach the model server -> start it with `ollama serve`',
      'b.after': 'not started: needs b.remote, which stopped at preflight',
      // further down the chain the message names the stage that stopped, not every link
      'b.later': 'not started: needs b.after, which waits on b.remote (stopped at preflight)',
    });
  });

  it('a stage whose service is gone but whose items are all finished does not block the next stage', async () => {
    let serviceUp = true;
    const remote = defineStage<{ i: number }, number, Cfg>({
      name: 'r.remote',
      version: 1,
      needs: [],
      description: '',
      async preflight() {
        if (!serviceUp) throw new PreflightError('model server', 'cannot reach it', 'start it');
      },
      *plan(ctx) {
        for (let i = 0; i < ctx.config.n; i++) yield { key: `k${i}`, input: { i } };
      },
      run: async (item) => item.input.i,
    });
    const after = defineStage<{ sum: number }, number, Cfg>({
      name: 'r.after',
      version: 1,
      needs: ['r.remote'],
      description: '',
      *plan(ctx) {
        let sum = 0;
        for (const o of ctx.store.outputsNamed('r.remote')) sum += o.output as number;
        yield { key: 'sum', input: { sum } };
      },
      run: async (item) => item.input.sum,
    });
    const reg = registryOf(remote, after);
    const p: Pipeline<Cfg> = { name: 'p', description: '', stages: ['r.remote', 'r.after'] };
    expect((await run(p, reg, { n: 3 })).result.exitCode).toBe(0);
    serviceUp = false;
    const second = await run(p, reg, { n: 3 });
    expect(second.result.exitCode).toBe(0);
    expect(second.result.stages['r.remote']?.status).toBe('completed');
    // new work for the missing service: stopped at preflight again, and the next stage waits
    const third = await run(p, reg, { n: 4 });
    expect(third.result.exitCode).toBe(3);
    expect(third.result.stages['r.remote']?.status).toBe('blocked');
    expect(third.result.stages['r.after']?.status).toBe('blocked');
    expect(state.store.item('r.after', 'sum')?.output).toBe(3);
  });

  it('dry run plans without writing', async () => {
    const { calls, stage } = counter();
    const { result } = await run(
      { name: 'p', description: '', stages: ['a.items'] },
      registryOf(stage()),
      { n: 4 },
      { dryRun: true },
    );
    expect(result.stages['a.items']).toMatchObject({ status: 'completed', wouldRun: 4 });
    expect(calls).toEqual([]);
    expect(state.store.counts('a.items').total).toBe(0);
  });

  it('limit caps the planned items per stage', async () => {
    const { calls, stage } = counter();
    await run(
      { name: 'p', description: '', stages: ['a.items'] },
      registryOf(stage()),
      { n: 10 },
      { limit: 3 },
    );
    expect(calls.sort()).toEqual(['k0', 'k1', 'k2']);
  });

  it('an abort stops new items, abandons in-flight ones to pending, and reports 130', async () => {
    const controller = new AbortController();
    let started = 0;
    const s = defineStage<{ i: number }, null, Cfg>({
      name: 'slow.items',
      version: 1,
      needs: [],
      description: '',
      concurrency: () => 2,
      *plan() {
        for (let i = 0; i < 10; i++) yield { key: `k${i}`, input: { i } };
      },
      async run(_item, ctx) {
        started++;
        if (started === 3) controller.abort('SIGINT');
        if (ctx.signal.aborted) throw new Error('aborted'); // stops as a real stage would
        await new Promise((resolve, reject) => {
          const t = setTimeout(resolve, 20);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(t);
            reject(new Error('aborted'));
          });
        });
        return null;
      },
    });
    const { result } = await run(
      { name: 'p', description: '', stages: ['slow.items'] },
      registryOf(s),
      { n: 0 },
      { signal: controller.signal },
    );
    expect(result.exitCode).toBe(130);
    expect(started).toBe(3);
    const c = state.store.counts('slow.items').byState;
    expect(c.running ?? 0).toBe(0);
    expect((c.done ?? 0) + (c.pending ?? 0)).toBe(10);
    expect(c.done).toBeGreaterThanOrEqual(1);
    expect(c.pending).toBeGreaterThanOrEqual(7);
    // the outcome counts the started items the abort stopped (the summary says they run on resume)
    expect(result.stages['slow.items']).toMatchObject({
      status: 'interrupted',
      ran: 3,
      abandoned: started - c.done!,
    });
    expect(started - c.done!).toBeGreaterThanOrEqual(1);
  });
});

describe('streaming between stages (itemNeeds)', () => {
  /** An upstream stage of `n` items whose item i takes (n - i) * 15 ms, and a 1:1 downstream. */
  function streamingPair(log: string[], tag: (cfg: Cfg) => number = () => 0) {
    const up = defineStage<{ i: number; tag: number }, { i: number; tag: number }, Cfg>({
      name: 's.up',
      version: 1,
      needs: [],
      description: '',
      concurrency: () => 1,
      *plan(ctx) {
        for (let i = 0; i < ctx.config.n; i++)
          yield { key: `k${i}`, input: { i, tag: tag(ctx.config) } };
      },
      async run(item) {
        log.push(`up:${item.key}:start`);
        await new Promise((r) => setTimeout(r, (6 - item.input.i) * 15));
        log.push(`up:${item.key}:end`);
        if (item.input.i === 2) throw new SkipItem('no_fix_pattern', 'item 2 leads nowhere');
        return item.input;
      },
    });
    const down = defineStage<{ i: number; tag: number }, number, Cfg>({
      name: 's.down',
      version: 1,
      needs: ['s.up'],
      description: '',
      concurrency: () => 2,
      itemNeeds: (item) => ({ 's.up': [item.key] }),
      *plan(ctx) {
        for (const o of ctx.store.outputsNamed('s.up'))
          yield { key: o.key, input: o.output as { i: number; tag: number } };
      },
      async run(item) {
        log.push(`down:${item.key}:${item.input.tag}`);
        return item.input.i;
      },
    });
    return registryOf(up, down);
  }
  const p: Pipeline<Cfg> = { name: 'p', description: '', stages: ['s.up', 's.down'] };

  it("starts an item as soon as the items it names are finished, before the need's last item", async () => {
    const log: string[] = [];
    const { result, events } = await run(p, streamingPair(log), { n: 6 });
    expect(result.exitCode).toBe(0);
    const at = (e: string) => log.indexOf(e);
    // the first downstream item runs while the upstream stage still has items to do
    expect(at('down:k0:0')).toBeGreaterThan(-1);
    expect(at('down:k0:0')).toBeLessThan(at('up:k5:end'));
    for (const k of ['k0', 'k1', 'k3', 'k4', 'k5'])
      expect(at(`down:${k}:0`), k).toBeGreaterThan(at(`up:${k}:end`));
    // the skipped upstream item has no downstream item
    expect(log.filter((l) => l.startsWith('down:'))).toHaveLength(5);
    expect(state.store.counts('s.down').byState).toEqual({ done: 5 });
    const start = events.find((e) => e.kind === 'stage-start' && e.stage === 's.down');
    expect(start).toMatchObject({ streaming: true });
    expect(
      events.filter((e) => e.kind === 'stage-total' && e.stage === 's.down').length,
    ).toBeGreaterThan(0);
  });

  it('never runs an item on a stale output of a need that this run re-does', async () => {
    const log: string[] = [];
    const cfgTag = (cfg: Cfg) => cfg.version ?? 0;
    await run(p, streamingPair(log, cfgTag), { n: 6, version: 1 });
    log.length = 0;
    // the upstream inputs change: every upstream item re-runs, and each downstream item must run
    // once, on the new output (a plan read before the upstream re-ran would see tag 1)
    await run(p, streamingPair(log, cfgTag), { n: 6, version: 2 });
    const downs = log.filter((l) => l.startsWith('down:'));
    expect(downs.sort()).toEqual(['down:k0:2', 'down:k1:2', 'down:k3:2', 'down:k4:2', 'down:k5:2']);
    // and a third run with nothing changed runs nothing
    log.length = 0;
    await run(p, streamingPair(log, cfgTag), { n: 6, version: 2 });
    expect(log).toEqual([]);
  });

  it('a stage without itemNeeds still waits for every item of its needs', async () => {
    const log: string[] = [];
    const reg = streamingPair(log);
    const barrier = defineStage<{ count: number }, number, Cfg>({
      name: 's.sum',
      version: 1,
      needs: ['s.down'],
      description: '',
      *plan(ctx) {
        yield { key: 'sum', input: { count: [...ctx.store.outputsNamed('s.down')].length } };
      },
      async run(item) {
        log.push('sum');
        return item.input.count;
      },
    });
    const all = new Map(reg).set('s.sum', barrier);
    await run({ name: 'p', description: '', stages: ['s.up', 's.down', 's.sum'] }, all, { n: 6 });
    expect(log.at(-1)).toBe('sum');
    expect(state.store.item('s.sum', 'sum')?.output).toBe(5);
  });

  it('itemNeeds naming a stage outside needs is a bug', async () => {
    const up = oneItemStage('b.up', []);
    const down = oneItemStage('b.down', ['b.up'], {
      itemNeeds: () => ({ 'b.other': ['x'] }),
    });
    await expect(
      run({ name: 'p', description: '', stages: ['b.up', 'b.down'] }, registryOf(up, down), {
        n: 0,
      }),
    ).rejects.toThrow(/names items of b\.other, which is not in its needs/);
  });
});
