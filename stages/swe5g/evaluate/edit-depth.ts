/**
 * The depth check of a SEARCH/REPLACE block (issue 30): the lines a block copies from the file
 * (its SEARCH lines) set the depths of the place, and every code line of its REPLACE text must
 * keep their offset. A model that pastes with a stray space gives its copied lines one offset and
 * its new lines another; re-indenting by relative depth (edit-indent.ts) then carries the
 * difference over and the new lines land one column off their neighbours (a Python file that no
 * longer parses, a Go or C file a formatter rewrites), or the stray column is read as the
 * answer's indentation step and the new lines land whole levels off. Such a block is refused
 * (`indentation`, a format failure) instead of written, whichever rule placed it.
 *
 * Columns count a tab as 4. Lines that are not code starts are never checked: continuation lines
 * (inside an open parenthesis or square bracket, after a line ending in `\` or an operator),
 * lines inside a multi-line string (Python triple quotes, Go raw strings) or block comment, and
 * comment-continuation lines (` * ...`); nor is a REPLACE line equal to a SEARCH line (a copy).
 */

const indentOf = (l: string): string => /^[ \t]*/.exec(l)![0];
const cols = (ws: string): number => [...ws].reduce((n, c) => n + (c === '\t' ? 4 : 1), 0);
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** What a line's scan leaves open for the next line. */
interface ScanState {
  depth: number;
  /** The delimiter of an open multi-line string or comment (`"""`, `'''`, `` ` ``, `*\/`). */
  open: string | null;
  /** The previous code line asks for a continuation (`\`, a trailing operator). */
  cont: boolean;
}

/** Scans one line from `s`; returns the state after it (strings and comments skipped). */
function scan(line: string, s: ScanState): ScanState {
  let { depth, open } = s;
  let i = 0;
  let lastCode = -1;
  while (i < line.length) {
    if (open) {
      const end = line.indexOf(open, i);
      if (end < 0) return { depth, open, cont: false };
      i = end + open.length;
      open = null;
      continue;
    }
    const c = line[i]!;
    const two = line.slice(i, i + 2);
    const three = line.slice(i, i + 3);
    if (three === '"""' || three === "'''") {
      open = three;
      i += 3;
    } else if (c === '`') {
      open = '`';
      i++;
    } else if (two === '/*') {
      open = '*/';
      i += 2;
    } else if (two === '//' || c === '#') break;
    else if (c === '"' || c === "'") {
      // a one-line string or character literal: to its closing quote (escapes skipped)
      let j = i + 1;
      while (j < line.length && line[j] !== c) j += line[j] === '\\' ? 2 : 1;
      lastCode = j;
      i = j + 1;
    } else {
      // braces open blocks (C, Go) as often as literals: only ( and [ continue a line
      if (c === '(' || c === '[') depth++;
      else if (c === ')' || c === ']') depth = Math.max(0, depth - 1);
      if (c.trim() !== '') lastCode = i;
      i++;
    }
  }
  const tail = lastCode >= 0 ? line.slice(0, lastCode + 1).trimEnd() : '';
  const cont = open === null && /(\\|&&|\|\||[+\-*/%=?<>|&^,])$/.test(tail);
  return { depth, open, cont };
}

/** Source files whose blocks are checked (prose, YAML and the like are not: their indentation is free). */
export const DEPTH_CHECKED = /\.(py|pyi|go|c|h|cc|cpp|cxx|hh|hpp|java|js|ts|rs)$/;

/**
 * Which lines start code (index set): non-blank, not inside a bracket, string or comment, not
 * continuing the previous line, not a ` * ` comment line. Scanned from a neutral state.
 */
export function codeStarts(lines: readonly string[]): Set<number> {
  const out = new Set<number>();
  let s: ScanState = { depth: 0, open: null, cont: false };
  for (const [k, l] of lines.entries()) {
    if (l.trim() === '') continue;
    const inside = s.open !== null || s.depth > 0 || s.cont;
    if (!inside && !/^\s*\*/.test(l)) out.add(k);
    s = scan(l, s);
  }
  return out;
}

/** The greatest common divisor of the pairwise differences of `xs` (0 when they are all equal). */
function stepOf(xs: readonly number[]): number {
  return xs.reduce((g, x) => gcd(g, Math.abs(x - xs[0]!)), 0);
}

/**
 * Checks a block's REPLACE code lines against the depths of its SEARCH lines. The answer's indentation step is the common divisor of the
 * differences among the SEARCH lines, among the new REPLACE lines, and of the file's unit when
 * the answer indents in the file's characters (tabs or spaces); the SEARCH lines' own offset
 * from that step (most of them; a stray space gives 1) is the one every REPLACE code line must
 * keep. Nothing is checked when no step shows (one line of each, in another style than the file).
 * @param unit the file's indentation unit
 * @returns null, or why the depths disagree (1-based REPLACE line number)
 */
export function depthConflict(
  search: readonly string[],
  replace: readonly string[],
  unit: string,
): string | null {
  const at = (lines: readonly string[]): { k: number; c: number }[] =>
    [...codeStarts(lines)].map((k) => ({ k, c: cols(indentOf(lines[k]!)) }));
  const copied = at(search);
  if (copied.length === 0) return null;
  const searchSet = new Set(search);
  const news = at(replace).filter((x) => !searchSet.has(replace[x.k]!));
  const tabs = [...search, ...replace].some((l) => indentOf(l).includes('\t'));
  const sameStyle = (unit === '\t') === tabs;
  let g = gcd(stepOf(copied.map((x) => x.c)), stepOf(news.map((x) => x.c)));
  if (sameStyle) g = gcd(g, cols(unit));
  if (g <= 1) return null;
  const count = new Map<number, number>();
  for (const x of copied) count.set(x.c % g, (count.get(x.c % g) ?? 0) + 1);
  const base = [...count.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
  const bad = news.find((x) => x.c % g !== base);
  if (!bad) return null;
  const d = (bad.c - base + g * 4) % g;
  return `REPLACE line ${bad.k + 1} is indented ${Math.min(d, g - d)} column(s) off the SEARCH lines' depths (steps of ${g} columns): the block's new lines and the lines it copies from the file are indented by different offsets`;
}
