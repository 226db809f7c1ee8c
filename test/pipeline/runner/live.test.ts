import { describe, it, expect } from 'vitest';
import { LiveBoard, Wakeups } from '../../../pipeline/runner/live.js';
import { defineStage } from '../../../pipeline/stage.js';

const down = defineStage<{ k: string }, null, never>({
  name: 'd',
  version: 1,
  needs: ['u'],
  description: '',
  plan: () => [],
  run: async () => null,
  itemNeeds: (item) => ({ u: [item.input.k] }),
});
const item = (k: string) => ({ key: k, input: { k } });

describe('LiveBoard', () => {
  it('an item is ready once the upstream keys it names settled in this run, or the need ended', () => {
    const board = new LiveBoard(['u', 'd']);
    expect(board.ready(down as never, item('a'))).toBe(false);
    board.settle('u', ['a']);
    expect(board.ready(down as never, item('a'))).toBe(true);
    expect(board.ready(down as never, item('b'))).toBe(false);
    board.end('u', { status: 'completed', counts: {}, ran: 0 });
    expect(board.ready(down as never, item('b'))).toBe(true);
  });

  it('a need not selected in this run imposes no wait', () => {
    const board = new LiveBoard(['d']);
    expect(board.ready(down as never, item('a'))).toBe(true);
  });

  it('naming a stage outside needs is a bug', () => {
    const bad = { ...down, itemNeeds: () => ({ other: ['a'] }) };
    expect(() => new LiveBoard(['d']).ready(bad as never, item('a'))).toThrow(/not in its needs/);
  });

  it('begun resolves with undefined at begin, or with the outcome when the stage ends unstarted', async () => {
    const board = new LiveBoard(['u', 'v']);
    board.begin('u');
    const blocked = { status: 'blocked', reason: 'x' } as const;
    board.end('v', blocked);
    expect(await board.get('u')!.begun).toBeUndefined();
    expect(await board.get('v')!.begun).toEqual(blocked);
  });
});

describe('Wakeups', () => {
  it('next() waits for a change in a need and then for the pacing gap', async () => {
    const board = new LiveBoard(['u', 'd']);
    const controller = new AbortController();
    const w = new Wakeups(board, ['u'], controller.signal);
    let woke = false;
    const t0 = Date.now();
    const next = w.next(t0, 30).then(() => (woke = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(woke).toBe(false); // nothing changed yet
    board.settle('u', ['a']);
    await next;
    // at least 3 x the last pass's 30 ms after it ended
    expect(Date.now() - t0).toBeGreaterThanOrEqual(89);
    expect(w.needsEnded()).toBe(false);
    board.end('u', undefined); // a need whose promise rejected
    expect(w.needsEnded()).toBe(true);
    expect(w.needFailed()).toBe(true);
    w.close();
    expect(board.get('u')!.listeners.size).toBe(0);
  });

  it('an abort wakes it', async () => {
    const board = new LiveBoard(['u']);
    const controller = new AbortController();
    const w = new Wakeups(board, ['u'], controller.signal);
    const next = w.next(0, 0);
    controller.abort();
    await next;
    w.close();
  });
});
