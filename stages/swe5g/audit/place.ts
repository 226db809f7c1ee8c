/**
 * Where the audit's statement kinds (`noop`, `dead_code`: a statement inserted into the *parent*
 * file before the line a guard maps to, guards.ts `parentLine`) may go. A place fits when the
 * statement lands (1) in a function body of the parent, (2) at a statement boundary of it, and (3)
 * in the same function as the guard in the fix: same kind, same header (return type, name,
 * parameters). Otherwise the copy would not compile, or would name what the parent lacks: the fix
 * adds the function (Open5GS 2857) or rewrites it from above its head (2882), changes its
 * parameters, or adds a closure or nested function around the guard; or the change run starts in
 * the middle of a statement (a continuation line of a call). Read on tree-sitter trees of C, Go
 * and Python; a Python block has no closing token, so a place after a function's last statement
 * (a blank line, the next `def`, the end of the file) continues it when the guard is indented at
 * least as deep as that statement.
 */
import type { Node, Tree } from '../../../pipeline/providers/treesitter/parser.js';

/** Node types of a function body (C `compound_statement`, Go and Python `block`). */
const BODIES = new Set(['compound_statement', 'block']);
/** Node types of a function (C, Go, Python; Go closures too). */
const FUNCTIONS = new Set([
  'function_definition',
  'function_declaration',
  'method_declaration',
  'func_literal',
  'lambda',
]);
/** Parents of a statement: a statement inserted before it stays a statement of the same list. */
const STATEMENT_LISTS = new Set([
  ...BODIES,
  'statement_list',
  'case_statement',
  'labeled_statement',
  'expression_case',
  'default_case',
  'type_case',
  'communication_case',
  'module',
  'translation_unit',
  'source_file',
]);

/** The innermost function around `n` (itself included), or null. */
export function functionOf(n: Node | null): Node | null {
  for (let c = n; c; c = c.parent) if (FUNCTIONS.has(c.type)) return c;
  return null;
}

/** A function's kind and header (return type, name, parameters), comments and whitespace aside. */
export function functionIdentity(fn: Node): string {
  const body = fn.childForFieldName('body');
  const head = fn.children
    .filter((c): c is Node => c !== null && c.type !== 'comment')
    .filter((c) => !body || c.endIndex <= body.startIndex)
    .map((c) => c.text)
    .join('');
  return `${fn.type}:${head.replace(/\s+/g, '')}`;
}

/** The function whose body holds `index`: after a braced body's `{`, or a Python `def`'s `:`. */
function bodyFunctionAt(tree: Tree, index: number): Node | null {
  let body = false;
  for (let n: Node | null = tree.rootNode.descendantForIndex(index); n; n = n.parent) {
    const from = n.text.startsWith('{') ? n.startIndex + 1 : n.startIndex;
    if (BODIES.has(n.type) && index >= from && index < n.endIndex) body = true;
    if (FUNCTIONS.has(n.type)) {
      // a Python comment before the body's first statement is the function's child, not the block's
      const colon = n.children.find((c) => c?.type === ':');
      if (!body && colon && n.childForFieldName('body') && index >= colon.endIndex) body = true;
      return body ? n : null;
    }
  }
  return null;
}

/** Whether a statement inserted at `index` (a line's first non-blank character) stays one. */
function atStatementBoundary(tree: Tree, index: number): boolean {
  let n: Node | null = tree.rootNode.descendantForIndex(index);
  if (!n || n.startIndex !== index) return true; // a blank line, or whitespace between statements
  while (n.parent && n.parent.startIndex === index && !STATEMENT_LISTS.has(n.parent.type))
    n = n.parent;
  if (n.type === 'comment' || n.type === '}' || BODIES.has(n.type)) return true;
  return !!n.parent && STATEMENT_LISTS.has(n.parent.type);
}

/**
 * Why a statement indented `indent` cannot go before the 1-based `line` of the parent source, or
 * null when it can (see the module comment).
 * @param parent the parent file's tree; null when the fix creates the file
 * @param guardNode the guard (or the fix site's statement) in the fix's tree
 */
export function parentPlace(
  parent: Tree | null,
  source: string,
  line: number,
  indent: string,
  guardNode: Node,
): string | null {
  if (!parent) return 'the fix creates the file: the parent has no place for it';
  let at = 0;
  for (let l = 1; l < line && at >= 0; l++) at = source.indexOf('\n', at) + 1;
  if (at <= 0 && line > 1) at = source.length;
  const index = at + /^[ \t]*/.exec(source.slice(at))![0].length;
  let fn = bodyFunctionAt(parent, index);
  if (!fn && indent.length > 0) {
    // Python: after a function's last statement, an indented statement still continues it
    const before = source.slice(0, at).replace(/(\n[ \t]*(#[^\n]*)?)*\n?$/, '');
    const lineStart = before.lastIndexOf('\n') + 1;
    const lead = /^[ \t]*/.exec(before.slice(lineStart))![0];
    if (
      before.length > 0 &&
      lead.length >= indent.length &&
      /^[ \t]*def\b|:\s*$/.test(before.slice(lineStart)) === false
    )
      fn = bodyFunctionAt(parent, lineStart + lead.length);
  }
  if (!fn)
    return 'its place at the parent is outside any function body (the fix adds the function, or rewrites it from above its head): the statement would not compile there';
  const mine = functionOf(guardNode);
  if (!mine || functionIdentity(mine) !== functionIdentity(fn))
    return "its function at the parent is not the one it is in after the fix (the fix adds a closure or nested function around it, or changes the function's head): the statement would name what the parent lacks";
  if (!atStatementBoundary(parent, index))
    return 'its place at the parent is inside a statement (the change begins on a continuation line): the statement would not compile there';
  return null;
}
