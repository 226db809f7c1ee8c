/**
 * Mutants of a gold patch, for the fail-to-pass audit (`swe5g.audit`): predictions a test must
 * reject (they do not fix the bug) and rewrites it must accept (they fix it as the gold does).
 * Built from the gold patch and the Strategy B fix sites of testgen (patterns.ts) through
 * tree-sitter; the language-specific text is in syntax.ts. Every mutant is one prediction: all
 * guards of the patch mutated together, as a git diff against base_commit.
 *
 * Must NOT resolve:
 * - `noop`: the parent, with each guard's condition evaluated in an `if` with an empty body,
 *   inserted before the use it protects (Go `if X == nil {}`, C `if (X == NULL) { }`, Python
 *   `if X is None: pass`);
 * - `empty_body`: the gold patch with each guard's body emptied;
 * - `dead_code`: the parent with the gold guard in code that never runs (Go `if false {}`, C
 *   `if (0) {}`, Python `if False:`); C also `dead_code_preproc` (`#if 0`). A site that is not in
 *   an `if` condition (`ogs_assert(OGS_OK == f(...))`, an assignment) has no guard, but its
 *   statement goes into dead code the same way: a test that only counts the site's text accepts
 *   it (the other kinds need a guard and are `not_applicable` there).
 * MUST resolve:
 * - `via_local`: the gold, with the first unconditionally tested value of each guard through a
 *   local variable (Go `v := X; if v == nil`, C `__auto_type v = X;`, Python `v = X`);
 * - `inverted`: the gold with each guard's condition negated and its branches swapped;
 * - `else_branch`: the gold with each early-exit guard's following statements moved into an
 *   `else` (early return vs else).
 * A kind that fits no guard of an instance is `not_applicable`, with why.
 */
import {
  parseSource,
  type Node,
  type SourceLanguage,
} from '../../../pipeline/providers/treesitter/parser.js';
import { toGitPatch } from '../testgen/patchfile.js';
import type { FixSite } from '../testgen/patterns.js';
import { guardsOf, indentAt, type Guard, type NoGuard, type StatementSite } from './guards.js';
import { indentLines, SYNTAX } from './syntax.js';
import { testsGoodValue } from './polarity.js';
import { parentPlace } from './place.js';
import type { MutantExpectation, MutantKind } from '../types.js';

/**
 * The kinds whose builder reads only a statement's text, indentation and parent line (no
 * condition or body), so they apply to a fix site's statement when it is in no `if` condition.
 */
const DEAD_KINDS: ReadonlySet<MutantKind> = new Set(['dead_code', 'dead_code_preproc']);

/** Every mutant kind with what a sound test does with it. */
export const MUTANT_KINDS: Record<MutantKind, MutantExpectation> = {
  noop: 'reject',
  empty_body: 'reject',
  dead_code: 'reject',
  dead_code_preproc: 'reject',
  via_local: 'resolve',
  inverted: 'resolve',
  else_branch: 'resolve',
};

/** One changed file of the gold patch, at the parent and after the fix. */
export interface GoldFile {
  path: string;
  /** Null for a file of no audited language (kept as the gold has it, or reverted). */
  language: SourceLanguage | null;
  parentSource: string | null;
  fixSource: string | null;
}

/** One mutant: its patch (a git diff against base_commit), or why it does not apply. */
export interface Mutant {
  kind: MutantKind;
  expectation: MutantExpectation;
  patch: string | null;
  /** The mutated files' texts (for checks), empty when not applicable. */
  files: { path: string; content: string }[];
  not_applicable?: string;
}

/** A text edit: replace [start, end) of a file's text (UTF-16 indices) by `text`. */
interface Edit {
  start: number;
  end: number;
  text: string;
}

function applyEdits(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start);
  let out = text;
  let floor = Infinity;
  for (const e of sorted) {
    if (e.end > floor) continue; // overlapping (a guard inside another's body): outer wins
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
    floor = e.start;
  }
  return out;
}

