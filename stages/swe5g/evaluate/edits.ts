/**
 * SEARCH/REPLACE edits: the answer format of the SWE-Bench 5G agents (paper, "Agent paradigms";
 * the format aider made common), parsed (`edit-blocks.ts`: the grammar, paths, ambiguous
 * dividers) and applied to the repository at `base_commit`. The one rule above all: an applied
 * edit writes exactly the text the block describes; a block that cannot be placed so is refused
 * with its reason, never written at a guessed place, depth, file or line ending.
 *
 * Which file (`path_from` of each outcome): the path the line before the block names (`fence`,
 * `line`, `sentence`: of several paths in a sentence, the one that exists); a block naming none
 * takes the previous block's file when the answer names at most one file (`previous`); in a
 * multi-file answer it is `no_path`, unless its SEARCH text matches once in exactly one of the
 * files the answer names (`search_match`, said in the detail). A sentence naming one file that
 * does not exist, above a non-empty SEARCH, counts as naming none.
 *
 * Application rules, tried in order for each block (the paper lost most weak-model answers to
 * SEARCH blocks that did not match the file's whitespace exactly, Table V "format"; this is where
 * the evaluation does better, and every edit records which rule applied or why none did):
 *  1. `exact` — the SEARCH lines equal one window of the file's lines, character for character
 *     (line endings aside); REPLACE is written as given;
 *  2. `whitespace` — equal after trimming each line and collapsing inner runs of blanks; the
 *     REPLACE lines are re-indented by relative depth in the file's tabs or spaces
 *     (`edit-indent.ts`; the transform is the outcome's `indent`), or the block is refused
 *     `indentation` when the answer's depths cannot be mapped onto the file's;
 *  3. `fuzzy` — the most similar window (`edit-fuzzy.ts`), re-indented likewise;
 *  4. `create` — an empty SEARCH on a file that does not exist creates it.
 * In a source file, whichever rule placed it, a block whose new lines are indented by another
 * offset than the lines it copies (a stray space) is refused `indentation` (`edit-depth.ts`).
 * A rule that finds several windows stops the search: `ambiguous`. Other failures: `no_match` (no
 * rule found a place, or the file does not exist), `no_path` (above), `malformed` (a block the
 * grammar refuses, or whose several `=======` lines leave no single split whose SEARCH matches
 * the file once). Line endings are kept per file and per line (`edit-lines.ts`).
 */
import {
  parseEditBlocks,
  type BlockSplit,
  type EditBlock,
  type ParsedEdits,
} from './edit-blocks.js';
import { DEFAULT_FUZZY, fuzzyWindow, similarity, type FuzzySettings } from './edit-fuzzy.js';
import { indentUnit, reindent, type IndentRule } from './edit-indent.js';
import { depthConflict, DEPTH_CHECKED } from './edit-depth.js';
import { eolStyle, normLine, spliceLines, splitLines, windows } from './edit-lines.js';

export { parseEditBlocks, similarity, reindent, indentUnit, DEFAULT_FUZZY };
export type { EditBlock, MalformedBlock, ParsedEdits, BlockSplit } from './edit-blocks.js';
export type { FuzzySettings } from './edit-fuzzy.js';

/** The rule that placed an edit. */
export type EditRule = 'exact' | 'whitespace' | 'fuzzy' | 'create';
/** Why an edit was not applied. */
export type EditFailure = 'no_match' | 'ambiguous' | 'malformed' | 'no_path' | 'indentation';
/** Where the file an edit went to came from (rules in the module comment). */
export type PathRule = 'fence' | 'line' | 'sentence' | 'previous' | 'search_match';

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
  /** How the file was determined (absent for malformed blocks and `no_path`). */
  path_from?: PathRule;
  /** Whitespace and fuzzy rules: how REPLACE was re-indented. */
  indent?: IndentRule;
}

/** Reads a file of the working tree: its text, or null when it does not exist. */
export type FileReader = (path: string) => string | null;

/** Result of applying an answer's blocks. */
export interface AppliedEdits {
  outcomes: EditOutcome[];
  /** Changed files: path -> {before (null: created), after}. */
  files: Map<string, { before: string | null; after: string }>;
}

const blank = (s: string): boolean => s.split('\n').every((l) => l.trim() === '');

