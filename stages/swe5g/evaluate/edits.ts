/**
 * SEARCH/REPLACE edits: the answer format of the SWE-Bench 5G agents (paper, "Agent paradigms";
 * the format aider made common), parsed and applied to the repository at `base_commit`.
 *
 * Block format (the path on the line before the opening marker; a Markdown fence around the block
 * is allowed; a block without its own path line reuses the previous block's path):
 *
 *     internal/ngap/handler.go
 *     <<<<<<< SEARCH
 *     lines copied from the file
 *     =======
 *     the lines that replace them
 *     >>>>>>> REPLACE
 *
 * Application rules, tried in order for each block (the paper lost most weak-model answers to
 * SEARCH blocks that did not match the file's whitespace exactly, Table V "format"; this is where
 * the evaluation does better, and every edit records which rule applied or why none did):
 *  1. `exact` — the SEARCH lines equal one window of the file's lines, character for character;
 *  2. `whitespace` — equal after trimming each line and collapsing inner runs of blanks; the
 *     REPLACE lines are re-indented to the file's indentation (tabs or spaces, see
 *     {@link reindent});
 *  3. `fuzzy` — the window of the same number of lines whose whitespace-normalised text is most
 *     similar to the SEARCH text (similarity `1 - (inserted + deleted characters) / (both lengths)`
 *     from the `diff` package's character diff, i.e. 2·LCS/(|a|+|b|)), when it is at least
 *     `threshold` and no other non-overlapping window comes within `margin` of it;
 *  4. `create` — an empty SEARCH on a file that does not exist creates it.
 * A rule that finds several windows stops the search: `ambiguous` (an edit is never applied at a
 * guessed place). Other failures: `no_match` (no rule found a place, or the file does not exist),
 * `malformed` (a block without its divider or end marker, without a path, or with a path outside
 * the repository).
 */
import { diffChars } from 'diff';

/** One well-formed block. `index` is its 1-based position among all blocks of the answer. */
export interface EditBlock {
  index: number;
  file: string;
  search: string;
  replace: string;
}

/** A block that could not be read, with why. */
export interface MalformedBlock {
  index: number;
  file: string;
  reason: string;
}

/** The rule that placed an edit. */
export type EditRule = 'exact' | 'whitespace' | 'fuzzy' | 'create';
/** Why an edit was not applied. */
export type EditFailure = 'no_match' | 'ambiguous' | 'malformed';

/** What happened to one block. */
export interface EditOutcome {
  index: number;
  file: string;
  applied: boolean;
  rule?: EditRule;
  reason?: EditFailure;
  /** Human-readable detail: the line range written, or the failure's explanation. */
  detail: string;
  /** Fuzzy rule only: the similarity of the chosen window (0..1). */
  score?: number;
}

/** Settings of the fuzzy rule. */
export interface FuzzySettings {
  /** Lowest similarity accepted (0..1). */
  threshold: number;
  /** A second window this close to the best (in similarity) makes the edit ambiguous. */
  margin: number;
}

export const DEFAULT_FUZZY: FuzzySettings = { threshold: 0.85, margin: 0.03 };

const OPEN = /^\s*<{5,9} ?SEARCH\s*$/;
const DIVIDER = /^\s*={5,9}\s*$/;
const CLOSE = /^\s*>{5,9} ?REPLACE\s*$/;
const FENCE = /^\s*```/;

/** The path named on a line before a block (bare, in backticks, bold, or after `File:`), or ''. */
function pathOf(line: string): string {
  const t = line
    .trim()
    .replace(/^#+\s*/, '')
    .replace(/^(?:file|path)\s*:\s*/i, '')
    .replace(/^[*`'"]+|[*`'":]+$/g, '')
    .trim();
  return /^[\w./@+-]+$/.test(t) && /[\w]/.test(t) ? t : '';
}

/** Whether a path stays inside the repository (relative, no `..` segment). */
function safePath(p: string): boolean {
  return !p.startsWith('/') && !p.split('/').includes('..') && p !== '.';
}

