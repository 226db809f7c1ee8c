/**
 * Paired comparisons of two models on the same instances (issue 33): McNemar's exact test and a
 * paired bootstrap of the macro difference. Checked against hand-computed values (R:
 * binom.test(2, 12)$p.value = 0.0386) and against the plausible wrong answers: an unpaired
 * comparison on different instances, and a difference reported without its interval.
 */
import { describe, expect, it } from 'vitest';
import { compareModels, comparisonRows } from '../../../stages/resilience-eval/compare.js';
import { mcnemarExact } from '../../../stages/resilience-eval/intervals.js';
import type { RowScore } from '../../../stages/resilience-eval/score.js';
import type { Outcome } from '../../../stages/resilience-eval/metrics.js';

const rs = (id: string, subset: string, outcome: Outcome): RowScore =>
  ({
    line: 1,
    sample_id: id,
    sub_benchmark: subset,
    subset,
    model: 'm',
    parses: {} as RowScore['parses'],
    outcomes: { recorded: outcome, published: outcome, strict: outcome, lenient: outcome },
    reproduced: null,
    unreproduced_reason: null,
    prompt_at_limit: false,
    budget_exhausted: false,
  }) as RowScore;

describe('McNemar exact', () => {
  it('is the two-sided binomial p of the discordant pairs', () => {
    expect(mcnemarExact(2, 10)).toBeCloseTo(0.03857, 4);
    expect(mcnemarExact(10, 2)).toBeCloseTo(0.03857, 4);
    expect(mcnemarExact(5, 5)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(0, 6)).toBeCloseTo(0.03125, 6);
  });
});

describe('compareModels', () => {
  // 40 teleqna instances: A corrects 0..11, B corrects 10..11 only -> b = 10, c = 0
  const ids = Array.from({ length: 40 }, (_, i) => `ot-lite:teleqna:${i}`);
  const A = ids.map((id, i) => rs(id, 'teleqna', i < 12 ? 'correct_flip' : 'no_flip'));
  const B = ids.map((id, i) =>
    rs(id, 'teleqna', i >= 10 && i < 12 ? 'correct_flip' : 'wrong_flip'),
  );

  it('counts discordant pairs on shared instances and gives the macro difference with an interval', () => {
    const [c] = compareModels(
      [
        { model: 'a', scores: A },
        { model: 'b', scores: B },
      ],
      'recorded',
    );
    expect(c!.pooled).toMatchObject({ n: 40, b: 10, c: 0 });
    expect(c!.pooled!.p).toBeCloseTo(2 * 0.5 ** 10, 8);
    expect(c!.macro!.diff).toBeCloseTo(25, 8);
    const [lo, hi] = c!.macro!.diff_ci!;
    expect(lo).toBeGreaterThan(0);
    expect(hi).toBeGreaterThan(25);
    expect(comparisonRows([c!])[0]![3]).toMatch(/^\+25\.0 \[\d+\.\d, \d+\.\d\]$/);
  });

  it('does not compare rows of different instances, nor excluded rows', () => {
    const other = B.map((r) => ({ ...r, sample_id: `${r.sample_id}x` }));
    const [c] = compareModels(
      [
        { model: 'a', scores: A },
        { model: 'b', scores: other },
      ],
      'recorded',
    );
    expect(c!.pooled).toBeNull();
    expect(comparisonRows([c!])[0]![1]).toBe('0');
    const ex = B.map((r, i) =>
      i < 30 ? { ...r, outcomes: { ...r.outcomes, recorded: 'excluded' as const } } : r,
    );
    const [d] = compareModels(
      [
        { model: 'a', scores: A },
        { model: 'b', scores: ex },
      ],
      'recorded',
    );
    expect(d!.pooled!.n).toBe(10);
    expect(d!.small).toBe(true);
  });

  it('equal models: difference 0, an interval around it, p = 1', () => {
    const [c] = compareModels(
      [
        { model: 'a', scores: A },
        { model: 'a2', scores: A },
      ],
      'published',
    );
    expect(c!.macro!.diff).toBe(0);
    expect(c!.macro!.diff_ci).toEqual([0, 0]);
    expect(c!.pooled!.p).toBe(1);
  });
});
