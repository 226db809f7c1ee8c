/**
 * The guards of a gold patch: for each Strategy B fix site (stages/swe5g/testgen/patterns.ts,
 * `FixSite`: file, line, pattern text), the `if` statement of the fixed file whose condition holds
 * the site's check, and the line of the parent file where the guard protects its use (from the
 * gold diff's hunks). Read with tree-sitter; the audit's mutants are built from these.
 */
import type * as jsdiffTypes from 'diff';
import { lazy } from '../../../pipeline/lazy.js';
import type { Node, SourceLanguage, Tree } from '../../../pipeline/providers/treesitter/parser.js';
import type { FixSite } from '../testgen/patterns.js';

const jsdiff = lazy<typeof jsdiffTypes>('diff');

/** One guard of the gold patch: an `if` statement of the fixed file and its sites. */
export interface Guard {
  file: string;
  language: SourceLanguage;
  /** The `if` statement in the fixed file's tree. */
  node: Node;
  condition: Node;
  consequence: Node;
  /** The else part (C/Python: the clause's statement or block), null when none. */
  alternative: Node | null;
  /** Leading whitespace of the guard's first line. */
  indent: string;
  /** 1-based line of the parent file before which the guard protects its use. */
  parentLine: number;
  /**
   * Why a statement cannot go before that line of the parent (place.ts, set by the mutant
   * generator), or null when it can.
   */
  parentPlace?: string | null;
  sites: FixSite[];
}

/** A site that gave no guard, with why. */
export interface NoGuard {
  site: FixSite;
  why: string;
}

/**
 * The statement of the fixed file holding a site that is not in an `if` condition (an
 * `ogs_assert(OGS_OK == f(...))`, an assignment, a `return x != nil`): no guard to empty or
 * bypass, but the statement can still be put in dead code at the parent, which a test that only
 * counts the site's text accepts.
 */
export type StatementSite = Pick<
  Guard,
  'file' | 'language' | 'node' | 'indent' | 'parentLine' | 'parentPlace' | 'sites'
>;

/** Node types whose named children are statements (a block of any of the three languages). */
const BLOCKS = new Set(['compound_statement', 'block', 'statement_list', 'module']);

/** The statement holding `n`: its nearest ancestor (or itself) whose parent is a block. */
function statementOf(n: Node): Node | null {
  for (let s: Node | null = n; s?.parent; s = s.parent) {
    if (BLOCKS.has(s.parent.type)) return s;
    if (/function|method|class/.test(s.parent.type) && !BLOCKS.has(s.parent.type)) return null;
  }
  return null;
}

