/**
 * The SEARCH/REPLACE block grammar (the answer format of the SWE-Bench 5G agents, paper "Agent
 * paradigms"; the format aider made common): blocks read from a model answer, with the path each
 * one names and every possible split when its divider is ambiguous. Pure text; which file a block
 * edits and which split holds are decided against the files in `edits.ts`.
 *
 *     internal/ngap/handler.go          <- the path: the line before the block (or its fence)
 *     ```go
 *     <<<<<<< SEARCH
 *     lines copied from the file
 *     =======                           <- the divider
 *     the lines that replace them
 *     >>>>>>> REPLACE
 *     ```
 *
 * Grammar rules:
 *  - A block runs from `<<<<<<< SEARCH` to the first `>>>>>>> REPLACE`; a new `<<<<<<< SEARCH`
 *    before that, or the end of the answer, makes it malformed. A `>>>>>>> REPLACE` outside any
 *    block is a malformed block of its own (a stray `=======` outside blocks is left alone:
 *    Markdown uses it under headings).
 *  - Divider: a line of 5 to 9 `=` (aider's range). None: malformed. Several (a Markdown setext
 *    heading quoted in the SEARCH or REPLACE text, `Build` above `=======`): every split is kept
 *    in `splits`, and the block applies only where exactly one split's SEARCH text matches the
 *    file once (`edits.ts`); otherwise it is `malformed`, with the reason.
 *  - Path (`named`, where it came from in `path_from`), from the nearest non-empty line before the
 *    opening marker: a fence info string that is a path (```` ```internal/x.go ````, `fence`); a
 *    line that is a path — bare, in backticks, bold, after `#` or `File:` (`line`); a sentence
 *    naming paths, in backticks or bare ("Now update `internal/context/b.go` too:", `sentence`;
 *    several paths are all kept, `edits.ts` keeps the ones that exist). A path token has a `/` or
 *    an extension of lowercase letters and digits. None: `none` (`edits.ts` decides: the previous
 *    block's file in a one-file answer, else `no_path`).
 *  - A path outside the repository (absolute, or with a `..` segment) makes the block malformed.
 */

/** One possible split of a block at one of its divider lines. */
export interface BlockSplit {
  search: string;
  replace: string;
  /** 1-based line of the answer holding this split's divider. */
  line: number;
}

/** Where a block's path came from. */
export type PathSource = 'fence' | 'line' | 'sentence' | 'none';

/** One well-formed block. `index` is its 1-based position among all blocks of the answer. */
export interface EditBlock {
  index: number;
  /** The path when the line before names exactly one, else ''. */
  file: string;
  /** Every path the line before names (one for `fence`/`line`, one or more for `sentence`). */
  named: string[];
  path_from: PathSource;
  /** The block's text (the only split when there is one divider; the first one otherwise). */
  search: string;
  replace: string;
  /** Present (2 or more) when the block has several divider lines: each split, in order. */
  splits?: BlockSplit[];
}

/** A block that could not be read, with why. */
export interface MalformedBlock {
  index: number;
  file: string;
  reason: string;
}

/** An answer's blocks. */
export interface ParsedEdits {
  blocks: EditBlock[];
  malformed: MalformedBlock[];
  /** The distinct paths named by single-path lines before the blocks, in answer order. */
  files: string[];
}

