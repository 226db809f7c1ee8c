/**
 * Strategy B "control" guards: a null check counts only when the uses it protects become
 * unreachable for the bad value (docs/strategy-b.md). Given a function and an operand X (a name
 * or field path), {@link guardedUses} lists every protected use of X or of a one-level local alias
 * of X (`v := X`, `v = X`, `T *v = X;`) with its signature and whether it is guarded there:
 * - uses: Go `X.f` (`field:f`), `*X` (`deref`), `X[i]` (`index`), `X(...)` (`call`); C `X->f`,
 *   `*X`, `X[i]`, X as a call argument (`arg:callee`, assertion macros excluded); Python
 *   `X.attr`, `X[i]`, `X(...)`, call argument;
 * - guarded: in the good branch of an `if` on X (`X != nil`, C/Python truthiness, a conjunction
 *   holding one for the then branch; `X == nil`, `!X`, `not X`, `X is None`, a disjunction holding
 *   one for the else branch), in the right operand of `&&`/`||`/`and`/`or` or a ternary branch
 *   the left/condition makes good, or after (same or enclosing block) an `if` whose bad branch
 *   terminates (return, goto, break, continue, raise, panic, os.Exit, log.Fatal*, abort, exit,
 *   sys.exit) or assigns X. A flag `has := X != nil` used as a condition counts as its condition.
 *
 * The generated checkers (`emit.ts`, `checker-go.ts`, `checker-py.ts`, `checker-c.ts`: Go `go/ast`, Python `ast`, the C token
 * parser) apply the same rules in the image; this module computes at generation time which
 * signatures the gold fix guards and the parent leaves unguarded.
 */
import {
  leafTokens,
  type Node,
  type SourceLanguage,
} from '../../../pipeline/providers/treesitter/parser.js';
import { C_ASSERTS, NULLS, comparisonParts, unparen } from './patterns.js';
import {
  conditionPolarity,
  effectSignature,
  isDeadCondition,
  type Condition,
} from './condition.js';

/** +1: X is good in the then branch; -1: X is good in the else branch; 0: neither. */
type Polarity = 1 | -1 | 0;

/** One protected use of the operand: its signature and whether it is guarded where it stands. */
export interface GuardedUse {
  sig: string;
  guarded: boolean;
  /** 1-based line. */
  line: number;
}

/** Node types of a name or field path (an operand: `x`, `a.B.C`, `p->req`, `session.pdu`). */
export const PATH_TYPES: Record<SourceLanguage, Set<string>> = {
  go: new Set(['identifier', 'selector_expression']),
  c: new Set(['identifier', 'field_expression']),
  python: new Set(['identifier', 'attribute']),
};

const TERMINATOR: Record<SourceLanguage, RegExp> = {
  go: /^(panic|os\.Exit|runtime\.Goexit)$|(^|\.)(Fatal|Fatalf|Fatalln|Panic|Panicf|Panicln)$/,
  c: /^(abort|exit|_exit|_Exit|quick_exit)$/,
  python: /^(sys\.exit|os\._exit|os\.abort|exit|quit)$/,
};

/** A C block right after a statement that lacks its semicolon: a statement macro's body. */
function isMacroBlock(n: Node): boolean {
  const p = n.previousNamedSibling;
  return (
    n.type === 'compound_statement' &&
    p?.type === 'expression_statement' &&
    (p.lastChild?.type !== ';' || p.lastChild.isMissing)
  );
}

/** Token text of a node without whitespace (the checkers' `text`). */
export const tokText = (n: Node): string => leafTokens(n).join('');

const named = (n: Node): Node[] =>
  n.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment');

/**
 * Declaration/assignment forms `name = value` of a function body, the forms a one-level local
 * alias or a flag is read from: Go `v := X`, `v = X`, `var v = X` (one name, one value); C
 * `T *v = X;`, `__auto_type v = X;` and the statement `v = X;`; Python the statement `v = X`.
 * @returns `[name, value]` pairs in source order (a name may appear more than once)
 */
