/**
 * planPerResolved over a real SQLite store: one item per done `swe5g.resolve` output (run order:
 * key order within one project, test/stages/swe5g/run-order.test.ts for several; `--limit`), and
 * `swe5g.build` and `swe5g.testgen` plan exactly those items.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../../pipeline/store/store.js';
import type { PlanContext, StoreReader, WorkItem } from '../../../../pipeline/stage.js';
import { planPerResolved } from '../../../../stages/swe5g/resolve/plan.js';
import { resolveStage } from '../../../../stages/swe5g/resolve/resolve.js';
import { buildStage } from '../../../../stages/swe5g/build/build.js';
import { testgenStage } from '../../../../stages/swe5g/testgen/testgen.js';
import type { Resolved } from '../../../../stages/swe5g/types.js';
import { storeReader } from '../../../../pipeline/runner.js';

const store = new Store(join(mkdtempSync(join(tmpdir(), 'telebench-plan-')), 'state.db'));
afterAll(() => store.close());

const VERSIONS: Record<string, number> = {
  'swe5g.resolve': resolveStage.version,
  'swe5g.testgen': testgenStage.version,
};

function record(key: string, state: 'done' | 'failed' | 'skipped', stage = 'swe5g.resolve'): void {
  const input = JSON.stringify({ key });
  store.planItem(stage, key, VERSIONS[stage]!, `h-${key}`, input, false);
  store.startItem(stage, key, `a-${key}`, 'run-1');
  store.finishItem(
    stage,
    key,
    `a-${key}`,
    state === 'done'
      ? { state, output: { instance_id: key, repo: 'free5gc/amf' } }
      : state === 'skipped'
        ? { state, reason: 'no_fix_pattern', detail: 'no site' }
        : { state, error: { code: 'x' } },
  );
}

const reader: StoreReader = storeReader(store, (stage) => VERSIONS[stage]);
const ctx = (limit: number | undefined): PlanContext<never> =>
  ({ store: reader, limit }) as unknown as PlanContext<never>;
const keys = async (
  items: AsyncIterable<WorkItem<Resolved>> | Iterable<WorkItem<Resolved>>,
): Promise<string[]> => {
  const out: string[] = [];
  for await (const i of items) {
    expect(i.input.instance_id).toBe(i.key);
    out.push(i.key);
  }
  return out;
};

describe('planPerResolved', () => {
  record('free5gc__amf-9', 'done');
  record('free5gc__amf-161', 'done');
  record('free5gc__amf-200', 'failed');

  it('lists done resolve outputs (one project: key order), failed ones not, capped by --limit', async () => {
    expect(await keys(planPerResolved(ctx(undefined)))).toEqual([
      'free5gc__amf-161',
      'free5gc__amf-9',
    ]);
    expect(await keys(planPerResolved(ctx(1)))).toEqual(['free5gc__amf-161']);
    expect(await keys(planPerResolved(ctx(0)))).toEqual([]);
  });

  it('is the plan of swe5g.testgen', async () => {
    const all = await keys(planPerResolved(ctx(undefined)));
    expect(await keys(testgenStage.plan(ctx(undefined) as never))).toEqual(all);
    expect(await keys(testgenStage.plan(ctx(1) as never))).toEqual(all.slice(0, 1));
  });

  it('swe5g.build plans only instances whose test generation is done (no image for no_fix_pattern)', async () => {
    expect(await keys(buildStage.plan(ctx(undefined) as never))).toEqual([]);
    record('free5gc__amf-9', 'skipped', 'swe5g.testgen');
    record('free5gc__amf-161', 'done', 'swe5g.testgen');
    expect(await keys(buildStage.plan(ctx(undefined) as never))).toEqual(['free5gc__amf-161']);
    // item-level readiness: build item k waits for resolve k and testgen k only
    expect(buildStage.itemNeeds!({ key: 'free5gc__amf-9', input: {} as Resolved })).toEqual({
      'swe5g.resolve': ['free5gc__amf-9'],
      'swe5g.testgen': ['free5gc__amf-9'],
    });
    expect(buildStage.needs).toContain('swe5g.testgen');
  });
});