/** Whether `search` matches `text` at exactly one place by the exact or the whitespace rule. */
function matchesOnce(text: string | null, search: string): boolean {
  if (text === null || blank(search)) return false;
  const { lines } = splitLines(text);
  const s = search.split('\n');
  const exact = windows(lines, s, (a, c) => a === c).length;
  if (exact > 0) return exact === 1;
  return windows(lines, s, (a, c) => normLine(a) === normLine(c)).length === 1;
}

type Target =
  | { ok: true; file: string; from: PathRule; split: BlockSplit; note: string }
  | { ok: false; file: string; reason: EditFailure; detail: string };

const splitsOf = (b: EditBlock): BlockSplit[] =>
  b.splits ?? [{ search: b.search, replace: b.replace, line: 0 }];

/** The split of a several-divider block that holds in `file`, or why none does. */
function chooseSplit(b: EditBlock, file: string, from: PathRule, text: string | null): Target {
  const splits = splitsOf(b);
  if (splits.length === 1) return { ok: true, file, from, split: splits[0]!, note: '' };
  const lines = splits.map((s) => s.line).join(', ');
  // a file that does not exist: the one split that creates it (an empty SEARCH)
  const good = splits.filter((s) =>
    text === null ? blank(s.search) : matchesOnce(text, s.search),
  );
  if (good.length === 1)
    return {
      ok: true,
      file,
      from,
      split: good[0]!,
      note: `; divider: answer line ${good[0]!.line}, the only one of the ${splits.length} ======= lines (${lines}) whose SEARCH matches once`,
    };
  return {
    ok: false,
    file,
    reason: 'malformed',
    detail: `${splits.length} ======= lines (answer lines ${lines}) and ${good.length === 0 ? 'no split' : `the splits at ${good.map((s) => s.line).join(', ')}`} whose SEARCH matches ${file} once: the divider is ambiguous`,
  };
}

/** The file and split of a block (rules in the module comment). */
function target(
  b: EditBlock,
  answerFiles: readonly string[],
  previous: string,
  current: FileReader,
): Target {
  if (b.path_from === 'fence' || b.path_from === 'line')
    return chooseSplit(b, b.file, b.path_from, current(b.file));
  let candidates = answerFiles;
  if (b.path_from === 'sentence') {
    const existing = b.named.filter((p) => current(p) !== null);
    const creates = b.named.length === 1 && splitsOf(b).every((s) => blank(s.search));
    if (existing.length === 1 || creates) {
      const file = existing[0] ?? b.file;
      return chooseSplit(b, file, 'sentence', current(file));
    }
    candidates = existing.length > 1 ? existing : answerFiles.filter((f) => !b.named.includes(f));
  }
  // a one-file answer: the files it names that exist (a sentence's stray `Node.js` does not count)
  if (previous && answerFiles.filter((f) => f === previous || current(f) !== null).length <= 1)
    return chooseSplit(b, previous, 'previous', current(previous));
  const found = candidates.flatMap((f) => {
    const text = current(f);
    return splitsOf(b)
      .filter((s) => matchesOnce(text, s.search))
      .map((s) => ({ f, s }));
  });
  const named = candidates.length > 0 ? candidates.join(', ') : 'none';
  if (found.length === 1)
    return {
      ok: true,
      file: found[0]!.f,
      from: 'search_match',
      split: found[0]!.s,
      note: `; no path before the block: its SEARCH matches once only in ${found[0]!.f} (files the answer names: ${named})`,
    };
  return {
    ok: false,
    file: '',
    reason: 'no_path',
    detail: `no file path before <<<<<<< SEARCH in an answer naming ${answerFiles.length} files, and its SEARCH matches once in ${found.length === 0 ? 'none' : found.map((x) => x.f).join(' and ')} of them (${named})`,
  };
}

type Placed =
  | { ok: true; after: string; rule: EditRule; detail: string; score?: number; indent?: IndentRule }
  | { ok: false; reason: EditFailure; detail: string };

