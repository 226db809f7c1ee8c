import { describe, expect, it } from 'vitest';
import {
  classifyOutcome,
  groupMetrics,
  isClose,
  modeMetrics,
  DISCRETE_SUBSETS,
  type ScoredRow,
  type Outcome,
} from '../../../stages/resilience-eval/metrics.js';
import {
  NO_ANSWER,
  parseLenient,
  parseStrict,
  type ModeParse,
} from '../../../stages/resilience-eval/parse-modes.js';

const ans = (index: number): ModeParse => ({
  status: 'answer',
  rule: 'strict',
  index,
  value: null,
  matched: '',
});
/** A 16-option question: gold option 13 (index 12), the generator's wrong answer option 15 (index 14). */
const mc16 = {
  kind: 'mc' as const,
  goldIndex: 12,
  goldValue: null,
  generatorIndex: 14,
  generatorValue: null,
};
const row = (sub: string, outcome: Outcome, extra: Partial<ScoredRow> = {}): ScoredRow => ({
  sample_id: `x:${sub}:${Math.random()}`,
  subset: sub,
  outcome,
  parse_status: outcome === 'parse_failure' ? 'no_answer' : 'answer',
  output_tokens: 100,
  difficulty: null,
  cut: false,
  ...extra,
});

describe('outcomes', () => {
  const t = mc16;
  it('classifies 16-option answers 10..16 as correct, no flip, wrong flip', () => {
    expect(classifyOutcome(ans(12), t)).toBe('correct_flip');
    expect(classifyOutcome(ans(14), t)).toBe('no_flip');
    expect(classifyOutcome(ans(15), t)).toBe('wrong_flip');
    expect(classifyOutcome(NO_ANSWER, t)).toBe('parse_failure');
    expect(classifyOutcome(ans(12), t, 'prompt_truncated')).toBe('excluded');
    expect(classifyOutcome(ans(3), { ...t, generatorIndex: null })).toBe('incorrect');
  });
  it('numeric: TeleMath tolerance rel 1e-3 or abs 1e-5', () => {
    expect(isClose(1000.9, 1000)).toBe(true);
    expect(isClose(1001.1, 1000)).toBe(false);
    expect(isClose(0.000009, 0)).toBe(true);
    expect(isClose(0.00002, 0)).toBe(false);
    const n = {
      kind: 'numeric' as const,
      goldIndex: null,
      goldValue: 0.033,
      generatorIndex: null,
      generatorValue: 2,
    };
    const v = (value: number): ModeParse => ({
      status: 'answer',
      rule: 'x',
      index: null,
      value,
      matched: '',
    });
    expect(classifyOutcome(v(0.03300001), n)).toBe('correct_flip');
    expect(classifyOutcome(v(2.0), n)).toBe('no_flip');
    expect(classifyOutcome(v(3), n)).toBe('wrong_flip');
  });
});