export function bindings(language: SourceLanguage, body: Node): [string, Node][] {
  const out: [string, Node][] = [];
  const walk = (n: Node): void => {
    if (
      language === 'go' &&
      (n.type === 'short_var_declaration' || n.type === 'assignment_statement')
    ) {
      const l = n.childForFieldName('left');
      const r = n.childForFieldName('right');
      const ls = l ? named(l) : [];
      const rs = r ? named(r) : [];
      if (ls.length === 1 && rs.length === 1 && ls[0]!.type === 'identifier')
        out.push([ls[0]!.text, rs[0]!]);
    } else if (language === 'go' && n.type === 'var_spec') {
      const names = n.childrenForFieldName('name').filter((c): c is Node => c !== null);
      const v = n.childForFieldName('value');
      const vs = v ? named(v) : [];
      if (names.length === 1 && vs.length === 1) out.push([names[0]!.text, vs[0]!]);
    } else if (language === 'c' && n.type === 'init_declarator') {
      let d = n.childForFieldName('declarator');
      while (d && d.type === 'pointer_declarator') d = d.childForFieldName('declarator');
      const v = n.childForFieldName('value');
      if (d?.type === 'identifier' && v) out.push([d.text, v]);
    } else if (
      (language === 'c' &&
        n.type === 'assignment_expression' &&
        n.parent?.type === 'expression_statement') ||
      (language === 'python' &&
        n.type === 'assignment' &&
        n.parent?.type === 'expression_statement')
    ) {
      const l = n.childForFieldName('left');
      const r = n.childForFieldName('right');
      const op = language === 'c' ? n.childForFieldName('operator')?.text : '=';
      if (op === '=' && l?.type === 'identifier' && r) out.push([l.text, r]);
    }
    for (const c of named(n)) walk(c);
  };
  walk(body);
  return out;
}

/** The analysis of one function body for one operand. */
class Analysis {
  readonly members = new Set<string>();
  readonly flags = new Map<string, Polarity>();
  readonly uses: GuardedUse[] = [];

  constructor(
    readonly lang: SourceLanguage,
    body: Node,
    operand: string,
    /** Condition mode (condition.ts): the guard is `operand op value`, the uses are effects. */
    readonly cond?: Condition,
  ) {
    this.members.add(operand);
    const binds = bindings(lang, body);
    for (const [name, v] of binds) if (tokText(unparen(v)) === operand) this.members.add(name);
    for (const [name, v] of binds) {
      if (this.members.has(name)) continue;
      const p = this.pol(v);
      if (p !== 0 && !this.member(v)) this.flags.set(name, p);
    }
  }

  member(n: Node): boolean {
    const u = unparen(n);
    return PATH_TYPES[this.lang].has(u.type) && this.members.has(tokText(u));
  }

  pol(n: Node | null): Polarity {
    if (!n) return 0;
    const x = unparen(n);
    const { lang } = this;
    if (
      (lang !== 'python' && x.type === 'binary_expression') ||
      (lang === 'python' && x.type === 'boolean_operator')
    ) {
      const op = x.childForFieldName('operator')?.text;
      const l = x.childForFieldName('left');
      const r = x.childForFieldName('right');
      if (l && r && (op === '&&' || op === 'and'))
        return this.pol(l) === 1 || this.pol(r) === 1 ? 1 : 0;
      if (l && r && (op === '||' || op === 'or'))
        return this.pol(l) === -1 || this.pol(r) === -1 ? -1 : 0;
    }
    const parts = comparisonParts(lang, x);
    if (this.cond) {
      if (parts)
        return conditionPolarity(
          this.cond,
          parts,
          (n) => this.member(n),
          (n) => tokText(unparen(n)).replace(/\s+/g, ''),
        );
    } else if (parts && ['==', '!=', 'is', 'is not'].includes(parts[1])) {
      const [l, op, r] = parts;
      const isNull = NULLS[lang];
      const s: Polarity = op === '!=' || op === 'is not' ? 1 : -1;
      if ((isNull(unparen(r)) && this.member(l)) || (isNull(unparen(l)) && this.member(r)))
        return s;
      return 0;
    }
    const neg =
      (x.type === 'unary_expression' && x.childForFieldName('operator')?.text === '!') ||
      x.type === 'not_operator';
    if (neg) {
      const a = x.childForFieldName(lang === 'go' ? 'operand' : 'argument');
      return a ? ((-this.pol(a) || 0) as Polarity) : 0;
    }
    if (x.type === 'identifier' && this.flags.has(x.text)) return this.flags.get(x.text)!;
    if (lang !== 'go' && !this.cond && this.member(x)) return 1;
    return 0;
  }

