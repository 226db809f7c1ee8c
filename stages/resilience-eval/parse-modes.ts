/**
 * The three answer-parse modes of the TeleResilienceBench evaluation (issue 10), reported side by
 * side. Every parse records the rule that read it.
 *
 * - `strict`: the last non-empty line of the visible reply is exactly `Final Answer: <n>`, n in
 *   1..N (numeric items: `Final Answer: <number>`). Nothing else is an answer.
 * - `lenient`: one grammar for final answers (stages/resilience/answer-grammar.ts,
 *   docs/resilience-scoring.md "The grammar of a final answer"): an answer statement (`Final
 *   Answer:`, `the answer is`, `I pick`, `\boxed{}`, a bare `Option 2` line, `= 17.5` as the last
 *   words) and what follows it decide. It refuses what is not an answer:
 *   - `ambiguous_answer` (counted, never an option): a hedge (`either 1 or 2`, `3 / maybe 4`,
 *     `option 2 might also be right`) or a list (`1 and 3`, two `* Option n` lines, `option 2 is
 *     also correct`);
 *   - `retracted`: a statement taken back (`Wait, that is wrong`, `option 3 is wrong` after stating
 *     3) with no later answer; with one, the later answer is read (issue 14 section 4, issue 33);
 *   - `cut_off`: empty visible reply whose reasoning stops mid-sentence (or `done_reason` `length`):
 *     a budget or server problem, counted, not an answer.
 *   A remark on another option (`option 2 looks similar but is wrong`) keeps the stated answer.
 *   Numbers go through a LaTeX math engine (`\dfrac{3}{4}`, `\sqrt{16}`, `3 \times 2^{4}`), units
 *   dropped; an option may be named by its text.
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
import { nonEmptyLines, NUMBER, toNumber } from '../resilience/answer-forms.js';
import { readFinalAnswer, type LeadKind } from '../resilience/answer-grammar.js';
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

/** The rule name a grammar reading records (the statement's lead, where it was read). */
export function grammarRule(lead: LeadKind, byText: boolean, inThinking: boolean): string {
  const base =
    lead === 'final' ? 'final-answer-line' : lead === 'boxed' ? 'boxed' : 'answer-phrase';
  return `${base}${inThinking ? '-thinking' : ''}${byText ? ':option-text' : ''}`;
}

/**
 * `lenient` mode: strict, then the answer grammar (stages/resilience/answer-grammar.ts) on the
 * visible reply and, when the reply holds no statement, on the reasoning. A hedge or a list is
 * `ambiguous_answer` (rule `<lead>:hedge` / `<lead>:list`), a retraction without a later answer is
 * `retracted`, a cut-off reply `cut_off`. Pure apart from the number engine's lazy load.
 */
export function parseLenient(r: ReplyParts, t: ParseTarget): ModeParse {
  const strict = parseStrict(r, t);
  if (strict.status === 'answer') return strict;
  if (isCutOff(r)) return refuse('cut_off', 'cut-off', nonEmptyLines(r.thinking).at(-1) ?? null);
  for (const [text, inThinking] of [
    [r.content, false],
    [r.thinking, true],
  ] as const) {
    const g = readFinalAnswer(text, t);
    if (g.status === 'no_answer') continue;
    const byText = g.status === 'answer' && 'option' in g && g.byText;
    const rule = grammarRule(g.lead, byText, inThinking);
    if (g.status === 'ambiguous_answer')
      return refuse('ambiguous_answer', `${rule}:${g.why}`, g.matched);
    if (g.status === 'retracted') return refuse('retracted', rule, g.matched);
    return 'option' in g
      ? answer(rule, g.option - 1, g.matched)
      : numAnswer(rule, g.value, g.matched);
  }
  return refuse('no_answer', null, null);
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
