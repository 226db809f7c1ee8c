/**
 * The keyword shorthand's compilation (stages/resilience/grammar-keywords.ts): a `kw_word` rule
 * must accept exactly what Ohm's `(caseInsensitive<"word"> ~alnum)` accepts, in every case and
 * with the Unicode units Ohm upper-cases to a letter, and reject the longer word and look-alikes
 * Ohm rejects.
 */
import * as ohm from 'ohm-js';
import { describe, expect, it } from 'vitest';
import { expandKeywords } from '../../../stages/resilience/grammar-keywords.js';

const SOURCE = String.raw`
K {
  start = (kw<"is"> | kw<"answer"> | kw<"re-evaluate"> | kw<"vs">) rest
  rest = any*
}`;
const ours = ohm.grammar(expandKeywords(SOURCE));
const ohms = ohm.grammar(SOURCE.replace(/kw<"([^"]+)">/g, '(caseInsensitive<"$1"> ~alnum)'));

describe('expandKeywords', () => {
  it('accepts and rejects what caseInsensitive does, input by input', () => {
    const inputs = [
      ['is', true],
      ['IS:', true],
      ['ıs', true], // dotless ı upper-cases to I
      ['iſ', true], // long s upper-cases to S
      ['İs', false], // İ stays İ
      ['ANSWER is', true],
      ['AnSwEr.', true],
      ['answers', false], // not a whole word
      ['answer2', false],
      ['Re-Evaluate it', true],
      ['reevaluate', false],
      ['VS.', true],
      ['v s', false],
      ['', false],
    ] as const;
    for (const [input, want] of inputs) {
      expect(ohms.match(input, 'start').succeeded(), `caseInsensitive on ${input}`).toBe(want);
      expect(ours.match(input, 'start').succeeded(), `kw rule on ${input}`).toBe(want);
    }
  });

  it('writes one rule per keyword, reused by every mention', () => {
    const out = expandKeywords('G {\n  a = kw<"or"> kw<"or">\n  b = kw<"to">\n}');
    expect(out.match(/kw_or =/g)).toHaveLength(1);
    expect(out).toContain('a = kw_or kw_or');
    expect(out.trimEnd().endsWith('}')).toBe(true);
    expect(() => expandKeywords('G {\n  a = kw<"re-do"> kw<"re_do">\n}')).toThrow(
      /share a rule name/,
    );
  });
});
