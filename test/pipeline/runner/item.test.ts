import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState, type OpenState } from '../../../pipeline/state.js';
import { EventBus, type StampedEvent } from '../../../pipeline/events.js';
import { runItem } from '../../../pipeline/runner/item.js';
import { stageContext } from '../../../pipeline/runner/context.js';
import { defineStage, type Stage, type StageContext } from '../../../pipeline/stage.js';
import { SkipItem, TelebenchError } from '../../../pipeline/errors.js';

let dir: string;
let state: OpenState;
let bus: EventBus;
let events: StampedEvent[];
let controller: AbortController;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-item-'));
  state = openState(dir);
  bus = new EventBus();
  events = [];
  bus.on((e) => events.push(e));
  controller = new AbortController();
});
afterEach(() => {
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

function stage(run: Stage<unknown, unknown, unknown>['run']): Stage<unknown, unknown, unknown> {
  return defineStage({
    name: 't.one',
    version: 1,
    needs: [],
    description: '',
    plan: () => [],
    run,
  });
}
function contextFor(): StageContext<unknown> {
  return stageContext(
    {
      config: {},
      configFile: join(dir, 'c.yaml'),
      stateDir: dir,
      runId: 'r1',
      blobs: state.blobs,
      signal: controller.signal,
      emit: () => {},
      log: () => {},
    },
    state.store,
    new Map(),
  );
}
async function runOnce(s: Stage<unknown, unknown, unknown>) {
  state.store.planItem('t.one', 'x', 1, 'h', '{}', true);
  return runItem(s, { key: 'x', input: {} }, contextFor(), {
    store: state.store,
    blobs: state.blobs,
    bus,
    runId: 'r1',
    signal: controller.signal,
  });
}
const ends = () => events.filter((e) => e.kind === 'item-end');

describe('runItem (the item state machine)', () => {
  it('done: stores the output and the artifacts linked to the attempt', async () => {
    const end = await runOnce(
      stage(async (_item, ctx) => {
        ctx.artifact('log', 'hello');
        return { ok: true };
      }),
    );
    expect(end).toBe('done');
    const row = state.store.item('t.one', 'x')!;
    expect(row.state).toBe('done');
    expect(row.output).toEqual({ ok: true });
    expect(ends()).toMatchObject([{ state: 'done', key: 'x' }]);
    expect(ends()[0]).not.toHaveProperty('reason');
  });

  it('skipped: a SkipItem is a content outcome with its reason', async () => {
    const end = await runOnce(
      stage(async () => {
        throw new SkipItem('no_linked_issue', 'the PR names no issue');
      }),
    );
    expect(end).toBe('skipped');
    expect(state.store.item('t.one', 'x')).toMatchObject({
      state: 'skipped',
      skipReason: 'no_linked_issue',
    });
    expect(ends()).toMatchObject([{ state: 'skipped', reason: 'no_linked_issue' }]);
  });

  it('failed: any other error is stored with its code, secrets redacted', async () => {
    process.env.GITHUB_TOKEN = 'ghp_itemtestsecret0123456789';
    try {
      const end = await runOnce(
        stage(async () => {
          throw new TelebenchError('boom', `bad token ghp_itemtestsecret0123456789`, {
            tier: 'infra',
          });
        }),
      );
      expect(end).toBe('failed');
      const row = state.store.item('t.one', 'x')!;
      expect(row.state).toBe('failed');
      expect(JSON.stringify(row.error)).not.toContain('ghp_itemtestsecret0123456789');
      expect(ends()).toMatchObject([{ state: 'failed', reason: 'boom' }]);
    } finally {
      delete process.env.GITHUB_TOKEN;
    }
  });

  it('abandoned: a SkipItem thrown after the abort is not a verdict (the killed step caused it)', async () => {
    // swe5g.validate: a stop (SIGTERM) kills the step's container (exit 137), whose log then
    // reads as ambiguous_log; recorded as a skip, the instance was lost for good
    const end = await runOnce(
      stage(async () => {
        controller.abort('SIGTERM');
        throw new SkipItem('ambiguous_log', 'exit code 137 but the log reports no failure');
      }),
    );
    expect(end).toBe('abandoned');
    expect(state.store.item('t.one', 'x')?.state).toBe('pending');
    expect(ends()).toMatchObject([{ state: 'abandoned' }]);
  });

  it('abandoned: an error after the abort puts the row back to pending', async () => {
    const end = await runOnce(
      stage(async () => {
        controller.abort('SIGINT');
        throw new Error('stopped');
      }),
    );
    expect(end).toBe('abandoned');
    expect(state.store.item('t.one', 'x')?.state).toBe('pending');
    expect(ends()).toMatchObject([{ state: 'abandoned' }]);
  });
});