/** Leading whitespace of the line holding `index` in `text`. */
export function indentAt(text: string, index: number): string {
  const start = text.lastIndexOf('\n', index - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/**
 * For a 1-based line of the fixed file, the 1-based line of the parent file before which its
 * change begins: the first removed or added line of the change run holding it (a context line
 * maps to itself).
 * @returns null when the file's diff holds no such line
 */
export function parentLineOf(patch: string, file: string, fixLine: number): number | null {
  const f = jsdiff()
    .parsePatch(patch)
    .find((p) => (p.newFileName ?? '').replace(/^b\//, '') === file);
  if (!f) return null;
  let last = fixLine; // before the first hunk, lines are unchanged
  for (const h of f.hunks) {
    if (h.newStart > fixLine) break;
    let oldLine = h.oldStart;
    let newLine = h.newStart;
    let runOld: number | null = null;
    for (const l of h.lines) {
      if (l.startsWith(' ')) {
        if (newLine === fixLine) return oldLine;
        runOld = null;
        oldLine++;
        newLine++;
      } else if (l.startsWith('-')) {
        runOld ??= oldLine;
        oldLine++;
      } else if (l.startsWith('+')) {
        runOld ??= oldLine;
        if (newLine === fixLine) return runOld;
        newLine++;
      }
    }
    last = fixLine - newLine + oldLine;
  }
  return last;
}

/** The smallest-first preorder node on `row` whose text is `text`, or null. */
function nodeAt(root: Node, row: number, text: string): Node | null {
  let found: Node | null = null;
  const walk = (n: Node): void => {
    if (found || n.startPosition.row > row || n.endPosition.row < row) return;
    if (n.startPosition.row === row && n.text === text) found = n;
    for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(root);
  return found;
}

const within = (n: Node, outer: Node): boolean =>
  n.startIndex >= outer.startIndex && n.endIndex <= outer.endIndex;

/** The statement of an else clause (C `else_clause`, Python `else_clause` body). */
function elseOf(ifNode: Node): Node | null | 'elif' {
  const alts = ifNode.childrenForFieldName('alternative').filter((c): c is Node => c !== null);
  if (alts.length === 0) return null;
  if (alts.length > 1 || alts[0]!.type === 'elif_clause') return 'elif';
  const a = alts[0]!;
  if (a.type === 'else_clause')
    return a.childForFieldName('body') ?? a.namedChildren.find((c) => c !== null) ?? null;
  return a;
}

/**
 * The guards of one fixed file: each site's check walked up to the `if` statement whose
 * condition holds it; sites in the same `if` share one guard.
 * @returns guards (in file order) and the sites that are not in an `if` condition, with why
 */
export function guardsOf(
  tree: Tree,
  fixSource: string,
  file: string,
  language: SourceLanguage,
  sites: readonly FixSite[],
  patch: string,
): { guards: Guard[]; none: NoGuard[]; statements: StatementSite[] } {
  const guards = new Map<number, Guard>();
  const none: NoGuard[] = [];
  const statements = new Map<number, StatementSite>();
  for (const site of sites) {
    const n = nodeAt(tree.rootNode, site.line - 1, site.pattern.text);
    if (!n) {
      none.push({ site, why: `no node "${site.pattern.text}" on line ${site.line}` });
      continue;
    }
    let g: Node | null = n.parent;
    while (g && g.type !== 'if_statement' && !/function|method|class/.test(g.type)) g = g.parent;
    const cond = g?.type === 'if_statement' ? g.childForFieldName('condition') : null;
    if (!g || !cond || !within(n, cond)) {
      none.push({ site, why: `"${site.pattern.text}" is not in an if condition` });
      const st = statementOf(n);
      const line = st && parentLineOf(patch, file, st.startPosition.row + 1);
      if (st && line !== null && line !== undefined && startsOwnLine(fixSource, st)) {
        const known = statements.get(st.startIndex);
        if (known) known.sites.push(site);
        else
          statements.set(st.startIndex, {
            file,
            language,
            node: st,
            indent: indentAt(fixSource, st.startIndex),
            parentLine: line,
            sites: [site],
          });
      }
      continue;
    }
    const alt = elseOf(g);
    const known = guards.get(g.startIndex);
    if (known) {
      known.sites.push(site);
      continue;
    }
    const parentLine = parentLineOf(patch, file, g.startPosition.row + 1);
    if (parentLine === null || alt === 'elif') {
      none.push({
        site,
        why: alt === 'elif' ? 'the guard has elif clauses' : `${file} is not in the gold diff`,
      });
      continue;
    }
    guards.set(g.startIndex, {
      file,
      language,
      node: g,
      condition: cond,
      consequence: g.childForFieldName('consequence')!,
      alternative: alt,
      indent: indentAt(fixSource, g.startIndex),
      parentLine,
      sites: [site],
    });
  }
  return {
    guards: [...guards.values()].sort((a, b) => a.node.startIndex - b.node.startIndex),
    none,
    statements: [...statements.values()].sort((a, b) => a.node.startIndex - b.node.startIndex),
  };
}

/** Whether only whitespace precedes `n` on its line (the statement can be moved as lines). */
function startsOwnLine(text: string, n: Node): boolean {
  return /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', n.startIndex - 1) + 1, n.startIndex));
}
