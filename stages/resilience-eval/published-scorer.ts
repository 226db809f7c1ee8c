/**
 * The TeleResilienceBench authors' scorer, behaviour for behaviour: `src/parsing.py` of
 * github.com/prnshv/TeleResilienceBench (functions `last_final_answer_payload`,
 * `_choice_index_from_segment`, `extract_choice_index`, `_label_choice_index`, `parse_mc_output`,
 * `extract_float_answer`, `model_text_for_parsing`), as their `scripts/02_eval_continuation.py`
 * calls it: `parse_mc_output(raw, choices)` for discrete items, `extract_float_answer(raw)` for
 * TeleMath, `raw` = thinking and reply, each stripped, joined by a blank line.
 *
 * Written here from reading their code (never copied). Python's regular-expression semantics are
 * reproduced where JavaScript's differ: `\s` is Python's whitespace set, `\d` any Unicode decimal
 * digit, `\b` a Unicode word boundary, `$` also before a final newline, `str.strip`,
 * `str.splitlines` and slicing count code points, `float()` accepts `1_000`, `inf`, `nan` and
 * Unicode digits. Every answer names the branch that read it (`rule`), e.g.
 * `published:payload:keyword` = the `answer|option|choice N` pattern on the last `Final Answer:`
 * payload. Checked row by row against their Python code on the published experiment files
 * (`scripts/published-scorer.py`, docs/resilience-scoring.md).
 */

/** Python's `str.isspace` / regex `\s` set (Unicode whitespace), as a character-class body. */
const WS = String.raw`\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000`;
const S = `[${WS}]`;
/** Python's `\w` for str patterns (alphanumerics and `_`). */
const W = String.raw`[\p{L}\p{N}_]`;
/** Python's `\b`. */
const B = `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`;
/** Python's `$` without MULTILINE: the end, or just before a final newline. */
const END = String.raw`(?=\n?$)`;
/** Python's `\d` for str patterns. */
const D = String.raw`\p{Nd}`;

const WS_SET = new Set(
  [9, 10, 11, 12, 13, 0x1c, 0x1d, 0x1e, 0x1f, 32, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f]
    .concat([0x205f, 0x3000])
    .concat(Array.from({ length: 11 }, (_, i) => 0x2000 + i)),
);