const OPEN = /^\s*<{5,9} ?SEARCH\s*$/;
const DIVIDER = /^\s*={5,9}\s*$/;
const CLOSE = /^\s*>{5,9} ?REPLACE\s*$/;
const FENCE = /^\s*```/;
const PATH_TOKEN = /^[\w.@+-]+(?:\/[\w.@+-]+)*$/;

/** Whether a token reads as a file path: a `/`, or a name with a lowercase extension. */
function pathLike(t: string): boolean {
  if (!PATH_TOKEN.test(t) || !/[\w]/.test(t)) return false;
  if (t.includes('/')) return !t.startsWith('//') && !/^\.+$/.test(t);
  const m = /^(.+)\.([a-z][a-z0-9]{0,7})$/.exec(t);
  return m !== null && m[1]!.replace(/^\.+/, '').length >= 2;
}

/** The path a whole line names (bare, in backticks, bold, after `#` or `File:`), or ''. */
function linePath(line: string): string {
  const t = line
    .trim()
    .replace(/^#+\s*/, '')
    .replace(/^(?:file|path)\s*:\s*/i, '')
    .replace(/^[*`'"]+|[*`'":]+$/g, '')
    .trim();
  return PATH_TOKEN.test(t) && /[\w]/.test(t) && /[./]/.test(t) ? t : '';
}

/** The distinct paths a sentence names: backticked spans first, then bare tokens. */
function sentencePaths(line: string): string[] {
  const out: string[] = [];
  const add = (t: string): void => {
    if (pathLike(t) && !out.includes(t)) out.push(t);
  };
  for (const m of line.matchAll(/`([^`\s]+)`/g)) add(m[1]!);
  for (const w of line.replace(/`[^`]*`/g, ' ').split(/\s+/))
    add(w.replace(/^[([{"'*]+|[)\]}"'*:;,.!?]+$/g, ''));
  return out;
}

/** Whether a path stays inside the repository (relative, no `..` segment). */
function safePath(p: string): boolean {
  return !p.startsWith('/') && !p.split('/').includes('..') && p !== '.';
}

/** The path(s) named before the opening marker at line `i`. */
function pathBefore(lines: readonly string[], i: number): { named: string[]; from: PathSource } {
  let j = i - 1;
  while (j >= 0 && lines[j]!.trim() === '') j--;
  if (j >= 0 && FENCE.test(lines[j]!)) {
    const info = linePath(lines[j]!.trim().replace(/^`+/, ''));
    if (info && (info.includes('/') || /\.\w+$/.test(info)))
      return { named: [info], from: 'fence' };
    j--;
    while (j >= 0 && lines[j]!.trim() === '') j--;
  }
  if (j < 0 || OPEN.test(lines[j]!) || CLOSE.test(lines[j]!) || FENCE.test(lines[j]!))
    return { named: [], from: 'none' };
  const bare = linePath(lines[j]!);
  if (bare) return { named: [bare], from: 'line' };
  const named = sentencePaths(lines[j]!);
  return named.length > 0 ? { named, from: 'sentence' } : { named: [], from: 'none' };
}

/** The body of the block opened at line `i`: its lines up to the end marker, or why it broke. */
function bodyOf(
  lines: readonly string[],
  i: number,
): { body: string[]; next: number; broken: string } {
  const body: string[] = [];
  for (let k = i + 1; k < lines.length; k++) {
    const l = lines[k]!;
    if (OPEN.test(l))
      return {
        body,
        next: k,
        broken: `a new <<<<<<< SEARCH at line ${k + 1} before this block ended`,
      };
    if (CLOSE.test(l)) return { body, next: k + 1, broken: '' };
    body.push(l);
  }
  return { body, next: lines.length, broken: 'no >>>>>>> REPLACE before the end of the answer' };
}

/**
 * Reads every SEARCH/REPLACE block of a model answer (grammar in the module comment). CRLF in the
 * answer is read as LF.
 * @param answer the model's reply text
 * @returns the well-formed blocks and the malformed ones, both numbered in answer order, and the
 *   files the answer names; an answer with no marker at all gives empty lists
 */
export function parseEditBlocks(answer: string): ParsedEdits {
  const lines = answer.replace(/\r\n/g, '\n').split('\n');
  const blocks: EditBlock[] = [];
  const malformed: MalformedBlock[] = [];
  const files: string[] = [];
  let index = 0;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (CLOSE.test(line)) {
      index++;
      malformed.push({
        index,
        file: '',
        reason: `line ${i + 1}: ">>>>>>> REPLACE" without a preceding <<<<<<< SEARCH`,
      });
      i++;
      continue;
    }
    if (!OPEN.test(line)) {
      i++;
      continue;
    }
    index++;
    const { named, from } = pathBefore(lines, i);
    const file = named.length === 1 ? named[0]! : '';
    if (file && !files.includes(file)) files.push(file);
    const { body, next, broken } = bodyOf(lines, i);
    const dividers = body.flatMap((l, k) => (DIVIDER.test(l) ? [k] : []));
    const outside = named.find((p) => !safePath(p));
    let reason = broken;
    if (!reason && dividers.length === 0)
      reason = `>>>>>>> REPLACE at line ${next} without a ======= divider`;
    if (!reason && outside !== undefined) reason = `path ${outside} is outside the repository`;
    if (reason) malformed.push({ index, file, reason });
    else {
      const splits = dividers.map((d) => ({
        search: body.slice(0, d).join('\n'),
        replace: body.slice(d + 1).join('\n'),
        line: i + 2 + d,
      }));
      const first = splits[0]!;
      blocks.push({
        index,
        file,
        named,
        path_from: from,
        search: first.search,
        replace: first.replace,
        ...(splits.length > 1 ? { splits } : {}),
      });
    }
    i = next;
  }
  return { blocks, malformed, files };
}
