/**
 * The inputs of a C Strategy A call (strategyA-c.ts), read from the fixed function with
 * tree-sitter: how each parameter is built (pointers point at zeroed memory blocks, values are
 * zeroed), which pointers the function dereferences through its parameters (`p->a->b` needs
 * `p->a` allocated, so the call reaches the guarded code), and the crash-triggering value of each
 * guard the fix adds: the value its bad branch (the one that returns, jumps or aborts) is taken
 * for — NULL for a null check, 0 for `!n` / `n == 0` / `n < K`, the type's largest value for
 * `n > K` / `n >= K` (out of range by far, so an unchecked index or length faults instead of
 * landing inside the zeroed block), K for `n == K` with K a constant.
 */
import type { Node } from '../../../pipeline/providers/treesitter/parser.js';
import type { FixSite } from './patterns.js';
import { MIRROR, NEGATE } from './condition.js';

/** One parameter of the called function. */
export interface CParam {
  /** Source name, or null for an unnamed parameter. */
  name: string | null;
  /** The type to declare the argument with, qualifiers dropped (`ngsetup_t *`). */
  type: string;
  /** Pointer levels (an array parameter counts as one). */
  pointers: number;
}

/** One guarded value: the argument path (`p->gnb_id`) and the C expression it is set to. */
export interface BadValue {
  path: string;
  /**
   * `null` (memset to zero), `max` (the largest value of its type), `truthy` (a pointer at a
   * zeroed block, any other type 1: c-preconditions.ts), or a C expression.
   */
  value: 'null' | 'max' | 'truthy' | { expr: string };
  /** Where it came from, for the record (`p->len > 16`). */
  from: string;
}

/** Reads the parameters of a C function definition, or why one cannot be built simply. */
export function cParams(fn: Node): { ok: true; params: CParam[] } | { ok: false; reason: string } {
  let d = fn.childForFieldName('declarator');
  while (d && d.type !== 'function_declarator') d = d.childForFieldName('declarator');
  const list = d?.childForFieldName('parameters');
  const params: CParam[] = [];
  for (const p of list?.namedChildren ?? []) {
    if (!p || p.type === 'variadic_parameter' || p.type === 'comment') continue;
    if (p.type !== 'parameter_declaration') return { ok: false, reason: `parameter ${p.text}` };
    const decl = p.childForFieldName('declarator');
    let pointers = 0;
    let name: string | null = null;
    for (let n: Node | null = decl; n;) {
      if (n.type === 'identifier') {
        name = n.text;
        break;
      }
      if (n.type === 'function_declarator' || n.type === 'abstract_function_declarator')
        return { ok: false, reason: `parameter ${p.text} is a function pointer` };
      if (n.type.endsWith('pointer_declarator') || n.type.endsWith('array_declarator')) pointers++;
      n = n.childForFieldName('declarator') ?? n.namedChildren.find((c) => c !== null) ?? null;
    }
    const specifiers = p.text
      .slice(0, decl ? decl.startIndex - p.startIndex : undefined)
      .replace(/\b(const|volatile|register|restrict|__restrict)\b/g, '')
      .replace(/\s+/g, ' ')
      .trim();
    if (specifiers === 'void' && pointers === 0 && !decl) continue; // f(void)
    if (/\bva_list\b/.test(specifiers))
      return { ok: false, reason: `parameter ${p.text} is a va_list` };
    params.push({
      name,
      type: `${specifiers}${pointers ? ` ${'*'.repeat(pointers)}` : ''}`,
      pointers,
    });
  }
  return { ok: true, params };
}

/** `p`, `p->a`, `p->a.b`: a path of fields from an identifier, as written without spaces. */
export function pathOf(n: Node | null): string | null {
  if (!n) return null;
  if (n.type === 'identifier') return n.text;
  if (n.type === 'parenthesized_expression') return pathOf(n.namedChildren[0] ?? null);
  if (n.type === 'field_expression') {
    const arg = pathOf(n.childForFieldName('argument'));
    const field = n.childForFieldName('field')?.text;
    const op = n.children.find((c) => c?.type === '->' || c?.type === '.')?.type;
    return arg && field && op ? `${arg}${op}${field}` : null;
  }
  return null;
}

/** The parameter an argument path starts from (`p` of `p->a.b`). */
export const rootOf = (path: string): string => /^\w+/.exec(path)![0];

/**
 * The paths the function dereferences through a parameter (`A` of every `A->f`, `A[i]`, `*A`),
 * shortest first: each is allocated before the call so the call reaches the guarded code.
 */