/** Index of the start of 1-based `line` in `text`. */
function lineStart(text: string, line: number): number {
  let i = 0;
  for (let l = 1; l < line && i >= 0; l++) i = text.indexOf('\n', i) + 1;
  return i <= 0 && line > 1 ? text.length : i;
}

/** The guard statement as its lines stand in the source (first line with its indentation). */
const guardLines = (g: Guard): string => g.indent + g.node.text;

/** Leading text of `n`'s line before it is only whitespace (the statement starts its line). */
const startsLine = (text: string, n: Node): boolean =>
  /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', n.startIndex - 1) + 1, n.startIndex));

/** Parents in which a guard is one statement of a list (a local may go before it). */
const SINGLE_STATEMENT_PARENTS = new Set([
  'if_statement',
  'else_clause',
  'for_statement',
  'while_statement',
  'do_statement',
  'labeled_statement',
]);

function inStatementList(g: Guard): boolean {
  return !!g.node.parent && !SINGLE_STATEMENT_PARENTS.has(g.node.parent.type);
}

/** The first node (preorder) under `root` whose text is `text`. */
function findText(root: Node, text: string): Node | null {
  if (root.text === text) return root;
  for (const c of root.namedChildren) {
    const f = c ? findText(c, text) : null;
    if (f) return f;
  }
  return null;
}

/**
 * The operand of the guard's first null check that is always evaluated (left of every `&&`/`||`
 * above it): a local may hold it before the guard without changing what runs.
 */
function unconditionalOperand(g: Guard): Node | null {
  const syn = SYNTAX[g.language];
  for (const s of g.sites) {
    if (!s.pattern.operand) continue;
    const check = findText(g.condition, s.pattern.text);
    if (!check) continue;
    let ok = true;
    for (let n: Node = check; n.id !== g.condition.id && n.parent; n = n.parent) {
      const left = syn.shortCircuitLeft(n.parent);
      if (left && !(n.startIndex >= left.startIndex && n.endIndex <= left.endIndex)) ok = false;
    }
    const operand = ok ? findText(check, s.pattern.operand) : null;
    if (operand) return operand;
  }
  return null;
}

/** Statements of a body: the block's statements, or the body itself when it is one statement. */
function statementsOf(body: Node): Node[] {
  const list = ['block', 'compound_statement'].includes(body.type)
    ? body.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment')
    : [body];
  return list;
}

/** The text of a Python block with its first line's indentation (lines as they stand). */
const pyBlock = (text: string, b: Node): string => indentAt(text, b.startIndex) + b.text;

type Built = Edit | string; // an edit, or why the kind does not fit this guard

/** Edits of one kind for one guard; `text` is the file the kind starts from (parent or fix). */
const BUILDERS: Record<
  MutantKind,
  { from: 'parent' | 'fix'; edit(g: Guard, text: string, i: number): Built }
