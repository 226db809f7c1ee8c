/**
 * The grammar of a final answer (stages/resilience/answer-grammar.ts), form by form, with at
 * least three siblings of each: every case shows the grammar rejecting a plausible wrong reading
 * (a hedge or list read as an answer, the first number of a LaTeX expression, a retracted draft,
 * the option a remark names) and accepting a correct answer written differently. Each reply goes
 * through both readers of the grammar, the construction's (`parseChoiceAnswer` /
 * `parseNumericAnswer`) and the evaluation's lenient mode, which must agree.
 */
import { describe, expect, it } from 'vitest';
import { readFinalAnswer } from '../../../stages/resilience/answer-grammar.js';
import { evaluateLatex } from '../../../stages/resilience/answer-number.js';
import { parseChoiceAnswer, parseNumericAnswer } from '../../../stages/resilience/parse-answer.js';
import {
  parseLenient,
  parsePublished,
  type ParseTarget,
} from '../../../stages/resilience-eval/parse-modes.js';

const CHOICES = ['AMF', 'SMF', 'UDM', 'UDR'];
const MC: ParseTarget = { kind: 'mc', numOptions: 4, choices: CHOICES };
const NUM: ParseTarget = { kind: 'numeric', numOptions: 0 };

/** The option (1-based) both readers give, or 'none'; fails when they differ. */
function option(content: string, thinking = '', choices = CHOICES): number | 'none' {
  const built = parseChoiceAnswer(content, thinking, choices);
  const evald = parseLenient(
    { content, thinking, doneReason: 'stop' },
    { kind: 'mc', numOptions: choices.length, choices },
  );
  const a = built.ok ? built.index! + 1 : 'none';
  const b = evald.status === 'answer' ? evald.index! + 1 : 'none';
  expect(a, `construction and lenient agree on ${JSON.stringify(content)}`).toBe(b);
  return a;
}
/** The value both readers give, or 'none'. */
function value(content: string): number | 'none' {
  const built = parseNumericAnswer(content, '');
  const evald = parseLenient({ content, thinking: '', doneReason: 'stop' }, NUM);
  const a = built.ok ? built.value! : 'none';
  const b = evald.status === 'answer' ? evald.value! : 'none';
  expect(a, `construction and lenient agree on ${JSON.stringify(content)}`).toBe(b);
  return a;
}
const status = (content: string, t: ParseTarget = MC) =>
  parseLenient({ content, thinking: '', doneReason: 'stop' }, t).status;

describe('hedges: two options or values offered is no answer', () => {
  it.each([
    'Final Answer: either 1 or 2',
    'Final Answer: 3 / maybe 4',
    'Final Answer: 2, possibly 4',
    'Final Answer: probably 3 but maybe 1',
    'I am torn between option 1 and option 2',
    'Final Answer: UDR or UDM',
  ])('%j is ambiguous, not its first option', (reply) => {
    expect(option(reply)).toBe('none');
    expect(status(reply)).toBe('ambiguous_answer');
  });
  it.each([
    ['Final Answer: 3 / UDM', 3],
    ['Final Answer: 4 (or rather, only 4)', 4],
    ['Final Answer: probably 2', 2],
  ])('%j names one option twice or once: %j', (reply, want) => {
    expect(option(reply)).toBe(want);
  });
  it.each(['Final Answer: 3 / maybe 4', 'Final Answer: 5 or 6', 'Final Answer: 3 to 4 dB'])(
    'numeric %j is ambiguous',
    (reply) => {
      expect(value(reply)).toBe('none');
      expect(status(reply, NUM)).toBe('ambiguous_answer');
    },
  );
  it('`3/4` alone is a fraction, `3 / maybe 4` a hedge', () => {
    expect(value('Final Answer: 3/4')).toBe(0.75);
  });
});

describe('lists: several options named is no answer', () => {
  it.each([
    'Final Answer: 1 and 3',
    'Final Answer: 1, 3',
    'Final Answer: options 2 & 4',
    'The options are:\n* Option 1\n* Option 3',
    'Final Answer: 3\nOption 2 is also correct.',
  ])('%j is ambiguous', (reply) => {
    expect(option(reply)).toBe('none');
  });
  it.each([
    ['Final Answer: 3 and only 3', 3],
    ['Final Answer: 1, as explained above', 1],
    ['Final Answer: 2\nOption 2 is correct because the SMF allocates the IP address.', 2],
  ])('%j is one option: %j', (reply, want) => {
    expect(option(reply)).toBe(want);
  });
});

describe('LaTeX numbers: a math engine evaluates the statement, not its first number', () => {
  it.each([
    // fractions
    ['\\dfrac{3}{4}', 0.75],
    ['\\frac{1}{8}', 0.125],
    ['\\tfrac34', 0.75],
    // roots
    ['\\sqrt{16}', 4],
    ['\\sqrt[3]{27}', 3],
    ['2\\sqrt{4}', 4],
    // powers and products
    ['3 \\times 2^{4}', 48],
    ['2^{10}', 1024],
    ['2 \\cdot 3.5', 7],
    ['4 × 2.5', 10],
    ['\\frac{1}{2}\\log_2(1+15)', 2],
    // scientific notation
    ['6.02 \\times 10^{23}', 6.02e23],
    ['2.5 \\cdot 10^{-6}', 2.5e-6],
    ['3E8', 3e8],
    ['1.5 × 10^-3', 0.0015],
  ])('%j = %j (the published scorer reads its first number)', (tex, want) => {
    expect(value(`Final Answer: $${tex}$`)).toBeCloseTo(want, 12);
    expect(value(`Final Answer: ${tex}`)).toBeCloseTo(want, 12);
  });
  it('the published mode keeps the authors’ first-number reading', () => {
    const r = { content: 'Final Answer: \\dfrac{3}{4}', thinking: '' };
    expect(parsePublished(r, NUM).value).toBe(3);
    expect(parseLenient(r, NUM).value).toBe(0.75);
  });
  it('a side with a variable is not the answer: the last side is', () => {
    expect(value('Final Answer: C = B\\log_2(1+S) = 20')).toBe(20);
    expect(value('Final Answer: x')).toBe('none');
  });
});

