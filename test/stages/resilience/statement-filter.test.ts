/**
 * The cheap test in front of the answer grammar (stages/resilience/statement-filter.ts): it may
 * only say "no" where the grammar finds no statement, so every form the grammar reads must pass it
 * (written in other cases, decorations and Unicode look-alikes Ohm's `caseInsensitive` accepts),
 * and the pieces it turns away must be ones the grammar rejects too.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { grammarMatches } from '../../../stages/resilience/answer-grammar.js';
import {
  foldCase,
  mayHoldFinalLead,
  mayHoldStatement,
} from '../../../stages/resilience/statement-filter.js';
import { experimentFiles } from '../../fixtures/data-root.js';

const grammarSays = (piece: string, kind: 'mc' | 'numeric'): boolean =>
  grammarMatches(`\n${piece}`, kind === 'mc' ? 'McLine' : 'NumLine');

const MC_STATEMENTS = [
  'So the correct answer is Option 3.',
  'Final Answer: **2**',
  'FINAL ANSWER: (4)',
  'fınal answer: 1', // dotless ı: Ohm's caseInsensitive upper-cases it to I
  'my answer would be option 2',
  "Therefore I'd go with option 4 here",
  'I will choose ⟦3⟧',
  '$\\boxed{3}$',
  'it is either 2 or 3',
  'between option 1 and option 4',
  '* Option 2',
  '2) Choice (3).',
  'The best option is the one about the AMF (option 3)',
  'the answer is probably B2',
];
const NUM_STATEMENTS = [
  'Final Answer: 17.5 dB',
  'so the throughput = 17.5',
  'The answer is \\frac{1}{2}',
  'the answer is π',
  '\\boxed{2\\times 10^{3}}',
  'x ≈ 3.2',
  'I PICK 12 Mbps',
];

describe('the statement filter', () => {
  it('passes every statement form the grammar reads (mc and numeric)', () => {
    for (const p of MC_STATEMENTS) {
      expect(grammarSays(p, 'mc'), p).toBe(true);
      expect(mayHoldStatement(p, 'mc'), p).toBe(true);
    }
    for (const p of NUM_STATEMENTS) {
      expect(grammarSays(p, 'numeric'), p).toBe(true);
      expect(mayHoldStatement(p, 'numeric'), p).toBe(true);
    }
    for (const l of ['Final Answer: 3', '**final answer is** 3', 'fınal answer： 2'])
      expect([grammarMatches(l, 'FinalLine'), mayHoldFinalLead(l)], l).toEqual([true, true]);
    // İ (U+0130) upper-cases to itself, not to I: neither the grammar nor the filter reads it
    expect([
      grammarMatches('FİNAL ANSWER: 2', 'FinalLine'),
      mayHoldFinalLead('FİNAL ANSWER: 2'),
    ]).toEqual([false, false]);
  });

  it('turns away look-alikes the grammar rejects too (no value, a word not a lead)', () => {
    const mc = [
      'choosing between 4G EPC or 5G NGC',
      'the answer is likely 4.0 dB',
      'Option 2 says the AMF does it',
      'the options are listed below',
      'the answer is the AMF',
    ];
    for (const p of mc)
      expect([grammarSays(p, 'mc'), mayHoldStatement(p, 'mc')], p).toEqual([false, false]);
    for (const p of ['the answer is unknown', 'throughput = high', 'I pick the larger one'])
      expect([grammarSays(p, 'numeric'), mayHoldStatement(p, 'numeric')], p).toEqual([
        false,
        false,
      ]);
    expect(mayHoldFinalLead('final answers follow')).toBe(false);
  });

  it('never turns away a piece the grammar reads, on real replies', () => {
    const [main] = experimentFiles('gemma4_31b');
    const rows = readFileSync(main!, 'utf8').split('\n').filter(Boolean).slice(0, 40);
    let pieces = 0;
    let rejected = 0;
    for (const row of rows) {
      const r = JSON.parse(row) as { continuation_raw?: string; task_kind?: string };
      const kind = r.task_kind === 'mc' ? 'mc' : 'numeric';
      for (const line of String(r.continuation_raw ?? '').split(/\r?\n/))
        for (const m of line.matchAll(/answer|option|choice|pick|between|either|\\boxed|=/gi)) {
          const piece = line.slice(Math.max(0, m.index - 20), m.index + 160);
          pieces++;
          if (mayHoldStatement(piece, kind)) continue;
          rejected++;
          expect(grammarSays(piece, kind), piece).toBe(false);
        }
    }
    expect(pieces).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(pieces / 4);
  });

  it('folds case one UTF-16 unit at a time, keeping positions', () => {
    expect(foldCase('fınal ſ answer')).toBe('FINAL S ANSWER');
    expect(foldCase('straße 𝐚b')).toBe('STRAßE 𝐚B');
    expect(foldCase('straße 𝐚b')).toHaveLength('straße 𝐚b'.length);
  });
});
