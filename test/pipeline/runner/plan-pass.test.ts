import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../pipeline/store/store.js';
import { PlanPass, PLAN_BATCH } from '../../../pipeline/runner/plan-pass.js';
import { defineStage, type PlanContext, type Stage } from '../../../pipeline/stage.js';
import { canonicalJson, sha256 } from '../../../pipeline/hash.js';

let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-plan-pass-'));
  store = new Store(join(dir, 'state.db'));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function stageOf(keys: string[], version = 1): Stage<unknown, unknown, unknown> {
  return defineStage<unknown, unknown, unknown>({
    name: 't.items',
    version,
    needs: [],
    description: '',
    plan: () => keys.map((key) => ({ key, input: { key } })),
    run: async () => null,
  });
}
const ctx = { limit: undefined } as PlanContext<unknown>;
const options = (extra: Partial<ConstructorParameters<typeof PlanPass>[2]> = {}) => ({
  store,
  dry: false,
  retryFailed: false,
  limit: undefined,
  signal: new AbortController().signal,
  ...extra,
});

describe('PlanPass', () => {
  it('decides every listed item once: run first, done when stored at the same version and hash', async () => {
    const stage = stageOf(['a', 'b', 'c']);
    const first = new PlanPass(stage, ctx, options());
    expect([...(await first.run(true))]).toEqual(['a', 'b', 'c']);
    expect(first.decisions).toEqual({ run: 3, done: 0, skipped: 0, failed: 0 });
    const items = first.takeToRun();
    expect(items.map((i) => i.key)).toEqual(['a', 'b', 'c']);
    expect(first.takeToRun()).toEqual([]);
    // the row stores the input's canonical JSON hash
    expect(store.item('t.items', 'a')?.inputHash).toBe(sha256(canonicalJson({ key: 'a' })));

    store.startItem('t.items', 'a', 'att', 'run');
    store.finishItem('t.items', 'a', 'att', { state: 'done', output: 1 });
    const settled: string[] = [];
    const second = new PlanPass(stage, ctx, options({ onSettled: (k) => settled.push(...k) }));
    await second.run(true);
    expect(second.decisions).toEqual({ run: 2, done: 1, skipped: 0, failed: 0 });
    expect(settled).toEqual(['a']);
    // a second pass of the same PlanPass decides nothing again
    await second.run(true);
    expect(second.decisions.run).toBe(2);

    // a new stage version makes the stored output stale
    const bumped = new PlanPass(stageOf(['a', 'b', 'c'], 2), ctx, options());
    await bumped.run(true);
    expect(bumped.decisions.run).toBe(3);
  });

  it('writes nothing in a dry run', async () => {
    const pass = new PlanPass(stageOf(['a', 'b']), ctx, options({ dry: true }));
    await pass.run(true);
    expect(pass.decisions.run).toBe(2);
    expect(store.counts('t.items').total).toBe(0);
  });

  it('decides only ready items in a non-final pass, the rest in the final one', async () => {
    const ready = new Set(['b']);
    const pass = new PlanPass(
      stageOf(['a', 'b']),
      ctx,
      options({ ready: (i) => ready.has(i.key) }),
    );
    expect((await pass.run(false)).size).toBe(2);
    expect(pass.takeToRun().map((i) => i.key)).toEqual(['b']);
    await pass.run(true);
    expect(pass.takeToRun().map((i) => i.key)).toEqual(['a']);
  });

  it('stops at --limit across batches and counts it', async () => {
    const keys = Array.from(
      { length: PLAN_BATCH + 10 },
      (_, i) => `k${String(i).padStart(4, '0')}`,
    );
    const pass = new PlanPass(stageOf(keys), ctx, options({ limit: PLAN_BATCH + 3 }));
    await pass.run(true);
    expect(pass.limitReached).toBe(true);
    expect(pass.decided.size).toBe(PLAN_BATCH + 3);
    expect(store.counts('t.items').total).toBe(PLAN_BATCH + 3);
  });

  it('rejects a plan that lists a key twice or an empty key, as a bug', async () => {
    await expect(new PlanPass(stageOf(['a', 'a']), ctx, options()).run(true)).rejects.toMatchObject(
      {
        code: 'duplicate_item_key',
        tier: 'bug',
      },
    );
    await expect(new PlanPass(stageOf(['']), ctx, options()).run(true)).rejects.toMatchObject({
      code: 'bad_item_key',
    });
  });
});