/** Python's `str.strip()` (no argument). Pure. */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && WS_SET.has(s.charCodeAt(a))) a++;
  while (b > a && WS_SET.has(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

const LINE_BREAK = new RegExp(String.raw`\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]`);

/** Python's `str.splitlines()`: no empty last element for a final line break. Pure. */
export function pySplitlines(s: string): string[] {
  if (s === '') return [];
  const parts = s.split(LINE_BREAK);
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Python's `s[-n:]` (code points). Pure. */
function pyTail(s: string, n: number): string {
  if (!SURROGATE.test(s)) return s.length > n ? s.slice(-n) : s;
  const cps = Array.from(s);
  return cps.length > n ? cps.slice(-n).join('') : s;
}

/** Code-point length (Python's `len`). */
const pyLen = (s: string): number => (SURROGATE.test(s) ? Array.from(s).length : s.length);

const ND = /\p{Nd}/u;
const ND_ALL = /\p{Nd}/gu;

/** Non-ASCII decimal digits to ASCII, as Python's `float()`/`int()` read them. */
function asciiDigits(s: string): string {
  return s.replace(ND_ALL, (c) => {
    const cp = c.codePointAt(0)!;
    if (cp < 128) return c;
    let zero = cp;
    while (ND.test(String.fromCodePoint(zero - 1))) zero--;
    return String((cp - zero) % 10);
  });
}

const DIGITS_U = String.raw`[0-9](?:_?[0-9])*`;
const PY_FLOAT_TEXT = new RegExp(
  String.raw`^[+-]?(?:(?:${DIGITS_U}(?:\.(?:${DIGITS_U})?)?|\.${DIGITS_U})(?:[eE][+-]?${DIGITS_U})?|inf(?:inity)?|nan)$`,
  'i',
);

/**
 * Python's `float(s)` for a str: null where Python raises `ValueError`. Overflow gives an
 * infinity, `nan` NaN, as in Python. Pure.
 */
export function pyFloat(s: string): number | null {
  const t = asciiDigits(pyStrip(s));
  if (!PY_FLOAT_TEXT.test(t)) return null;
  const u = t.replace(/_/g, '').toLowerCase();
  const sign = u.startsWith('-') ? -1 : 1;
  const body = u.replace(/^[+-]/, '');
  if (body.startsWith('inf')) return sign * Infinity;
  if (body === 'nan') return NaN;
  return Number(u);
}

/** Python's `math.isclose(a, b, rel_tol=rel, abs_tol=abs)`. Pure. */
export function pyIsClose(a: number, b: number, rel = 1e-3, abs = 1e-5): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const diff = Math.abs(b - a);
  return diff <= Math.abs(rel * b) || diff <= Math.abs(rel * a) || diff <= abs;
}

/** What the authors' scorer read, and the branch that read it. */
export interface PublishedRead {
  /** 0-based option (mc) or the number (numeric); null: their scorer returns None. */
  index: number | null;
  value: number | null;
  /** Branch (`published:<segment>:<pattern>`), null when nothing was read. */
  rule: string | null;
  /** The text the branch matched. */
  matched: string | null;
}

/**
 * `model_text_for_parsing(thinking, response)`: each part stripped, the non-empty ones joined by a
 * blank line. Pure.
 */
export function modelTextForParsing(thinking: string, response: string): string {
  return [pyStrip(thinking), pyStrip(response)].filter((p) => p !== '').join('\n\n');
}

const FA_LINE = new RegExp(`^${S}*final${S}*answer${S}*:${S}*([^\\n]+?)${S}*${END}`, 'iu');

/**
 * `last_final_answer_payload(text)`: the payload of the last line that starts (after spaces)
 * with `final answer:` (any case, spaces allowed inside), stripped. A payload of spaces gives ''
 * (falsy: no payload, and earlier lines are not searched). Null when no line matches. Pure.
 */
export function lastFinalAnswerPayload(text: string): string | null {
  if (pyStrip(text) === '') return null;
  const lines = pySplitlines(text);
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = FA_LINE.exec(lines[i]!);
    if (m) return pyStrip(m[1]!);
  }
  return null;
}

interface Hit {
  index: number;
  pattern: string;
  matched: string;
}

/** `\\b<digit>` and `<digit>\\b`: a digit is a word character, so only the other side is tested. */
const wordStart = (dc: string): string => `(${dc})(?<!${W}${dc})`;
const NOT_WORD_NEXT = `(?!${W})`;

const segmentPatterns = (dc: string): [string, RegExp][] => [
  ['keyword', new RegExp(`(?:answer|option|choice)${S}*[:${WS}]+(${dc})${NOT_WORD_NEXT}`, 'iu')],
  ['trailing-digit', new RegExp(`${wordStart(dc)}\\.?${S}*${END}`, 'iu')],
  ['is-digit', new RegExp(`(?:is|:)${S}*(${dc})${S}*\\.?${S}*${END}`, 'iu')],
  ['end-digit', new RegExp(`${wordStart(dc)}${S}*${END}`, 'iu')],
];
const patternCache = new Map<number, { pats: [string, RegExp][]; any: RegExp }>();
function patternsFor(maxDigit: number): { pats: [string, RegExp][]; any: RegExp } {
  let p = patternCache.get(maxDigit);
  if (!p) {
    const dc = `[1-${maxDigit}]`;
    p = { pats: segmentPatterns(dc), any: new RegExp(`${wordStart(dc)}${NOT_WORD_NEXT}`, 'gu') };
    patternCache.set(maxDigit, p);
  }
  return p;
}

/** `_choice_index_from_segment(text, n)`: the four tail patterns, then the last digit. */
function choiceFromSegment(segment: string, n: number): Hit | null {
  const text = pyStrip(segment);
  if (text === '' || n < 1) return null;
  const { pats, any } = patternsFor(Math.min(9, n));
  const tail = pyTail(text, 120);
  for (const [name, re] of pats) {
    const m = re.exec(tail);
    if (m) {
      const idx = Number(m[1]) - 1;
      if (idx >= 0 && idx < n) return { index: idx, pattern: name, matched: m[0] };
    }
  }
  for (const [name, content] of [
    ['last-digit-tail', tail],
    ['last-digit', text],
  ] as const) {
    const last = [...content.matchAll(any)].at(-1);
    if (last) {
      const idx = Number(last[1]) - 1;
      if (idx >= 0 && idx < n) return { index: idx, pattern: name, matched: last[0] };
    }
  }
  return null;
}

/** `extract_choice_index(text, n)`: the segment's own payload first, then the segment. */
function extractChoiceIndex(answerText: string, n: number): (Hit & { inner: string }) | null {
  const text = pyStrip(answerText);
  if (text === '' || n < 1) return null;
  const payload = lastFinalAnswerPayload(text);
  const segments: [string, string][] = payload ? [['payload', payload]] : [];
  segments.push(['text', text]);
  for (const [inner, seg] of segments) {
    if (!seg) continue;
    const hit = choiceFromSegment(seg, n);
    if (hit) return { ...hit, inner };
  }
  return null;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const labelCache = new Map<string, RegExp>();

/**
 * `_label_choice_index(text, choices)`: options by text length (longest first, ties in option
 * order); the first whose stripped text occurs as a whole word (any case) wins.
 */
function labelChoice(text: string, choices: readonly string[]): Hit | null {
  const ranked = choices
    .map((c, i) => ({ c, i }))
    .sort((a, b) => pyLen(b.c) - pyLen(a.c) || a.i - b.i);
  for (const { c, i } of ranked) {
    const label = pyStrip(c);
    if (label === '') continue;
    let re = labelCache.get(label);
    if (!re) labelCache.set(label, (re = new RegExp(`${B}${escapeRe(label)}${B}`, 'iu')));
    const m = re.exec(text);
    if (m) return { index: i, pattern: 'option-text', matched: m[0] };
  }
  return null;
}

const NONE: PublishedRead = { index: null, value: null, rule: null, matched: null };

/**
 * `parse_mc_output(raw, choices)`: for the last `Final Answer:` payload, then the whole text, the
 * digit rules ({@link extractChoiceIndex}) and then the option-text rule. `choices` may hold empty
 * strings when only the option count is known (the option-text rule then never fires, as in
 * Python). Returns the 0-based option or nothing. Pure.
 */
export function publishedMcOutput(raw: string, choices: readonly string[]): PublishedRead {
  const n = choices.length;
  if (n < 1) return NONE;
  const text = pyStrip(raw);
  const payload = lastFinalAnswerPayload(text);
  const segments: [string, string][] = payload ? [['payload', payload]] : [];
  segments.push(['text', text]);
  for (const [outer, seg] of segments) {
    if (!seg) continue;
    const d = extractChoiceIndex(seg, n);
    if (d) {
      const where = outer === 'payload' && d.inner === 'payload' ? 'payload-of-payload' : outer;
      return {
        index: d.index,
        value: null,
        rule: `published:${where}:${d.pattern}`,
        matched: d.matched,
      };
    }
    const l = labelChoice(seg, choices);
    if (l)
      return {
        index: l.index,
        value: null,
        rule: `published:${outer}:option-text`,
        matched: l.matched,
      };
  }
  return NONE;
}

const FLOAT = String.raw`[-+]?(?:${D}+\.?${D}*|\.${D}+)(?:[eE][-+]?${D}+)?`;
const F_WHOLE = new RegExp(`^(${FLOAT})${S}*${END}`, 'iu');
const F_ANY = new RegExp(FLOAT, 'u');
const F_ALL = new RegExp(FLOAT, 'gu');
const BOXED = new RegExp(String.raw`\\boxed\{${S}*([^}]*?)${S}*\}`, 'u');
const F_TAIL: [string, RegExp][] = [
  [
    'answer-number',
    new RegExp(`(?:answer|final)${S}*[:${WS}]+(${FLOAT})${S}*\\.?${S}*${END}`, 'iu'),
  ],
  ['equals-number', new RegExp(`(?:=${S}*)(${FLOAT})${S}*\\.?${S}*${END}`, 'iu')],
  ['end-number', new RegExp(`${B}(${FLOAT})${S}*\\.?${S}*${END}`, 'iu')],
];

const num = (rule: string, value: number | null, matched: string): PublishedRead | null =>
  value === null ? null : { index: null, value, rule: `published:${rule}`, matched };

/**
 * `extract_float_answer(raw)`: the `Final Answer:` payload (a whole number, else its first
 * number), then the first `\boxed{...}` when Python's `float()` reads it, then three patterns at
 * the end of the last 800 characters, then the last number there. Pure.
 */
export function publishedFloatAnswer(raw: string): PublishedRead {
  const s = pyStrip(raw);
  if (s === '') return NONE;
  const payload = lastFinalAnswerPayload(s);
  if (payload) {
    const p = pyStrip(payload);
    const whole = F_WHOLE.exec(p);
    if (whole) return num('payload:whole-number', pyFloat(whole[1]!), whole[0])!;
    const first = F_ANY.exec(payload);
    if (first) return num('payload:first-number', pyFloat(first[0]), first[0])!;
  }
  const box = BOXED.exec(s);
  if (box) {
    const inner = pyStrip(box[1]!).replace(/^[{}]+|[{}]+$/g, '');
    const r = num('text:boxed', pyFloat(inner), box[0]);
    if (r) return r;
  }
  const tail = pyTail(s, 800);
  for (const [name, re] of F_TAIL) {
    const m = re.exec(tail);
    if (m) {
      const r = num(`tail:${name}`, pyFloat(m[1]!), m[0]);
      if (r) return r;
    }
  }
  const last = [...tail.matchAll(F_ALL)].at(-1);
  if (last) return num('tail:last-number', pyFloat(last[0]), last[0]) ?? NONE;
  return NONE;
}
