/**
 * Which value of a guard's tested operand its body runs for (the audit's `empty_body` kind reads
 * it, mutants.ts): a body that runs only when the operand is *good* (non-null, truthy) is where
 * the value is used, so emptying it removes the use (a fix of its own, not a broken one); a body
 * that runs for the *bad* value is the fix's handling, which `empty_body` must empty.
 *
 * Read on the condition's tree (tree-sitter nodes of C, Go and Python), not its text: the operand
 * is found in the condition and walked up to the condition's root, counting negations. Good when
 * the operand is compared `!=` / `is not` with nil/NULL/None or stands bare as a truth value (C's
 * `if (p && p->n)`, `else if (opt && ...)`, Python's `if x and x.y:`), under an even number of
 * `!` / `not` and through conjunctions (`&&`, `and`; a disjunction under a negation) and
 * parentheses only, and then read in the body. Anything else (a call, a ternary on the way; a
 * flag tested and not read in the body) is not known to be good, so the body is emptied.
 */
import type { Node } from '../../../pipeline/providers/treesitter/parser.js';
import type { Guard } from './guards.js';

const NULLS = new Set(['nil', 'NULL', 'None', 'nullptr']);
const squash = (s: string): string => s.replace(/\s+/g, '');

/** The nodes under `root` whose text, without whitespace, is `text` without whitespace. */
function nodesWithText(root: Node, text: string): Node[] {
  const want = squash(text);
  const out: Node[] = [];
  const walk = (n: Node): void => {
    if (squash(n.text) === want) out.push(n);
    else if (n.text.length >= want.length) for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(root);
  return out;
}

const opOf = (n: Node): string =>
  n.childForFieldName('operator')?.text ??
  n.children
    .filter((c): c is Node => c !== null && !c.isNamed)
    .map((c) => c.text)
    .join(' ');

/** Whether `n` is a null literal of any of the three languages. */
const isNull = (n: Node | null): boolean => !!n && NULLS.has(n.text.trim());

/**
 * The truth value the condition needs from `operand` for the body to run: `good` (non-null), `bad`,
 * or null when the path to the root is not a conjunction of such tests. Negations are counted on
 * the whole path first, so a disjunction under an odd number of them is a conjunction (De Morgan:
 * `!(p == NULL || p->n == 0)` needs `p` good).
 */
function need(operand: Node, root: Node): 'good' | 'bad' | null {
  let n = operand;
  let good: boolean;
  const p = n.parent;
  // the test itself: `X != NULL`, `X == nil`, `X is not None`, or X alone (its truth value)
  const JUNCTIONS = ['&&', '||', 'and', 'or'];
  if (p && ['binary_expression', 'comparison_operator'].includes(p.type)) {
    const op = opOf(p);
    const other = p.namedChildren.find((c) => c !== null && c.id !== n.id) ?? null;
    if (['!=', 'is not'].includes(op) && isNull(other)) good = true;
    else if (['==', 'is'].includes(op) && isNull(other)) good = false;
    else if (JUNCTIONS.includes(op)) good = true;
    else return null;
    if (!JUNCTIONS.includes(op)) n = p;
  } else if (p?.type === 'boolean_operator' || p?.type === 'not_operator') good = true;
  else if (p?.type === 'unary_expression' && opOf(p) === '!') good = true;
  else if (p?.type === 'parenthesized_expression' || n.id === root.id) good = true;
  else return null;
  // the path up: each step a negation, a junction, or a parenthesis
  const path: ('not' | 'and' | 'or')[] = [];
  for (; n.id !== root.id; n = n.parent!) {
    const up = n.parent;
    if (!up) return null;
    const op = opOf(up);
    if (up.type === 'parenthesized_expression' || up.type === 'condition_clause') continue;
    if ((up.type === 'unary_expression' && op === '!') || up.type === 'not_operator')
      path.push('not');
    else if (
      ['binary_expression', 'boolean_operator'].includes(up.type) &&
      ['&&', 'and'].includes(op)
    )
      path.push('and');
    else if (
      ['binary_expression', 'boolean_operator'].includes(up.type) &&
      ['||', 'or'].includes(op)
    )
      path.push('or');
    else return null;
  }
  // a junction is a conjunction for the body when it is `and` under an even number of negations
  // (above it) or `or` under an odd number
  for (let i = 0; i < path.length; i++) {
    if (path[i] === 'not') continue;
    const negationsAbove = path.slice(i + 1).filter((x) => x === 'not').length;
    if ((path[i] === 'and') !== (negationsAbove % 2 === 0)) return null;
  }
  if (path.filter((x) => x === 'not').length % 2 === 1) good = !good;
  return good ? 'good' : 'bad';
}

/** Node types of an assignment, whose left side is written, not used. */
const ASSIGNMENTS = new Set([
  'assignment_expression',
  'assignment_statement',
  'assignment',
  'augmented_assignment',
  'update_expression',
  'inc_statement',
  'dec_statement',
]);

/** Whether `n` is (within) the left side of an assignment: a write of the value, not a use. */
function written(n: Node): boolean {
  for (let c: Node = n; c.parent; c = c.parent) {
    const up = c.parent;
    if (ASSIGNMENTS.has(up.type)) {
      const left = up.childForFieldName('left') ?? up.childForFieldName('argument');
      return !!left && c.startIndex >= left.startIndex && c.endIndex <= left.endIndex;
    }
    if (['expression_statement', 'compound_statement', 'block'].includes(up.type)) return false;
  }
  return false;
}

/**
 * Whether the guard's body runs only for a good value that it then uses (see the module comment):
 * some null-check site's operand is needed non-null by the condition, and the body reads it (a
 * node of the body's tree, not a write of it). A flag tested for truth and not read in the body
 * (`if (failed) {...}`, `if (ue->paging.failed) { ue->paging.failed = 0; }`: real Open5GS 2874,
 * 2857) is a branch choice, and a body that does not read the value (`if (sess && sess->closed)
 * { return -1; }`) refuses a bad state: emptying either is a wrong fix, so neither is such a
 * guard; nor is a comparison site (it has no operand).
 */
export function testsGoodValue(g: Pick<Guard, 'condition' | 'consequence' | 'sites'>): boolean {
  return g.sites.some((s) => {
    const op = s.pattern.operand;
    if (!op) return false;
    const good = nodesWithText(g.condition, op).some((n) => need(n, g.condition) === 'good');
    return good && nodesWithText(g.consequence, op).some((n) => !written(n));
  });
}
