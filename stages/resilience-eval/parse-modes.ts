/**
 * The three answer-parse modes of the TeleResilienceBench evaluation (issue 10), reported side by
 * side. Every parse records the rule that read it.
 *
 * - `strict`: the last non-empty line of the visible reply is exactly `Final Answer: <n>`, n in
 *   1..N (numeric items: `Final Answer: <number>`). Nothing else is an answer.
 * - `lenient`: our documented fallback chain (below). It refuses what is not an answer:
 *   - `ambiguous_answer` (counted, never an option): a list fragment (`* Option 2` as the last line
 *     of a list of options), an indecision (`between option 1 and option 2`), a hedge
 *     (`Final Answer: 4 ... or 2`);
 *   - `retracted`: a `Final Answer` read from the reasoning is used only when it is the
 *     reasoning's final word (the last non-empty line); a draft the model then took back
 *     (`Final Answer: 2` / `Wait, that is wrong ... option 1 is better`) is not the answer
 *     (issue 14 section 4);
 *   - `cut_off`: empty visible reply whose reasoning stops mid-sentence (or `done_reason` `length`):
 *     a budget or server problem, counted, not an answer.
 *   It reads answers the construction parser missed: LaTeX-wrapped payloads (`$2$`, `\(2\)`,
 *   `\boxed{2}`, `\text{2}`), and a numeric line's concluded value (`256+37 = 293` reads 293:
 *   the value after the last `=`).
 * - `published`: the authors' scorer (`src/parsing.py` of github.com/prnshv/TeleResilienceBench,
 *   arXiv:2605.09929), branch by branch, defects included (published-scorer.ts): it parses `raw`
 *   (thinking and reply joined; the experiment files' `continuation_raw`). Discrete items: the
 *   last `Final Answer:` payload, then the whole text, each through the digit patterns of the last
 *   120 characters and then the option-text rule (when the option texts are known); TeleMath: the
 *   payload's number, `\boxed{}`, the tail patterns, the last number. Every answer names the
 *   branch that read it. Without the option texts (the experiment files carry none; TeleLogs'
 *   C1..C8 are known) the option-text rule cannot run and the item's option count is the
 *   subset's largest: `telebench score` names the rows this decides apart.
 */

import { isCutOffReply } from '../resilience/parse-answer.js';
import {
  concludedNumber,
  lastFinalAnswer,
  nonEmptyLines,
  NUMBER,
  optionFromPayload,
  optionFromText,
  toNumber,
  unwrapPayload,
} from '../resilience/answer-forms.js';
import {
  modelTextForParsing,
  publishedFloatAnswer,
  publishedMcOutput,
} from './published-scorer.js';

export const PARSE_MODES = ['strict', 'lenient', 'published'] as const;
export type ParseMode = (typeof PARSE_MODES)[number];

/** The reply of a model as the provider returned it. */
export interface ReplyParts {
  /** Visible reply text. */
  content: string;
  /** Reasoning text ('' when none). */
  thinking: string;
  /** Provider's finish reason (`stop`, `length`, ...) when known. */
  doneReason?: string | null;
  /** The text the published scorer parsed (`continuation_raw` of the experiment files). */
  raw?: string;
}

/** What one mode read from one reply. */
export type ModeParse =
  | { status: 'answer'; rule: string; index: number; value: null; matched: string }
  | { status: 'answer'; rule: string; index: null; value: number; matched: string }
  | {
      status: 'ambiguous_answer' | 'retracted' | 'cut_off' | 'no_answer';
      rule: string | null;
      index: null;
      value: null;
      matched: string | null;
    };

/** The reading of a reply that gives no answer (also what a reply never received reads as). */
export const NO_ANSWER: ModeParse = Object.freeze<ModeParse>({
  status: 'no_answer',
  rule: null,
  index: null,
  value: null,
  matched: null,
});

/** What an item needs to be parsed: its kind and, for mc, its number of options (and texts). */
export interface ParseTarget {
  kind: 'mc' | 'numeric';
  /** Number of options N (mc). */
  numOptions: number;
  /** Option texts when known (lenient `option-text`); [] when not. */
  choices?: readonly string[];
}

/** True when a reply is cut off (see {@link isCutOffReply}). Pure. */
export function isCutOff(r: ReplyParts): boolean {
  return isCutOffReply(r);
}

const answer = (rule: string, index: number, matched: string): ModeParse => ({
  status: 'answer',
  rule,
  index,
  value: null,
  matched,
});
const numAnswer = (rule: string, value: number, matched: string): ModeParse => ({
  status: 'answer',
  rule,
  index: null,
  value,
  matched,
});
const refuse = (
  status: 'ambiguous_answer' | 'retracted' | 'cut_off' | 'no_answer',
  rule: string | null,
  matched: string | null,
): ModeParse => ({ status, rule, index: null, value: null, matched });

/** `strict` mode. Pure. */
export function parseStrict(r: ReplyParts, t: ParseTarget): ModeParse {
  const last = nonEmptyLines(r.content).at(-1);
  if (last === undefined) return refuse('no_answer', null, null);
  if (t.kind === 'mc') {
    const m = /^Final Answer:\s*(\d+)$/.exec(last);
    if (m) {
      const k = Number(m[1]);
      if (k >= 1 && k <= t.numOptions) return answer('strict', k - 1, last);
    }
  } else {
    const m = new RegExp(`^Final Answer:\\s*(${NUMBER})$`).exec(last);
    const v = m ? toNumber(m[1]!) : null;
    if (v !== null) return numAnswer('strict', v, last);
  }
  return refuse('no_answer', null, null);
}

