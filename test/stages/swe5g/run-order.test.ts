/**
 * The run order of the swe5g stages (issue 31): items interleaved by project, key order within a
 * project. A unit test of the ordering, then the real stage plans through the real runner on a
 * real SQLite store (resolve -> testgen -> build -> validate streaming, with stand-in `run`s): the
 * items of three projects start interleaved in every stage, and a second run finds them all done.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline } from '../../../pipeline/runner.js';
import { openState } from '../../../pipeline/state.js';
import { EventBus } from '../../../pipeline/events.js';
import type { Stage, WorkItem } from '../../../pipeline/stage.js';
import { SkipItem } from '../../../pipeline/errors.js';
import { interleaveByProject, inRunOrder } from '../../../stages/swe5g/run-order.js';
import { projectOfKey } from '../../../stages/swe5g/report-counts.js';
import { swe5gFilter } from '../../../stages/swe5g/filter/filter.js';
import { resolveStage } from '../../../stages/swe5g/resolve/resolve.js';
import { testgenStage } from '../../../stages/swe5g/testgen/testgen.js';
import { buildStage } from '../../../stages/swe5g/build/build.js';
import { validateStage } from '../../../stages/swe5g/validate/validate.js';

/** Three projects, unequal sizes, listed in no particular order. */
const KEYS = [
  'open5gs__open5gs-2864',
  'free5gc__smf-12',
  'magma__magma-10269',
  'free5gc__amf-161',
  'free5gc__amf-9',
  'magma__magma-9000',
  'free5gc__upf-3',
  'open5gs__open5gs-100',
];
/** KEYS interleaved: one of each project per round, key order within a project. */
const INTERLEAVED = [
  'free5gc__amf-161',
  'magma__magma-10269',
  'open5gs__open5gs-100',
  'free5gc__amf-9',
  'magma__magma-9000',
  'open5gs__open5gs-2864',
  'free5gc__smf-12',
  'free5gc__upf-3',
];

describe('interleaveByProject', () => {
  it('takes one item of each project per round, projects by name, keys in order within one', () => {
    expect(interleaveByProject(KEYS, (k) => k)).toEqual(INTERLEAVED);
  });

  it('depends on the keys only (any input order gives the same order)', () => {
    expect(interleaveByProject([...KEYS].reverse(), (k) => k)).toEqual(INTERLEAVED);
    expect(interleaveByProject([...INTERLEAVED].sort(), (k) => k)).toEqual(INTERLEAVED);
  });

  it('groups by the project `telebench plan` groups by (instance ids and registry ids)', () => {
    expect(projectOfKey('free5gc__go-upf-101')).toBe('free5gc');
    expect(projectOfKey('magma__magma-10269')).toBe('magma');
    expect(projectOfKey('free5gc/amf')).toBe('free5gc');
    expect(projectOfKey('magma/magma:lte/cloud/go')).toBe('magma');
    const registry = ['free5gc/amf', 'free5gc/smf', 'magma/magma:lte/cloud/go', 'open5gs/open5gs'];
    expect(interleaveByProject(registry, (k) => k)).toEqual([
      'free5gc/amf',
      'magma/magma:lte/cloud/go',
      'open5gs/open5gs',
      'free5gc/smf',
    ]);
  });

  it('keeps every item, an empty list and one project as they are', () => {
    expect(interleaveByProject([], (k: string) => k)).toEqual([]);
    expect(interleaveByProject(['free5gc__b-2', 'free5gc__a-1'], (k) => k)).toEqual([
      'free5gc__a-1',
      'free5gc__b-2',
    ]);
  });

  it('inRunOrder applies --limit after the order: a sample of every project', () => {
    const items = KEYS.map((key) => ({ key, input: null }));
    const keys = (limit: number | undefined) => [...inRunOrder({ limit }, items)].map((i) => i.key);
    expect(keys(undefined)).toEqual(INTERLEAVED);
    expect(keys(3)).toEqual(INTERLEAVED.slice(0, 3));
    expect(keys(0)).toEqual([]);
    expect(keys(100)).toEqual(INTERLEAVED);
  });
});

