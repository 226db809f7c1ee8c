import { describe, expect, it } from 'vitest';
import {
  parseLenient,
  parsePublished,
  parseStrict,
  type ParseTarget,
} from '../../../stages/resilience-eval/parse-modes.js';

const mc4: ParseTarget = { kind: 'mc', numOptions: 4 };
const mc16: ParseTarget = { kind: 'mc', numOptions: 16 };
const num: ParseTarget = { kind: 'numeric', numOptions: 0 };
const reply = (content: string, thinking = '', doneReason: string | null = 'stop') => ({
  content,
  thinking,
  doneReason,
});

describe('strict mode', () => {
  it('reads only a last line that is exactly Final Answer: n, n in 1..N', () => {
    expect(parseStrict(reply('reasoning\nFinal Answer: 3'), mc4)).toMatchObject({
      status: 'answer',
      index: 2,
      rule: 'strict',
    });
    expect(parseStrict(reply('Final Answer: 5'), mc4).status).toBe('no_answer');
    expect(parseStrict(reply('Final Answer: **3**'), mc4).status).toBe('no_answer');
    expect(parseStrict(reply('Final Answer: 3\nthanks'), mc4).status).toBe('no_answer');
    expect(parseStrict(reply('', 'Final Answer: 3'), mc4).status).toBe('no_answer');
    expect(parseStrict(reply('Final Answer: 14'), mc16)).toMatchObject({ index: 13 });
    expect(parseStrict(reply('Final Answer: 2.5e-3'), num)).toMatchObject({ value: 0.0025 });
  });
});

describe('lenient mode', () => {
  it('refuses the three ambiguous forms as ambiguous_answer', () => {
    const list = 'The options are:\n* Option 1\n* Option 2';
    expect(parseLenient(reply(list), mc4).status).toBe('ambiguous_answer');
    expect(parseLenient(reply('I am torn between option 1 and option 2'), mc4).status).toBe(
      'ambiguous_answer',
    );
    expect(parseLenient(reply('Final Answer: 4 ... or 2'), mc4).status).toBe('ambiguous_answer');
    expect(parseLenient(reply('Final Answer: 1/3'), mc4).status).toBe('ambiguous_answer');
  });

  it('still reads a single answer phrase and a hedge-free Final Answer line', () => {
    expect(parseLenient(reply('So the answer is option 2.'), mc4)).toMatchObject({
      status: 'answer',
      index: 1,
      rule: 'answer-phrase',
    });
    expect(parseLenient(reply('Final Answer: 4 (or rather, only 4)'), mc4)).toMatchObject({
      index: 3,
    });
    expect(parseLenient(reply('Final Answer: Option 3. LDAP'), mc4)).toMatchObject({ index: 2 });
  });

  it('reads LaTeX-wrapped payloads', () => {
    for (const p of ['$2$', '\\(2\\)', '\\boxed{2}', '$\\boxed{2}$', '**$2$**', '\\text{2}'])
      expect(parseLenient(reply(`Final Answer: ${p}`), mc4), p).toMatchObject({
        status: 'answer',
        index: 1,
      });
    expect(parseLenient(reply('Final Answer: $0.033$'), num)).toMatchObject({ value: 0.033 });
    expect(parseLenient(reply('Final Answer: $3 \\times 10^{-4}$'), num)).toMatchObject({
      value: 3e-4,
    });
  });

  it('reads the value a numeric line concludes, after the last =', () => {
    expect(parseLenient(reply('Final Answer: 256+37 = 293'), num)).toMatchObject({ value: 293 });
    expect(parseLenient(reply('Final Answer: x = 2*3 = 6 dB'), num)).toMatchObject({ value: 6 });
    expect(parseLenient(reply('Final Answer: P = 10 \\approx 10.0'), num)).toMatchObject({
      value: 10,
    });
  });

  it('issue 14: a retracted draft in the reasoning is not the answer; a cut-off reply is counted', () => {
    const cut = reply(
      '',
      'Option 2 fits.\nFinal Answer: 2\nWait, that is wrong ... so option 1 is better. Let me double-check the',
      'stop',
    );
    expect(parseLenient(cut, mc4)).toMatchObject({ status: 'cut_off', index: null });
    // a retraction with no later answer is no answer; with one, the later answer (issue 33)
    const retracted = reply('', 'Final Answer: 2\nWait, that is wrong. Let me reconsider.', 'stop');
    expect(parseLenient(retracted, mc4)).toMatchObject({ status: 'retracted', index: null });
    const corrected = reply('', 'Final Answer: 2\nWait, that is wrong, so option 1 is better.');
    expect(parseLenient(corrected, mc4)).toMatchObject({ status: 'answer', index: 0 });
    // the reasoning's final word is accepted
    expect(parseLenient(reply('', 'Option 2 fits.\nFinal Answer: 2'), mc4)).toMatchObject({
      status: 'answer',
      index: 1,
      rule: 'final-answer-line-thinking',
    });
    // budget exhausted
    expect(parseLenient(reply('', 'long reasoning.', 'length'), mc4).status).toBe('cut_off');
    // the published scorer reads the draft (its defect, kept in published mode)
    expect(parsePublished(cut, mc4)).toMatchObject({ status: 'answer', index: 1 });
  });

  it('reads a visible reply even when the reasoning was retracted', () => {
    expect(
      parseLenient(reply('Final Answer: 1', 'Final Answer: 2\nNo, option 1.'), mc4),
    ).toMatchObject({ index: 0, rule: 'strict' });
  });

  it('reads 16-option answers 10..16', () => {
    for (let k = 10; k <= 16; k++)
      expect(parseLenient(reply(`Final Answer: ${k}`), mc16)).toMatchObject({ index: k - 1 });
    expect(parseLenient(reply('Final Answer: 17'), mc16).status).toBe('no_answer');
  });
});

