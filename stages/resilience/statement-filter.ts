/**
 * Where the answer grammar cannot find a statement, told without running it: a cheap necessary
 * condition for the grammar's `McLine` / `NumLine` / `FinalLine` (answer-grammar.ohm.ts) on a piece
 * of a line. Speed only: `false` only where the grammar's match fails, so skipping the match there
 * changes no reading (issue 33: the grammar tried on every piece cost 74% of `telebench score`;
 * docs/results/resilience-scoring.md has the measurement and the check that all readings stay
 * the same).
 *
 * Why each test is necessary (the grammar's rules, in answer-grammar.ohm.ts):
 * - every claim names a value, and every value holds an ASCII digit: an option (`label`, `num`,
 *   `marker` all hold `digit+`) or a number (`math` bottoms out in `mnumber`, a `digit` of `marg`,
 *   or the constant `\pi` / `π`);
 * - a claim starts with a lead and the value follows it: `answer`/`option`/`choice` then a copula
 *   (`:`, `is`, `would be`, ...: `finalLead`, `phraseLead_noun`, `phraseLead_my`), a pick verb
 *   (`phraseLead_pick`), `\boxed{`, `either`/`between` then a reference (`Indecision`), `=`/`≈`/
 *   `\approx` (`concluded`, numbers only), or the piece is a bare option line (`bareLine`);
 * - the patterns below accept more than the rules they stand for (a regular expression may
 *   backtrack where the PEG does not; `[^]*` stands for anything the rules allow in between).
 * Keywords match as Ohm's `caseInsensitive` does: one UTF-16 unit at a time, by
 * `toUpperCase()` ({@link foldCase}), so `ı` is an `I` and `ſ` an `S`, and the patterns are
 * written in upper case (`\BOXED` for `\boxed`, `Π` for `π`).
 */

/** The grammar's `gap` (blanks and markdown/LaTeX decoration), folded. */
const G = String.raw`(?:[ \t\u00a0]|\*|__|\x60|\$|\\[()[\]]|\}|#|>|"|“|”|\\(?:TEXTBF|TEXT|MATHBF|MATHRM)\{)*`;
const OPT = String.raw`(?:OPTION|CHOICE)S?`;
/** A reference to an option (`ref`): label (`A3`), `(3)`, `option 3`, a marker, `... (option 3)`. */
const REF = String.raw`(?:\p{L}[0-9]+(?![A-Z0-9])|(?:${OPT}${G})?(?:\(|[0-9]+(?![A-Z0-9]|\.[0-9])|⟦)|THE${G}⟦|[^]*\(${G}(?:⟦|${OPT}${G}[0-9]))`;
/** `Choice`: an optional `either` or hedge word, then a reference. */
const CHOICE = String.raw`(?:(?:EITHER|BETWEEN|MAYBE|POSSIBLY|PERHAPS|PROBABLY|LIKELY)${G})?${REF}`;
/** The end of every `Lead` (`finalLead`, the copula of `phraseLead`, a pick verb) and `\boxed{`. */
const LEAD_END = String.raw`(?:ANSWER|OPTION|CHOICE)${G}(?::|：|IS:?|(?:WOULD|SHOULD|WILL|MUST)${G}BE)|PICK|CHOOSE|SELECT|GO${G}WITH|OPT${G}FOR|\\BOXED${G}\{`;
const BARE = String.raw`^${G}(?:-|•|\+|[0-9]+[.)])?${G}${OPT}${G}\(?${G}[0-9]+${G}\)?${G}[.:]?${G}$`;

const MC = new RegExp(
  String.raw`(?:${LEAD_END})${G}${CHOICE}|(?:EITHER|BETWEEN)${G}${REF}|${BARE}`,
  'u',
);
const NUM = new RegExp(String.raw`(?:${LEAD_END}|=|≈|\\APPROX)[^]*(?:[0-9Π]|\\PI)`, 'u');
const FINAL = new RegExp(String.raw`FINAL${G}ANSWER${G}(?::|：|IS)`, 'u');

/**
 * `s` with each UTF-16 unit upper-cased on its own (a unit whose upper case is longer, such as
 * `ß`, kept), as Ohm's `caseInsensitive` compares; same length and positions as `s`.
 */
export function foldCase(s: string): string {
  const up = s.toUpperCase();
  // no surrogates and no unit grown: every unit was mapped alone (upper-casing has no context)
  if (up.length === s.length && !/[\uD800-\uDFFF]/.test(s)) return up;
  let out = '';
  for (let k = 0; k < s.length; k++) {
    const u = s[k]!.toUpperCase();
    out += u.length === 1 ? u : s[k]!;
  }
  return out;
}

/**
 * False when `McLine` (kind `mc`) or `NumLine` (kind `numeric`) cannot match `"\n" + piece`;
 * true when it may. Pure.
 * @param piece part of one line (a piece holding a line break is always tried: true)
 */
export function mayHoldStatement(piece: string, kind: 'mc' | 'numeric'): boolean {
  if (/[\r\n]/.test(piece)) return true;
  return (kind === 'mc' ? MC : NUM).test(foldCase(piece));
}

/** False when `FinalLine` cannot match `line` (no `Final Answer:` lead in it); true when it may. Pure. */
export function mayHoldFinalLead(line: string): boolean {
  return FINAL.test(foldCase(line));
}
