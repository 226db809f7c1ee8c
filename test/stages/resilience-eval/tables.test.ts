import { describe, it, expect } from 'vitest';
import {
  DETAIL_HEADER,
  RATES_LEGEND,
  detailRows,
  macroNote,
  tableOne,
} from '../../../stages/resilience-eval/tables.js';
import {
  DISCRETE_SUBSETS,
  fmtRate,
  modeMetrics,
  NA_LEGEND,
} from '../../../stages/resilience-eval/metrics.js';
import type { ModeMetrics, ScoredRow } from '../../../stages/resilience-eval/metrics.js';
import { evalMarkdown } from '../../../stages/resilience-eval/pipeline.js';
import type { EvalScoreOutput } from '../../../stages/resilience-eval/stages.js';

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

describe('NFR and WFR where every row is a parse failure (issue 33)', () => {
  const row = (i: number, sub: string, outcome: ScoredRow['outcome']): ScoredRow => ({
    sample_id: `${sub}:${i}`,
    subset: sub,
    outcome,
    parse_status: outcome === 'parse_failure' ? 'no_answer' : 'answer',
    output_tokens: 10,
    difficulty: null,
    cut: false,
  });
  it('prints n/a, not 0.0, and says why; a cell with answers keeps its rates', () => {
    const m = modeMetrics([
      ...[1, 2, 3].map((i) => row(i, 'teleqna', 'parse_failure')),
      row(4, 'telelogs', 'no_flip'),
      row(5, 'telelogs', 'parse_failure'),
    ]);
    expect(m.by_subset['teleqna']).toMatchObject({ cfr: 0, nfr: null, wfr: null, answered: 0 });
    const [, , line] = tableOne([{ model: 'm', m }]);
    expect(cells(line!).map((c) => c.trim())).toEqual([
      'm',
      '0.0 / n/a / n/a',
      '0.0 / 50.0 / 0.0',
      '0.0 [0.0, 0.0] / unavailable / unavailable',
    ]);
    const d = detailRows(m).find((r) => r[0] === 'teleqna')!;
    expect(d[DETAIL_HEADER.indexOf('NFR')]).toBe('n/a');
    expect(NA_LEGEND).toContain('every scored row of the cell is a parse failure');
  });
});

describe('evaluation summary line', () => {
  it('counts cut rows over every subset the target answered, as the per-subset tables do (found on the SmolLM2 ORAN-Bench-13K run: 0 in the summary, 6 in the table)', () => {
    const row = (i: number, sub: string, cut: boolean): ScoredRow => ({
      sample_id: `${sub}:${i}`,
      subset: sub,
      outcome: cut ? 'excluded' : 'no_flip',
      parse_status: 'answer',
      output_tokens: 10,
      difficulty: null,
      cut,
    });
    // fin_e is no main subset (out of micro); telemath is auxiliary; teleqna is main.
    const rows = [
      row(1, 'fin_e', true),
      row(2, 'fin_e', true),
      row(3, 'fin_e', false),
      row(4, 'telemath', true),
      row(5, 'teleqna', true),
      row(6, 'teleqna', false),
    ];
    const m = modeMetrics(rows);
    const s: EvalScoreOutput = {
      target: 'smol',
      model: 'smollm2:135m',
      profile: 'default',
      num_ctx: null,
      modes: { strict: m, lenient: m, published: m },
      vram: { bytes: null, method: 'unavailable', detail: 'test' },
      rows: rows.length,
      failed: 0,
    };
    const md = evalMarkdown([s], null);
    expect(md).toMatch(/rows with a cut prompt, context shift or exhausted budget: 4\./);
    expect(m.micro.cut_rows).toBe(1);
    // the detail rows (Markdown and HTML) hold every answered subset, main or not
    const detail = detailRows(m);
    expect(detail.map((r) => r[0])).toEqual([
      'fin_e',
      'telemath',
      'teleqna',
      '**micro (the seven main subsets)**',
    ]);
    expect(detail[0]![DETAIL_HEADER.indexOf('cut prompt or budget exhausted')]).toBe('2');
  });
});

describe('what the report says of its rates (new-user trial)', () => {
  const row = (i: number, sub: string, outcome: ScoredRow['outcome']): ScoredRow =>
    ({
      sample_id: `${sub}:${i}`,
      subset: sub,
      outcome,
      parse_status: 'ok',
      output_tokens: 10,
      cut: false,
      difficulty: null,
    }) as unknown as ScoredRow;
  it('spells out CFR/NFR/WFR and says why the macro is unavailable for an extra subset only', () => {
    const m = modeMetrics([row(0, 'fin_e', 'correct_flip'), row(1, 'fin_e', 'no_flip')]);
    expect(macroNote('smollm2', m)).toBe(
      'smollm2: macro unavailable: none of the seven discrete subsets (' +
        DISCRETE_SUBSETS.join(', ') +
        ') has a scored row; fin_e is not in it (see the detail table).',
    );
    // no main subset: no all-zero micro row
    expect(detailRows(m).map((r) => r[0])).toEqual(['fin_e']);
    // NFR and WFR per subset, not only CFR (one no flip of two scored rows)
    const fin = detailRows(m)[0]!;
    expect([fin[DETAIL_HEADER.indexOf('NFR')], fin[DETAIL_HEADER.indexOf('WFR')]]).toEqual([
      fmtRate(50),
      fmtRate(0),
    ]);
    const both = modeMetrics([row(0, 'teleqna', 'correct_flip'), row(1, 'fin_e', 'no_flip')]);
    expect(macroNote('m', both)).toMatch(
      /^m: macro over 1 of the 7 discrete subsets \(teleqna\); fin_e is not in it/,
    );
    expect(RATES_LEGEND).toMatch(
      /CFR \(Correct Flip Rate\).*NFR \(No Flip Rate\).*WFR \(Wrong Flip Rate\)/,
    );
    expect(DETAIL_HEADER).toContain('correct flip');
  });
});
