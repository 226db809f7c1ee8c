/**
 * The crash-triggering inputs of a Python fix (issue 30, "Behavioural tests beyond Go"): the
 * guards the fix adds to a function, read with tree-sitter, each turned into the input that makes
 * the parent crash. Four forms:
 * - `none`: `x is None`, `x == None`, `not x` / `if x:` (when the parent never indexes x by
 *   position) on a parameter or a path from it (`req.pdu`, `self.session.ctx`) -> that value None;
 *   the parent crashes with an AttributeError/TypeError naming `NoneType`.
 * - `missing_key`: `"k" in d`, `"k" not in d`, `d.get("k")` (where the parent read `d["k"]`) ->
 *   `d` lacks `k`; the parent crashes with `KeyError('k')`.
 * - `empty`: `len(xs) == 0` / `> 0` / `< 1`, or `not xs` / `if xs:` where the parent read `xs[0]`
 *   -> `xs` is `[]` (a dict read by key: `{}`); the parent crashes with an IndexError (KeyError).
 * - `missing_attr`: `hasattr(o, "a")`, `getattr(o, "a", default)` -> `o` has no attribute `a`.
 * A guard counts when the fixed function holds more of it than the parent function (same rule as
 * Strategy B's counts). A local assigned once from a path (`node = req.get("ran") or {}`) stands
 * for that path (one level, as control.ts). Roots must be the function's parameters or `self`.
 */
import { parseSource, type Node } from '../../../pipeline/providers/treesitter/parser.js';
import { listFunctions, unparen } from './patterns.js';

/** One step of a value path: an attribute or a string key. */
export type PathStep = { attr: string } | { key: string };

/** A value reachable from an input: `root` is a parameter name or `self`. */
export interface PyPath {
  root: string;
  steps: PathStep[];
}

/** One crash-triggering input form (see the module comment). */
export type CrashForm =
  | { kind: 'none'; path: PyPath }
  | { kind: 'empty'; path: PyPath; container: 'list' | 'dict' }
  | { kind: 'missing_key'; path: PyPath; key: string }
  | { kind: 'missing_attr'; path: PyPath; attr: string };

/** The forms of one function, and why other guards gave none. */
export interface CrashInputs {
  forms: CrashForm[];
  /** Guards the fix adds that name no input (a local, a module global, `cls`), one line each. */
  skipped: string[];
}

/** `req.a["k"]` as text. */
export function pathText(p: PyPath): string {
  return (
    p.root +
    p.steps.map((s) => ('attr' in s ? `.${s.attr}` : `[${JSON.stringify(s.key)}]`)).join('')
  );
}

/** Short description of a form for records (`req.pdu=None`, `req lacks key "k"`). */
export function formText(f: CrashForm): string {
  const p = pathText(f.path);
  if (f.kind === 'none') return `${p}=None`;
  if (f.kind === 'empty') return `${p}=${f.container === 'list' ? '[]' : '{}'}`;
  if (f.kind === 'missing_key') return `${p} without key ${JSON.stringify(f.key)}`;
  return `${p} without attribute ${f.attr}`;
}