// published mode branch by branch, against the authors' Python scorer: published-scorer.test.ts

describe('every mode on the same hand-written replies (issue 10 Tests)', () => {
  const forms = {
    list: 'The options are:\n* Option 1\n* Option 2',
    indecision: 'I am torn between option 1 and option 2',
    hedge: 'Final Answer: 4 ... or 2',
  };
  it('the three ambiguous forms: lenient refuses, strict reads nothing, published reads a digit (its defect)', () => {
    for (const [name, text] of Object.entries(forms)) {
      expect(parseLenient(reply(text), mc4).status, name).toBe('ambiguous_answer');
      expect(parseStrict(reply(text), mc4).status, name).toBe('no_answer');
    }
    // their scorer (values checked with src/parsing.py): the first `option N` of the tail, and
    // the payload's last digit
    expect(parsePublished(reply(forms.list), mc4)).toMatchObject({
      index: 0,
      rule: 'published:text:keyword',
    });
    expect(parsePublished(reply(forms.indecision), mc4)).toMatchObject({ index: 0 });
    expect(parsePublished(reply(forms.hedge), mc4)).toMatchObject({
      index: 1,
      rule: 'published:payload:trailing-digit',
    });
  });

  it('LaTeX `$2$`: lenient reads 2, strict nothing, published the payload digit', () => {
    const r = reply('Final Answer: $2$');
    expect(parseLenient(r, mc4)).toMatchObject({ status: 'answer', index: 1 });
    expect(parseStrict(r, mc4).status).toBe('no_answer');
    expect(parsePublished(r, mc4)).toMatchObject({
      index: 1,
      rule: 'published:payload:last-digit-tail',
    });
  });

  it('`256+37 = 293`: lenient reads 293, strict nothing, published 256', () => {
    const r = reply('Final Answer: 256+37 = 293');
    expect(parseLenient(r, num)).toMatchObject({ value: 293 });
    expect(parseStrict(r, num).status).toBe('no_answer');
    expect(parsePublished(r, num)).toMatchObject({
      value: 256,
      rule: 'published:payload:first-number',
    });
  });

  it('16 options: strict and lenient read 10..16, published never does', () => {
    for (let k = 10; k <= 16; k++) {
      expect(parseStrict(reply(`Final Answer: ${k}`), mc16)).toMatchObject({ index: k - 1 });
      expect(parsePublished(reply(`Final Answer: ${k}`), mc16).status).toBe('no_answer');
    }
  });
});
