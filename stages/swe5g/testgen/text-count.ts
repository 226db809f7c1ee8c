/**
 * The text count of a Strategy B `text` site (docs/strategy-b.md, "Text sites"): how many tests
 * of the fix's condition a function body holds, under the rules the generated tests apply in the
 * image (`checker-text.ts`: Go `go/ast`, Python `ast`, the C token checker), so that the parent's
 * count at generation time is the one the test compares against.
 *
 * A test of the condition counts when written as itself, mirrored (`nil == x`, `NULL != p->f`,
 * `K < x` for `x > K`), negated (`!(x != NULL)`, `not`, the negated operator: a text site counts
 * tests of the condition in either polarity) or with the operand (a comparison: either side)
 * replaced by a one-level local alias of it (control.ts's {@link bindings}: `v := X`, `v = X`,
 * `var v = X`, `T *v = X;`, `__auto_type v = X;`, Python `v = X`). Comments, strings, `#if 0`,
 * the then branch of a dead `if` (`if false`, `if (0)`, `if False:`, a conjunction holding one)
 * and other functions never count.
 */
import {
  leafTokens,
  type Node,
  type SourceLanguage,
} from '../../../pipeline/providers/treesitter/parser.js';
import { bindings } from './control.js';
import { MIRROR, NEGATE, RELATIONAL, isDeadCondition } from './condition.js';
import {
  CANDIDATE_TYPES,
  C_ASSERTS,
  comparisonParts,
  negationOperand,
  nullCheckOperand,
  operandKey,
  unparen,
  type FixPattern,
} from './patterns.js';

/** Whitespace-free tokens of an expression without its parentheses (the checkers' `squash`). */
export const squash = (n: Node): string => leafTokens(unparen(n)).join('').replace(/\s+/g, '');

/** The placeholder of side `i` of a C alias form (`$0`: the operand, `$1`: a comparison's right). */
const slot = (i: number): string => `$${i}`;

/**
 * The token sequences the C checker counts as one null check of an operand with tokens `t`:
 * comparisons with NULL (either side), `!t`, `!(t)`, truthiness (`if (t)`, `while (t)`, `(t &&`,
 * `&& t)`, ...) and, with `withAsserts` (the site is an added assertion), the {@link C_ASSERTS}
 * macros (`ogs_assert(t)`, `ogs_expect_or_return_val(t, ...`).
 */
export function cNullCheckForms(t: readonly string[], withAsserts: boolean): string[][] {
  const out: string[][] = [
    [...t, '!=', 'NULL'],
    [...t, '==', 'NULL'],
    ['NULL', '!=', ...t],
    ['NULL', '==', ...t],
    ['!', ...t],
    ['!', '(', ...t, ')'],
    ['if', '(', ...t, ')'],
    ['while', '(', ...t, ')'],
  ];
  for (const op of ['&&', '||'])
    out.push(['(', ...t, op], [op, ...t, ')'], [op, ...t, op === '&&' ? '&&' : '||']);
  if (withAsserts)
    for (const m of C_ASSERTS) out.push([m, '(', ...t, m.endsWith('_val') ? ',' : ')']);
  return out;
}

/** C token forms of the comparison `l op r`: as written, mirrored, negated, negated and mirrored. */
export function cComparisonForms(
  l: readonly string[],
  op: string,
  r: readonly string[],
): string[][] {
  const out: string[][] = [];
  for (const o of [op, NEGATE[op]!]) out.push([...l, o, ...r], [...r, MIRROR[o]!, ...l]);
  return out;
}