  use(sig: string, n: Node, ok: boolean): void {
    this.uses.push({ sig, guarded: ok, line: n.startPosition.row + 1 });
  }

  /** Records the uses `n` itself makes of the operand. */
  private usesOf(n: Node, ok: boolean): void {
    if (this.cond) return;
    const f = (name: string): Node | null => n.childForFieldName(name);
    const m = (x: Node | null): boolean => !!x && this.member(x);
    const { lang } = this;
    if (lang === 'go') {
      if (n.type === 'selector_expression' && m(f('operand')))
        this.use(`field:${f('field')?.text ?? ''}`, n, ok);
      else if (n.type === 'unary_expression' && f('operator')?.text === '*' && m(f('operand')))
        this.use('deref', n, ok);
      else if (n.type === 'index_expression' && m(f('operand'))) this.use('index', n, ok);
      else if (n.type === 'call_expression' && m(f('function'))) this.use('call', n, ok);
      return;
    }
    if (lang === 'c') {
      if (n.type === 'field_expression' && f('operator')?.text === '->' && m(f('argument')))
        this.use(`field:${f('field')?.text ?? ''}`, n, ok);
      else if (n.type === 'pointer_expression' && f('operator')?.text === '*' && m(f('argument')))
        this.use('deref', n, ok);
      else if (n.type === 'subscript_expression' && m(f('argument'))) this.use('index', n, ok);
    } else {
      if (n.type === 'attribute' && m(f('object')))
        this.use(`field:${f('attribute')?.text ?? ''}`, n, ok);
      else if (n.type === 'subscript' && m(f('value'))) this.use('index', n, ok);
      else if (n.type === 'call' && m(f('function'))) this.use('call', n, ok);
    }
    if (n.type === 'call_expression' || n.type === 'call') {
      const fn = f('function');
      const callee =
        fn?.type === 'identifier'
          ? fn.text
          : fn?.type === 'field_expression'
            ? fn.childForFieldName('field')?.text
            : fn?.type === 'attribute'
              ? fn.childForFieldName('attribute')?.text
              : undefined;
      if (!callee || (lang === 'c' && C_ASSERTS.includes(callee))) return;
      for (const a of named(f('arguments') ?? n))
        if (a.type !== 'keyword_argument' && this.member(a)) this.use(`arg:${callee}`, a, ok);
    }
  }