/** Value of a plain string literal (no f/b prefix, no interpolation), or null. */
export function stringValue(n: Node): string | null {
  const s = unparen(n);
  if (s.type !== 'string' || s.namedChildren.some((c) => c?.type === 'interpolation')) return null;
  const m = /^(?:[rRuU])?("""|'''|"|')([\s\S]*)\1$/.exec(s.text);
  return m && !/\\/.test(m[2]!) ? m[2]! : null;
}

/** The path an expression reads, or null (`x.get("k") or {}` reads `x["k"]`). */
function pathOf(n: Node): PyPath | null {
  const x = unparen(n);
  if (x.type === 'identifier') return { root: x.text, steps: [] };
  if (x.type === 'attribute') {
    const base = pathOf(x.childForFieldName('object')!);
    const attr = x.childForFieldName('attribute')?.text;
    return base && attr ? { root: base.root, steps: [...base.steps, { attr }] } : null;
  }
  if (x.type === 'subscript') {
    const base = pathOf(x.childForFieldName('value')!);
    const subs = x.childrenForFieldName('subscript').filter((c): c is Node => c !== null);
    const key = subs.length === 1 ? stringValue(subs[0]!) : null;
    return base && key !== null ? { root: base.root, steps: [...base.steps, { key }] } : null;
  }
  const get = getCall(x);
  if (get) return { root: get.path.root, steps: [...get.path.steps, { key: get.key }] };
  if (x.type === 'boolean_operator' && x.children.some((c) => c?.text === 'or'))
    return pathOf(x.childForFieldName('left')!);
  return null;
}

/** `d.get("k")` / `d.get("k", default)`: the container path and key, or null. */
function getCall(n: Node): { path: PyPath; key: string } | null {
  if (n.type !== 'call') return null;
  const fn = n.childForFieldName('function');
  if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'get') return null;
  const args = n.childForFieldName('arguments')?.namedChildren ?? [];
  const key = args[0] ? stringValue(args[0]) : null;
  const path = pathOf(fn.childForFieldName('object')!);
  return path && key !== null && args.length <= 2 ? { path, key } : null;
}

/** Name and arguments of a plain call `name(args)`. */
function plainCall(n: Node): { name: string; args: Node[] } | null {
  if (n.type !== 'call') return null;
  const fn = n.childForFieldName('function');
  if (fn?.type !== 'identifier') return null;
  const args = (n.childForFieldName('arguments')?.namedChildren ?? []).filter(
    (c): c is Node => c !== null && c.type !== 'comment',
  );
  return { name: fn.text, args };
}

/** Comparison parts `[left, op, right]` of a two-operand comparison, or null. */
function compare(n: Node): [Node, string, Node] | null {
  if (n.type !== 'comparison_operator') return null;
  const ops = n.namedChildren.filter((c): c is Node => c !== null);
  if (ops.length !== 2) return null;
  const op = n.children
    .filter((c) => c !== null && !c.isNamed)
    .map((c) => c!.text)
    .join(' ');
  return [ops[0]!, op, ops[1]!];
}

/** Whether `n` is tested for truth: an `if`/`elif`/`while`/ternary condition or `and`/`or` operand. */
function inTruthTest(n: Node): boolean {
  let x: Node = n;
  for (;;) {
    const p = x.parent;
    if (!p) return false;
    if (p.type === 'parenthesized_expression' || p.type === 'boolean_operator') {
      x = p;
      continue;
    }
    if (['if_statement', 'elif_clause', 'while_statement'].includes(p.type))
      return p.childForFieldName('condition')?.id === x.id;
    if (p.type === 'conditional_expression') return p.namedChildren[1]?.id === x.id;
    return false;
  }
}

type Raw =
  | { kind: 'none' | 'truthy' | 'empty'; node: Node }
  | { kind: 'missing_key' | 'missing_attr'; node: Node; name: string };

/** Guard-shaped expressions of a function body (nested defs and lambdas left out). */
function rawGuards(body: Node): Raw[] {
  const out: Raw[] = [];
  const visit = (n: Node): void => {
    if (n.type === 'comment' || n.type === 'function_definition' || n.type === 'lambda') return;
    const c = compare(n);
    if (c) {
      const [l, op, r] = c;
      const isNone = (x: Node): boolean => unparen(x).type === 'none';
      if (['is', 'is not', '==', '!='].includes(op) && isNone(r) !== isNone(l))
        out.push({ kind: 'none', node: isNone(r) ? l : r });
      else if ((op === 'in' || op === 'not in') && stringValue(l) !== null)
        out.push({ kind: 'missing_key', node: r, name: stringValue(l)! });
      const len = [l, r].map((x) => plainCall(unparen(x))).find((x) => x?.name === 'len');
      if (len?.args.length === 1 && [l, r].some((x) => unparen(x).type === 'integer'))
        out.push({ kind: 'empty', node: len.args[0]! });
    }
    if (n.type === 'not_operator') {
      const arg = unparen(n.childForFieldName('argument')!);
      const len = plainCall(arg);
      if (len?.name === 'len' && len.args.length === 1)
        out.push({ kind: 'empty', node: len.args[0]! });
      else out.push({ kind: 'truthy', node: arg });
    } else if (
      ['identifier', 'attribute', 'subscript', 'call'].includes(n.type) &&
      inTruthTest(n)
    ) {
      const len = plainCall(n);
      if (len?.name === 'len' && len.args.length === 1)
        out.push({ kind: 'empty', node: len.args[0]! });
      else if (n.type !== 'call' || getCall(n)) out.push({ kind: 'truthy', node: n });
    }
    const call = plainCall(n);
    const attr = call?.args[1] ? stringValue(call.args[1]) : null;
    if (
      attr !== null &&
      ((call?.name === 'hasattr' && call.args.length === 2) ||
        (call?.name === 'getattr' && call.args.length === 3))
    )
      out.push({ kind: 'missing_attr', node: call.args[0]!, name: attr });
    const get = getCall(n);
    if (get) out.push({ kind: 'missing_key', node: n, name: get.key });
    for (const ch of n.namedChildren) if (ch) visit(ch);
  };
  visit(body);
  return out;
}

/** Locals assigned exactly once in `body`, to a path: name -> path. */
function aliases(body: Node): Map<string, PyPath> {
  const count = new Map<string, number>();
  const value = new Map<string, PyPath | null>();
  const visit = (n: Node): void => {
    if (n.type === 'function_definition' || n.type === 'lambda') return;
    if (n.type === 'assignment' || n.type === 'augmented_assignment') {
      const left = n.childForFieldName('left');
      if (left?.type === 'identifier') {
        count.set(left.text, (count.get(left.text) ?? 0) + 1);
        const right = n.childForFieldName('right');
        value.set(left.text, n.type === 'assignment' && right ? pathOf(right) : null);
      }
    }
    for (const c of n.namedChildren) if (c) visit(c);
  };
  visit(body);
  const out = new Map<string, PyPath>();
  for (const [name, v] of value) if (v && count.get(name) === 1) out.set(name, v);
  return out;
}

/** Positions and string keys at which `body` indexes each path (`xs[0]` -> 'index'). */
function indexedPaths(body: Node): Map<string, Set<'index' | 'key'>> {
  const out = new Map<string, Set<'index' | 'key'>>();
  const visit = (n: Node): void => {
    if (n.type === 'subscript') {
      const base = pathOf(n.childForFieldName('value')!);
      const sub = n.childrenForFieldName('subscript').find((c) => c !== null);
      if (base && sub) {
        const s = unparen(sub);
        const how =
          s.type === 'integer' || (s.type === 'unary_operator' && /^-\s*\d+$/.test(s.text))
            ? 'index'
            : stringValue(s) !== null
              ? 'key'
              : null;
        if (how) {
          const k = pathText(base);
          out.set(k, new Set([...(out.get(k) ?? []), how]));
        }
      }
    }
    for (const c of n.namedChildren) if (c) visit(c);
  };
  visit(body);
  return out;
}

/** The forms of one body (with the parent body's indexing to read truth tests), by signature. */
function formsOf(body: Node, parentBody: Node | null): Map<string, { form: CrashForm; n: number }> {
  const alias = aliases(body);
  const indexed = indexedPaths(parentBody ?? body);
  const out = new Map<string, { form: CrashForm; n: number }>();
  for (const g of rawGuards(body)) {
    let path = g.kind === 'missing_key' && getCall(g.node) ? getCall(g.node)!.path : pathOf(g.node);
    if (!path) continue;
    const a = alias.get(path.root);
    if (a) path = { root: a.root, steps: [...a.steps, ...path.steps] };
    let form: CrashForm;
    if (g.kind === 'missing_key') form = { kind: 'missing_key', path, key: g.name };
    else if (g.kind === 'missing_attr') form = { kind: 'missing_attr', path, attr: g.name };
    else if (g.kind === 'none') form = { kind: 'none', path };
    else {
      const how = indexed.get(pathText(path));
      if (g.kind === 'empty' || how?.has('index'))
        form = { kind: 'empty', path, container: how?.has('key') ? 'dict' : 'list' };
      else form = { kind: 'none', path };
    }
    const sig = formText(form);
    const e = out.get(sig);
    out.set(sig, { form, n: (e?.n ?? 0) + 1 });
  }
  return out;
}

/**
 * The crash-triggering inputs of `qualified` (a `def` of the fixed file), from the guards the fix
 * adds to it. `params` are the names the caller passes (parameters, plus `self` for an instance
 * method); a guard on another root is listed in `skipped`.
 * @param fixSource fixed file text; `parentSource` the parent's (null: the file is new)
 */
export async function crashInputs(
  fixSource: string,
  parentSource: string | null,
  qualified: string,
  params: readonly string[],
): Promise<CrashInputs> {
  const fixTree = await parseSource('python', fixSource);
  const parentTree = parentSource === null ? null : await parseSource('python', parentSource);
  try {
    const fn = listFunctions('python', fixTree.rootNode).find((f) => f.qualified === qualified);
    if (!fn?.body) return { forms: [], skipped: [] };
    const pfn = parentTree
      ? listFunctions('python', parentTree.rootNode).find((f) => f.qualified === qualified)
      : undefined;
    const fixForms = formsOf(fn.body, pfn?.body ?? null);
    const parentForms = pfn?.body ? formsOf(pfn.body, pfn.body) : new Map();
    const forms: CrashForm[] = [];
    const skipped: string[] = [];
    for (const [sig, { form, n }] of fixForms) {
      if (n <= (parentForms.get(sig)?.n ?? 0)) continue;
      if (!params.includes(form.path.root)) {
        skipped.push(`${sig}: ${form.path.root} is not an input of ${qualified}`);
        continue;
      }
      forms.push(form);
    }
    return { forms, skipped };
  } finally {
    fixTree.delete();
    parentTree?.delete();
  }
}
