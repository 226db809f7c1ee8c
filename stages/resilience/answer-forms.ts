/**
 * The answer forms both parsers read: the construction's (`parse-answer.ts`, which keeps a trace
 * only when it reads an answer) and the evaluation's `strict` / `lenient` modes
 * (`stages/resilience-eval/parse-modes.ts`). One table of forms and verdicts
 * (docs/resilience-scoring.md; test/stages/resilience/answer-forms.test.ts runs every form through
 * both):
 *
 * | form | verdict |
 * |---|---|
 * | `3`, `**3**`, `Option 3`, `(3)`, `3. text`, `$3$`, `\(3\)`, `\boxed{3}`, `\text{3}` | option 3 |
 * | `3 or 1`, `4 ... or 2`, `1/2`, `1 and 3`, `2 vs 4` | ambiguous (two options named) |
 * | `293`, `$293$`, `\boxed{293}`, `256+37 = 293`, `x \approx 293` | 293 (the value after the last `=`) |
 * | `1.5e-3`, `1.5 \times 10^{-3}`, `1.5 × 10^-3`, `10^{-3}` | 0.0015 / 0.001 (exponent sign kept) |
 * | `−2.5` (Unicode minus), `-2.5 dB`, `1,234.5 m` | -2.5, 1234.5 (units after the number ignored) |
 * | `45%` | 45 (the number as written: TeleMath answers are stated in the question's unit) |
 *
 * All functions are pure.
 */

/** A `Final Answer:` line (markdown emphasis, `>`/`#` prefixes and a full-width colon allowed). */
export const FINAL_ANSWER_LINE =
  /^[\s*#>_`-]*final\s*answer\b[\s*_`]*[:：][\s*_`]*(.*?)[\s*_`.]*$/i;

/** A plain number: sign (also U+2212), thousands commas, decimals, `e` exponent. */
export const NUMBER = String.raw`[-+−]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+−]?\d+)?`;
const SCI_TIMES = new RegExp(
  String.raw`(${NUMBER})\s*(?:\\times|\\cdot|×|·|\*|x)\s*10\s*\^\s*\{?\s*([-+−]?\d+)\s*\}?`,
);
const POWER_OF_TEN = /(?<![\d.])10\s*\^\s*\{?\s*([-+−]?\d+)\s*\}?/;

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

/**
 * Removes LaTeX and markdown wrappers around a payload: `$2$`, `$$2$$`, `\(2\)`, `\[2\]`,
 * `\boxed{2}`, `\text{2}`, `\mathbf{2}`, `**2**`, backticks.
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

/**
 * The number a numeric payload concludes (table above): after the last `=`, `a × 10^b` and
 * `10^b` read with the exponent's sign; the first number otherwise. Null when none.
 */
export function concludedNumber(payload: string): number | null {
  let p = unwrapPayload(payload);
  const eq = p.lastIndexOf('=');
  if (eq >= 0) p = p.slice(eq + 1);
  p = unwrapPayload(p.replace(/\\approx|≈|~/g, ''));
  const sci = SCI_TIMES.exec(p);
  const pow = POWER_OF_TEN.exec(p);
  const plain = new RegExp(NUMBER).exec(p);
  if (sci && (!plain || sci.index <= plain.index)) {
    const m = toNumber(sci[1]!);
    const e = toNumber(sci[2]!);
    if (m === null || e === null) return null;
    const v = m * 10 ** e;
    return Number.isFinite(v) ? v : null;
  }
  if (pow && plain && pow.index === plain.index) {
    const v = 10 ** toNumber(pow[1]!)!;
    return Number.isFinite(v) ? v : null;
  }
  return plain ? toNumber(plain[0]) : null;
}

const OPTION_REF = String.raw`(?:option|choice|answer)?\s*[([]?\s*(\d+)\s*[)\]]?`;
const ALTERNATIVE = /(?:\bor\b|\band\b|\/|\bvs\.?)\s*(?:option\s*)?(\d+)\b/i;

/**
 * The option a `Final Answer` payload names (table above): the 0-based index, `ambiguous` when
 * it names two different options 1..N, or null.
 * @param n the number of options N
 */
export function optionFromPayload(raw: string, n: number): number | 'ambiguous' | null {
  const payload = unwrapPayload(raw);
  const m = new RegExp(String.raw`^${OPTION_REF}(?=[.:)\s,;/]|$)`, 'i').exec(payload);
  if (!m) return null;
  const k = Number(m[1]);
  if (k < 1 || k > n) return null;
  const alt = ALTERNATIVE.exec(payload.slice(m[0].length));
  if (alt && Number(alt[1]) !== k && Number(alt[1]) >= 1 && Number(alt[1]) <= n) return 'ambiguous';
  return k - 1;
}

const normText = (s: string): string =>
  s
    .toLowerCase()
    .replace(/^[\s"'`*]+|[\s"'`*.]+$/g, '')
    .replace(/\s+/g, ' ');

/** The one option whose text the payload is (case- and punctuation-insensitive), or null. */
export function optionFromText(payload: string, choices: readonly string[]): number | null {
  const p = normText(unwrapPayload(payload));
  if (p === '') return null;
  const hits = choices.flatMap((c, i) => (normText(c) === p ? [i] : []));
  return hits.length === 1 ? hits[0]! : null;
}

/**
 * The last `Final Answer:` line of `text`, its payload, and whether it is the text's last
 * non-empty line (a draft the model then took back is not; issue 14 section 4).
 */
export function lastFinalAnswer(
  text: string,
): { payload: string; line: string; isLast: boolean } | null {
  const ls = nonEmptyLines(text);
  for (let i = ls.length - 1; i >= 0; i--) {
    const m = FINAL_ANSWER_LINE.exec(ls[i]!);
    if (m) return { payload: m[1]!, line: ls[i]!, isLast: i === ls.length - 1 };
  }
  return null;
}
