import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  isCutOffReply,
  parseChoiceAnswer,
  parseNumericAnswer,
  ANSWER_RULES,
} from '../../../stages/resilience/parse-answer.js';
import { numbersMatch, pythonFloatRepr, parseNumber } from '../../../stages/resilience/numbers.js';
import { realDataRoot } from '../../fixtures/real-data.js';

const opts = [
  'Valid Timing Advance (TA)',
  'Valid RRC connection',
  'Valid cell synchronization',
  'Valid paging identity',
];

describe('multiple-choice answer parser', () => {
  it('strict: the last line is exactly "Final Answer: <n>"', () => {
    expect(parseChoiceAnswer('Final Answer: 2', '', opts)).toMatchObject({
      ok: true,
      rule: 'strict',
      index: 1,
    });
    expect(parseChoiceAnswer('Some words.\n\nFinal Answer: 4\n', '', opts)).toMatchObject({
      rule: 'strict',
      index: 3,
    });
  });

  it('an out-of-range strict answer falls through and is not guessed', () => {
    expect(parseChoiceAnswer('Final Answer: 7', '', opts)).toEqual({
      ok: false,
      rule: null,
      index: null,
      value: null,
      matched: null,
    });
  });

  it('final-answer-line: markdown, "Option 3", trailing text, and a Final Answer line inside the thinking', () => {
    expect(parseChoiceAnswer('**Final Answer:** 3', '', opts)).toMatchObject({
      rule: 'final-answer-line',
      index: 2,
    });
    expect(parseChoiceAnswer('Final Answer: Option 3.\nHope this helps', '', opts)).toMatchObject({
      rule: 'final-answer-line',
      index: 2,
    });
    expect(parseChoiceAnswer('', 'thinking...\nFinal Answer: 1', opts)).toMatchObject({
      rule: 'final-answer-line',
      index: 0,
    });
    // the answer text wins over the thinking
    expect(
      parseChoiceAnswer('Final Answer: 2 (the RRC one)', 'Final Answer: 1', opts),
    ).toMatchObject({ index: 1 });
  });

  it('boxed: TeleLogs-style \\boxed{C3} maps to the option label', () => {
    const causes = ['C1', 'C2', 'C3', 'C4', 'C5', 'C6', 'C7', 'C8'];
    expect(parseChoiceAnswer('so the cause is \\boxed{C3}', '', causes)).toMatchObject({
      rule: 'boxed',
      index: 2,
    });
    expect(parseChoiceAnswer('\\boxed{5}', '', causes)).toMatchObject({ rule: 'boxed', index: 4 });
  });

  it('option-text: "Final Answer: SA5" names a unique option; a repeated text is not guessed', () => {
    const wgs = ['CT1', 'RAN2', 'SA5'];
    expect(parseChoiceAnswer('Final Answer: SA5', '', wgs)).toMatchObject({
      rule: 'option-text',
      index: 2,
    });
    expect(parseChoiceAnswer('Final Answer: a', '', ['a', 'a', 'b']).ok).toBe(false);
  });

  it('answer-phrase: "the answer is option 2." at the end', () => {
    expect(parseChoiceAnswer('After all that, the answer is option 2.', '', opts)).toMatchObject({
      rule: 'answer-phrase',
      index: 1,
    });
  });

  it('last-digit is opt-in (the lenient fallback the authors used)', () => {
    const text = 'I think 3 is plausible but not sure';
    expect(parseChoiceAnswer(text, '', opts).ok).toBe(false);
    expect(parseChoiceAnswer(text, '', opts, [...ANSWER_RULES])).toMatchObject({
      rule: 'last-digit',
      index: 2,
    });
  });
});

