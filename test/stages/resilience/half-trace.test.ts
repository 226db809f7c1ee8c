import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { realDataRoot } from '../../fixtures/real-data.js';
import {
  halfTrace,
  lastReferenceSentenceEnd,
  publishedReasoning,
  stripTrailingFinalAnswer,
} from '../../../stages/resilience/half-trace.js';
import { encodeCl100k, decodeCl100k } from '../../../pipeline/providers/tokenizer/cl100k.js';

// The published TeleMath instances (real data found like the product finds it, never copied:
// test/fixtures/real-data.ts).
const AUX_FILE = 'teleresiliencebench/AuxiliaryBenchmark.json';
const AUX = join(await realDataRoot(AUX_FILE), AUX_FILE);

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

  // Expected values below are the published construction's output on the same input (checked
  // with the authors' rule run under Python tiktoken; see the module comment of half-trace.ts).
  it('reference cuts at "3." of "3.5" when the token midpoint ends right there, as published; intl does not', () => {
    const t = 'Fine. Gain 3.5 dB at the cell edge';
    const ids = encodeCl100k(t);
    expect(ids.length).toBe(12);
    expect(decodeCl100k(ids.slice(0, 6))).toBe('Fine. Gain 3.');
    expect(halfTrace(t).half).toBe('Fine. Gain 3.');
    expect(halfTrace(t, { boundary: 'intl' }).half).toBe('Fine.');
    const noEnd =
      'The gain is 3.5 dB at the edge and 4.25 dB at the centre while the loss is 1.75 dB so the margin is 3.5 minus 1.75 which is';
    const h = halfTrace(noEnd);
    expect(h.cut).toBe('token-cut');
    expect(h.half).toBe('The gain is 3.5 dB at the edge and 4.25 dB at the centre while the');
  });

  it('reference turns \r\n, \r and other Python line breaks into \n, as published; intl keeps them', () => {
    const crlf =
      'First step done.\r\nSecond step: compute the SNR.\r\nThird step is long and keeps going without any stop at all for a while yes';
    const want = 'First step done.\nSecond step: compute the SNR.';
    expect(halfTrace(crlf).half).toBe(want);
    expect(halfTrace(crlf).reasoning).toBe(crlf.replaceAll('\r\n', '\n'));
    expect(halfTrace(crlf.replaceAll('\r\n', '\r')).half).toBe(want);
    expect(halfTrace(crlf.replaceAll('\r\n', '\n')).fullTokens).toBe(28);
    const ls =
      'Step one is done. Step two follows\u2028with a line separator. And the rest keeps going on and on.';
    expect(halfTrace(ls).reasoning).toBe(ls.replace('\u2028', '\n'));
    expect(halfTrace(ls).half).toBe('Step one is done.');
    const i = halfTrace(crlf, { boundary: 'intl' });
    expect(i.half).toBe('First step done.\r\nSecond step: compute the SNR.');
    expect(crlf.startsWith(i.half)).toBe(true);
  });

  it('reference keeps a character the token midpoint splits, as published; intl leaves it out', () => {
    const fr =
      'Le débit est de 10 Mbit/s. Ensuite, on calcule l\u2019énergie par bit — très simple ! Puis on vérifie la réponse finale avec soin 😀😀 encore.';
    expect(halfTrace(fr).half).toBe('Le débit est de 10 Mbit/s.');
    const emoji = '😀😀😀😀 🎉🎉 ok';
    const ids = encodeCl100k(emoji);
    expect(decodeCl100k(ids.slice(0, Math.floor(ids.length / 2)))).toBe('😀😀😀\uFFFD');
    const h = halfTrace(emoji);
    expect(h.cut).toBe('token-cut');
    expect(h.half).toBe('😀😀😀😀');
    const i = halfTrace(emoji, { boundary: 'intl' });
    expect(i.half).toBe('😀😀😀');
    expect(i.half.includes('\uFFFD')).toBe(false);
  });

  it('reference keeps list-item and Markdown Final Answer lines (the published pattern does not match them)', () => {
    const t = 'Reason one. Reason two is here. Reason three.\n*   Final Answer: 2';
    const h = halfTrace(t);
    expect(h.reasoning).toBe(t);
    expect(h.fullTokens).toBe(18);
    expect(h.half).toBe('Reason one. Reason two is here.');
    const blank =
      'The SCS is 30 kHz. So the slot is 0.5 ms. Then option 2 fits best here.\n\n*   Final Answer: 2\n';
    expect(halfTrace(blank).reasoning).toBe(blank.trimEnd());
    expect(halfTrace(blank).half).toBe('The SCS is 30 kHz.');
    // intl (our rule) drops them
    expect(halfTrace(t, { boundary: 'intl' }).reasoning).toBe(
      'Reason one. Reason two is here. Reason three.',
    );
  });

  it('reference drops only the trailing run of plain Final Answer lines, as published', () => {
    const crlf =
      'The SCS is 30 kHz.\r\nSo the slot is 0.5 ms.\r\nThen option 2 fits best here.\r\nFinal Answer: 2\r\n';
    expect(halfTrace(crlf).reasoning).toBe(
      'The SCS is 30 kHz.\nSo the slot is 0.5 ms.\nThen option 2 fits best here.',
    );
    expect(halfTrace(crlf).half).toBe('The SCS is 30 kHz.');
    // a blank line stops the published loop: the first Final Answer line stays
    const two =
      'Reason one. Reason two is here. Reason three.\n\nFinal Answer: 2\n\nFinal Answer: 3';
    expect(halfTrace(two).reasoning).toBe(
      'Reason one. Reason two is here. Reason three.\n\nFinal Answer: 2',
    );
    expect(halfTrace(two).fullTokens).toBe(16);
    expect(halfTrace(two).half).toBe('Reason one. Reason two is here.');
    expect(publishedReasoning('  Reason.\nfinal answer :3\n FINAL  ANSWER: 1 ')).toBe('Reason.');
    // Python's whitespace after a sentence end (no-break space counts there)
    expect(
      halfTrace(
        'Total is 12. \u00a0Then we add more words here to pass the midpoint of this trace.',
      ).half,
    ).toBe('Total is 12.');
  });

  it('intl (our rule) removes trailing Final Answer lines, Markdown forms included, before halving', () => {
    expect(stripTrailingFinalAnswer('Reason one.\n\nFinal Answer: 2\n**Final Answer:** 2\n')).toBe(
      'Reason one.',
    );
    expect(stripTrailingFinalAnswer('Final Answer: 3 is wrong, so keep going.\nMore.')).toBe(
      'Final Answer: 3 is wrong, so keep going.\nMore.',
    );
    const h = halfTrace('Reason one. Reason two is here. Reason three.\nFinal Answer: 2\n');
    expect(h.reasoning).toBe('Reason one. Reason two is here. Reason three.');
    expect(
      halfTrace('Reason one. Reason two.\n**Final Answer:** 2', { boundary: 'intl' }).reasoning,
    ).toBe('Reason one. Reason two.');
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

describe('HalfTrace token counts', () => {
  // halfTokens re-encodes only the half's last word or line (see the module comment): it must
  // equal a plain re-encoding of the half on every input.
  const rows = JSON.parse(readFileSync(AUX, 'utf8')) as { half_reasoning_trace: string }[];
  it('halfTokens equals encoding the half on published traces and their variants', () => {
    let checked = 0;
    for (const r of rows.slice(0, 20)) {
      const t = r.half_reasoning_trace;
      for (const v of [
        t,
        `${t}\n${t}`,
        t.replaceAll('\n', '\r\n'),
        t.replaceAll('\n', '\r'),
        t.replaceAll(' ', '\u00a0'),
        t.replaceAll('\n', ' '),
      ]) {
        for (const boundary of ['reference', 'intl'] as const) {
          const h = halfTrace(v, { boundary });
          expect(h.halfTokens).toBe(encodeCl100k(h.half).length);
          checked++;
        }
      }
    }
    expect(checked).toBe(20 * 6 * 2);
  });
});