describe('metrics on hand-computed cases', () => {
  it('keeps parse failures in the denominator and excluded rows out of it', () => {
    // 10 rows: 3 correct, 2 no flip, 2 wrong flip, 2 parse failures, 1 excluded -> scored 9
    const rows = [
      ...Array.from({ length: 3 }, () => row('teleqna', 'correct_flip', { cut: true })),
      ...Array.from({ length: 2 }, () => row('teleqna', 'no_flip')),
      ...Array.from({ length: 2 }, () => row('teleqna', 'wrong_flip')),
      row('teleqna', 'parse_failure'),
      row('teleqna', 'parse_failure', { parse_status: 'ambiguous_answer' }),
      row('teleqna', 'excluded', { output_tokens: null }),
    ];
    const g = groupMetrics(rows);
    expect(g.scored).toBe(9);
    expect(g.cfr).toBeCloseTo(100 * (3 / 9), 10);
    expect(g.nfr).toBeCloseTo(100 * (2 / 9), 10);
    expect(g.wfr).toBeCloseTo(100 * (2 / 9), 10);
    expect(g.parse_failure_rate).toBeCloseTo(100 * (2 / 9), 10);
    expect(g.ambiguous).toBe(1);
    expect(g.mean_output_tokens).toBe(100);
    expect(g.cut_share_of_correct).toBe(100);
    expect(g.counts.excluded).toBe(1);
  });

  it('says unavailable (null), never 0, for what cannot be computed', () => {
    const g = groupMetrics([row('teleqna', 'correct_flip'), row('teleqna', 'incorrect')]);
    expect(g.cfr).toBe(50);
    expect(g.nfr).toBeNull();
    expect(g.wfr).toBeNull();
    const empty = groupMetrics([row('teleqna', 'excluded')]);
    expect(empty.cfr).toBeNull();
    expect(empty.cfr_ci).toBeNull();
    expect(groupMetrics([row('teleqna', 'no_flip')]).cut_share_of_correct).toBeNull();
  });

  it('macro is the unweighted mean of unrounded subset rates; an empty subset does not enter it', () => {
    // teleqna 1/3, teletables 1/2, telelogs: only excluded rows (no scored instance)
    const rows = [
      row('teleqna', 'correct_flip'),
      row('teleqna', 'no_flip'),
      row('teleqna', 'wrong_flip'),
      row('teletables', 'correct_flip'),
      row('teletables', 'parse_failure'),
      row('telelogs', 'excluded'),
      row('telemath', 'correct_flip'),
    ];
    const m = modeMetrics(rows);
    expect(m.macro.subsets).toBe(2);
    expect(m.macro.cfr).toBeCloseTo((100 / 3 + 50) / 2, 10);
    // micro pools the discrete rows (TeleMath apart): 2 correct of 5 scored
    expect(m.micro.cfr).toBeCloseTo(40, 10);
    expect(m.telemath?.cfr).toBe(100);
    expect(m.by_subset['telelogs']!.cfr).toBeNull();
  });

  it('ties: two subsets with equal rates and a 50/50 subset give exact values', () => {
    const rows = [
      row('oranbench', 'correct_flip'),
      row('oranbench', 'no_flip'),
      row('srsranbench', 'wrong_flip'),
      row('srsranbench', 'correct_flip'),
    ];
    const m = modeMetrics(rows);
    expect(m.by_subset['oranbench']!.cfr).toBe(50);
    expect(m.by_subset['srsranbench']!.cfr).toBe(50);
    expect(m.macro.cfr).toBe(50);
    expect(m.macro.nfr).toBe(25);
    expect(m.macro.wfr).toBe(25);
  });

  it('groups by difficulty where the source has it', () => {
    const m = modeMetrics([
      row('oranbench', 'correct_flip', { difficulty: 'easy' }),
      row('oranbench', 'no_flip', { difficulty: 'hard' }),
      row('oranbench', 'correct_flip', { difficulty: 'hard' }),
      row('teleqna', 'correct_flip'),
    ]);
    expect(Object.keys(m.by_difficulty)).toEqual(['easy', 'hard']);
    expect(m.by_difficulty['hard']!.cfr).toBe(50);
  });
});

