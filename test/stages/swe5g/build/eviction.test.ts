/**
 * The eviction plan under `image_budget_gib` (stages/swe5g/build/eviction.ts): least recently used
 * first, only images no pending stage needs, an env image only after its instance images, and
 * nothing when the state's images already fit.
 */
import { describe, it, expect } from 'vitest';
import { planEviction, type StateImage } from '../../../../stages/swe5g/build/eviction.js';

const MiB = 2 ** 20;

function inst(name: string, mib: number, lastUsed: number, evictable = true): StateImage {
  return {
    name,
    layer: 'instance',
    bytes: mib * MiB,
    lastUsed,
    evictable,
    instances: [name],
    children: [],
  };
}

function env(name: string, mib: number, lastUsed: number, children: string[]): StateImage {
  return {
    name,
    layer: 'env',
    bytes: mib * MiB,
    lastUsed,
    evictable: true,
    instances: children,
    children,
  };
}

describe('planEviction', () => {
  it('evicts nothing when the state fits its budget', () => {
    const r = planEviction([inst('a', 10, 1), inst('b', 10, 2)], 20 * MiB);
    expect(r.evicted).toEqual([]);
    expect(r.used_after).toBe(20 * MiB);
  });

  it('evicts the least recently used first, and stops once under budget', () => {
    const r = planEviction(
      [inst('new', 10, 30), inst('old', 10, 10), inst('mid', 10, 20)],
      15 * MiB,
    );
    expect(r.evicted.map((e) => e.image)).toEqual(['old', 'mid']);
    expect(r.used_before).toBe(30 * MiB);
    expect(r.used_after).toBe(10 * MiB);
  });

  it('never evicts an image a pending stage needs, even the oldest', () => {
    const r = planEviction([inst('pending', 50, 0, false), inst('done', 10, 5)], 1 * MiB);
    expect(r.evicted.map((e) => e.image)).toEqual(['done']);
    expect(r.used_after).toBe(50 * MiB); // still over: the rest is needed
  });

  it('removes an env image only after its instance images', () => {
    const images = [env('e', 100, 0, ['i1', 'i2']), inst('i1', 5, 3), inst('i2', 5, 4)];
    const r = planEviction(images, 1 * MiB);
    expect(r.evicted.map((e) => e.image)).toEqual(['i1', 'i2', 'e']);
    // an env image with a needed instance stays, and so does that instance
    const kept = planEviction([env('e', 100, 0, ['i1']), inst('i1', 5, 3, false)], 1 * MiB);
    expect(kept.evicted).toEqual([]);
  });
});
