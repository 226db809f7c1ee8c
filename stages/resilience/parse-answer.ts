/**
 * The generator's answer parser. The prompts ask for exactly one line `Final Answer: <n>` (or
 * `<number>`); the parser tries that strict form first and then a documented fallback chain, and
 * always says which rule produced the answer, so instances built from lenient parses can be told
 * apart (issue 6; ../shared/data/README.md: many published predictions came from the authors'
 * lenient "last digit 1..N anywhere" fallback).
 *
 * Rules, in the default order (`rules` can reorder or drop them; `last-digit` is off by default):
 * - `strict`: the last non-empty line of the answer text is exactly `Final Answer: <n>` (numeric:
 *   `Final Answer: <number>`), n in 1..N.
 * - `final-answer-line`: the last line, in the answer text and then in the thinking (there only
 *   when it is the thinking's last non-empty line: a retracted draft is not the answer), that starts
 *   with `Final Answer:` (markdown emphasis allowed) and whose payload starts with an option number
 *   1..N ("3", "**3**", "Option 3", "3. text") or, for numeric items, holds a number.
 * - `boxed`: the last `\boxed{...}` in the answer text holding an option number, an option label
 *   such as `C3` (TeleLogs asks for `\boxed{}`), or a number.
 * - `option-text`: the `Final Answer:` payload equals exactly one option's text (case- and
 *   punctuation-insensitive), e.g. `Final Answer: SA5` for 3GPP_TSG.
 * - `answer-phrase`: the answer text ends with "answer is (option) n" / "option n" / "= number".
 * - `last-digit` (opt-in): the last standalone digit 1..N in the answer text (the authors' lenient
 *   fallback; multiple-choice only).
 */

import {
  concludedNumber,
  FINAL_ANSWER_LINE,
  lastFinalAnswer,
  nonEmptyLines,
  NUMBER,
  optionFromPayload,
  optionFromText,
  toNumber,
} from './answer-forms.js';

export const ANSWER_RULES = [
  'strict',
  'final-answer-line',
  'boxed',
  'option-text',
  'answer-phrase',
  'last-digit',
] as const;
export type AnswerRule = (typeof ANSWER_RULES)[number];
export const DEFAULT_ANSWER_RULES: readonly AnswerRule[] = [
  'strict',
  'final-answer-line',
  'boxed',
  'option-text',
  'answer-phrase',
];

export type ParsedAnswer =
  | { ok: true; rule: AnswerRule; index: number; value: null; matched: string }
  | { ok: true; rule: AnswerRule; index: null; value: number; matched: string }
  | { ok: false; rule: null; index: null; value: null; matched: null };

const NOT_PARSED: ParsedAnswer = { ok: false, rule: null, index: null, value: null, matched: null };

const FA = FINAL_ANSWER_LINE;
const lines = nonEmptyLines;

/**
 * First number of `text` as the evaluation reads a numeric payload ({@link concludedNumber}: the
 * value after the last `=`, `a × 10^b` and `10^b` with the exponent's sign); null when none.
 */
export const firstNumber = concludedNumber;

/**
 * The last `Final Answer:` line of `text`. With `finalWordOnly` (the reasoning) only when it is the
 * text's last non-empty line: a draft answer the model then took back ("Final Answer: 2" / "Wait,
 * that is wrong ... option 1 is better") is not its answer (issue 14, section 4).
 */
function lastFinalAnswerPayload(
  text: string,
  finalWordOnly = false,
): { payload: string; line: string } | null {
  const fa = lastFinalAnswer(text);
  return fa && (!finalWordOnly || fa.isLast) ? fa : null;
}

function lastBoxed(text: string): string | null {
  let last: string | null = null;
  for (const m of text.matchAll(/\\boxed\s*\{\s*((?:[^{}]|\{[^{}]*\})*)\s*\}/g)) last = m[1]!;
  return last;
}

/**
 * Parses a multiple-choice answer.
 * @param content the answer text (visible reply)
 * @param thinking the reasoning text (searched by `final-answer-line` after `content`)
 * @param choices the item's options (N = choices.length)
 * @param rules rules to try, in order
 * @returns the 0-based option index and the rule that found it, or `{ok: false}`
 */