const uniq = (forms: string[][]): string[][] => {
  const seen = new Set<string>();
  return forms.filter((f) => {
    const k = f.join('\u0000');
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
};

/** The counting fields of a null-check pattern: C forms of the operand and of its aliases. */
export function nullCheckCounting(
  language: SourceLanguage,
  operand: Node,
  withAsserts: boolean,
): Pick<FixPattern, 'variants' | 'alias'> {
  if (language !== 'c') return {};
  const t = leafTokens(unparen(operand));
  return {
    variants: cNullCheckForms(t, withAsserts),
    alias: { of: [t], variants: cNullCheckForms([slot(0)], withAsserts) },
  };
}

/**
 * The counting fields of a relational comparison `l op r` (`n` as written): its sides' tokens
 * (Go, Python: matched on the tree); C: the forms of {@link cComparisonForms} with the gold's own
 * tokens first, and the same forms with a side (or both) through an alias.
 * @returns `{}` when the operator is not relational (`in`, `is`: counted by their tokens)
 */
export function comparisonCounting(
  language: SourceLanguage,
  n: Node,
  l: Node,
  op: string,
  r: Node,
): Pick<FixPattern, 'comparison' | 'variants' | 'alias'> {
  if (!RELATIONAL.has(op)) return language === 'c' ? { variants: [leafTokens(n)] } : {};
  const comparison = { left: squash(l), op, right: squash(r) };
  if (language !== 'c') return { comparison };
  const [lt, rt] = [leafTokens(unparen(l)), leafTokens(unparen(r))];
  const [a, b] = [[slot(0)], [slot(1)]];
  return {
    comparison,
    variants: uniq([leafTokens(n), ...cComparisonForms(lt, op, rt)]),
    alias: {
      of: [lt, rt],
      variants: uniq([
        ...cComparisonForms(a, op, rt),
        ...cComparisonForms(lt, op, b),
        ...cComparisonForms(a, op, b),
      ]),
    },
  };
}

/**
 * Names of the one-level local aliases in a function body ({@link bindings}) whose value, without
 * parentheses, satisfies `source`; a name bound to itself (`v = v`) is none.
 */
export function aliasNames(
  language: SourceLanguage,
  body: Node,
  source: (value: Node) => boolean,
): Set<string> {
  const out = new Set<string>();
  for (const [name, v] of bindings(language, body)) {
    const u = unparen(v);
    if (!(u.type === 'identifier' && u.text === name) && source(u)) out.add(name);
  }
  return out;
}

/** Every token sequence of `form` with each placeholder `$i` replaced by one of `names[i]`. */
export function substitutions(form: readonly string[], names: readonly string[][]): string[][] {
  let out: string[][] = [[]];
  for (const tok of form) {
    const m = /^\$(\d)$/.exec(tok);
    const opts = m ? (names[Number(m[1])] ?? []) : [tok];
    out = out.flatMap((p) => opts.map((o) => [...p, o]));
  }
  return out;
}

/** Whether a C/Go/Python `if` (or Python `elif`) node has a dead condition (its then branch never runs). */
const deadIf = (n: Node): boolean =>
  (n.type === 'if_statement' || n.type === 'elif_clause') &&
  isDeadCondition(n.childForFieldName('condition'));

/**
 * The named children of `n` that are live code: none of a comment; of a dead `if` (`if false`,
 * `if (0)`, `if (0 && x)`) its else part only; of a C `#if 0` / `#elif 0` its `#else`/`#elif`
 * part only; else all of them. The one rule of what is dead for the text count and for where a
 * fix site is (patterns.ts: a site's line is its first added occurrence in live code).
 */
export function liveChildren(n: Node): Node[] {
  if (n.type === 'comment') return [];
  const all = n.namedChildren.filter((c): c is Node => c !== null);
  if (deadIf(n)) {
    const skip = new Set(
      [n.childForFieldName('condition')?.id, n.childForFieldName('consequence')?.id].filter(
        (x) => x !== undefined,
      ),
    );
    return all.filter((c) => !skip.has(c.id));
  }
  if ((n.type === 'preproc_if' || n.type === 'preproc_elif') && isDeadPreproc(n)) {
    const alt = n.childForFieldName('alternative');
    return alt ? [alt] : [];
  }
  return all;
}

/** Visits the named nodes of `n` outside comments and dead code ({@link liveChildren}). */
function walkLive(n: Node, visit: (n: Node) => void): void {
  if (n.type === 'comment') return;
  if (!deadIf(n)) visit(n);
  for (const c of liveChildren(n)) walkLive(c, visit);
}

/** Whether `x` is the identifier of one of `names`. */
const aliasIn = (x: Node, names: Set<string>): boolean => {
  const u = unparen(x);
  return u.type === 'identifier' && names.has(u.text);
};

/** Go/Python: the test of whether a node is an occurrence of `pattern` in `body`. */
function occurrence(
  language: SourceLanguage,
  body: Node,
  pattern: FixPattern,
  literal: boolean,
): (n: Node) => boolean {
  if (pattern.kind === 'null_check') {
    const key = pattern.key;
    const names = literal
      ? new Set<string>()
      : aliasNames(language, body, (v) => operandKey(language, v) === key);
    return (n) => {
      const o = nullCheckOperand(language, n) ?? negationOperand(language, n);
      return !!o && (operandKey(language, o) === key || aliasIn(o, names));
    };
  }
  const c = literal ? undefined : pattern.comparison;
  if (c) {
    const ln = aliasNames(language, body, (v) => squash(v) === c.left);
    const rn = aliasNames(language, body, (v) => squash(v) === c.right);
    const same = (x: Node, text: string, names: Set<string>): boolean =>
      squash(x) === text || aliasIn(x, names);
    const ops = [c.op, NEGATE[c.op]];
    return (n) => {
      const p = comparisonParts(language, n);
      if (!p) return false;
      const [a, op, b] = p;
      return (
        (ops.includes(op) && same(a, c.left, ln) && same(b, c.right, rn)) ||
        (ops.includes(MIRROR[op]) && same(b, c.left, ln) && same(a, c.right, rn))
      );
    };
  }
  return (n) =>
    (CANDIDATE_TYPES[language].has(n.type) ||
      (language === 'go' && n.type === 'selector_expression')) &&
    leafTokens(n).join('') === pattern.key;
}

/** Whether a C `#if`/`#elif` condition is the literal 0 (dead code, `#if 0 ... #endif`). */
function isDeadPreproc(n: Node): boolean {
  const c = n.childForFieldName('condition');
  return !!c && /^\(?\s*0\s*\)?$/.test(c.text.trim());
}

const PREPROC_BRANCHES = new Set([
  'preproc_if',
  'preproc_elif',
  'preproc_else',
  'preproc_ifdef',
  'preproc_elifdef',
]);

/** Whether a subtree needs walking for {@link cLiveTokens} (a directive or a dead `if` in it). */
function needsWalk(n: Node): boolean {
  if (n.type.startsWith('preproc_') || deadIf(n)) return true;
  for (const c of n.namedChildren) if (c && needsWalk(c)) return true;
  return false;
}

/**
 * The code tokens of a C subtree ({@link leafTokens}) as the C checker's text count sees them:
 * preprocessor directive lines are not code (`#define`, `#include`, the `#if` line itself), the
 * branches of `#if 0` / `#elif 0` are dead code (their `#else` part is kept), and a dead `if`
 * (`if (0)`, `if (false)`, `if (0 && x)`) with its then branch is the one token `;` (its `else`
 * is kept), so none of them ever counts.
 */
export function cLiveTokens(node: Node): string[] {
  const out: string[] = [];
  const walk = (n: Node): void => {
    if ((n.type === 'preproc_if' || n.type === 'preproc_elif') && isDeadPreproc(n)) {
      const alt = n.childForFieldName('alternative');
      if (alt) walk(alt);
      return;
    }
    if (PREPROC_BRANCHES.has(n.type)) {
      const skip = new Set(
        [n.childForFieldName('condition')?.id, n.childForFieldName('name')?.id].filter(
          (x) => x !== undefined,
        ),
      );
      for (const c of n.namedChildren) if (c && !skip.has(c.id)) walk(c);
      return;
    }
    if (n.type.startsWith('preproc_')) return; // #define, #include, other directive lines
    if (deadIf(n)) {
      out.push(';');
      const alt = n.childForFieldName('alternative');
      if (alt) walk(alt);
      return;
    }
    if (n.childCount === 0 || !needsWalk(n)) {
      out.push(...leafTokens(n));
      return;
    }
    for (const c of n.children) if (c) walk(c);
  };
  walk(node);
  return out;
}

const NOT_BEFORE = new Set(['.', '->']);
const NOT_AFTER = new Set(['.', '->', '[', '(']);

/** Occurrences of `seq` in `tokens` not preceded by `.`/`->` nor followed by `.`/`->`/`[`/`(`. */
function countSubsequence(tokens: string[], seq: string[]): number {
  let n = 0;
  for (let i = 0; i + seq.length <= tokens.length; i++) {
    if (i > 0 && NOT_BEFORE.has(tokens[i - 1]!)) continue;
    if (NOT_AFTER.has(tokens[i + seq.length] ?? '')) continue;
    let ok = true;
    for (let j = 0; j < seq.length && ok; j++) ok = tokens[i + j] === seq[j];
    if (ok) n++;
  }
  return n;
}

/** C: the pattern's forms in the live tokens, and its alias forms for each alias of a side. */
function cCount(body: Node, pattern: FixPattern, literal: boolean): number {
  const tokens = cLiveTokens(body);
  // a comparison's first form is the gold's own tokens
  const forms = (pattern.variants ?? []).slice(0, literal && pattern.comparison ? 1 : undefined);
  let n = forms.reduce((s, v) => s + countSubsequence(tokens, v), 0);
  const a = literal ? undefined : pattern.alias;
  if (a) {
    const names = a.of.map((of) => {
      const want = of.join('\u0000');
      return [...aliasNames('c', body, (v) => leafTokens(v).join('\u0000') === want)];
    });
    for (const form of a.variants)
      for (const seq of substitutions(form, names)) n += countSubsequence(tokens, seq);
  }
  return n;
}

/**
 * Occurrences of `pattern` in a function body under the generated tests' rules (the module
 * comment). Go/Python count expression nodes; C counts token sequences (the C checker has no
 * parser, only a lexer and a statement parser).
 * @param literal count the pattern as written only: no alias, a comparison neither mirrored nor
 *   negated (whether the fix adds the check itself, for a control site); not what a test counts
 * @returns 0 for a function without a body
 */
export function countPattern(
  language: SourceLanguage,
  body: Node | null,
  pattern: FixPattern,
  literal = false,
): number {
  if (!body) return 0;
  if (language === 'c') return cCount(body, pattern, literal);
  const match = occurrence(language, body, pattern, literal);
  let n = 0;
  walkLive(body, (node) => {
    if (match(node)) n++;
  });
  return n;
}
