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
 * - `published`: a re-implementation of the behaviour of the published scorer (arXiv:2605.09929
 *   experiments), defects included, labelled as such. Learned from the 1,790 published rows
 *   (`../shared/data/teleresiliencebench/experiments/`): it reads `raw` = thinking, a blank line,
 *   reply (each only when non-empty); the last case-sensitive `Final Answer: d` with ONE digit
 *   d in 1..min(9,N) wins; else the last standalone digit 1..min(9,N) anywhere in `raw`. Option
 *   numbers 10-16 are never read as such (`Final Answer: 15` gives nothing, or a stray `5`).
 *   Numeric: the last `Final Answer: <number>` in `raw`, else the last unsigned number in `raw`.
 *   With the option texts (instances built here, the published Hub dataset's `choices`, TeleLogs'
 *   C1..C8) two option-text rules join, in this precedence: (1) `Final Answer: d`; (2) the last
 *   `Final Answer: <option text>` (`Final Answer: UDM`, a quoted option value); (3) the last
 *   standalone digit; (4) the first option, in option order, whose text occurs anywhere in `raw`.
 *   Precedence learned from the published rows whose options are known (TeleLogs C1..C8, 172
 *   rows: 164 reproduced with the four rules, 161 with digits only; 3GPP_TSG with the sorted
 *   working-group labels, 180 rows: 167 against 134); rule (2) agreed on every row it decided.
 *   Without option texts (the published experiment files) rules (2) and (4) cannot run, and the
 *   rows they decided are reported as such by `telebench score`.
 */

import { isCutOffReply } from '../resilience/parse-answer.js';

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