/** Places one split's SEARCH text in a file's text by the rules in the module comment. */
function place(file: string, text: string | null, split: BlockSplit, fz: FuzzySettings): Placed {
  const searchLines = split.search === '' ? [] : split.search.split('\n');
  const replaceLines = split.replace === '' ? [] : split.replace.split('\n');
  if (text === null) {
    if (blank(split.search)) {
      const r = split.replace;
      return {
        ok: true,
        after: r.endsWith('\n') || r === '' ? r : `${r}\n`,
        rule: 'create',
        detail: 'new file',
      };
    }
    return { ok: false, reason: 'no_match', detail: `${file} does not exist at the base commit` };
  }
  if (blank(split.search))
    return {
      ok: false,
      reason: 'ambiguous',
      detail: 'an empty SEARCH block matches anywhere in an existing file',
    };
  const f = splitLines(text);
  const eol = eolStyle(f);
  const eolNote =
    eol === 'crlf' ? ', CRLF kept' : eol === 'mixed' ? ', mixed line endings kept' : '';
  const range = (s: number): string => `lines ${s + 1}-${s + searchLines.length}${eolNote}`;
  const places = (rule: string, found: number[]): string =>
    `${rule}: ${found.length} places match (${found.map((s) => `line ${s + 1}`).join(', ')})`;
  // new lines at the depths of the lines the block copies, or refused (edit-depth.ts)
  const offDepth = (rule: string, start: number): Placed | null => {
    if (!DEPTH_CHECKED.test(file)) return null;
    const why = depthConflict(searchLines, replaceLines, indentUnit(f.lines));
    return why
      ? { ok: false, reason: 'indentation', detail: `${rule} match at ${range(start)}, but ${why}` }
      : null;
  };
  const exact = windows(f.lines, searchLines, (a, c) => a === c);
  if (exact.length === 1)
    return (
      offDepth('exact', exact[0]!) ?? {
        ok: true,
        after: spliceLines(f, exact[0]!, searchLines.length, replaceLines),
        rule: 'exact',
        detail: range(exact[0]!),
      }
    );
  if (exact.length > 1) return { ok: false, reason: 'ambiguous', detail: places('exact', exact) };
  const loose = windows(f.lines, searchLines, (a, c) => normLine(a) === normLine(c));
  if (loose.length > 1)
    return { ok: false, reason: 'ambiguous', detail: places('whitespace', loose) };
  let start: number;
  let rule: EditRule = 'whitespace';
  let score: number | undefined;
  if (loose.length === 1) start = loose[0]!;
  else {
    const w = fuzzyWindow(f.lines, searchLines, fz);
    if ('reason' in w) return { ok: false, reason: w.reason, detail: w.detail };
    ({ start, score } = w);
    rule = 'fuzzy';
  }
  const window = f.lines.slice(start, start + searchLines.length);
  const re = reindent(searchLines, window, replaceLines, indentUnit(f.lines));
  if ('error' in re)
    return {
      ok: false,
      reason: 'indentation',
      detail: `${rule} match at ${range(start)}, but ${re.error}`,
    };
  const off = offDepth(rule, start);
  if (off) return off;
  const detail =
    score === undefined ? range(start) : `${range(start)} (similarity ${score.toFixed(3)})`;
  return {
    ok: true,
    after: spliceLines(f, start, searchLines.length, re.lines),
    rule,
    detail,
    indent: re.rule,
    ...(score !== undefined ? { score } : {}),
  };
}

/**
 * Applies the blocks in order (each sees the previous ones' result) to files read through `read`.
 * Pure: nothing is written; the caller writes `files`.
 * @param read the working tree (base_commit plus earlier turns' edits)
 * @param parsed {@link parseEditBlocks}' result
 * @returns one outcome per block (malformed ones included, in index order) and the changed files
 */
export function applyEdits(
  read: FileReader,
  parsed: ParsedEdits,
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
  let previous = '';
  for (const b of parsed.blocks) {
    const t = target(b, parsed.files, previous, current);
    if (!t.ok) {
      outcomes.push({
        index: b.index,
        file: t.file,
        applied: false,
        reason: t.reason,
        detail: t.detail,
      });
      continue;
    }
    previous = t.file;
    const text = current(t.file);
    const p = place(t.file, text, t.split, fuzzy);
    if (!p.ok) {
      outcomes.push({
        index: b.index,
        file: t.file,
        applied: false,
        reason: p.reason,
        detail: p.detail + t.note,
        path_from: t.from,
      });
      continue;
    }
    const prev = files.get(t.file);
    files.set(t.file, { before: prev ? prev.before : text, after: p.after });
    outcomes.push({
      index: b.index,
      file: t.file,
      applied: true,
      rule: p.rule,
      detail: p.detail + t.note,
      ...(p.score !== undefined ? { score: p.score } : {}),
      path_from: t.from,
      ...(p.indent ? { indent: p.indent } : {}),
    });
  }
  outcomes.sort((a, b) => a.index - b.index);
  return { outcomes, files };
}