describe('units are dropped, the number kept', () => {
  it.each([
    ['12.5\\,\\text{dB}', 12.5],
    ['2.5 \\mathrm{ms}', 2.5],
    ['100 Mbps', 100],
    ['45\\%', 45],
    ['3 \\cdot 10^{8} m/s', 3e8],
    ['1{,}500 kHz', 1500],
    ['-3 dBm', -3],
  ])('%j -> %j', (payload, want) => {
    expect(value(`Final Answer: ${payload}`)).toBeCloseTo(want, 9);
  });
  it('the engine alone reads a unit as a variable: the grammar cuts it off first', () => {
    expect(evaluateLatex('12.5\\,\\text{dB}')).toBeNull();
    expect(value('Final Answer: 12.5 dB or 13 dB')).toBe('none');
  });
});

describe('a retraction takes the later answer', () => {
  it.each([
    ['Final Answer: 2\nWait, that is wrong. The answer is 1.', 1],
    ['The answer is 2. Actually, no: option 4 is correct.', 4],
    ['Final Answer: 3\nHmm, option 3 is wrong. Option 4 is correct.', 4],
    ['I pick 2. Scratch that, I choose the UDR.', 4],
  ])('%j -> %j, not the draft', (reply, want) => {
    expect(option(reply)).toBe(want);
  });
  it.each([
    'Final Answer: 2\nOn second thought, let me reconsider.',
    'Final Answer: 3\nWait, option 3 is wrong.',
    'Final Answer: 1\nI was wrong about that.',
  ])('%j without a later answer is retracted', (reply) => {
    expect(option(reply)).toBe('none');
    expect(status(reply)).toBe('retracted');
  });
  it('in the reasoning and for numbers too', () => {
    expect(option('', 'Final Answer: 2\nWait, that is wrong: option 1 is better.')).toBe(1);
    expect(value('Final Answer: 5\nWait, I made a mistake. The answer is 6.')).toBe(6);
    expect(value('Final Answer: 5\nWait, I made a mistake.')).toBe('none');
  });
});

describe('a remark on another option keeps the stated one', () => {
  it.each([
    ['I pick option 3; option 2 looks similar but is wrong.', 3],
    ['Final Answer: 3 (not option 2, which is for LTE)', 3],
    ['Final Answer: 3. Unlike option 1, the UDM stores subscription data.', 3],
    ['Final Answer: UDM. AMF is incorrect here.', 3],
    ['Final Answer: 4\nOption 2 refers to session management.', 4],
  ])('%j -> %j, not the remarked option', (reply, want) => {
    expect(option(reply)).toBe(want);
  });
  it('the published scorer reads the remark’s digit (kept in published mode)', () => {
    const r = { content: 'Final Answer: 3 (not option 2, which is for LTE)', thinking: '' };
    expect(parsePublished(r, { kind: 'mc', numOptions: 4 })).toMatchObject({
      index: 1,
      rule: 'published:payload:keyword',
    });
    expect(parseLenient(r, MC).index).toBe(2);
  });
});

describe('an option given by its text', () => {
  it.each([
    ['Final Answer: UDR', 4],
    ['I choose the UDR.', 4],
    ['Final Answer: **Unified Data Repository (UDR)**', 4],
    ['Final Answer: `udr`.', 4],
    ['The answer is: SMF', 2],
    ["Final Answer: Schelkunoff's relations (Option 4)", 4],
    ['Final Answer: **Electrostimulation, heat** (Option 1).', 1],
  ])('%j -> %j', (reply, want) => {
    expect(option(reply)).toBe(want);
  });
  it('the longest option text wins; two texts are a list; a number text stays a number', () => {
    const wide = ['SMF', 'SMF and UPF', 'AMF', 'NRF'];
    expect(option('Final Answer: SMF and UPF', '', wide)).toBe(2);
    expect(option('Final Answer: SMF and AMF', '', wide)).toBe('none');
    expect(option('Final Answer: 4', '', ['2', '4', '8', '16'])).toBe(4);
    const r = readFinalAnswer('Final Answer: UDR', MC);
    expect(r).toMatchObject({
      status: 'answer',
      option: 4,
      byText: true,
      matched: 'Final Answer: UDR',
    });
  });
});

describe('bold and markdown wrappers', () => {
  it.each([
    ['**Final Answer:** **3**', 3],
    ['### Final Answer: 3', 3],
    ['> Final Answer: *3*', 3],
    ['Final Answer: `3`', 3],
    ['__Final Answer__: 3', 3],
    ['**Final Answer**: $\\boxed{3}$', 3],
    ['**Final Answer:**\n\n**Option 3**', 3],
  ])('%j -> %j', (reply, want) => {
    expect(option(reply)).toBe(want);
  });
  it.each(['**Final Answer:** **3** or **1**', '**Final Answer:** *3* and *1*'])(
    '%j is ambiguous, not option 3',
    (reply) => {
      expect(option(reply)).toBe('none');
    },
  );
  it('numbers in wrappers', () => {
    expect(value('**Final Answer:** $\\dfrac{1}{8}$')).toBe(0.125);
    expect(value('**Final Answer:** **$2.5 \\times 10^{3}$ Hz**')).toBe(2500);
  });
});