const LIST_ITEM = /^(?:[*•+-]|\d+[.)])\s+/;
const INDECISION = new RegExp(
  String.raw`\b(?:between|either)\s+(?:option|choice)?\s*\(?(\d+)\)?\s+(?:and|or)\s+(?:option|choice)?\s*\(?(\d+)\)?`,
  'i',
);

/** `lenient` mode: the documented fallback chain. Pure. */
export function parseLenient(r: ReplyParts, t: ParseTarget): ModeParse {
  const strict = parseStrict(r, t);
  if (strict.status === 'answer') return strict;
  if (isCutOff(r)) return refuse('cut_off', 'cut-off', nonEmptyLines(r.thinking).at(-1) ?? null);
  const n = t.numOptions;
  // final-answer-line: the reply, then the reasoning when the line is its final word.
  const sources: { text: string; rule: string; mustBeLast: boolean }[] = [
    { text: r.content, rule: 'final-answer-line', mustBeLast: false },
    { text: r.thinking, rule: 'final-answer-line-thinking', mustBeLast: true },
  ];
  let retracted: ModeParse | null = null;
  for (const s of sources) {
    const fa = lastFinalAnswer(s.text);
    if (!fa) continue;
    if (t.kind === 'mc') {
      const k = optionFromPayload(fa.payload, n);
      const byText = k === null && t.choices ? optionFromText(fa.payload, t.choices) : null;
      if (k === null && byText === null) continue;
      if (s.mustBeLast && !fa.isLast) {
        retracted ??= refuse('retracted', s.rule, fa.line);
        continue;
      }
      if (k === 'ambiguous') return refuse('ambiguous_answer', s.rule, fa.line);
      if (k !== null) return answer(s.rule, k, fa.line);
      return answer(`${s.rule}:option-text`, byText!, fa.line);
    } else {
      const v = concludedNumber(fa.payload);
      if (v === null) continue;
      if (s.mustBeLast && !fa.isLast) {
        retracted ??= refuse('retracted', s.rule, fa.line);
        continue;
      }
      return numAnswer(s.rule, v, fa.line);
    }
  }
  // boxed, in the reply.
  const boxes = [...r.content.matchAll(/\\boxed\s*\{\s*((?:[^{}]|\{[^{}]*\})*)\s*\}/g)];
  const box = boxes.at(-1)?.[1];
  if (box !== undefined) {
    if (t.kind === 'mc') {
      const label = /^[A-Z](\d+)$/.exec(unwrapPayload(box));
      const k = label
        ? Number(label[1]) >= 1 && Number(label[1]) <= n
          ? Number(label[1]) - 1
          : null
        : optionFromPayload(box, n);
      if (k === 'ambiguous') return refuse('ambiguous_answer', 'boxed', `\\boxed{${box}}`);
      if (k !== null) return answer('boxed', k, `\\boxed{${box}}`);
    } else {
      const v = concludedNumber(box);
      if (v !== null) return numAnswer('boxed', v, `\\boxed{${box}}`);
    }
  }
  // answer-phrase: the reply's last line concludes "answer is (option) n" / "= number".
  const ls = nonEmptyLines(r.content);
  const last = ls.at(-1);
  if (last !== undefined) {
    if (t.kind === 'mc') {
      const ind = INDECISION.exec(last);
      if (ind && ind[1] !== ind[2]) return refuse('ambiguous_answer', 'answer-phrase', last);
      const m =
        /(?:answer|option|choice)\s*(?:is|:)?\s*(?:option\s*)?[([]?(\d+)[)\]]?\s*[.!]?\s*$/i.exec(
          last,
        );
      if (m) {
        const k = Number(m[1]);
        if (k >= 1 && k <= n) {
          const prev = ls.at(-2);
          if (LIST_ITEM.test(last) && prev !== undefined && LIST_ITEM.test(prev))
            return refuse('ambiguous_answer', 'answer-phrase', last);
          return answer('answer-phrase', k - 1, m[0].trim());
        }
      }
    } else {
      const m = new RegExp(
        `(?:answer\\s*(?:is|:)|=)\\s*\\$?(${NUMBER})\\$?\\s*\\.?\\s*$`,
        'i',
      ).exec(last);
      const v = m ? toNumber(m[1]!) : null;
      if (v !== null) return numAnswer('answer-phrase', v, m![0].trim());
    }
  }
  return retracted ?? refuse('no_answer', null, null);
}

/**
 * The text the published scorer parsed: the experiment files' `continuation_raw` when the reply
 * came with it, else `model_text_for_parsing(thinking, content)` (each stripped, joined by a blank
 * line). Pure.
 */
export function publishedRaw(r: ReplyParts): string {
  return r.raw ?? modelTextForParsing(r.thinking, r.content);
}

/**
 * `published` mode: the authors' scorer (`src/parsing.py`, see published-scorer.ts), branch by
 * branch. Option texts unknown: N empty options (their option-text rule then never fires), N the
 * item's option count. Pure.
 */
export function parsePublished(r: ReplyParts, t: ParseTarget): ModeParse {
  const raw = publishedRaw(r);
  if (t.kind === 'mc') {
    const choices = t.choices?.length ? t.choices : Array<string>(t.numOptions).fill('');
    const p = publishedMcOutput(raw, choices);
    return p.index === null ? NO_ANSWER : answer(p.rule!, p.index, p.matched!);
  }
  const p = publishedFloatAnswer(raw);
  return p.value === null ? NO_ANSWER : numAnswer(p.rule!, p.value, p.matched!);
}

/** Parses one reply in one mode. Pure. */
export function parseInMode(mode: ParseMode, r: ReplyParts, t: ParseTarget): ModeParse {
  switch (mode) {
    case 'strict':
      return parseStrict(r, t);
    case 'lenient':
      return parseLenient(r, t);
    case 'published':
      return parsePublished(r, t);
  }
}
