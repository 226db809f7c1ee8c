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
 * `!` / `not` and through conjunctions (`&&`, `and`) and parentheses only, and then used (in
 * the rest of the condition or in the body). Anything else (a disjunction, a call, a ternary on
 * the way; a flag tested and not used) is not known to be good, so the body is emptied.
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
 * or null when the path to the root is not a plain conjunction of such tests.
 */
function need(operand: Node, root: Node): 'good' | 'bad' | null {
  let n = operand;
  let good: boolean;
  const p = n.parent;
  // the test itself: `X != NULL`, `X == nil`, `X is not None`, or X alone (its truth value)
  if (p && ['binary_expression', 'comparison_operator'].includes(p.type)) {
    const op = opOf(p);
    const other = p.namedChildren.find((c) => c !== null && c.id !== n.id) ?? null;
    if (['!=', 'is not'].includes(op) && isNull(other)) good = true;
    else if (['==', 'is'].includes(op) && isNull(other)) good = false;
    else if (['&&', '||', 'and', 'or'].includes(op)) good = true;
    else return null;
    if (!['&&', '||', 'and', 'or'].includes(op)) n = p;
  } else if (p?.type === 'boolean_operator' || p?.type === 'not_operator') good = true;
  else if (p?.type === 'unary_expression' && opOf(p) === '!') good = true;
  else if (p?.type === 'parenthesized_expression' || n.id === root.id) good = true;
  else return null;
  for (; n.id !== root.id; n = n.parent!) {
    const up = n.parent;
    if (!up) return null;
    const op = opOf(up);
    if (up.type === 'parenthesized_expression' || up.type === 'condition_clause') continue;
    if ((up.type === 'unary_expression' && op === '!') || up.type === 'not_operator') good = !good;
    else if (
      ['binary_expression', 'boolean_operator'].includes(up.type) &&
      ['&&', 'and'].includes(op)
    )
      continue;
    else return null;
  }
  return good ? 'good' : 'bad';
}

/** Occurrences of `operand` (whitespace aside) in `text` as a whole expression, not inside a name. */
function uses(text: string, operand: string): number {
  const e = squash(operand).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return (squash(text).match(new RegExp(`(?<![\\w.>])${e}(?!\\w)`, 'g')) ?? []).length;
}

/**
 * Whether the guard's body runs only for a good value that it then uses (see the module comment):
 * some null-check site's operand is needed non-null by the condition, and is used after the test
 * (again in the condition, `p && p->n`, or in the body). A flag tested for truth and not used
 * (`if (failed) {...}`, `if (ip->ipv4 && ip->ipv6) {...}`: real Open5GS 2874, 2857) is a branch
 * choice, whose emptied body is a wrong fix, so it is not such a guard; nor is a comparison site
 * (it has no operand).
 */
export function testsGoodValue(g: Pick<Guard, 'condition' | 'consequence' | 'sites'>): boolean {
  return g.sites.some((s) => {
    const op = s.pattern.operand;
    if (!op) return false;
    const good = nodesWithText(g.condition, op).some((n) => need(n, g.condition) === 'good');
    return good && (uses(g.condition.text, op) > 1 || uses(g.consequence.text, op) > 0);
  });
}