describe('numeric answer parser and tolerance', () => {
  it('strict, Final Answer with units or x10^ forms, boxed, phrase', () => {
    expect(parseNumericAnswer('Final Answer: 0.033', '', undefined)).toMatchObject({
      rule: 'strict',
      value: 0.033,
    });
    expect(parseNumericAnswer('Final Answer: 1.2e-3', '')).toMatchObject({
      rule: 'strict',
      value: 0.0012,
    });
    expect(parseNumericAnswer('Final Answer: 12.5 dB', '')).toMatchObject({
      rule: 'final-answer-line',
      value: 12.5,
    });
    expect(parseNumericAnswer('Final Answer: 3.2 \\times 10^{-4}', '').value).toBeCloseTo(
      3.2e-4,
      12,
    );
    expect(parseNumericAnswer('Final Answer: 1,200', '')).toMatchObject({ value: 1200 });
    expect(parseNumericAnswer('the result is \\boxed{42}', '')).toMatchObject({
      rule: 'boxed',
      value: 42,
    });
    expect(parseNumericAnswer('so the throughput = 17.5', '')).toMatchObject({
      rule: 'answer-phrase',
      value: 17.5,
    });
    expect(parseNumericAnswer('no idea', '').ok).toBe(false);
  });

  it('matches within relative 1e-3 or absolute 1e-5 (paper section V-D)', () => {
    expect(numbersMatch(0.033, 0.03303)).toBe(true);
    expect(numbersMatch(0.033, 0.0331)).toBe(false);
    expect(numbersMatch(0, 9e-6)).toBe(true);
    expect(numbersMatch(0, 2e-5)).toBe(false);
    expect(numbersMatch(1000, 1000.9)).toBe(true);
    expect(numbersMatch(1000, 1001.1)).toBe(false);
    expect(numbersMatch(NaN, NaN)).toBe(false);
  });

  it('prints numbers as Python repr (the published correct/incorrect answers)', () => {
    expect(
      [0.033, 2, 1e-5, 0.0001, 1.5e16, 123456.789, -0.5, 1e22, 2.5e-7].map(pythonFloatRepr),
    ).toEqual([
      '0.033',
      '2.0',
      '1e-05',
      '0.0001',
      '1.5e+16',
      '123456.789',
      '-0.5',
      '1e+22',
      '2.5e-07',
    ]);
    expect(parseNumber(' 1,234.5 ')).toBe(1234.5);
    expect(parseNumber('12 dB')).toBeNull();
    expect(parseNumericAnswer('Final Answer: about 7 × 10^3 bits', '').value).toBe(7000);
  });

  it('prints all 154 published TeleMath answers exactly as the authors did', async () => {
    const file = 'teleresiliencebench/AuxiliaryBenchmark.json';
    const rows = JSON.parse(readFileSync(join(await realDataRoot(file), file), 'utf8')) as {
      correct_answer: string;
      incorrect_answer: string;
    }[];
    const texts = rows.flatMap((r) => [r.correct_answer, r.incorrect_answer]);
    expect(texts).toHaveLength(154);
    for (const t of texts) expect(pythonFloatRepr(Number(t))).toBe(t);
  });
});

describe('issue 14 §4: a retracted answer is not the answer', () => {
  const choices = ['a', 'b', 'c', 'd'];
  it('does not read a Final Answer draft the reasoning then took back', () => {
    const thinking =
      'Option 2 fits.\nFinal Answer: 2\nWait, that is wrong ... so option 1 is better. Let me double-check the';
    expect(parseChoiceAnswer('', thinking, choices).ok).toBe(false);
    expect(isCutOffReply({ content: '', thinking, doneReason: 'stop' })).toBe(true);
    const retracted = 'Final Answer: 2\nWait, that is wrong. Let me reconsider.';
    expect(parseChoiceAnswer('', retracted, choices).ok).toBe(false);
    expect(isCutOffReply({ content: '', thinking: retracted, doneReason: 'stop' })).toBe(false);
    // issue 33: a retraction followed by a later answer reads the later answer
    const corrected = 'Final Answer: 2\nWait, that is wrong, so option 1 is better.';
    expect(parseChoiceAnswer('', corrected, choices)).toMatchObject({ ok: true, index: 0 });
  });
  it('still reads the reasoning’s final word and a visible reply', () => {
    expect(parseChoiceAnswer('', 'Option 2 fits.\nFinal Answer: 2', choices)).toMatchObject({
      ok: true,
      index: 1,
      rule: 'final-answer-line',
    });
    expect(isCutOffReply({ content: '', thinking: 'x\nFinal Answer: 2', doneReason: 'stop' })).toBe(
      false,
    );
    expect(isCutOffReply({ content: 'Final Answer: 1', thinking: 'the', doneReason: 'stop' })).toBe(
      false,
    );
    expect(isCutOffReply({ content: '', thinking: 'done.', doneReason: 'length' })).toBe(true);
  });
});