export function parseChoiceAnswer(
  content: string,
  thinking: string,
  choices: readonly string[],
  rules: readonly AnswerRule[] = DEFAULT_ANSWER_RULES,
): ParsedAnswer {
  const n = choices.length;
  const hit = (rule: AnswerRule, index: number, matched: string): ParsedAnswer => ({
    ok: true,
    rule,
    index,
    value: null,
    matched,
  });
  for (const rule of rules) {
    switch (rule) {
      case 'strict': {
        const last = lines(content).at(-1);
        const m = last === undefined ? null : /^Final Answer:\s*(\d+)$/.exec(last);
        if (m) {
          const k = Number(m[1]);
          if (k >= 1 && k <= n) return hit(rule, k - 1, last!);
        }
        break;
      }
      case 'final-answer-line': {
        for (const [text, finalWordOnly] of [
          [content, false],
          [thinking, true],
        ] as const) {
          const fa = lastFinalAnswerPayload(text, finalWordOnly);
          if (fa) {
            const idx = optionFromPayload(fa.payload, n);
            // a hedge (`3 or 1`) is no answer: the evaluation refuses it too
            if (idx === 'ambiguous') return NOT_PARSED;
            if (idx !== null) return hit(rule, idx, fa.line);
          }
        }
        break;
      }
      case 'boxed': {
        const b = lastBoxed(content);
        if (b !== null) {
          const label = /^[A-Z](\d+)$/.exec(b.trim());
          const idx = label
            ? Number(label[1]) >= 1 && Number(label[1]) <= n
              ? Number(label[1]) - 1
              : null
            : (optionFromPayload(b, n) ?? optionFromText(b, choices));
          if (idx === 'ambiguous') return NOT_PARSED;
          if (idx !== null) return hit(rule, idx, `\\boxed{${b}}`);
        }
        break;
      }
      case 'option-text': {
        for (const [text, finalWordOnly] of [
          [content, false],
          [thinking, true],
        ] as const) {
          const fa = lastFinalAnswerPayload(text, finalWordOnly);
          if (fa) {
            const idx = optionFromText(fa.payload, choices);
            if (idx !== null) return hit(rule, idx, fa.line);
          }
        }
        break;
      }
      case 'answer-phrase': {
        const tail = content.trim().slice(-200);
        const m =
          /(?:answer|option|choice)\s*(?:is|:)?\s*(?:option\s*)?[([]?(\d+)[)\]]?\s*[.!]?\s*$/i.exec(
            tail,
          );
        if (m) {
          const k = Number(m[1]);
          if (k >= 1 && k <= n) return hit(rule, k - 1, m[0].trim());
        }
        break;
      }
      case 'last-digit': {
        const max = Math.min(9, n);
        const ms = [...content.matchAll(new RegExp(String.raw`\b([1-${max}])\b`, 'g'))];
        const last = ms.at(-1);
        if (last) return hit(rule, Number(last[1]) - 1, last[0]);
        break;
      }
    }
  }
  return NOT_PARSED;
}

/**
 * Parses a numeric answer (TeleMath).
 * @param content the answer text; @param thinking the reasoning text
 * @returns the value and the rule that found it, or `{ok: false}`
 */
export function parseNumericAnswer(
  content: string,
  thinking: string,
  rules: readonly AnswerRule[] = DEFAULT_ANSWER_RULES,
): ParsedAnswer {
  const hit = (rule: AnswerRule, value: number, matched: string): ParsedAnswer => ({
    ok: true,
    rule,
    index: null,
    value,
    matched,
  });
  for (const rule of rules) {
    switch (rule) {
      case 'strict': {
        const last = lines(content).at(-1);
        const m =
          last === undefined ? null : new RegExp(`^Final Answer:\\s*(${NUMBER})$`).exec(last);
        const v = m ? toNumber(m[1]!) : null;
        if (v !== null) return hit(rule, v, last!);
        break;
      }
      case 'final-answer-line': {
        for (const [text, finalWordOnly] of [
          [content, false],
          [thinking, true],
        ] as const) {
          const fa = lastFinalAnswerPayload(text, finalWordOnly);
          if (fa) {
            const v = firstNumber(fa.payload);
            if (v !== null) return hit(rule, v, fa.line);
          }
        }
        break;
      }
      case 'boxed': {
        const b = lastBoxed(content);
        if (b !== null) {
          const v = firstNumber(b);
          if (v !== null) return hit(rule, v, `\\boxed{${b}}`);
        }
        break;
      }
      case 'answer-phrase': {
        const tail = content.trim().slice(-200);
        const m = new RegExp(`(?:answer\\s*(?:is|:)|=)\\s*(${NUMBER})\\s*\\.?\\s*$`, 'i').exec(
          tail,
        );
        const v = m ? toNumber(m[1]!) : null;
        if (v !== null) return hit(rule, v, m![0].trim());
        break;
      }
      case 'option-text':
      case 'last-digit':
        break;
    }
  }
  return NOT_PARSED;
}

/**
 * True when a reply stopped mid-sentence with an empty visible reply: the provider said `length`,
 * or the reasoning's last character is a letter, digit, comma or opening bracket and its last line
 * is no `Final Answer` line. A budget or server problem, counted, never an answer (issue 14,
 * section 4). Pure.
 * @param r the visible reply, the reasoning and the provider's finish reason
 */
export function isCutOffReply(r: {
  content: string;
  thinking: string;
  doneReason?: string | null;
}): boolean {
  if (r.content.trim() !== '') return false;
  if (r.doneReason === 'length') return true;
  const t = r.thinking.trimEnd();
  if (t === '') return false;
  return /[\p{L}\p{N},;(]$/u.test(t) && !FA.test(lines(t).at(-1) ?? '');
}
