/**
 * The one table of answer forms (stages/resilience/answer-forms.ts), run through both parsers:
 * the construction's (`parseChoiceAnswer` / `parseNumericAnswer`, resilience.generate keeps a
 * trace only when it reads an answer) and the evaluation's lenient mode. Each form has one
 * verdict and both parsers give it (issue 23: `Final Answer: 3 or 1` was option 3 in one and
 * ambiguous in the other; `10^{-3}` was 10; `$2$` and `256+37 = 293` differed).
 */
import { describe, expect, it } from 'vitest';
import { parseChoiceAnswer, parseNumericAnswer } from '../../../stages/resilience/parse-answer.js';
import { parseLenient, parseStrict } from '../../../stages/resilience-eval/parse-modes.js';

const CHOICES = ['AMF', 'SMF', 'UDM', 'UDR'];
type Verdict = number | 'none';

// [reply, thinking, verdict]: the option (1-based) or 'none' (ambiguous, retracted, no answer)
const MC: [string, string, Verdict][] = [
  ['Final Answer: 3', '', 3],
  ['Final Answer: **3**', '', 3],
  ['**Final Answer:** 3', '', 3],
  ['Final Answer: Option 3', '', 3],
  ['Final Answer: (3)', '', 3],
  ['Final Answer: 3. UDM', '', 3],
  ['Final Answer: $3$', '', 3],
  ['Final Answer: \\(3\\)', '', 3],
  ['Final Answer: \\boxed{3}', '', 3],
  ['Final Answer: \\text{3}', '', 3],
  ['So it is \\boxed{3}', '', 3],
  ['Final Answer: UDM', '', 3],
  ['The answer is option 3.', '', 3],
  ['Final Answer: 3 or 1', '', 'none'],
  ['Final Answer: 4 ... or 2', '', 'none'],
  ['Final Answer: 1/2', '', 'none'],
  ['Final Answer: 1 and 3', '', 'none'],
  ['Final Answer: 2 vs 4', '', 'none'],
  ['Final Answer: 7', '', 'none'],
  ['', 'Final Answer: 2\nWait, that is wrong: option 1 is better.', 1],
  ['', 'Final Answer: 2\nWait, that is wrong.', 'none'],
  ['', 'Option 2 fits.\nFinal Answer: 2', 2],
  ['I cannot decide.', '', 'none'],
];
// [payload after `Final Answer: `, value]
const NUM: [string, number | 'none'][] = [
  ['293', 293],
  ['$293$', 293],
  ['\\boxed{293}', 293],
  ['256+37 = 293', 293],
  ['x \\approx 293', 293],
  ['1.5e-3', 0.0015],
  ['1.5 \\times 10^{-3}', 0.0015],
  ['1.5 × 10^-3 W', 0.0015],
  ['10^{-3}', 0.001],
  ['10^{17}', 1e17],
  ['−2.5', -2.5],
  ['-2.5 dB', -2.5],
  ['1,234.5 m', 1234.5],
  ['45%', 45],
  ['$2$', 2],
  ['unknown', 'none'],
];

const verdictOf = (p: { index: number | null; value: number | null } | null): Verdict | number =>
  p === null ? 'none' : p.index !== null ? p.index + 1 : p.value!;

describe('one table of answer forms, one verdict in the construction and the evaluation', () => {
  it.each(MC)('choice %j (thinking %j) -> %j', (content, thinking, want) => {
    const built = parseChoiceAnswer(content, thinking, CHOICES);
    const evald = parseLenient(
      { content, thinking, doneReason: 'stop' },
      { kind: 'mc', numOptions: 4, choices: CHOICES },
    );
    expect(verdictOf(built.ok ? built : null)).toBe(want);
    expect(verdictOf(evald.status === 'answer' ? evald : null)).toBe(want);
  });

  it.each(NUM)('number %j -> %j', (payload, want) => {
    const content = `Final Answer: ${payload}`;
    const built = parseNumericAnswer(content, '');
    const evald = parseLenient({ content, thinking: '' }, { kind: 'numeric', numOptions: 0 });
    for (const got of [
      verdictOf(built.ok ? built : null),
      verdictOf(evald.status === 'answer' ? evald : null),
    ])
      if (want === 'none') expect(got).toBe('none');
      else expect(got as number).toBeCloseTo(want, 12);
  });

  it('the strict rule reads only the exact form, in both', () => {
    expect(parseChoiceAnswer('Final Answer: 3', '', CHOICES, ['strict'])).toMatchObject({
      index: 2,
    });
    expect(
      parseStrict({ content: 'Final Answer: 3', thinking: '' }, { kind: 'mc', numOptions: 4 }),
    ).toMatchObject({ index: 2 });
    for (const f of ['Final Answer: $3$', 'Final Answer: 3 or 1', 'final answer: 3'])
      expect([
        parseChoiceAnswer(f, '', CHOICES, ['strict']).ok,
        parseStrict({ content: f, thinking: '' }, { kind: 'mc', numOptions: 4 }).status,
      ]).toEqual([false, 'no_answer']);
  });
});
