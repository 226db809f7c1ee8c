/**
 * Re-indentation of REPLACE lines for a window found by the whitespace or fuzzy rule (the SEARCH
 * text matched the file's lines once their indentation is ignored), by relative depth: the REPLACE
 * text's first line goes at the indentation of the file line the SEARCH text's first line matched,
 * and every REPLACE line keeps its offset from it, written in the file's tabs or spaces. (Offsets
 * are taken from the SEARCH text's first line, which is the REPLACE text's first line's depth in
 * the usual answer; when the answer starts REPLACE at another depth, that difference is kept too,
 * so an unwrapped body stays where the answer put it.) A line's
 * depth never comes from another line that happens to have the same text (the fault of the
 * line-equality rule this replaces: a `return None` nested under a new `if sticky:` was written at
 * the level of the SEARCH `return None`, and the Python file no longer parsed).
 *
 * The answer's indentation is mapped to the file's by one of two transforms, and the one chosen
 * must reproduce the indentation of every matched SEARCH line, else the block is refused
 * (`indentation`, with the lines that disagree) instead of written at a guessed depth:
 *  - `shift`: the answer indents with the file's characters and unit (e.g. 4 spaces, only shifted:
 *    a body copied without its enclosing class); offsets are kept character for character, so
 *    alignment spaces survive;
 *  - `units`: otherwise (2-space answer for a tab or 4-space file, or a SEARCH whose first line
 *    was copied from mid-line, NousResearch/hermes-agent#88264); the ratio of answer columns to
 *    file indentation units comes from the SEARCH lines whose depth differs from the first one
 *    (else from the answer's own unit), and a remainder becomes alignment spaces.
 */

/** How REPLACE lines were re-indented. */
export type IndentRule = 'shift' | 'units';

const indentOf = (l: string): string => /^[ \t]*/.exec(l)![0];
const cols = (ws: string): number => [...ws].reduce((n, c) => n + (c === '\t' ? 4 : 1), 0);

/** The most common positive indentation step between consecutive non-blank lines (columns). */
function step(lines: readonly string[]): number | null {
  const ind = lines.filter((l) => l.trim() !== '').map((l) => cols(indentOf(l)));
  const count = new Map<number, number>();
  for (let k = 1; k < ind.length; k++) {
    const d = ind[k]! - ind[k - 1]!;
    if (d > 0) count.set(d, (count.get(d) ?? 0) + 1);
  }
  let best: number | null = null;
  for (const [d, n] of count)
    if (best === null || n > count.get(best)! || (n === count.get(best)! && d < best)) best = d;
  return best;
}

/**
 * A file's indentation unit: `\t` when most indented lines start with a tab, else the most common
 * indentation step in spaces (4 when the file has none).
 * @param lines the file's lines
 */
export function indentUnit(lines: readonly string[]): string {
  let tabs = 0;
  let spaces = 0;
  for (const l of lines) {
    if (l.trim() === '') continue;
    if (l.startsWith('\t')) tabs++;
    else if (l.startsWith(' ')) spaces++;
  }
  if (tabs > spaces) return '\t';
  return ' '.repeat(Math.min(step(lines) ?? 4, 8));
}

/** A file indentation as units of `unit` plus alignment spaces. */
function unitsOf(ws: string, unit: string): { n: number; rem: number } {
  if (unit === '\t') {
    const n = /^\t*/.exec(ws)![0].length;
    return { n, rem: ws.length - n };
  }
  const w = cols(ws);
  return { n: Math.floor(w / unit.length), rem: w % unit.length };
}

type Transform = (answerIndent: string) => string | null;

/** The `shift` transform: the answer's indentation past its first line's, appended to the base. */
function shiftTransform(a0: string, f0: string): Transform {
  return (a) => {
    if (a.startsWith(a0)) return f0 + a.slice(a0.length);
    if (!a0.startsWith(a)) return null;
    const d = a0.length - a.length;
    return f0.length >= d ? f0.slice(0, f0.length - d) : null;
  };
}

/** The `units` transform with `ratio` answer columns per file unit. */
function unitsTransform(a0: string, f0: string, unit: string, ratio: number): Transform {
  const base = unitsOf(f0, unit);
  return (a) => {
    const off = cols(a) - cols(a0);
    const q = Math.floor(off / ratio);
    const rem = Math.round(off - q * ratio);
    const n = base.n + q;
    return n < 0 ? null : unit.repeat(n) + ' '.repeat(base.rem + rem);
  };
}

/**
 * Re-indents REPLACE lines for a window (rules in the module comment).
 * @param search the SEARCH lines; @param window the file's lines they matched (same length)
 * @param replace the REPLACE lines as the answer wrote them
 * @param unit the file's indentation unit ({@link indentUnit})
 * @returns the re-indented lines and the transform used, or why the depths cannot be placed
 */
export function reindent(
  search: readonly string[],
  window: readonly string[],
  replace: readonly string[],
  unit: string,
): { lines: string[]; rule: IndentRule } | { error: string } {
  const pairs = search.flatMap((l, k) =>
    l.trim() !== '' && (window[k] ?? '').trim() !== ''
      ? [{ k, a: indentOf(l), f: indentOf(window[k]!) }]
      : [],
  );
  if (pairs.length === 0) return { lines: [...replace], rule: 'shift' };
  const { a: a0, f: f0 } = pairs[0]!;
  const answer = [...search, ...replace].filter((l) => l.trim() !== '');
  const answerTabs = answer.some((l) => indentOf(l).includes('\t'));
  const answerStep = step(search) ?? step(replace);
  const sameStyle =
    unit === '\t' ? answerTabs : !answerTabs && (answerStep === null || answerStep === unit.length);
  let rule: IndentRule = 'shift';
  let t: Transform = shiftTransform(a0, f0);
  if (!sameStyle || pairs.some((p) => t(p.a) !== p.f)) {
    rule = 'units';
    const fu0 = unitsOf(f0, unit).n;
    const ratios = pairs
      .map((p) => ({ p, du: unitsOf(p.f, unit).n - fu0, da: cols(p.a) - cols(a0) }))
      .filter((r) => r.du !== 0)
      .map((r) => ({ k: r.p.k, ratio: r.da / r.du }));
    const ratio = ratios[0]?.ratio ?? (answerTabs ? 4 : (answerStep ?? unit.length));
    const odd = ratios.find((r) => Math.abs(r.ratio - ratio) > 1e-9 || r.ratio <= 0);
    if (odd || !(ratio > 0))
      return {
        error: `SEARCH lines ${pairs[0]!.k + 1} and ${(odd ?? ratios[0]!).k + 1} are nested differently in the answer than in the file`,
      };
    t = unitsTransform(a0, f0, unit, ratio);
  }
  const bad = pairs.find((p) => t(p.a) !== p.f);
  if (bad)
    return {
      error: `SEARCH line ${bad.k + 1} is indented differently in the answer than in the file, relative to line ${pairs[0]!.k + 1}`,
    };
  // the REPLACE text's own first line keeps its depth difference from the SEARCH text's first
  const out: string[] = [];
  for (const [k, l] of replace.entries()) {
    if (l.trim() === '') {
      out.push('');
      continue;
    }
    const ind = t(indentOf(l));
    if (ind === null) return { error: `REPLACE line ${k + 1} would go left of column 0` };
    out.push(ind + l.trimStart());
  }
  return { lines: out, rule };
}