/** The real stage (its plan, keys, cache key) with a stand-in `run`, one item at a time. */
function standIn<In>(stage: Stage<In, unknown, never>, run: (item: WorkItem<In>) => unknown) {
  return {
    ...stage,
    preflight: undefined,
    concurrency: () => 1,
    run: async (item: WorkItem<In>) => run(item),
  } as never;
}

/** A state with KEYS as swe5g.filter's kept candidates, and runs of the swe5g stages over it. */
function fixtureState(skipTestgen: ReadonlySet<string> = new Set()) {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-run-order-'));
  const state = openState(dir);
  for (const key of KEYS) {
    const cand = { instance_id: key, repo: key.replace(/-\d+$/, '').replace('__', '/') };
    state.store.planItem(swe5gFilter.name, key, swe5gFilter.version, `h-${key}`, '{}', false);
    state.store.startItem(swe5gFilter.name, key, `a-${key}`, 'seed');
    state.store.finishItem(swe5gFilter.name, key, `a-${key}`, { state: 'done', output: cand });
  }
  const registry = new Map<string, never>([
    [swe5gFilter.name, swe5gFilter as never],
    [resolveStage.name, standIn(resolveStage, (i) => ({ ...i.input, test_dirs: [] }))],
    [
      testgenStage.name,
      standIn(testgenStage, (i) => {
        if (skipTestgen.has(i.key)) throw new SkipItem('no_fix_pattern', 'stand-in');
        return { instance_id: i.key, tests: [] };
      }),
    ],
    [buildStage.name, standIn(buildStage, (i) => ({ images: { instance: `img-${i.key}` } }))],
    [validateStage.name, standIn(validateStage, (i) => ({ instance_id: i.key }))],
  ]);
  const run = async (stages: string[], only?: string) => {
    const bus = new EventBus();
    const started: Record<string, string[]> = {};
    bus.on((e) => {
      if (e.kind === 'item-start') (started[e.stage] ??= []).push(e.key);
    });
    const result = await runPipeline({
      pipeline: { name: 'swe5g-order', description: 'test', stages },
      registry,
      config: { version: 1, stages: {} },
      configFile: join(dir, 'config.yaml'),
      stateDir: dir,
      store: state.store,
      blobs: state.blobs,
      bus,
      signal: new AbortController().signal,
      ...(only ? { only } : {}),
    });
    return { result, started };
  };
  const close = () => {
    state.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { state, run, close };
}

describe('the swe5g stages through the runner', () => {
  const STAGES = ['swe5g.resolve', 'swe5g.testgen', 'swe5g.build', 'swe5g.validate'];
  const f = fixtureState();
  afterAll(() => f.close());

  it('starts the items of every stage interleaved by project', async () => {
    const { result, started } = await f.run(STAGES);
    expect(result.exitCode).toBe(0);
    // one item at a time: a streaming stage releases its items as their needs finish, which
    // they do in this order, so each stage starts them in exactly the plan's order
    for (const stage of STAGES) expect(started[stage], stage).toEqual(INTERLEAVED);
  });

  it('a second run finds every item done (the order changed no key nor cache key)', async () => {
    const { result, started } = await f.run(STAGES);
    expect(result.exitCode).toBe(0);
    expect(started).toEqual({});
    for (const stage of STAGES)
      expect(f.state.store.counts(stage).byState, stage).toEqual({ done: KEYS.length });
  });

  it('interleaves what a stage plans after its own filter (build: testgen done only)', async () => {
    const g = fixtureState(new Set(['free5gc__amf-161', 'free5gc__amf-9']));
    try {
      expect((await g.run(['swe5g.resolve', 'swe5g.testgen'])).result.exitCode).toBe(0);
      const { started } = await g.run(STAGES, 'swe5g.build');
      expect(started['swe5g.build']).toEqual([
        'free5gc__smf-12',
        'magma__magma-10269',
        'open5gs__open5gs-100',
        'free5gc__upf-3',
        'magma__magma-9000',
        'open5gs__open5gs-2864',
      ]);
    } finally {
      g.close();
    }
  });
});
