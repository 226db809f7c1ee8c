import { describe, it, expect } from 'vitest';
import { tableOne } from '../../../stages/resilience-eval/tables.js';
import type { ModeMetrics } from '../../../stages/resilience-eval/metrics.js';

const cells = (line: string) => line.split('|').slice(1, -1);

describe('Table I', () => {
  it('has as many cells per row as columns when no main subset was evaluated (found on the SmolLM2 ORAN-Bench-13K run)', () => {
    const m = {
      by_subset: { fin_e: { cfr: 22.2, nfr: 55.6, wfr: 11.1 } },
      macro: { cfr: null, nfr: null, wfr: null },
    } as unknown as ModeMetrics;
    const [head, rule, row] = tableOne([{ model: 'smollm2:135m', m }]);
    expect(cells(head!)).toHaveLength(2);
    expect(cells(rule!)).toHaveLength(2);
    expect(cells(row!).map((c) => c.trim())).toEqual([
      'smollm2:135m',
      'unavailable / unavailable / unavailable',
    ]);
  });
});