  /** Visits `n` with X known good (`ok`); returns whether X is good after it (statements). */
  visit(n: Node | null, ok: boolean): boolean {
    if (!n) return ok; // a field tree-sitter left empty (error recovery)
    const t = n.type;
    if (t === 'comment') return ok;
    if (t === 'if_statement') return this.visitIf(n, ok);
    if (t === 'block' || t === 'compound_statement' || t === 'statement_list') {
      let g = ok;
      for (const c of named(n)) g = this.visit(c, g);
      // C: the block of a statement macro (`ogs_list_for_each(&l, x) { ... }`, the macro read
      // as a statement without its semicolon) is a loop body: a guard does not leave it
      return this.lang === 'c' && isMacroBlock(n) ? ok : g;
    }
    if (
      t === 'preproc_if' ||
      t === 'preproc_elif' ||
      t === 'preproc_ifdef' ||
      t === 'preproc_else'
    ) {
      const cond = n.childForFieldName('condition');
      const alt = n.childForFieldName('alternative');
      if (cond && /^\(?\s*0\s*\)?$/.test(cond.text.trim())) return alt ? this.visit(alt, ok) : ok;
      const skip = new Set([cond?.id, n.childForFieldName('name')?.id]);
      let g = ok;
      for (const c of named(n)) if (!skip.has(c.id)) g = this.visit(c, g);
      return g;
    }
    if (t.startsWith('preproc_')) return ok;
    if (t === 'labeled_statement') {
      // a label is a join point: a `goto` from the bad branch may arrive there
      let g = false;
      for (const c of named(n)) g = this.visit(c, false);
      return g;
    }
    if (this.cond) {
      const sig = effectSignature(this.lang, n);
      if (sig) this.use(sig, n, ok);
    }
    if (
      [
        'case_statement',
        'expression_case',
        'default_case',
        'type_case',
        'communication_case',
      ].includes(t)
    ) {
      let g = ok;
      for (const c of named(n)) g = this.visit(c, g);
      return ok;
    }
    this.usesOf(n, ok);
    const op = n.childForFieldName('operator')?.text;
    const isBool =
      (t === 'binary_expression' && (op === '&&' || op === '||')) ||
      (t === 'boolean_operator' && (op === 'and' || op === 'or'));
    if (isBool) {
      const l = n.childForFieldName('left')!;
      this.visit(l, ok);
      const want = op === '&&' || op === 'and' ? 1 : -1;
      this.visit(n.childForFieldName('right')!, ok || this.pol(l) === want);
      return ok;
    }
    if (t === 'conditional_expression') {
      const [cond, a, b] =
        this.lang === 'python'
          ? [named(n)[1]!, named(n)[0]!, named(n)[2]!]
          : [
              n.childForFieldName('condition')!,
              n.childForFieldName('consequence')!,
              n.childForFieldName('alternative')!,
            ];
      this.visit(cond, ok);
      const p = this.pol(cond);
      this.visit(a, ok || p === 1);
      this.visit(b, ok || p === -1);
      return ok;
    }
    for (const c of named(n)) this.visit(c, ok);
    return ok;
  }

  private visitIf(n: Node, ok: boolean): boolean {
    let g = ok;
    const init = n.childForFieldName('initializer');
    if (init) g = this.visit(init, g);
    const alts = n.childrenForFieldName('alternative').filter((c): c is Node => c !== null);
    // condition mode: `if (0)` / `if (false)` is dead code, its effects are not code
    if (this.cond && isDeadCondition(n.childForFieldName('condition'))) {
      if (alts.length > 0) this.visitElse(alts, g);
      return g;
    }
    return this.ifParts(
      n.childForFieldName('condition')!,
      n.childForFieldName('consequence')!,
      alts,
      g,
    );
  }

  private ifParts(cond: Node | null, then: Node | null, alts: Node[], ok: boolean): boolean {
    this.visit(cond, ok);
    const p = this.pol(cond);
    this.visit(then, ok || p === 1);
    if (alts.length > 0) this.visitElse(alts, ok || p === -1);
    if (p === -1 && this.safe(then)) return true;
    if (p === 1 && alts.length > 0 && this.safeAlts(alts)) return true;
    return ok;
  }

  private visitElse(alts: Node[], ok: boolean): void {
    const a = alts[0];
    if (!a) return;
    if (a.type === 'elif_clause')
      this.ifParts(
        a.childForFieldName('condition')!,
        a.childForFieldName('consequence')!,
        alts.slice(1),
        ok,
      );
    else if (a.type === 'else_clause')
      this.visit(a.childForFieldName('body') ?? named(a)[0] ?? null, ok);
    else this.visit(a, ok);
  }

  private safeAlts(alts: Node[]): boolean {
    const a = alts[0];
    if (!a) return false;
    if (a.type === 'elif_clause')
      return (
        this.safe(a.childForFieldName('consequence')!) &&
        alts.length > 1 &&
        this.safeAlts(alts.slice(1))
      );
    if (a.type === 'else_clause')
      return this.safe(a.childForFieldName('body') ?? named(a)[0] ?? null);
    return this.safe(a);
  }

  /** The bad branch makes later uses unreachable (terminates) or repairs X (assigns it). */
  private safe(n: Node | null): boolean {
    // repairing X (`if (!x) x = default`) is a guard for null checks; for a condition the
    // assignment is an effect (a clamp that falls through to the overflow is no guard)
    return !!n && (this.exits(n) || (!this.cond && this.assigns(n)));
  }

