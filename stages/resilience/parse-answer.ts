/**
 * The generator's answer parser. The prompts ask for exactly one line `Final Answer: <n>` (or
 * `<number>`); the parser tries that strict form first and then the answer grammar
 * (`answer-grammar.ts`: an answer statement, then what follows it decides), and always says which
 * rule produced the answer, so instances built from lenient parses can be told apart (issue 6;
 * ../shared/data/README.md: many published predictions came from the authors' lenient "last digit
 * 1..N anywhere" fallback). The evaluation's `lenient` mode reads the same grammar.
 *
 * Rules (`rules` can drop them; `last-digit` is off by default). The grammar reads the visible
 * reply, then (when the reply holds no statement) the reasoning; its reading is kept only when
 * the rule of the statement's lead is enabled:
 * - `strict`: the last non-empty line of the answer text is exactly `Final Answer: <n>` (numeric:
 *   `Final Answer: <number>`), n in 1..N.
 * - `final-answer-line`: a `Final Answer:` statement (markdown, LaTeX wrappers, `Option 3`,
 *   `3. text`; numbers in LaTeX evaluated, units dropped).
 * - `boxed`: a `\boxed{...}` statement (an option number, a label such as `C3`, a number).
 * - `option-text`: a `Final Answer:` statement naming one option by its text (`SA5`, `the UDR`).
 * - `answer-phrase`: `the answer is 2`, `I pick option 3`, a bare `Option 2` line, `= 17.5` as the
 *   last words, or a later `option 1 is correct` after a retraction.
 * - `last-digit` (opt-in): the last standalone digit 1..N in the answer text (the authors' lenient
 *   fallback; multiple-choice only).
 * A hedge, a list or a retraction without a later answer is no answer (the construction drops
 * the row), whatever the rules; so is a cut-off reply ({@link isCutOffReply}).
 */
import { FINAL_ANSWER_LINE, nonEmptyLines, NUMBER, toNumber } from './answer-forms.js';
import { readFinalAnswer, type GrammarReading, type ReadTarget } from './answer-grammar.js';

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

/** The construction rule a grammar answer falls under (its lead; `option-text` when by text). */
function ruleOf(g: Extract<GrammarReading, { status: 'answer' }>): AnswerRule {
  if (g.lead === 'final') return 'option' in g && g.byText ? 'option-text' : 'final-answer-line';
  return g.lead === 'boxed' ? 'boxed' : 'answer-phrase';
}

/**
 * The grammar's answer in the reply, else in the reasoning: `refused` for a hedge, list or
 * retraction (no answer whatever the rules), null when neither holds a statement or its rule is
 * not enabled.
 */
function grammarAnswer(
  content: string,
  thinking: string,
  t: ReadTarget,
  rules: readonly AnswerRule[],
): { rule: AnswerRule; g: Extract<GrammarReading, { status: 'answer' }> } | 'refused' | null {
  for (const text of [content, thinking]) {
    const g = readFinalAnswer(text, t);
    if (g.status === 'no_answer') continue;
    if (g.status !== 'answer') return 'refused';
    const rule = ruleOf(g);
    return rules.includes(rule) ? { rule, g } : null;
  }
  return null;
}

/**
 * Parses a multiple-choice answer.
 * @param content the answer text (visible reply)
 * @param thinking the reasoning text (read by the grammar when the reply holds no statement)
 * @param choices the item's options (N = choices.length)
 * @param rules rules to try (module comment)
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
  if (rules.includes('strict')) {
    const last = lines(content).at(-1);
    const m = last === undefined ? null : /^Final Answer:\s*(\d+)$/.exec(last);
    const k = m ? Number(m[1]) : 0;
    if (k >= 1 && k <= n) return hit('strict', k - 1, last!);
  }
  if (isCutOffReply({ content, thinking })) return NOT_PARSED;
  const got = grammarAnswer(content, thinking, { kind: 'mc', numOptions: n, choices }, rules);
  if (got === 'refused') return NOT_PARSED;
  if (got && 'option' in got.g) return hit(got.rule, got.g.option - 1, got.g.matched);
  if (rules.includes('last-digit')) {
    const max = Math.min(9, n);
    const last = [...content.matchAll(new RegExp(String.raw`\b([1-${max}])\b`, 'g'))].at(-1);
    if (last) return hit('last-digit', Number(last[1]) - 1, last[0]);
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
  if (rules.includes('strict')) {
    const last = lines(content).at(-1);
    const m = last === undefined ? null : new RegExp(`^Final Answer:\\s*(${NUMBER})$`).exec(last);
    const v = m ? toNumber(m[1]!) : null;
    if (v !== null) return hit('strict', v, last!);
  }
  if (isCutOffReply({ content, thinking })) return NOT_PARSED;
  const got = grammarAnswer(content, thinking, { kind: 'numeric', numOptions: 0 }, rules);
  if (got && got !== 'refused' && 'value' in got.g)
    return hit(got.rule, got.g.value, got.g.matched);
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
