/**
 * HalfTrace (paper section III, equation 1): the first half of a flawed reasoning trace, cut at a
 * sentence end.
 *
 * `reference` boundary: the published construction (the authors' `collect_base.py` with
 * `half_by=token`, `boundary=sentence`, and the helpers it calls), step by step:
 * 1. The reasoning is the thinking text stripped (Python `str.strip`), split into lines at every
 *    Python line boundary (`\n`, `\r\n`, `\r`, `\v`, `\f`, `\x1c`-`\x1e`, `\x85`, U+2028, U+2029),
 *    trailing lines matching `^\s*final\s*answer\s*:` (case-insensitive) dropped, the rest joined
 *    with `\n` and right-stripped. So every line ending becomes `\n`, and a list item such as
 *    `*   Final Answer: 2` is NOT dropped (it does not match), exactly as published.
 * 2. Encode it with `cl100k_base` (n tokens); the cut is the length of the decoded first
 *    max(1, floor(n/2)) tokens (all of it when n = 1). A token split inside a multi-byte character
 *    decodes to one U+FFFD, so the cut then includes that whole character.
 * 3. Snap back to the end of the last `.`, `!` or `?` in the text before the cut that is followed,
 *    inside that prefix, by whitespace (Python's `\s`) or by the prefix's end. So "3." of "3.5" counts
 *    when the cut falls right after it, and a list marker "1. " counts.
 * 4. Right-strip (Python whitespace). With no sentence end, the `no_sentence_end` policy decides:
 *    keep the raw token cut (`token-cut`, as published) or give no half (`skip`).
 *
 * `intl` boundary (our own rule, issue 6): the reasoning is the thinking without trailing
 * `Final Answer:` lines, list-item and Markdown forms included (`*   **Final Answer:** 2`), trimmed,
 * line endings kept; the cut leaves out a character the token midpoint splits; snap back to the
 * last sentence boundary of `Intl.Segmenter` (granularity `sentence`, locale `en`) at or before it.
 *
 * Remaining deviations of `reference` from the published construction, each checked against the
 * published code in a differential run (docs/teleresiliencebench.md, HalfTrace):
 * 1. Text that spells a special token (`<|endoftext|>`): the published code raises (tiktoken's
 *    default `disallowed_special`); here it is encoded as ordinary text.
 * 2. A reasoning that strips to nothing or is one token long, or a half that strips to nothing:
 *    published stores an empty half (or, for one token, the whole reasoning); here `cut` is `none`
 *    (the truncate stage skips the item, `no_reasoning` / `no_sentence_end`).
 * 3. Case-insensitive matching of `final answer` follows JavaScript's Unicode simple case folding;
 *    Python's `re.IGNORECASE` also folds U+0130 and U+0131 (dotted capital and dotless i) to `i`, so
 *    `FİNAL ANSWER:` lines are dropped there and kept here.
 * 4. The tokenizer is js-tiktoken's `cl100k_base` with tiktoken's whitespace (see cl100k.ts): its
 *    letter and digit classes come from Node's Unicode tables, tiktoken's from Rust's; they differ
 *    for characters assigned in the newest Unicode versions (U+16ED1 was one), which can move the
 *    midpoint by a token.
 * Everything else agreed in a differential run against the published rule under Python tiktoken
 * 0.14: four runs of 3,462 traces (3,000 generated from every Python line break and whitespace,
 * Final Answer variants, emoji, decimals and random code points, plus the 77 published halves in 6
 * variants each); the one difference was deviation 4.
 *
 * Speed: the trace is encoded once. The midpoint is found from the tokens' byte lengths (no
 * decode), and the half's token count re-encodes only the half's last word or line: cl100k splits
 * text into pieces before merging, and a piece boundary after a letter (or after a line break) that
 * is followed by a non-letter (or non-space) is one whatever comes later, so the tokens before it
 * are those of the full trace.
 */
import { cl100kTokenByteLengths, encodeCl100k } from '../../pipeline/providers/tokenizer/cl100k.js';

export type Boundary = 'reference' | 'intl';
export type NoSentenceEndPolicy = 'token-cut' | 'skip';

export interface HalfTraceOptions {
  boundary?: Boundary;
  noSentenceEnd?: NoSentenceEndPolicy;
}