/**
 * Reads every SEARCH/REPLACE block of a model answer.
 * @param answer the model's reply text
 * @returns the well-formed blocks and the malformed ones, both numbered in answer order; an answer
 *   with no marker at all gives two empty lists
 */
export function parseEditBlocks(answer: string): {
  blocks: EditBlock[];
  malformed: MalformedBlock[];
} {
  const lines = answer.replace(/\r\n/g, '\n').split('\n');
  const blocks: EditBlock[] = [];
  const malformed: MalformedBlock[] = [];
  let lastFile = '';
  let index = 0;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (CLOSE.test(line)) {
      // an end marker outside a block: a block whose opening marker is missing (a stray
      // ======= line is left alone: Markdown uses it for headings)
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
    // the path: the fence's info string when it is a path (```internal/x.go), else the nearest
    // non-empty line before the marker (and before its fence)
    let file = '';
    let j = i - 1;
    while (j >= 0 && lines[j]!.trim() === '') j--;
    if (j >= 0 && FENCE.test(lines[j]!)) {
      const info = pathOf(lines[j]!.trim().replace(/^`+/, ''));
      if (info.includes('/') || /\.\w+$/.test(info)) file = info;
      j--;
      while (j >= 0 && lines[j]!.trim() === '') j--;
    }
    if (!file && j >= 0) file = pathOf(lines[j]!);
    if (!/[./]/.test(file)) file = lastFile;
    const search: string[] = [];
    const replace: string[] = [];
    let k = i + 1;
    let state: 'search' | 'replace' | 'done' = 'search';
    let broken = '';
    for (; k < lines.length; k++) {
      const l = lines[k]!;
      if (OPEN.test(l)) {
        broken = `a new <<<<<<< SEARCH at line ${k + 1} before this block ended`;
        break;
      }
      if (state === 'search' && DIVIDER.test(l)) {
        state = 'replace';
        continue;
      }
      if (CLOSE.test(l)) {
        if (state === 'search')
          broken = `>>>>>>> REPLACE at line ${k + 1} without a ======= divider`;
        state = 'done';
        k++;
        break;
      }
      (state === 'search' ? search : replace).push(l);
    }
    if (!broken && state !== 'done')
      broken =
        state === 'search'
          ? 'no ======= divider and no >>>>>>> REPLACE before the end of the answer'
          : 'no >>>>>>> REPLACE before the end of the answer';
    if (!broken && !file) broken = 'no file path before <<<<<<< SEARCH';
    if (!broken && !safePath(file)) broken = `path ${file} is outside the repository`;
    if (broken) malformed.push({ index, file, reason: broken });
    else {
      blocks.push({ index, file, search: search.join('\n'), replace: replace.join('\n') });
      lastFile = file;
    }
    i = k;
  }
  return { blocks, malformed };
}

const norm = (l: string): string => l.trim().replace(/\s+/g, ' ');
const indentOf = (l: string): string => /^[ \t]*/.exec(l)![0];
const width = (ws: string): number => [...ws].reduce((n, c) => n + (c === '\t' ? 4 : 1), 0);

/** Indentation unit of some lines: `\t` when any is tab-indented, else the gcd of space widths. */
function unitOf(lines: readonly string[]): string {
  const ind = lines.filter((l) => l.trim() !== '').map(indentOf);
  if (ind.some((w) => w.includes('\t'))) return '\t';
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const g = ind.map((w) => w.length).reduce((a, b) => gcd(a, b), 0);
  return ' '.repeat(g > 0 ? Math.min(g, 8) : 4);
}

/**
 * Re-indents REPLACE lines for a window found by the whitespace or fuzzy rule. A REPLACE line
 * equal (normalised) to a SEARCH line takes that line's indentation in the file; any other line
 * keeps its depth relative to the nearest SEARCH line above it (in indentation units of the SEARCH
 * text: a tab, or the gcd of its space indents), written in the file's unit.
 * @param search the SEARCH lines; @param window the file's lines they matched (same length)
 */
export function reindent(
  search: readonly string[],
  window: readonly string[],
  replace: readonly string[],
): string[] {
  const sUnit = width(unitOf(search)) || 4;
  const fUnit = unitOf(window);
  const bySearch = new Map<string, number>();
  search.forEach((l, i) => {
    if (l.trim() !== '' && !bySearch.has(norm(l))) bySearch.set(norm(l), i);
  });
  let anchor = search.findIndex((l) => l.trim() !== '');
  if (anchor < 0) anchor = 0;
  return replace.map((l) => {
    if (l.trim() === '') return '';
    const same = bySearch.get(norm(l));
    if (same !== undefined) {
      anchor = same;
      return indentOf(window[same] ?? '') + l.trimStart();
    }
    const depth = Math.round((width(indentOf(l)) - width(indentOf(search[anchor] ?? ''))) / sUnit);
    const base = indentOf(window[anchor] ?? '');
    const ind =
      depth >= 0
        ? base + fUnit.repeat(depth)
        : base.slice(0, Math.max(0, base.length + depth * fUnit.length));
    return ind + l.trimStart();
  });
}

/** Start indices of the windows of `lines` equal to `pattern` under `eq`. */
function windows(
  lines: string[],
  pattern: string[],
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

/** Character histogram (for the upper bound on the similarity). */
function histogram(s: string): Map<string, number> {
  const h = new Map<string, number>();
  for (const c of s) h.set(c, (h.get(c) ?? 0) + 1);
  return h;
}

/**
 * Similarity of two texts: 1 - (inserted + deleted characters) / (|a| + |b|), from `diff`'s
 * character diff, stopped early (returns 0) when it cannot reach `atLeast`.
 */
export function similarity(a: string, b: string, atLeast = 0): number {
  const total = a.length + b.length;
  if (total === 0) return 1;
  const maxEdit = Math.floor((1 - atLeast) * total) + 1;
  const parts = diffChars(a, b, { maxEditLength: maxEdit });
  if (!parts) return 0;
  let edits = 0;
  for (const p of parts) if (p.added || p.removed) edits += p.value.length;
  return 1 - edits / total;
}

/** Best fuzzy window: {start, score} or why none. */
function fuzzyWindow(
  lines: string[],
  search: string[],
  fz: FuzzySettings,
): { start: number; score: number } | { reason: EditFailure; detail: string } {
  const target = search.map(norm).join('\n');
  const tHist = histogram(target);
  const m = search.length;
  const scored: { start: number; score: number }[] = [];
  const normLines = lines.map(norm);
  for (let s = 0; s + m <= lines.length; s++) {
    const text = normLines.slice(s, s + m).join('\n');
    // upper bound: the LCS cannot exceed the common character multiset
    let common = 0;
    for (const [c, n] of histogram(text)) common += Math.min(n, tHist.get(c) ?? 0);
    const bound = (2 * common) / (text.length + target.length || 1);
    if (bound < fz.threshold) continue;
    const score = similarity(text, target, fz.threshold);
    if (score >= fz.threshold) scored.push({ start: s, score });
  }
  if (scored.length === 0)
    return {
      reason: 'no_match',
      detail: `no window of ${m} lines reaches similarity ${fz.threshold}`,
    };
  scored.sort((a, b) => b.score - a.score || a.start - b.start);
  const best = scored[0]!;
  const rival = scored.find(
    (w) => Math.abs(w.start - best.start) >= m && w.score >= best.score - fz.margin,
  );
  if (rival)
    return {
      reason: 'ambiguous',
      detail: `fuzzy: lines ${best.start + 1} (${best.score.toFixed(3)}) and ${rival.start + 1} (${rival.score.toFixed(3)}) are equally close`,
    };
  return best;
}

/** Reads a file of the working tree: its text, or null when it does not exist. */
export type FileReader = (path: string) => string | null;

/** Result of applying an answer's blocks. */
export interface AppliedEdits {
  outcomes: EditOutcome[];
  /** Changed files: path -> {before (null: created), after}. */
  files: Map<string, { before: string | null; after: string }>;
}

/**
 * Applies the blocks in order (each sees the previous ones' result) to files read through `read`.
 * Pure: nothing is written; the caller writes `files`.
 * @param read the working tree (base_commit plus earlier turns' edits)
 * @returns one outcome per block (malformed ones included, in index order) and the changed files
 */
export function applyEdits(
  read: FileReader,
  parsed: { blocks: EditBlock[]; malformed: MalformedBlock[] },
  fuzzy: FuzzySettings = DEFAULT_FUZZY,
): AppliedEdits {
  const files = new Map<string, { before: string | null; after: string }>();
  const current = (p: string): string | null => files.get(p)?.after ?? read(p);
  const outcomes: EditOutcome[] = parsed.malformed.map((b) => ({
    index: b.index,
    file: b.file,
    applied: false,
    reason: 'malformed' as const,
    detail: b.reason,
  }));
  for (const b of parsed.blocks) {
    const text = current(b.file);
    const fail = (reason: EditFailure, detail: string): void => {
      outcomes.push({ index: b.index, file: b.file, applied: false, reason, detail });
    };
    const searchLines = b.search === '' ? [] : b.search.split('\n');
    const write = (after: string, rule: EditRule, detail: string, score?: number): void => {
      const prev = files.get(b.file);
      files.set(b.file, { before: prev ? prev.before : text, after });
      outcomes.push({
        index: b.index,
        file: b.file,
        applied: true,
        rule,
        detail,
        ...(score !== undefined ? { score } : {}),
      });
    };
    if (text === null) {
      if (searchLines.every((l) => l.trim() === '')) {
        write(
          b.replace.endsWith('\n') || b.replace === '' ? b.replace : `${b.replace}\n`,
          'create',
          'new file',
        );
      } else fail('no_match', `${b.file} does not exist at the base commit`);
      continue;
    }
    if (searchLines.every((l) => l.trim() === '')) {
      fail('ambiguous', 'an empty SEARCH block matches anywhere in an existing file');
      continue;
    }
    const lines = text.split('\n');
    const replaceLines = b.replace === '' ? [] : b.replace.split('\n');
    const splice = (start: number, repl: string[]): string =>
      [...lines.slice(0, start), ...repl, ...lines.slice(start + searchLines.length)].join('\n');
    const range = (s: number): string => `lines ${s + 1}-${s + searchLines.length}`;
    const exact = windows(lines, searchLines, (a, c) => a === c);
    if (exact.length === 1) {
      write(splice(exact[0]!, replaceLines), 'exact', range(exact[0]!));
      continue;
    }
    if (exact.length > 1) {
      fail(
        'ambiguous',
        `exact: ${exact.length} places match (${exact.map((s) => `line ${s + 1}`).join(', ')})`,
      );
      continue;
    }
    const loose = windows(lines, searchLines, (a, c) => norm(a) === norm(c));
    if (loose.length === 1) {
      const s = loose[0]!;
      write(
        splice(s, reindent(searchLines, lines.slice(s, s + searchLines.length), replaceLines)),
        'whitespace',
        range(s),
      );
      continue;
    }
    if (loose.length > 1) {
      fail(
        'ambiguous',
        `whitespace: ${loose.length} places match (${loose.map((s) => `line ${s + 1}`).join(', ')})`,
      );
      continue;
    }
    const fz = fuzzyWindow(lines, searchLines, fuzzy);
    if ('reason' in fz) {
      fail(fz.reason, fz.detail);
      continue;
    }
    write(
      splice(
        fz.start,
        reindent(searchLines, lines.slice(fz.start, fz.start + searchLines.length), replaceLines),
      ),
      'fuzzy',
      `${range(fz.start)} (similarity ${fz.score.toFixed(3)})`,
      fz.score,
    );
  }
  outcomes.sort((a, b) => a.index - b.index);
  return { outcomes, files };
}