export function dereferencedPaths(body: Node, params: Set<string>): string[] {
  const out = new Set<string>();
  const walk = (n: Node): void => {
    let target: Node | null = null;
    if (n.type === 'field_expression' && n.children.some((c) => c?.type === '->'))
      target = n.childForFieldName('argument');
    else if (n.type === 'subscript_expression') target = n.childForFieldName('argument');
    else if (n.type === 'pointer_expression' && n.children[0]?.type === '*')
      target = n.childForFieldName('argument');
    const path = pathOf(target);
    if (path && params.has(rootOf(path)) && path.includes('->')) out.add(path);
    else if (path && params.has(rootOf(path)) && path.includes('.')) out.add(path);
    for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(body);
  return [...out].sort((a, b) => a.split(/->|\./).length - b.split(/->|\./).length);
}

/** True when the statement (a branch of an `if`) returns, jumps or aborts somewhere inside. */
function terminates(n: Node | null): boolean {
  if (!n) return false;
  if (/^(return|goto|break|continue)_statement$/.test(n.type)) return true;
  if (n.type === 'call_expression') {
    const f = n.childForFieldName('function')?.text ?? '';
    if (/^(abort|exit|_exit|ogs_assert_if_reached)$/.test(f)) return true;
  }
  if (n.type === 'expression_statement' && /^\s*\w*(return|goto)\w*\s*\(/.test(n.text)) return true;
  return n.namedChildren.some((c) => c !== null && c.type !== 'if_statement' && terminates(c));
}

/** True for an expression the test can spell: numbers, macros, sizeof, argument paths. */
export function constantLike(n: Node, params: Set<string>): boolean {
  if (n.type === 'sizeof_expression') return true;
  if (n.type === 'number_literal' || n.type === 'char_literal' || n.type === 'null') return true;
  if (n.type === 'identifier') return /^[A-Z_][A-Z0-9_]*$/.test(n.text) || params.has(n.text);
  if (n.type === 'field_expression') {
    const p = pathOf(n);
    return p !== null && params.has(rootOf(p));
  }
  if (/^(binary|parenthesized|unary|cast)_expression$/.test(n.type) || n.type === 'type_descriptor')
    return n.namedChildren.every((c) => c === null || constantLike(c, params));
  return false;
}

/**
 * Values that make `cond` hold when `want` is true (fail when false): conjunctions need every
 * part, disjunctions one (the first that gives a value).
 */
function valuesFor(
  cond: Node,
  want: boolean,
  params: Set<string>,
  prefer?: string,
): BadValue[] | null {
  const t = cond.type;
  if (t === 'parenthesized_expression')
    return valuesFor(cond.namedChildren[0]!, want, params, prefer);
  const path = pathOf(cond);
  if (path) {
    if (!params.has(rootOf(path))) return null;
    return want ? null : [{ path, value: 'null', from: cond.text }];
  }
  if (t === 'unary_expression' && cond.children[0]?.type === '!')
    return valuesFor(cond.childForFieldName('argument')!, !want, params, prefer);
  if (t !== 'binary_expression') return null;
  const op = cond.childForFieldName('operator')?.text ?? '';
  const l = cond.childForFieldName('left')!;
  const r = cond.childForFieldName('right')!;
  if (op === '&&' || op === '||') {
    const all = (op === '&&') === want;
    const a = valuesFor(l, want, params, prefer);
    const b = valuesFor(r, want, params, prefer);
    if (all) return a && b ? [...a, ...b] : null;
    // one side suffices: the one on the site's operand, else the first that gives a value
    return (prefer && b?.some((v) => v.path === prefer) ? b : null) ?? a ?? b;
  }
  if (!NEGATE[op]) return null;
  let o = want ? op : NEGATE[op]!;
  let lp = pathOf(l);
  let other = r;
  if (!lp || !params.has(rootOf(lp))) {
    lp = pathOf(r);
    other = l;
    o = MIRROR[o] ?? o;
  }
  if (!lp || !params.has(rootOf(lp))) return null;
  const zero = other.type === 'null' || other.text === 'NULL' || other.text === '0';
  const konst = constantLike(other, params);
  let value: BadValue['value'] | null = null;
  if (o === '==') value = zero ? 'null' : konst ? { expr: other.text } : null;
  else if (o === '!=') value = zero ? null : konst ? { expr: `(${other.text}) + 1` } : null;
  else if (o === '>' || o === '>=') value = 'max';
  else if (o === '<')
    value = /^(0+|-.*)$/.test(other.text) ? { expr: `(${other.text}) - 1` } : 'null';
  else value = /^-/.test(other.text) ? { expr: other.text } : 'null';
  return value ? [{ path: lp, value, from: cond.text }] : null;
}

/** The innermost `if` whose condition holds 0-based row `row`, inside `body`. */
function ifAt(body: Node, row: number): Node | null {
  let best: Node | null = null;
  const walk = (n: Node): void => {
    if (n.startPosition.row > row || n.endPosition.row < row) return;
    if (n.type === 'if_statement') {
      const c = n.childForFieldName('condition');
      if (c && c.startPosition.row <= row && c.endPosition.row >= row) best = n;
    }
    for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(body);
  return best;
}

/**
 * The crash-triggering values of the fix's guards in the fixed function: per site, the `if`
 * holding its line; its bad branch is the then-branch when that terminates, else the else side;
 * a null check whose `if` gives nothing (an assertion, a `&&` in an expression) sets its operand
 * to NULL. Values on paths not rooted at a parameter are dropped (`ignored` says which).
 */
export function badValues(
  body: Node,
  sites: FixSite[],
  params: Set<string>,
): { values: BadValue[]; ignored: string[] } {
  const values: BadValue[] = [];
  const ignored: string[] = [];
  const seen = new Set<string>();
  for (const s of sites) {
    const iff = ifAt(body, s.line - 1);
    const cond = iff?.childForFieldName('condition') ?? null;
    const op = s.guard?.operand ?? s.pattern.operand;
    const prefer = op?.replace(/\s+/g, '');
    const bad = terminates(iff?.childForFieldName('consequence') ?? null);
    let vs = cond ? valuesFor(cond, bad, params, prefer) : null;
    if ((!vs || vs.length === 0) && s.pattern.kind === 'null_check' && op) {
      const p = op.replace(/\s+/g, '');
      vs =
        params.has(rootOf(p)) && /^\w+((->|\.)\w+)*$/.test(p)
          ? [{ path: p, value: 'null', from: s.pattern.text }]
          : null;
    }
    if (!vs) {
      ignored.push(`${s.pattern.text} (no argument path)`);
      continue;
    }
    for (const v of vs)
      if (!seen.has(v.path)) {
        seen.add(v.path);
        values.push(v);
      }
  }
  return { values, ignored };
}