export interface HalfTraceResult {
  /**
   * The reasoning that was halved: `reference`: the published `reasoning_full` (step 1, `\n` line
   * endings); `intl`: the thinking without trailing Final Answer lines, trimmed. `half` is a prefix.
   */
  reasoning: string;
  /** The half trace ('' when none could be made). */
  half: string;
  /** cl100k tokens of `reasoning`. */
  fullTokens: number;
  /** floor(fullTokens / 2): the token midpoint. */
  midpointTokens: number;
  /** cl100k tokens of `half` (as if re-encoded). */
  halfTokens: number;
  /**
   * UTF-16 offset of the token midpoint in `reasoning`: `reference` includes a character the
   * midpoint splits (as published), `intl` leaves it out.
   */
  midpointChars: number;
  /** How the end of `half` was chosen. */
  cut: 'sentence' | 'token-cut' | 'none';
}

// Python's whitespace (str.isspace, the `\s` of its `re` on str patterns).
const PY_SPACE =
  '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_SPACE_CHAR = new RegExp(`^[${PY_SPACE}]$`);
const PY_LEADING = new RegExp(`^[${PY_SPACE}]+`);
const PY_TRAILING = new RegExp(`[${PY_SPACE}]+$`);
// Python's str.splitlines boundaries.
// eslint-disable-next-line no-control-regex -- Python's splitlines breaks lines at \x1c-\x1e too
const PY_LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
const PUBLISHED_FINAL_ANSWER = new RegExp(
  `^[${PY_SPACE}]*final[${PY_SPACE}]*answer[${PY_SPACE}]*:`,
  'iu',
);
const FINAL_ANSWER_LINE = /^[\s*#>_`]*final\s*answer\b[\s*_`]*:/i;

const isPySpace = (c: string | undefined): boolean => c !== undefined && PY_SPACE_CHAR.test(c);

/** Python `str.rstrip()` (no argument). */
function pyRstrip(s: string): string {
  const last = s.charCodeAt(s.length - 1);
  // fast path: ends in a character that is not whitespace in any sense
  if (last > 0x20 && last !== 0x85 && last !== 0xa0 && last < 0x1680) return s;
  return s.replace(PY_TRAILING, '');
}

/**
 * Step 1 of the published construction (see the module comment): strip, drop trailing
 * `Final Answer:` lines as the published regular expression sees them, join lines with `\n`,
 * right-strip.
 * @param text thinking text
 */
export function publishedReasoning(text: string): string {
  const stripped = pyRstrip(text.replace(PY_LEADING, ''));
  const lines = stripped.split(PY_LINE_BREAK);
  while (lines.length > 0 && PUBLISHED_FINAL_ANSWER.test(lines[lines.length - 1]!)) lines.pop();
  return pyRstrip(lines.join('\n'));
}

/**
 * Our rule (the `intl` boundary): removes trailing `Final Answer: ...` lines, Markdown and
 * list-item forms included, and blank lines around them, and trims. Line endings are kept.
 * @param text thinking text
 */
export function stripTrailingFinalAnswer(text: string): string {
  let t = text.trim();
  for (;;) {
    const start = t.lastIndexOf('\n') + 1;
    const line = t.slice(start);
    if (!FINAL_ANSWER_LINE.test(line)) break;
    t = t.slice(0, start).trimEnd();
  }
  return t;
}

/**
 * End (exclusive) of the last sentence by the published rule inside `text.slice(0, cut)`, or -1:
 * a `.`, `!` or `?` followed, inside that prefix, by Python whitespace or by the prefix's end.
 */
export function lastReferenceSentenceEnd(text: string, cut: number): number {
  const end = Math.min(cut, text.length);
  for (let i = end - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 0x2e || c === 0x21 || c === 0x3f) {
      if (i + 1 === end || isPySpace(text[i + 1])) return i + 1;
    }
  }
  return -1;
}

let segmenter: Intl.Segmenter | undefined;

/** End (exclusive) of the last `Intl.Segmenter` sentence at or before `cut`, or -1. */
export function lastIntlSentenceEnd(text: string, cut: number): number {
  segmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' });
  let best = -1;
  for (const seg of segmenter.segment(text)) {
    const end = seg.index + seg.segment.length;
    if (end > cut) break;
    if (seg.segment.trim() !== '') best = end;
  }
  return best;
}

/** UTF-8 length of the UTF-16 unit at `i` (a surrogate pair counts 4 on its first unit, 0 after). */
function utf8Units(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = s.charCodeAt(i + 1);
    return d >= 0xdc00 && d <= 0xdfff ? 4 : 3;
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const b = s.charCodeAt(i - 1);
    return b >= 0xd800 && b <= 0xdbff ? 0 : 3; // second half of a pair, or a lone surrogate (U+FFFD)
  }
  return 3;
}

/**
 * UTF-16 offset where the first `bytes` UTF-8 bytes of `s` end.
 * @returns `at`: the offset of the last whole character inside them; `over`: the offset after a
 *   character the byte count splits (equal to `at` when none is split)
 */
