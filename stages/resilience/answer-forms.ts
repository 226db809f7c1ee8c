/**
 * The exact forms every parser shares: the `strict` line (`Final Answer: <n>` / `<number>`), the
 * `Final Answer` line the cut-off check looks for, and plain number text. Every other form of a
 * final answer (markdown and LaTeX wrappers, options by their text, hedges, lists, retractions,
 * remarks on another option, LaTeX numbers, units) is read by the one answer grammar
 * (`answer-grammar.ohm.ts`, `answer-grammar.ts`; docs/resilience-scoring.md).
 *
 * All functions are pure.
 */

/** A `Final Answer:` line (markdown emphasis, `>`/`#` prefixes and a full-width colon allowed). */
export const FINAL_ANSWER_LINE =
  /^[\s*#>_`-]*final\s*answer\b[\s*_`]*[:：][\s*_`]*(.*?)[\s*_`.]*$/i;

/** A plain number: sign (also U+2212), thousands commas, decimals, `e` exponent. */
export const NUMBER = String.raw`[-+−]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+−]?\d+)?`;

/** The non-empty lines of a text, trimmed. */
export const nonEmptyLines = (text: string): string[] =>
  text
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');

/** A number's text to a finite number (commas and U+2212 read); null when not finite. */
export const toNumber = (s: string): number | null => {
  const v = Number(s.replace(/,/g, '').replace(/−/g, '-'));
  return Number.isFinite(v) ? v : null;
};
