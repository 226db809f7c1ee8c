/**
 * The leak check of a model-written problem statement (issue 31): a statement must describe the
 * bug, never quote the fix. It refuses a statement that quotes the gold patch's added lines.
 *
 * "Quotes", after whitespace is normalised (runs of blanks -> one space, case kept):
 * - **a line**: an added non-trivial line (at least {@link MIN_LINE_TOKENS} tokens and
 *   {@link MIN_LINE_CHARS} characters: `}` or `return nil` are trivial) appears in the statement;
 * - **an n-gram**: a run of `ngram` consecutive tokens of an added line (tokens: identifiers,
 *   numbers, operators such as `!=` or `&&`; {@link tokens}) appears in the statement's tokens.
 * What the buggy code (the code the writer was shown) already holds is not a leak: an n-gram or
 * line also found in the removed lines or in the buggy functions is dropped first, so quoting the
 * buggy line `return req.GlobalRANNodeID.GNbId.Value, nil` is allowed when the fix keeps it.
 */
/** Tokens of an added line worth a line match. */
export const MIN_LINE_TOKENS = 4;
/** Characters (normalised) of an added line worth a line match. */
export const MIN_LINE_CHARS = 16;
/** Default n-gram length in tokens. */
export const DEFAULT_NGRAM = 8;

/** Whitespace runs to one space, trimmed. */
export const normalise = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Code tokens: identifiers, numbers, string-literal words, and runs of operator characters. */
export function tokens(s: string): string[] {
  return s.match(/[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|[!<>=&|+\-*/%^~]+|[^\sA-Za-z0-9_]/g) ?? [];
}

/** The n-grams of `t` as space-joined strings. */
function ngrams(t: readonly string[], n: number): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + n <= t.length; i++) out.add(t.slice(i, i + n).join(' '));
  return out;
}

/**
 * The added and removed lines of a unified diff, without their `+` / `-` (file headers `+++ b/x`,
 * `--- a/x` are not lines of code).
 */
export function changedLines(patch: string): { added: string[]; removed: string[] } {
  const added: string[] = [];
  const removed: string[] = [];
  for (const l of patch.split('\n')) {
    if (/^(\+\+\+|---) (?:[ab]\/|\/dev\/null)/.test(l)) continue;
    if (l.startsWith('+')) added.push(l.slice(1));
    else if (l.startsWith('-')) removed.push(l.slice(1));
  }
  return { added, removed };
}

/** The verdict: accepted, or refused with the reason naming what was quoted. */
export type LeakVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Checks `statement` against the added lines of `patch` (the gold patch, a unified diff).
 * @param buggyCode the code the writer was shown (the buggy functions at base_commit): what it
 *   holds is not a leak
 * @param ngram n-gram length in tokens (>= 3)
 * @returns `{ok: true}`, or `{ok: false, reason}` naming the first quoted line or n-gram
 * @throws Error when `ngram` < 3 (every statement would match something)
 */
export function leakCheck(
  statement: string,
  patch: string,
  buggyCode: string,
  ngram = DEFAULT_NGRAM,
): LeakVerdict {
  if (ngram < 3) throw new Error(`leak check: ngram ${ngram} is below 3`);
  const { added, removed } = changedLines(patch);
  const known = normalise([buggyCode, ...removed].join('\n'));
  const knownGrams = ngrams(tokens([buggyCode, ...removed].join('\n')), ngram);
  const text = normalise(statement);
  for (const line of added) {
    const l = normalise(line);
    if (tokens(l).length < MIN_LINE_TOKENS || l.length < MIN_LINE_CHARS) continue;
    if (known.includes(l)) continue;
    if (text.includes(l)) return { ok: false, reason: `quotes the added line "${l}"` };
  }
  const said = ngrams(tokens(statement), ngram);
  for (const line of added) {
    for (const g of ngrams(tokens(line), ngram)) {
      if (knownGrams.has(g)) continue;
      if (said.has(g))
        return { ok: false, reason: `quotes ${ngram} tokens of an added line: "${g}"` };
    }
  }
  return { ok: true };
}