> = {
  noop: {
    from: 'parent',
    edit(g, text) {
      if (g.parentPlace) return g.parentPlace;
      const at = lineStart(text, g.parentLine);
      return { start: at, end: at, text: SYNTAX[g.language].emptyIf(g.condition.text, g.indent) };
    },
  },
  dead_code: {
    from: 'parent',
    edit(g, text) {
      if (g.parentPlace) return g.parentPlace;
      const at = lineStart(text, g.parentLine);
      return { start: at, end: at, text: SYNTAX[g.language].deadCode(guardLines(g), g.indent)[0]! };
    },
  },
  dead_code_preproc: {
    from: 'parent',
    edit(g, text) {
      const dead = SYNTAX[g.language].deadCode(guardLines(g), g.indent)[1];
      if (!dead) return `no preprocessor in ${g.language}`;
      const at = lineStart(text, g.parentLine);
      return { start: at, end: at, text: dead };
    },
  },
  empty_body: {
    from: 'fix',
    edit(g) {
      if (statementsOf(g.consequence).length === 0 || g.consequence.text.trim() === '{}')
        return 'the guard body is already empty';
      // only the bad-value branch's body is the fix's handling: where the body runs for a good
      // value (`X != nil && ...`), emptying it drops the guarded use, a fix of its own
      if (testsGoodValue(g))
        return 'the guard body runs for a good value that it uses (the operand tested `!= nil` / `is not None` or as a truth value)';
      const c = g.consequence;
      return { start: c.startIndex, end: c.endIndex, text: SYNTAX[g.language].emptyBody(g.indent) };
    },
  },
  via_local: {
    from: 'fix',
    edit(g, text, i) {
      if (!inStatementList(g) || !startsLine(text, g.node))
        return 'the guard is not a statement of a block';
      if (g.node.childForFieldName('initializer')) return 'the guard has an initializer';
      const op = unconditionalOperand(g);
      if (!op) return 'no null check of the guard is always evaluated';
      const syn = SYNTAX[g.language];
      const name = syn.localName(i + 1);
      const cond =
        g.node.text.slice(0, op.startIndex - g.node.startIndex) +
        name +
        g.node.text.slice(op.endIndex - g.node.startIndex);
      return {
        start: g.node.startIndex,
        end: g.node.endIndex,
        text: `${syn.local(name, op.text, '').trimEnd()}\n${g.indent}${cond}`,
      };
    },
  },
  inverted: {
    from: 'fix',
    edit(g, text) {
      return invert(g, text);
    },
  },
  else_branch: {
    from: 'fix',
    edit(g, text) {
      return elseBranch(g, text);
    },
  },
};

/** The guard with its condition negated and its branches swapped. */
function invert(g: Guard, text: string): Built {
  const syn = SYNTAX[g.language];
  const { condition: cond, consequence: cons, alternative: alt, indent: ind } = g;
  const not = syn.not(cond.text);
  let out: string;
  if (g.language === 'go') {
    if (g.node.childForFieldName('initializer')) return 'the guard has an initializer';
    const first = alt
      ? alt.type === 'block'
        ? alt.text
        : `{\n${ind}\t${alt.text}\n${ind}}`
      : `{\n${ind}}`;
    out = `if ${not} ${first} else ${cons.text}`;
  } else if (g.language === 'c') {
    out = `if ${not} ${alt ? `{ ${alt.text} }` : '{ }'} else ${cons.text}`;
  } else {
    if (cons.startPosition.row === g.node.startPosition.row) return 'the guard body is on its line';
    const first = alt ? pyBlock(text, alt) : `${ind}    pass`;
    out = `if ${not}:\n${first}\n${ind}else:\n${pyBlock(text, cons)}`;
  }
  return { start: g.node.startIndex, end: g.node.endIndex, text: out };
}

/** The early-exit guard with the statements after it moved into an `else`. */
function elseBranch(g: Guard, text: string): Built {
  if (g.alternative) return 'the guard already has an else';
  const last = statementsOf(g.consequence).at(-1);
  if (!last || !SYNTAX[g.language].exits.has(last.type))
    return 'the guard body does not end with an exit (return)';
  const rest: Node[] = [];
  for (let n = g.node.nextNamedSibling; n; n = n.nextNamedSibling) rest.push(n);
  const end = rest.filter((n) => n.type !== 'comment').at(-1);
  if (!end) return 'no statement follows the guard';
  if (!inStatementList(g)) return 'the guard is not a statement of a block';
  const after = text.slice(g.node.endIndex, end.endIndex);
  if (g.language !== 'python')
    return { start: g.node.endIndex, end: end.endIndex, text: ` else {${after}\n${g.indent}}` };
  const unit = indentAt(text, g.consequence.startIndex).slice(g.indent.length) || '    ';
  const nl = after.indexOf('\n');
  return {
    start: g.node.endIndex,
    end: end.endIndex,
    text: `\n${g.indent}else:\n${indentLines(after.slice(nl + 1), unit)}`,
  };
}

