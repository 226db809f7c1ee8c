/**
 * A file's text as lines with their own line endings, so an edit changes only the lines it
 * replaces: matching sees the lines without `\r`, untouched lines keep their bytes, and replaced
 * lines take the ending of the lines they replace (CRLF files stay CRLF; in a file with mixed
 * endings, the ending the replaced window uses, or the file's most common one when the window
 * mixes them). Public reports of appliers that rewrote every ending or wrote LF into a CRLF file:
 * anomalyco/opencode#45888 / #45880, earendil-works/pi#8544, NousResearch/hermes-agent#88264.
 */

/** Lines (without their ending) and each line's ending (`\r\n`, `\n`, or '' for the last). */
export interface FileLines {
  lines: string[];
  eols: string[];
}

/** Splits a text into lines and endings; `join(split(t)) === t` for every text. */
export function splitLines(text: string): FileLines {
  const raw = text.split('\n');
  const lines: string[] = [];
  const eols: string[] = [];
  raw.forEach((l, k) => {
    const last = k === raw.length - 1;
    if (!last && l.endsWith('\r')) {
      lines.push(l.slice(0, -1));
      eols.push('\r\n');
    } else {
      lines.push(l);
      eols.push(last ? '' : '\n');
    }
  });
  return { lines, eols };
}

/** The text of some lines with their endings. */
export function joinLines(f: FileLines): string {
  return f.lines.map((l, k) => l + f.eols[k]!).join('');
}

/** How a file ends its lines: `lf`, `crlf`, `mixed`, or `none` (a single line). */
export function eolStyle(f: FileLines): 'lf' | 'crlf' | 'mixed' | 'none' {
  const set = new Set(f.eols.filter((e) => e !== ''));
  if (set.size === 0) return 'none';
  if (set.size > 1) return 'mixed';
  return set.has('\r\n') ? 'crlf' : 'lf';
}

/** The ending new lines take in place of `count` lines from `start` (rule in the module comment). */
function endingFor(f: FileLines, start: number, count: number): string {
  const inWindow = new Set(f.eols.slice(start, start + count).filter((e) => e !== ''));
  if (inWindow.size === 1) return [...inWindow][0]!;
  const crlf = f.eols.filter((e) => e === '\r\n').length;
  const lf = f.eols.filter((e) => e === '\n').length;
  return crlf > lf ? '\r\n' : '\n';
}

/**
 * Replaces `count` lines from `start` with `repl` (lines without endings). The last new line keeps
 * the ending of the last replaced line (so a file without a final newline stays so); a deletion at
 * the end of such a file takes the final newline off the line before.
 * @returns the new text
 */
export function spliceLines(f: FileLines, start: number, count: number, repl: string[]): string {
  const eol = endingFor(f, start, count);
  const lastEol = count > 0 ? f.eols[start + count - 1]! : eol;
  const newEols = repl.map((_, k) => (k === repl.length - 1 ? lastEol : eol));
  const lines = [...f.lines.slice(0, start), ...repl, ...f.lines.slice(start + count)];
  const eols = [...f.eols.slice(0, start), ...newEols, ...f.eols.slice(start + count)];
  if (repl.length === 0 && count > 0 && lastEol === '' && start > 0) eols[start - 1] = '';
  return joinLines({ lines, eols });
}

/** Start indices of the windows of `lines` equal to `pattern` under `eq`. */
export function windows(
  lines: readonly string[],
  pattern: readonly string[],
  eq: (a: string, b: string) => boolean,
): number[] {
  const out: number[] = [];
  for (let s = 0; s + pattern.length <= lines.length; s++) {
    let ok = true;
    for (let t = 0; t < pattern.length && ok; t++) ok = eq(lines[s + t]!, pattern[t]!);
    if (ok) out.push(s);
  }
  return out;
}

/** A line compared by the whitespace rule: trimmed, inner runs of blanks collapsed. */
export const normLine = (l: string): string => l.trim().replace(/\s+/g, ' ');
