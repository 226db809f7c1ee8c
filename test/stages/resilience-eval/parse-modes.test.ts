import { describe, expect, it } from 'vitest';
import {
  parseLenient,
  parsePublished,
  parseStrict,
  concludedNumber,
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
    expect(concludedNumber('P = 10 \\approx 10.0')).toBe(10);
    // construction parser's old reading for contrast: the first number
    expect(concludedNumber('256+37')).toBe(256);
  });

  it('issue 14: a retracted draft in the reasoning is not the answer; a cut-off reply is counted', () => {
    const cut = reply(
      '',
      'Option 2 fits.\nFinal Answer: 2\nWait, that is wrong ... so option 1 is better. Let me double-check the',
      'stop',
    );
    expect(parseLenient(cut, mc4)).toMatchObject({ status: 'cut_off', index: null });
    const retracted = reply(
      '',
      'Final Answer: 2\nWait, that is wrong, so option 1 is better.',
      'stop',
    );
    expect(parseLenient(retracted, mc4)).toMatchObject({ status: 'retracted', index: null });
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

describe('published mode (the published scorer’s behaviour, defects included)', () => {
  it('reads raw = thinking + reply, the last one-digit Final Answer, else the last digit', () => {
    expect(parsePublished(reply('Final Answer: 3', 'Final Answer: 1'), mc4)).toMatchObject({
      index: 2,
      rule: 'published:final-answer-digit',
    });
    expect(parsePublished(reply('I pick 2 over 4, so 3.'), mc4)).toMatchObject({
      index: 2,
      rule: 'published:last-digit',
    });
    // case-sensitive Final Answer; digits above N ignored
    expect(parsePublished(reply('final answer: 3 then 7'), mc4)).toMatchObject({ index: 2 });
  });

  it('never reads option numbers 10-16 (a real published row: nothing)', () => {
    expect(
      parsePublished(
        reply('Final Answer: 15', 'We need to output only "Final Answer: 15". No other text.'),
        mc16,
      ).status,
    ).toBe('no_answer');
    // a stray single digit is read instead
    expect(
      parsePublished(reply('SA5 is option 15 in 3 lists.\nFinal Answer: 15'), mc16),
    ).toMatchObject({ index: 2 });
  });

  it('numeric: last Final Answer number, else the last unsigned number', () => {
    expect(parsePublished(reply('x = 3\nFinal Answer: 0.5'), num)).toMatchObject({ value: 0.5 });
    expect(parsePublished(reply('range [-100 - 20, -12'), num)).toMatchObject({ value: 12 });
    expect(parsePublished(reply('no digits'), num).status).toBe('no_answer');
  });
});

describe('published mode with option texts (instances built here, the Hub dataset)', () => {
  const wg: ParseTarget = {
    kind: 'mc',
    numOptions: 16,
    choices: ['CT1', 'CT3', 'CT4', 'CT6', 'RAN1', 'RAN2', 'RAN3', 'RAN4'].concat([
      'RAN5',
      'RAN6',
      'SA1',
      'SA2',
      'SA3',
      'SA4',
      'SA5',
      'SA6',
    ]),
  };
  const nf: ParseTarget = { kind: 'mc', numOptions: 4, choices: ['AMF', 'SMF', 'UDM', 'UDR'] };

  it('reads `Final Answer: <option text>`, quoted or bold, when no one-digit Final Answer exists', () => {
    expect(parsePublished(reply('the UDM invokes it.\nFinal Answer: UDM'), nf)).toMatchObject({
      status: 'answer',
      index: 2,
      rule: 'published:final-answer-text',
    });
    expect(parsePublished(reply('Final Answer: "udr".'), nf)).toMatchObject({ index: 3 });
    expect(parsePublished(reply('Final Answer: **RAN4**', 'RAN1 or RAN4?'), wg)).toMatchObject({
      index: 7,
      rule: 'published:final-answer-text',
    });
    // it outranks a stray digit elsewhere (the last-digit fallback) ...
    expect(parsePublished(reply('Step 2: RAN2 signalling.\nFinal Answer: RAN2'), wg)).toMatchObject(
      { index: 5, rule: 'published:final-answer-text' },
    );
    // ... but not a one-digit Final Answer
    expect(parsePublished(reply('Final Answer: UDM\nFinal Answer: 1'), nf)).toMatchObject({
      index: 0,
      rule: 'published:final-answer-digit',
    });
    // a payload that is not exactly an option's text is no option text
    expect(parsePublished(reply('Final Answer: UDM or UDR'), nf).rule).not.toBe(
      'published:final-answer-text',
    );
  });

  it('else the last digit; else the first option, in option order, named anywhere (its defect)', () => {
    expect(parsePublished(reply('SMF then AMF; option 3 maybe'), nf)).toMatchObject({
      index: 2,
      rule: 'published:last-digit',
    });
    // no digit: the first option in option order that occurs, not the one the reply concludes
    expect(parsePublished(reply('This is SA3 work, handled by SA2 in the end.'), wg)).toMatchObject(
      { index: 11, rule: 'published:option-text', matched: 'SA2' },
    );
    expect(parsePublished(reply('The UDM, not the AMF.'), nf)).toMatchObject({ index: 0 });
    // not inside a longer word or number
    expect(parsePublished(reply('The RAN stack (RAN10) and the SAX bus.'), wg).status).toBe(
      'no_answer',
    );
    // without option texts the same replies are undecided
    expect(parsePublished(reply('Final Answer: UDM'), mc4).status).toBe('no_answer');
  });
});

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
    expect(parsePublished(reply(forms.list), mc4)).toMatchObject({
      index: 1,
      rule: 'published:last-digit',
    });
    expect(parsePublished(reply(forms.indecision), mc4)).toMatchObject({ index: 1 });
    expect(parsePublished(reply(forms.hedge), mc4)).toMatchObject({
      index: 3,
      rule: 'published:final-answer-digit',
    });
  });

  it('LaTeX `$2$`: lenient reads 2, strict nothing, published the stray digit', () => {
    const r = reply('Final Answer: $2$');
    expect(parseLenient(r, mc4)).toMatchObject({ status: 'answer', index: 1 });
    expect(parseStrict(r, mc4).status).toBe('no_answer');
    expect(parsePublished(r, mc4)).toMatchObject({ index: 1, rule: 'published:last-digit' });
  });

  it('`256+37 = 293`: lenient reads 293, strict nothing, published 256', () => {
    const r = reply('Final Answer: 256+37 = 293');
    expect(parseLenient(r, num)).toMatchObject({ value: 293 });
    expect(parseStrict(r, num).status).toBe('no_answer');
    expect(parsePublished(r, num)).toMatchObject({
      value: 256,
      rule: 'published:final-answer-number',
    });
  });

  it('16 options: strict and lenient read 10..16, published never does', () => {
    for (let k = 10; k <= 16; k++) {
      expect(parseStrict(reply(`Final Answer: ${k}`), mc16)).toMatchObject({ index: k - 1 });
      expect(parsePublished(reply(`Final Answer: ${k}`), mc16).status).toBe('no_answer');
    }
  });
});