const NUMBER = String.raw`[-+−]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+−]?\d+)?`;
const SCI_TIMES = new RegExp(
  String.raw`(${NUMBER})\s*(?:\\times|\\cdot|×|·|\*|x)\s*10\s*\^\s*\{?\s*([-+−]?\d+)\s*\}?`,
);
const FA = /^[\s*#>_`-]*final\s*answer\b[\s*_`]*[:：][\s*_`]*(.*?)[\s*_`.]*$/i;

const nonEmptyLines = (text: string): string[] =>
  text
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');

const toNumber = (s: string): number | null => {
  const v = Number(s.replace(/,/g, '').replace(/−/g, '-'));
  return Number.isFinite(v) ? v : null;
};

/**
 * Removes LaTeX and markdown wrappers around a payload: `$2$`, `$$2$$`, `\(2\)`, `\[2\]`,
 * `\boxed{2}`, `\text{2}`, `\mathbf{2}`, `**2**`, backticks. Pure.
 */
export function unwrapPayload(payload: string): string {
  let p = payload.trim();
  for (let i = 0; i < 4; i++) {
    const before = p;
    p = p
      .replace(/^\$\$?\s*([\s\S]*?)\s*\$\$?$/, '$1')
      .replace(/^\\\(\s*([\s\S]*?)\s*\\\)$/, '$1')
      .replace(/^\\\[\s*([\s\S]*?)\s*\\\]$/, '$1')
      .replace(/\\(?:boxed|text|textbf|mathbf|mathrm)\s*\{([^{}]*)\}/g, '$1')
      .replace(/^[*_`]+|[*_`]+$/g, '')
      .trim();
    if (p === before) break;
  }
  return p;
}

/** The number a numeric payload concludes: after the last `=`, `a × 10^b` read. Null when none. */
export function concludedNumber(payload: string): number | null {
  let p = unwrapPayload(payload);
  const eq = p.lastIndexOf('=');
  if (eq >= 0) p = p.slice(eq + 1);
  p = unwrapPayload(p.replace(/\\approx|≈/g, ''));
  const sci = SCI_TIMES.exec(p);
  const plain = new RegExp(NUMBER).exec(p);
  if (sci && (!plain || sci.index <= plain.index)) {
    const m = toNumber(sci[1]!);
    const e = toNumber(sci[2]!);
    if (m === null || e === null) return null;
    const v = m * 10 ** e;
    return Number.isFinite(v) ? v : null;
  }
  return plain ? toNumber(plain[0]) : null;
}

const OPTION_REF = String.raw`(?:option|choice|answer)?\s*[([]?\s*(\d+)\s*[)\]]?`;

/**
 * Reads an option number from a `Final Answer` payload. Returns the 0-based index, `ambiguous`
 * when the payload names two different options (`4 ... or 2`, `1/2`, `1 and 3`), or null.
 */
function optionFromPayload(raw: string, n: number): number | 'ambiguous' | null {
  const payload = unwrapPayload(raw);
  const m = new RegExp(String.raw`^${OPTION_REF}(?=[.:)\s,;/]|$)`, 'i').exec(payload);
  if (!m) return null;
  const k = Number(m[1]);
  if (k < 1 || k > n) return null;
  const rest = payload.slice(m[0].length);
  const alt = new RegExp(
    String.raw`(?:\bor\b|\band\b|/|\bvs\.?)\s*(?:option\s*)?(\d+)\b`,
    'i',
  ).exec(rest);
  if (alt && Number(alt[1]) !== k && Number(alt[1]) >= 1 && Number(alt[1]) <= n) return 'ambiguous';
  return k - 1;
}

const normText = (s: string): string =>
  s
    .toLowerCase()
    .replace(/^[\s"'`*]+|[\s"'`*.]+$/g, '')
    .replace(/\s+/g, ' ');

function optionFromText(payload: string, choices: readonly string[]): number | null {
  const p = normText(unwrapPayload(payload));
  if (p === '') return null;
  const hits = choices.flatMap((c, i) => (normText(c) === p ? [i] : []));
  return hits.length === 1 ? hits[0]! : null;
}

/** Last `Final Answer:` line of `text`, with its position among the non-empty lines. */
function lastFinalAnswer(text: string): { payload: string; line: string; isLast: boolean } | null {
  const ls = nonEmptyLines(text);
  for (let i = ls.length - 1; i >= 0; i--) {
    const m = FA.exec(ls[i]!);
    if (m) return { payload: m[1]!, line: ls[i]!, isLast: i === ls.length - 1 };
  }
  return null;
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

/** `raw` as the published experiment files store it: thinking, a blank line, reply. Pure. */
export function publishedRaw(r: ReplyParts): string {
  return [r.thinking, r.content].filter((s) => s !== '').join('\n\n');
}

const publishedNorm = (s: string): string =>
  s
    .toLowerCase()
    .replace(/^[\s"'`*]+|[\s"'`*.]+$/g, '')
    .replace(/\s+/g, ' ');

/**
 * Published rule 2 (option texts known): the last `Final Answer:` line (case-sensitive) whose
 * payload, lower-cased with surrounding quotes, asterisks, backticks and a final period removed,
 * equals an option's text (`Final Answer: UDM`, `Final Answer: "RAN4"`). Pure.
 */
export function publishedFinalAnswerText(
  raw: string,
  choices: readonly string[],
): { index: number; matched: string } | null {
  const norms = choices.map(publishedNorm);
  const hits = [...raw.matchAll(/Final Answer:([^\n]*)/g)].flatMap((m) => {
    const i = norms.indexOf(publishedNorm(m[1]!));
    return i >= 0 && norms[i] !== '' ? [{ index: i, matched: m[0] }] : [];
  });
  return hits.at(-1) ?? null;
}

/**
 * Published rule 4 (option texts known, no digit anywhere): the first option, in option order,
 * whose text occurs anywhere in `raw` (case-insensitive, not inside a longer word or number). This
 * is the defect that makes a reply enumerating every option read as option 1. Pure.
 */
export function publishedOptionMention(
  raw: string,
  choices: readonly string[],
): { index: number; matched: string } | null {
  for (const [i, c] of choices.entries()) {
    const text = c.trim();
    if (text === '') continue;
    const esc = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = new RegExp(`(?<![\\p{L}\\p{N}])${esc}(?![\\p{L}\\p{N}])`, 'iu').exec(raw);
    if (m) return { index: i, matched: m[0] };
  }
  return null;
}

/**
 * `published` mode (the published scorer's behaviour, defects included; see the module comment).
 * Pure.
 */
export function parsePublished(r: ReplyParts, t: ParseTarget): ModeParse {
  const raw = publishedRaw(r);
  if (t.kind === 'mc') {
    const max = Math.min(9, t.numOptions);
    const inRange = (m: RegExpMatchArray): boolean => Number(m[1]) >= 1 && Number(m[1]) <= max;
    const choices = t.choices?.length ? t.choices : null;
    const fa = [...raw.matchAll(/Final Answer:\s*([1-9])\b/g)].filter(inRange).at(-1);
    if (fa) return answer('published:final-answer-digit', Number(fa[1]) - 1, fa[0]);
    if (choices) {
      const byText = publishedFinalAnswerText(raw, choices);
      if (byText) return answer('published:final-answer-text', byText.index, byText.matched);
    }
    const d = [...raw.matchAll(/\b([1-9])\b/g)].filter(inRange).at(-1);
    if (d) return answer('published:last-digit', Number(d[1]) - 1, d[0]);
    if (choices) {
      const any = publishedOptionMention(raw, choices);
      if (any) return answer('published:option-text', any.index, any.matched);
    }
    return refuse('no_answer', null, null);
  }
  const fa = [...raw.matchAll(new RegExp(`Final Answer:\\s*\\**\\s*\\$?\\s*(${NUMBER})`, 'g'))]
    .map((m) => ({ m, v: toNumber(m[1]!) }))
    .filter((x) => x.v !== null)
    .at(-1);
  if (fa) return numAnswer('published:final-answer-number', fa.v!, fa.m[0]);
  const last = [...raw.matchAll(/(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?/g)]
    .map((m) => ({ m, v: toNumber(m[0]) }))
    .filter((x) => x.v !== null)
    .at(-1);
  if (last) return numAnswer('published:last-number', last.v!, last.m[0]);
  return refuse('no_answer', null, null);
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
