import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  halfTrace,
  lastReferenceSentenceEnd,
  stripTrailingFinalAnswer,
} from '../../../stages/resilience/half-trace.js';
import { encodeCl100k, decodeCl100k } from '../../../pipeline/providers/tokenizer/cl100k.js';

// The published TeleMath instances (real data, read from ../shared/data, never copied).
const AUX = resolve(
  import.meta.dirname,
  '../../../../shared/data/teleresiliencebench/AuxiliaryBenchmark.json',
);

describe('HalfTrace on hand-made traces (exact cuts)', () => {
  it('cuts at the last sentence end before the token midpoint', () => {
    const t =
      'The cell uses 30 kHz spacing. The slot lasts half a millisecond. So the answer is option two. We check the numbers again to be sure about this.';
    const h = halfTrace(t);
    expect(h.fullTokens).toBe(34);
    expect(h.midpointTokens).toBe(17);
    expect(h.half).toBe('The cell uses 30 kHz spacing. The slot lasts half a millisecond.');
    expect(h.cut).toBe('sentence');
    expect(h.halfTokens).toBe(16);
  });

  it('with no sentence end keeps the raw token cut (token-cut) or gives none (skip)', () => {
    const t =
      'the cell uses thirty kilohertz spacing and the slot lasts half a millisecond so the answer is option two and we check again';
    const h = halfTrace(t);
    expect(h.cut).toBe('token-cut');
    expect(h.half).toBe('the cell uses thirty kilohertz spacing and the slot lasts half');
    expect(h.halfTokens).toBe(13);
    const s = halfTrace(t, { noSentenceEnd: 'skip' });
    expect(s.cut).toBe('none');
    expect(s.half).toBe('');
  });

  it('counts a list marker "2. " as a sentence end, as the reference code does', () => {
    const t =
      'Plan:\n1. Read the question\n2. Compare the options\n3. Pick the best one and write the final answer line now';
    expect(halfTrace(t).half).toBe('Plan:\n1. Read the question\n2.');
  });

  it('never cuts inside a decimal such as 3.5, even when the midpoint falls right after "3."', () => {
    const t = 'Fine. Gain 3.5 dB at the cell edge';
    const ids = encodeCl100k(t);
    expect(ids.length).toBe(12);
    // The token midpoint ends exactly at "3." (the reference rule, which looks only inside the
    // decoded half, would end the sentence there).
    expect(decodeCl100k(ids.slice(0, 6))).toBe('Fine. Gain 3.');
    expect(halfTrace(t).half).toBe('Fine.');
    const noEnd =
      'The gain is 3.5 dB at the edge and 4.25 dB at the centre while the loss is 1.75 dB so the margin is 3.5 minus 1.75 which is';
    const h = halfTrace(noEnd);
    expect(h.cut).toBe('token-cut');
    expect(h.half).toBe('The gain is 3.5 dB at the edge and 4.25 dB at the centre while the');
  });

  it('keeps CRLF line endings and treats \\r as whitespace after a sentence end', () => {
    const t =
      'First step done.\r\nSecond step: compute the SNR.\r\nThird step is long and keeps going without any stop at all for a while yes';
    const h = halfTrace(t);
    expect(h.half).toBe('First step done.\r\nSecond step: compute the SNR.');
    expect(t.startsWith(h.half)).toBe(true);
  });

  it('handles non-ASCII text and never splits a character a token boundary cuts through', () => {
    const fr =
      'Le débit est de 10 Mbit/s. Ensuite, on calcule l\u2019énergie par bit — très simple ! Puis on vérifie la réponse finale avec soin 😀😀 encore.';
    expect(halfTrace(fr).half).toBe('Le débit est de 10 Mbit/s.');
    const emoji = '😀😀😀😀 🎉🎉 ok';
    const ids = encodeCl100k(emoji);
    expect(decodeCl100k(ids.slice(0, Math.floor(ids.length / 2)))).toBe('😀😀😀\uFFFD');
    const h = halfTrace(emoji);
    expect(h.cut).toBe('token-cut');
    expect(h.half).toBe('😀😀😀');
    expect(h.half.includes('\uFFFD')).toBe(false);
  });

  it('removes trailing Final Answer lines before halving', () => {
    expect(stripTrailingFinalAnswer('Reason one.\n\nFinal Answer: 2\n**Final Answer:** 2\n')).toBe(
      'Reason one.',
    );
    expect(stripTrailingFinalAnswer('Final Answer: 3 is wrong, so keep going.\nMore.')).toBe(
      'Final Answer: 3 is wrong, so keep going.\nMore.',
    );
    const h = halfTrace('Reason one. Reason two is here. Reason three.\nFinal Answer: 2\n');
    expect(h.reasoning).toBe('Reason one. Reason two is here. Reason three.');
    expect(h.fullTokens).toBe(encodeCl100k(h.reasoning).length);
    expect(h.half).toBe('Reason one.');
  });

  it('the intl boundary uses Intl.Segmenter sentences ("e.g. the" is not an end there)', () => {
    const t = 'We use e.g. the guard band here and then more text follows after that point okay';
    expect(halfTrace(t).half).toBe('We use e.g.');
    const i = halfTrace(t, { boundary: 'intl' });
    expect(i.cut).toBe('token-cut');
  });

  it('gives no half for an empty or one-token reasoning', () => {
    expect(halfTrace('').cut).toBe('none');
    expect(halfTrace('Hi').half).toBe('');
  });
});

describe('HalfTrace on the 77 published TeleMath half traces', () => {
  const rows = JSON.parse(readFileSync(AUX, 'utf8')) as {
    sample_id: string;
    half_reasoning_trace: string;
  }[];

  it('each published half already ends at a sentence end by the rule (70 ".", 7 "?")', () => {
    expect(rows).toHaveLength(77);
    const last: Record<string, number> = {};
    for (const r of rows) {
      const t = r.half_reasoning_trace;
      expect(t).toBe(t.trimEnd());
      expect(lastReferenceSentenceEnd(t, t.length)).toBe(t.length);
      last[t.at(-1)!] = (last[t.at(-1)!] ?? 0) + 1;
    }
    expect(last).toEqual({ '.': 70, '?': 7 });
  });

  it('halving each keeps the properties: a prefix, at a sentence end, at most half the tokens', () => {
    let sentence = 0;
    for (const r of rows) {
      const t = r.half_reasoning_trace;
      const h = halfTrace(t);
      expect(h.fullTokens).toBe(encodeCl100k(t).length);
      expect(h.half.length).toBeGreaterThan(0);
      expect(t.startsWith(h.half)).toBe(true);
      expect(h.half.length).toBeLessThan(t.length);
      expect(h.halfTokens).toBeLessThanOrEqual(h.midpointTokens);
      expect(h.half).toBe(h.half.trimEnd());
      if (h.cut === 'sentence') {
        sentence++;
        expect('.!?').toContain(h.half.at(-1));
        const next = t[h.half.length];
        expect(next === undefined || /\s/.test(next)).toBe(true);
      }
      // Halving again keeps shrinking and stays a prefix.
      const q = halfTrace(h.half);
      expect(h.half.startsWith(q.half)).toBe(true);
    }
    expect(sentence).toBe(rows.length);
  });

  it('the intl boundary keeps the same properties on them', () => {
    for (const r of rows) {
      const t = r.half_reasoning_trace;
      const h = halfTrace(t, { boundary: 'intl' });
      expect(h.half.length).toBeGreaterThan(0);
      expect(t.startsWith(h.half)).toBe(true);
      expect(h.halfTokens).toBeLessThanOrEqual(h.midpointTokens);
    }
  });
});