  exits(n: Node | null): boolean {
    if (!n) return false;
    const t = n.type;
    if (
      [
        'return_statement',
        'goto_statement',
        'break_statement',
        'continue_statement',
        'raise_statement',
        'fallthrough_statement',
      ].includes(t)
    )
      return true;
    if (t === 'block' || t === 'compound_statement' || t === 'statement_list')
      return named(n).some((c) => this.exits(c));
    if (t === 'else_clause') return this.exits(n.childForFieldName('body') ?? named(n)[0] ?? null);
    if (t === 'if_statement') {
      const alts = n.childrenForFieldName('alternative').filter((c): c is Node => c !== null);
      const then = n.childForFieldName('consequence');
      if (!then || alts.length === 0 || !this.exits(then)) return false;
      return (
        alts.every((a) =>
          a.type === 'elif_clause'
            ? this.exits(a.childForFieldName('consequence')!)
            : this.exits(a),
        ) && alts[alts.length - 1]!.type !== 'elif_clause'
      );
    }
    if (t === 'expression_statement') {
      const e = named(n)[0];
      if (e && (e.type === 'call_expression' || e.type === 'call')) {
        const fn = e.childForFieldName('function');
        return !!fn && TERMINATOR[this.lang].test(tokText(fn));
      }
    }
    return false;
  }

  private assigns(n: Node | null): boolean {
    if (!n) return false;
    const t = n.type;
    if (t === 'block' || t === 'compound_statement' || t === 'statement_list')
      return named(n).some((c) => this.assigns(c));
    if (t === 'else_clause')
      return this.assigns(n.childForFieldName('body') ?? named(n)[0] ?? null);
    if (this.lang === 'go' && t === 'assignment_statement') {
      const l = n.childForFieldName('left');
      return (
        n.childForFieldName('operator')?.text === '=' && !!l && named(l).some((x) => this.member(x))
      );
    }
    if (t === 'expression_statement') {
      const e = named(n)[0];
      if (e && (e.type === 'assignment_expression' || e.type === 'assignment')) {
        const l = e.childForFieldName('left');
        const op = this.lang === 'c' ? e.childForFieldName('operator')?.text : '=';
        return op === '=' && !!l && this.member(l);
      }
    }
    return false;
  }
}

/**
 * Protected uses of `operand` (token text without whitespace, e.g. `a.B.C`, `p->req`) and of its
 * one-level local aliases in a function body, each with whether it is guarded.
 */
export function guardedUses(
  language: SourceLanguage,
  body: Node,
  operand: string,
  cond?: Condition,
): GuardedUse[] {
  const a = new Analysis(language, body, operand, cond);
  a.visit(body, false);
  return a.uses;
}

/**
 * The operand a null check guards, through one level of local alias: in `v := a.B; if v == nil`
 * the operand is `a.B` (the alias source, when it is a path); otherwise the check's own operand.
 */
export function resolveOperand(language: SourceLanguage, body: Node, operand: Node): string {
  const text = tokText(unparen(operand));
  if (unparen(operand).type !== 'identifier') return text;
  for (const [name, v] of bindings(language, body))
    if (name === text && PATH_TYPES[language].has(unparen(v).type)) return tokText(unparen(v));
  return text;
}

/**
 * Signatures the fix guards and the parent leaves unguarded: every use of the signature in the
 * fixed function is guarded (and there is one), and the parent function has an unguarded one.
 * @returns sorted signatures (empty: the check gives no control site)
 */
export function controlSignatures(
  language: SourceLanguage,
  fixBody: Node,
  parentBody: Node | null,
  operand: string,
): string[] {
  const fix = guardedUses(language, fixBody, operand);
  const parent = parentBody ? guardedUses(language, parentBody, operand) : [];
  const sigs = new Set(fix.map((u) => u.sig));
  return [...sigs]
    .filter(
      (s) =>
        fix.every((u) => u.sig !== s || u.guarded) && parent.some((u) => u.sig === s && !u.guarded),
    )
    .sort();
}