describe('empty subsets and 16-option questions, end to end through parse and outcome', () => {
  it('an empty group or subset is unavailable everywhere, never 0', () => {
    const g = groupMetrics([]);
    expect(g).toMatchObject({ n: 0, scored: 0, cfr: null, nfr: null, wfr: null, cfr_ci: null });
    expect(g.parse_failure_rate).toBeNull();
    expect(g.mean_output_tokens).toBeNull();
    const m = modeMetrics([]);
    expect(m.macro).toEqual({ cfr: null, nfr: null, wfr: null, subsets: 0, cfr_ci: null });
    expect(m.micro.cfr).toBeNull();
    expect(m.telemath).toBeNull();
    // a discrete subset absent from the rows is absent from by_subset and from the macro
    const one = modeMetrics([row('teleqna', 'correct_flip')]);
    expect(one.by_subset['3gpp_tsg']).toBeUndefined();
    expect(one.macro).toMatchObject({ cfr: 100, subsets: 1 });
  });

  it('3GPP_TSG answered 10..16: hand-computed CFR / NFR / WFR and parse failures', () => {
    const t = mc16;
    const replies = [
      'Final Answer: 13', // correct flip
      'Final Answer: 13', // correct flip
      'Final Answer: 15', // no flip
      'Final Answer: 10', // wrong flip
      'Final Answer: 16', // wrong flip
      'Final Answer: 17', // out of range: parse failure
      'Final Answer: 13 or 15', // strict nothing; lenient ambiguous: parse failure
    ];
    const target = { kind: 'mc' as const, numOptions: 16 };
    for (const [mode, parse] of [
      ['strict', parseStrict],
      ['lenient', parseLenient],
    ] as const) {
      const rows = replies.map((text, i) => {
        const p = parse({ content: text, thinking: '' }, target);
        return row('3gpp_tsg', classifyOutcome(p, t), {
          sample_id: `x:3gpp_tsg:${i}`,
          parse_status: p.status,
        });
      });
      const g = groupMetrics(rows);
      expect(g.scored, mode).toBe(7);
      expect(g.cfr, mode).toBeCloseTo((100 * 2) / 7, 10);
      expect(g.nfr, mode).toBeCloseTo(100 / 7, 10);
      expect(g.wfr, mode).toBeCloseTo((100 * 2) / 7, 10);
      expect(g.parse_failure_rate, mode).toBeCloseTo((100 * 2) / 7, 10);
      expect(g.ambiguous, mode).toBe(mode === 'lenient' ? 1 : 0);
    }
  });
});

describe('intervals (issue 33)', () => {
  it('a subset cell is the exact Clopper-Pearson interval, never a point at k = 0', () => {
    const rows = (k: number, n: number) =>
      Array.from({ length: n }, (_, i) => row('teleqna', i < k ? 'correct_flip' : 'no_flip'));
    // 3 of 90: [0.7, 9.4] (R: binom.test(3, 90)$conf.int), not the percentile [0.0, 7.8]
    const g = groupMetrics(rows(3, 90));
    expect(g.cfr_ci![0]).toBeCloseTo(0.6928, 3);
    expect(g.cfr_ci![1]).toBeCloseTo(9.4336, 3);
    // 0 of 90: [0, 4.0], 90 of 90: [96.0, 100]; 1 of 2: [1.3, 98.7]
    expect(groupMetrics(rows(0, 90)).cfr_ci).toEqual([0, expect.closeTo(4.0159, 3)]);
    expect(groupMetrics(rows(90, 90)).cfr_ci).toEqual([expect.closeTo(95.984, 2), 100]);
    const two = groupMetrics(rows(1, 2)).cfr_ci!;
    expect(two[0]).toBeCloseTo(1.258, 2);
    expect(two[1]).toBeCloseTo(98.742, 2);
  });

  it('the macro interval is a seeded bootstrap over the subsets that contains the macro', () => {
    const rows = DISCRETE_SUBSETS.flatMap((sub, j) =>
      Array.from({ length: 40 }, (_, i) =>
        row(sub, i % (j + 2) === 0 ? 'correct_flip' : 'wrong_flip'),
      ),
    );
    const m = modeMetrics(rows);
    const ci = m.macro.cfr_ci!;
    expect(ci[0]).toBeLessThan(m.macro.cfr!);
    expect(ci[1]).toBeGreaterThan(m.macro.cfr!);
    // narrower than any one subset's exact interval (7 subsets averaged), same on every run
    expect(ci[1] - ci[0]).toBeLessThan(
      m.by_subset['teleqna']!.cfr_ci![1] - m.by_subset['teleqna']!.cfr_ci![0],
    );
    expect(modeMetrics(rows).macro.cfr_ci).toEqual(ci);
  });
});