/**
 * The mutants of a gold patch (one per kind of {@link MUTANT_KINDS}).
 * @param files every file of the gold patch at the parent and after the fix
 * @param sites the Strategy B fix sites of the patch (testgen's `deriveFixSites`)
 * @param patch the gold patch (its hunks place each guard's use in the parent file)
 * @returns every kind, each with its patch or `not_applicable` and why
 */
export async function generateMutants(
  files: readonly GoldFile[],
  sites: readonly FixSite[],
  patch: string,
): Promise<Mutant[]> {
  const guards: Guard[] = [];
  const none: NoGuard[] = [];
  const statements: StatementSite[] = [];
  const trees: { delete(): void }[] = [];
  try {
    for (const f of files) {
      // every kind of site (a null check, a comparison `OGS_OK == f(...)`, an expression): the
      // mutants copy the guard's condition, so a text-counting test of any site is audited
      const mine = sites.filter((s) => s.file === f.path);
      if (!f.language || f.fixSource === null || mine.length === 0) continue;
      const tree = await parseSource(f.language, f.fixSource);
      trees.push(tree);
      const r = guardsOf(tree, f.fixSource, f.path, f.language, mine, patch);
      // where the parent-based kinds insert: inside a function body of the parent, or nowhere
      const parent = f.parentSource === null ? null : await parseSource(f.language, f.parentSource);
      if (parent) trees.push(parent);
      for (const g of [...r.guards, ...r.statements])
        g.parentPlace = parentPlace(parent, f.parentSource ?? '', g.parentLine, g.indent, g.node);
      guards.push(...r.guards);
      none.push(...r.none);
      statements.push(...r.statements);
    }
    return (Object.keys(MUTANT_KINDS) as MutantKind[]).map((kind) =>
      guards.length === 0 && statements.length > 0 && DEAD_KINDS.has(kind)
        ? mutantOf(kind, files, statements as Guard[], none, sites.length)
        : mutantOf(kind, files, guards, none, sites.length),
    );
  } finally {
    for (const t of trees) t.delete();
  }
}

function mutantOf(
  kind: MutantKind,
  files: readonly GoldFile[],
  guards: Guard[],
  none: NoGuard[],
  siteCount: number,
): Mutant {
  const expectation = MUTANT_KINDS[kind];
  const na = (why: string): Mutant => ({
    kind,
    expectation,
    patch: null,
    files: [],
    not_applicable: why,
  });
  if (guards.length === 0)
    return na(
      siteCount === 0
        ? 'the gold patch has no Strategy B fix site'
        : `no guard: ${none.map((n) => n.why).join('; ') || 'no fix site in an if condition'}`,
    );
  const b = BUILDERS[kind];
  if (b.from === 'fix' && files.some((f) => f.fixSource === null))
    return na('the gold patch deletes a file');
  const why: string[] = [];
  const out: { path: string; content: string; before: string | null }[] = [];
  let applied = 0;
  for (const f of files) {
    const base = b.from === 'parent' ? f.parentSource : f.fixSource;
    if (base === null) continue; // created by the gold: absent from a parent-based mutant
    const edits: Edit[] = [];
    guards
      .filter((g) => g.file === f.path)
      .forEach((g, i) => {
        const e = b.edit(g, base, i);
        if (typeof e === 'string') why.push(`${g.file}:${g.node.startPosition.row + 1}: ${e}`);
        else edits.push(e);
      });
    applied += edits.length;
    const content = applyEdits(base, edits);
    if (content !== f.parentSource) out.push({ path: f.path, content, before: f.parentSource });
  }
  if (applied === 0) return na(why.join('; '));
  return {
    kind,
    expectation,
    patch: toGitPatch(out),
    files: out.map(({ path, content }) => ({ path, content })),
  };
}
