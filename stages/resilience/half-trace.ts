/**
 * HalfTrace (paper section III, equation 1): the first half of a flawed reasoning trace, cut at a
 * sentence end.
 *
 * Rule (issue 6, after the authors' `compute_reasoning_half` with `half_by=token`,
 * `boundary=sentence`):
 * 1. The reasoning is the thinking text without its trailing `Final Answer:` lines, trimmed.
 * 2. Encode it with `cl100k_base` (n tokens) and decode the first floor(n/2) tokens; the cut is the
 *    length of the decoded prefix that agrees with the text (a token split inside a multi-byte
 *    character decodes to U+FFFD: that partial character is left out).
 * 3. `reference` boundary: snap back to just after the last `.`, `!` or `?` inside the prefix that is
 *    followed, in the full reasoning, by whitespace or the end of the text. A list marker such as
 *    "1. " therefore counts (as in the reference code); a decimal such as "3.5" does not. (The
 *    reference tests the character after the punctuation inside the decoded half only, so a half
 *    that ends at "3." of "3.5" counts there; here it does not.)
 *    `intl` boundary: snap back to the last sentence boundary of `Intl.Segmenter` (granularity
 *    `sentence`, locale `en`) at or before the cut.
 * 4. Right-trim. With no sentence end before the cut, the `no_sentence_end` policy decides: keep the
 *    raw token cut (`token-cut`, the reference behaviour) or give no half (`skip`).
 *
 * Line endings are never rewritten (CRLF stays CRLF), so the half is always a prefix of the
 * reasoning.
 */
import { encodeCl100k, decodeCl100k } from '../../pipeline/providers/tokenizer/cl100k.js';

export type Boundary = 'reference' | 'intl';
export type NoSentenceEndPolicy = 'token-cut' | 'skip';

export interface HalfTraceOptions {
  boundary?: Boundary;
  noSentenceEnd?: NoSentenceEndPolicy;
}

export interface HalfTraceResult {
  /** The reasoning that was halved (thinking without trailing Final Answer lines, trimmed). */
  reasoning: string;
  /** The half trace ('' when none could be made). */
  half: string;
  /** cl100k tokens of `reasoning`. */
  fullTokens: number;
  /** floor(fullTokens / 2): the token midpoint. */
  midpointTokens: number;
  /** cl100k tokens of `half` (re-encoded). */
  halfTokens: number;
  /** Character offset of the token midpoint in `reasoning`. */
  midpointChars: number;
  /** How the end of `half` was chosen. */
  cut: 'sentence' | 'token-cut' | 'none';
}

const FINAL_ANSWER_LINE = /^[\s*#>_`]*final\s*answer\b[\s*_`]*:/i;

/**
 * Removes trailing `Final Answer: ...` lines (and blank lines around them) and trims the text.
 * Other line endings are kept as they are.
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

/** Length of the longest common prefix of `a` and `b` (in UTF-16 code units). */
function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  // never split a surrogate pair
  if (i > 0 && i < b.length) {
    const c = b.charCodeAt(i - 1);
    if (c >= 0xd800 && c <= 0xdbff) i--;
  }
  return i;
}

/**
 * End (exclusive) of the last sentence by the reference rule, at or before `cut`, or -1.
 * A sentence ends at `.`, `!` or `?` followed by whitespace or the end of `text`.
 */
export function lastReferenceSentenceEnd(text: string, cut: number): number {
  for (let i = Math.min(cut, text.length) - 1; i >= 0; i--) {
    const c = text[i];
    if (c === '.' || c === '!' || c === '?') {
      const next = text[i + 1];
      if (next === undefined || /\s/.test(next)) return i + 1;
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

/**
 * Makes the half trace of a thinking text.
 * @param thinking the generator's thinking text (may end with `Final Answer:` lines)
 * @param options boundary rule (default `reference`) and no-sentence-end policy (default `token-cut`)
 * @returns the half and its token counts; `half` is '' and `cut` is 'none' when the reasoning is
 *   empty, shorter than two tokens, or has no sentence end under the `skip` policy
 */
export function halfTrace(thinking: string, options: HalfTraceOptions = {}): HalfTraceResult {
  const boundary = options.boundary ?? 'reference';
  const policy = options.noSentenceEnd ?? 'token-cut';
  const reasoning = stripTrailingFinalAnswer(thinking);
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
  const decoded = decodeCl100k(ids.slice(0, midpointTokens));
  const midpointChars = commonPrefix(decoded, reasoning);
  const end =
    boundary === 'intl'
      ? lastIntlSentenceEnd(reasoning, midpointChars)
      : lastReferenceSentenceEnd(reasoning, midpointChars);
  let half: string;
  let cut: HalfTraceResult['cut'];
  if (end > 0) {
    half = reasoning.slice(0, end).trimEnd();
    cut = 'sentence';
  } else if (policy === 'token-cut') {
    half = reasoning.slice(0, midpointChars).trimEnd();
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
    halfTokens: encodeCl100k(half).length,
    midpointChars,
    cut,
  };
}