function offsetOfBytes(s: string, bytes: number): { at: number; over: number } {
  let b = 0;
  let i = 0;
  while (i < s.length && b < bytes) {
    const n = utf8Units(s, i);
    const width = n === 4 ? 2 : 1;
    if (b + n > bytes) return { at: i, over: i + width };
    b += n;
    i += width;
  }
  return { at: i, over: i };
}

/** UTF-8 byte length of `s.slice(0, end)`. */
function utf8Length(s: string, end: number): number {
  let b = 0;
  for (let i = 0; i < end; i++) b += utf8Units(s, i);
  return b;
}

const LETTER = /^\p{L}$/u;
// the tokenizer's whitespace (Unicode White_Space, see cl100k.ts)
const TOKENIZER_SPACE = /^[\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;
/** How far back from the end of the half a piece boundary is looked for before re-encoding it all. */
const BOUNDARY_SCAN = 4096;

/**
 * cl100k tokens of `half` (a prefix of `full`, whose tokens are `ids`), re-encoding only what
 * follows the last safe piece boundary (see the module comment), else all of `half`.
 */
function prefixTokenCount(full: string, ids: readonly number[], half: string): number {
  const stop = Math.max(1, half.length - BOUNDARY_SCAN);
  let boundary = -1;
  for (let b = half.length - 1; b >= stop; b--) {
    const before = half[b - 1]!;
    const at = half[b]!;
    if (isSurrogate(before) || isSurrogate(at)) continue;
    if (
      (LETTER.test(before) && !LETTER.test(at)) ||
      ((before === '\n' || before === '\r') && !TOKENIZER_SPACE.test(at))
    ) {
      boundary = b;
      break;
    }
  }
  if (boundary < 0) return encodeCl100k(half).length;
  const bytes = utf8Length(full, boundary);
  const lengths = cl100kTokenByteLengths();
  let sum = 0;
  let k = 0;
  while (k < ids.length && sum < bytes) sum += lengths[ids[k++]!]!;
  // Not a token boundary of the full encoding: the assumption failed, count the plain way.
  if (sum !== bytes) return encodeCl100k(half).length;
  return k + encodeCl100k(half.slice(boundary)).length;
}

function isSurrogate(c: string): boolean {
  const x = c.charCodeAt(0);
  return x >= 0xd800 && x <= 0xdfff;
}

/**
 * Makes the half trace of a thinking text.
 * @param thinking the generator's thinking text (may end with `Final Answer:` lines)
 * @param options boundary rule (default `reference`: the published construction) and
 *   no-sentence-end policy (default `token-cut`)
 * @returns the half and its token counts; `half` is '' and `cut` is 'none' when the reasoning is
 *   empty, shorter than two tokens, or has no sentence end under the `skip` policy
 */
export function halfTrace(thinking: string, options: HalfTraceOptions = {}): HalfTraceResult {
  const boundary = options.boundary ?? 'reference';
  const policy = options.noSentenceEnd ?? 'token-cut';
  const reference = boundary === 'reference';
  const reasoning = reference ? publishedReasoning(thinking) : stripTrailingFinalAnswer(thinking);
  const ids = encodeCl100k(reasoning);
  const fullTokens = ids.length;
  const midpointTokens = Math.floor(fullTokens / 2);
  const none = (midpointChars: number): HalfTraceResult => ({
    reasoning,
    half: '',
    fullTokens,
    midpointTokens,
    halfTokens: 0,
    midpointChars,
    cut: 'none',
  });
  if (midpointTokens === 0) return none(0);
  const lengths = cl100kTokenByteLengths();
  let bytes = 0;
  for (let k = 0; k < midpointTokens; k++) bytes += lengths[ids[k]!]!;
  const where = offsetOfBytes(reasoning, bytes);
  const midpointChars = reference ? where.over : where.at;
  const end = reference
    ? lastReferenceSentenceEnd(reasoning, midpointChars)
    : lastIntlSentenceEnd(reasoning, midpointChars);
  const trimEnd = reference ? pyRstrip : (s: string) => s.trimEnd();
  let half: string;
  let cut: HalfTraceResult['cut'];
  if (end > 0) {
    half = trimEnd(reasoning.slice(0, end));
    cut = 'sentence';
  } else if (policy === 'token-cut') {
    half = trimEnd(reasoning.slice(0, midpointChars));
    cut = 'token-cut';
  } else {
    return none(midpointChars);
  }
  if (half === '') return none(midpointChars);
  return {
    reasoning,
    half,
    fullTokens,
    midpointTokens,
    halfTokens: prefixTokenCount(reasoning, ids, half),
    midpointChars,
    cut,
  };
}
