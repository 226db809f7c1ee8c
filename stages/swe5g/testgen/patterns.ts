/**
 * Strategy B, diff-based intent (SWE-Bench 5G paper, section "Test strategies"): derive from a fix
 * the expressions it adds — absent from (or rarer in) the enclosing function at the parent commit,
 * present after the fix — parsed with tree-sitter, so comments, string literals and other
 * functions never count. Guards are preferred (`x != nil`, `p != NULL`, `x is None`), then length
 * checks, other comparisons, then other expressions; vacuous ones (`}`, `return nil`, logging
 * calls, `err != nil`) are never chosen.
 *
 * The counting rules (text-count.ts) are the ones the generated tests apply (Go `go/ast`, Python
 * `ast`, the C token checker, checker-text.ts); `emit.ts` writes the tests from the
 * {@link FixSite}s returned here.
 */
import {
  parseSource,
  leafTokens,
  type Node,
  type SourceLanguage,
} from '../../../pipeline/providers/treesitter/parser.js';
import { PATH_TYPES, controlSignatures, resolveOperand } from './control.js';
import { conditionOf, conditionSignatures } from './condition.js';
import { comparisonCounting, countPattern, liveChildren, nullCheckCounting } from './text-count.js';

/** Kinds of fix pattern, most preferred first. */
export type PatternKind = 'null_check' | 'length_check' | 'comparison' | 'expression';

const KIND_RANK: Record<PatternKind, number> = {
  null_check: 0,
  length_check: 1,
  comparison: 2,
  expression: 3,
};

/**
 * One fix pattern. `null_check`: any `==`/`!=` (Python also `is`/`is not`) comparison of an
 * operand with nil/NULL/None, where the operand's key matches `key` (Go/Python: the last field or
 * identifier name, e.g. `GNbId`; C: the operand's tokens joined, e.g. `ctx->req`). Other kinds: an
 * expression whose code tokens joined without whitespace equal `key` (C: a token subsequence);
 * a relational comparison also mirrored, negated, a side through a local alias (text-count.ts).
 */
export interface FixPattern {
  kind: PatternKind;
  key: string;
  /** C only: the token sequences counted (a null check: `x != NULL`, `NULL == x`, `!x`, ...). */
  variants?: string[][];
  /**
   * A relational comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`; not a null check): its sides'
   * whitespace-free tokens without parentheses; the Go and Python checks count it as written,
   * mirrored, negated and a side through a one-level local alias.
   */
  comparison?: { left: string; op: string; right: string };
  /**
   * C only: the forms counted through a one-level local alias: `of[i]` are the tokens of the
   * aliased side (a null check: the operand; a comparison: left, right), and `variants` the forms
   * with `$i` standing for an alias of side i.
   */
  alias?: { of: string[][]; variants: string[][] };
  /** The operand of a null check as written (`targetRanNodeID.GNbId`), for Strategy A inputs. */
  operand?: string;
  /** Source text of the first added occurrence (for records; never printed by a test). */
  text: string;
}

/** One assertion of a Strategy B test: `pattern` must occur in `function` more than `parentCount` times. */
export interface FixSite {
  /** Repository-relative path of the fixed file. */
  file: string;
  /** Qualified function name: Go `Recv.Method` or `Func`, Python `Class.method`, C `func`. */
  function: string;
  /** Function name alone (Go method name, Python innermost def). */
  name: string;
  /** Go receiver type name without `*` and type arguments, or null. */
  receiver: string | null;
  pattern: FixPattern;
  parentCount: number;
  fixCount: number;
  /** 1-based line of the first added occurrence in the fixed file. */
  line: number;
  /**
   * `control`: the generated check requires the uses in `guard` to be unreachable for the bad
   * value (control.ts); `text`: it counts occurrences of `pattern` (more than `parentCount`).
   */
  strength: 'control' | 'text';
  /**
   * Control sites: the guarded operand (token text, e.g. `a.B.C`, `p->req`) and use signatures;
   * a comparison site (condition.ts, C) also has its `condition` (`operand op value`) and effect
   * signatures (`effect+:`/`effect-:` and the statement's tokens).
   */
  guard?: { operand: string; signatures: string[]; condition?: { op: string; value: string } };
}

/** A function found in a parsed file. */
export interface FunctionInfo {
  qualified: string;
  name: string;
  receiver: string | null;
  node: Node;
  body: Node | null;
  /** 0-based rows, inclusive. */
  startRow: number;
  endRow: number;
}

/** Why a function touched by the fix gave no pattern (recorded in `strategy_reason`). */
export interface SiteNote {
  file: string;
  function: string | null;
  note: string;
}

function goReceiverName(recv: Node | null): string | null {
  if (!recv) return null;
  let t: Node | null = recv.namedChildren.find((c) => c?.type === 'parameter_declaration') ?? null;
  t = t?.childForFieldName('type') ?? null;
  while (
    t &&
    (t.type === 'pointer_type' || t.type === 'generic_type' || t.type === 'parenthesized_type')
  ) {
    t = t.type === 'generic_type' ? t.childForFieldName('type') : (t.namedChildren[0] ?? null);
  }
  return t ? t.text : null;
}

function cFunctionName(def: Node): string | null {
  let d = def.childForFieldName('declarator');
  while (d && d.type !== 'function_declarator') d = d.childForFieldName('declarator');
  let n = d?.childForFieldName('declarator') ?? null;
  while (n && n.type !== 'identifier') {
    n = n.childForFieldName('declarator') ?? n.namedChildren[0] ?? null;
  }
  return n ? n.text : null;
}

/**
 * Lists the functions of a parsed file: Go top-level functions and methods; C function
 * definitions (also inside `#if` blocks); Python `def`s at any depth, qualified by their enclosing
 * classes and functions (`Class.method`, `outer.inner`).
 */
export function listFunctions(language: SourceLanguage, root: Node): FunctionInfo[] {
  const out: FunctionInfo[] = [];
  const push = (node: Node, name: string, qualified: string, receiver: string | null): void => {
    out.push({
      qualified,
      name,
      receiver,
      node,
      body: node.childForFieldName('body'),
      startRow: node.startPosition.row,
      endRow: node.endPosition.row,
    });
  };
  const walk = (node: Node, scope: string[]): void => {
    for (const c of node.namedChildren) {
      if (!c) continue;
      if (language === 'go') {
        if (c.type === 'function_declaration' || c.type === 'method_declaration') {
          const name = c.childForFieldName('name')?.text ?? '';
          const recv =
            c.type === 'method_declaration'
              ? goReceiverName(c.childForFieldName('receiver'))
              : null;
          push(c, name, recv ? `${recv}.${name}` : name, recv);
        }
      } else if (language === 'c') {
        if (c.type === 'function_definition') {
          const name = cFunctionName(c);
          if (name) push(c, name, name, null);
        } else if (
          c.type.startsWith('preproc_') ||
          c.type === 'linkage_specification' ||
          c.type === 'declaration_list'
        ) {
          walk(c, scope);
        }
      } else {
        if (c.type === 'function_definition' || c.type === 'class_definition') {
          const name = c.childForFieldName('name')?.text ?? '';
          if (c.type === 'function_definition') push(c, name, [...scope, name].join('.'), null);
          const body = c.childForFieldName('body');
          if (body) walk(body, [...scope, name]);
        } else if (
          c.type === 'decorated_definition' ||
          c.type.endsWith('_statement') ||
          c.type === 'block' ||
          c.type.endsWith('_clause')
        ) {
          walk(c, scope);
        }
      }
    }
  };
  walk(root, []);
  return out;
}

/** Whether a node is the language's null literal (nil, NULL/nullptr, None). */
export const NULLS: Record<SourceLanguage, (n: Node) => boolean> = {
  go: (n) => n.type === 'nil',
  c: (n) => n.text === 'NULL' || n.text === 'nullptr' || n.type === 'null',
  python: (n) => n.type === 'none',
};

/** `n` without enclosing parentheses. */
export const unparen = (n: Node): Node => {
  let x = n;
  while (
    x.type === 'parenthesized_expression' &&
    x.namedChildren.length === 1 &&
    x.namedChildren[0]
  )
    x = x.namedChildren[0];
  return x;
};

/** Key of a null-check operand, the same rule as the generated tests (see {@link FixPattern}). */
export function operandKey(language: SourceLanguage, operand: Node): string {
  const o = unparen(operand);
  if (language === 'go') {
    if (o.type === 'selector_expression') return o.childForFieldName('field')?.text ?? o.text;
    if (o.type === 'identifier') return o.text;
  } else if (language === 'python') {
    if (o.type === 'attribute') return o.childForFieldName('attribute')?.text ?? o.text;
    if (o.type === 'identifier') return o.text;
  }
  return leafTokens(o).join('');
}

/** Binary comparison parts: [left, operator, right], or null when `n` is not one. */
export function comparisonParts(language: SourceLanguage, n: Node): [Node, string, Node] | null {
  if (language === 'python') {
    if (n.type !== 'comparison_operator') return null;
    const operands = n.namedChildren.filter((c): c is Node => c !== null);
    if (operands.length !== 2) return null;
    const ops = n.children
      .filter((c): c is Node => c !== null && !c.isNamed)
      .map((c) => c.text.replace(/\s+/g, ' '))
      .join(' ');
    return [operands[0]!, ops, operands[1]!];
  }
  if (n.type !== 'binary_expression') return null;
  const l = n.childForFieldName('left');
  const r = n.childForFieldName('right');
  const op = n.childForFieldName('operator')?.text;
  if (!l || !r || !op) return null;
  return [l, op, r];
}

const EQ_OPS = new Set(['==', '!=', 'is', 'is not']);
const CMP_OPS = new Set(['==', '!=', '<', '<=', '>', '>=', 'is', 'is not', 'in', 'not in']);

/** Null check in node `n` (`X == nil`, `NULL != X`, `X is None`, ...): the operand node, or null. */
export function nullCheckOperand(language: SourceLanguage, n: Node): Node | null {
  const parts = comparisonParts(language, n);
  if (!parts || !EQ_OPS.has(parts[1])) return null;
  const [l, , r] = parts;
  const isNull = NULLS[language];
  if (isNull(unparen(r)) && !isNull(unparen(l))) return l;
  if (isNull(unparen(l)) && !isNull(unparen(r))) return r;
  return null;
}

/**
 * Operand of a negation that the tests accept as an equivalent null check (C `!p->v`, Python
 * `not msg.body`) when the operand is a plain name or field path; null otherwise. A candidate
 * pattern only in C, where `!p` is the idiomatic NULL check; in Python `not x` is only counted
 * (it also tests emptiness and flags).
 */
export function negationOperand(language: SourceLanguage, n: Node): Node | null {
  let arg: Node | null = null;
  if (
    language === 'c' &&
    n.type === 'unary_expression' &&
    n.childForFieldName('operator')?.text === '!'
  )
    arg = n.childForFieldName('argument');
  else if (language === 'python' && n.type === 'not_operator')
    arg = n.childForFieldName('argument');
  if (!arg) return null;
  const a = unparen(arg);
  return ['identifier', 'field_expression', 'attribute'].includes(a.type) ? a : null;
}

/**
 * C assertion and guard macros whose first argument is a checked condition (Open5GS's
 * `ogs_assert(x)`, `ogs_expect(x)`, `ogs_expect_or_return(x)`, `ogs_expect_or_return_val(x, v)`;
 * the C library's `assert`). `ogs_assert(sess)` is a null check of `sess`.
 */
export const C_ASSERTS: readonly string[] = [
  'ogs_assert',
  'ogs_expect',
  'ogs_expect_or_return',
  'ogs_expect_or_return_val',
  'assert',
];

/** Whether `n` is an `if`/`while` condition, or an operand of `&&`/`||` (through parentheses) in one. */
function inCondition(n: Node): boolean {
  let x: Node | null = n.parent;
  while (x) {
    if (x.type === 'parenthesized_expression') {
      const p = x.parent;
      if (
        p &&
        (p.type === 'if_statement' || p.type === 'while_statement') &&
        p.childForFieldName('condition')?.id === x.id
      )
        return true;
    } else if (x.type === 'binary_expression') {
      const op = x.childForFieldName('operator')?.text;
      if (op !== '&&' && op !== '||') return false;
    } else return false;
    x = x.parent;
  }
  return false;
}

/**
 * C guards of a plain operand (identifier or field path) other than comparisons and `!x`:
 * truthiness in an `if`/`while` condition (`if (source_ue)`, `if (a && sess)`) and the first
 * argument of a {@link C_ASSERTS} macro. Returns the operand, or null.
 */
function cGuardOperand(n: Node): Node | null {
  const plain = (x: Node | null): x is Node =>
    !!x && (x.type === 'identifier' || x.type === 'field_expression');
  if (n.type === 'call_expression') {
    const fn = n.childForFieldName('function');
    if (!fn || fn.type !== 'identifier' || !C_ASSERTS.includes(fn.text)) return null;
    const arg = n.childForFieldName('arguments')?.namedChildren[0] ?? null;
    const a = arg ? unparen(arg) : null;
    return plain(a) ? a : null;
  }
  if (plain(n) && inCondition(n)) return n;
  return null;
}

/** Node types a fix pattern may be (and the text count counts, for an expression's tokens). */
export const CANDIDATE_TYPES: Record<SourceLanguage, Set<string>> = {
  go: new Set(['binary_expression', 'unary_expression', 'call_expression']),
  c: new Set([
    'binary_expression',
    'unary_expression',
    'call_expression',
    'identifier',
    'field_expression',
  ]),
  python: new Set(['comparison_operator', 'boolean_operator', 'not_operator', 'call']),
};

const LOGGING =
  /(^|[.>])(Log|log|logger|Logger|logging|Tracef|Debugf|Infof|Warnf|Errorf|Printf|Println|Print|print|printf|fprintf|ogs_(debug|info|warn|error|log_\w+|trace)|fmt\.Sprintf)\b/;
const LENGTH = /(^|[^\w])(len|cap|strlen|sizeof|size|length)\(/;

function classify(
  language: SourceLanguage,
  n: Node,
): {
  kind: PatternKind;
  key: string;
  operand?: string;
  variants?: string[][];
  comparison?: FixPattern['comparison'];
  alias?: FixPattern['alias'];
  operandNode?: Node;
} | null {
  // C's idiomatic NULL check is `!p` / `!ctx->req` (Open5GS): a candidate there, counted as the
  // same null check as `p == NULL`; elsewhere negations are only counted as equivalents.
  const operand =
    nullCheckOperand(language, n) ??
    (language === 'c' ? (negationOperand(language, n) ?? cGuardOperand(n)) : null);
  // a bare C name or field is a candidate only as a guard (above)
  if (!operand && language === 'c' && (n.type === 'identifier' || n.type === 'field_expression'))
    return null;
  if (operand) {
    const key = operandKey(language, operand);
    if (key === 'err' || key === 'e' || key === 'ok') {
      // `err != nil` says little about the fix: allowed only as a last-resort expression.
      return { kind: 'expression', key: leafTokens(n).join('') };
    }
    // An added assertion (`ogs_assert(x)`) is satisfied by any null check of x; an added
    // graceful check (`if (!x) return`) is not satisfied by an assertion, which aborts: Open5GS
    // fixes often turn `ogs_assert(x)` into `if (!x) { ogs_error(...); return ...; }`.
    const fromAssert = language === 'c' && n.type === 'call_expression';
    return {
      kind: 'null_check',
      key,
      operand: unparen(operand).text,
      operandNode: unparen(operand),
      ...nullCheckCounting(language, operand, fromAssert),
    };
  }
  const tokens = leafTokens(n);
  const key = tokens.join('');
  const parts = comparisonParts(language, n);
  if (parts && CMP_OPS.has(parts[1])) {
    return {
      kind: LENGTH.test(key) ? 'length_check' : 'comparison',
      key,
      ...comparisonCounting(language, n, parts[0], parts[1], parts[2]),
    };
  }
  return { kind: 'expression', key, ...(language === 'c' ? { variants: [tokens] } : {}) };
}

/** True when a pattern says nothing about the fix (too short, a literal, logging). */
export function isVacuous(p: { kind: PatternKind; key: string }): boolean {
  if (p.kind === 'null_check') return p.key.length === 0;
  if (LOGGING.test(p.key)) return true;
  if (p.key.length < 4) return true;
  if (/^[\W\d_]*$/.test(p.key)) return true;
  if (p.kind === 'expression' && /^(!?\w+|\w+\(\)|!\w+\(\))$/.test(p.key)) return true;
  return false;
}

/** Identifier-abstracted token sequence (for rename detection). */
function shapeOf(node: Node | null): string {
  if (!node) return '';
  const out: string[] = [];
  const walk = (n: Node): void => {
    if (n.type === 'comment') return;
    if (n.childCount === 0 || n.type.includes('string_literal') || n.type === 'string') {
      out.push(/identifier$/.test(n.type) ? '_' : n.text.replace(/\s+/g, ''));
      return;
    }
    for (const c of n.children) if (c) walk(c);
  };
  walk(node);
  return out.join(' ');
}

/**
 * Control strength of a null-check site (control.ts): the operand through one level of local
 * alias, and the use signatures the fix guards that the parent left unguarded; `{}` when none.
 */
function controlOf(
  language: SourceLanguage,
  fixBody: Node,
  parentBody: Node | null,
  operandNode: Node,
): Partial<FixSite> {
  if (!PATH_TYPES[language].has(operandNode.type)) return {};
  const operand = resolveOperand(language, fixBody, operandNode);
  const signatures = controlSignatures(language, fixBody, parentBody, operand);
  return signatures.length > 0 ? { strength: 'control', guard: { operand, signatures } } : {};
}

/**
 * Control strength of a comparison site (condition.ts): the effects the condition governs in
 * the fix and not at the parent; `{}` when there are none (the site stays text).
 */
function conditionControlOf(
  language: SourceLanguage,
  n: Node,
  fixBody: Node,
  parentBody: Node | null,
): Partial<FixSite> {
  const c = conditionOf(language, n);
  if (!c) return {};
  // the operand as written: a compared name is often assigned in the function (`bitrate =
  // INT64_MAX`), which is not an alias; the checker still accepts a prediction's local alias
  const operand = leafTokens(c.operandNode).join('');
  const condition = { op: c.op, value: c.value };
  const signatures = conditionSignatures(
    language,
    fixBody,
    parentBody,
    operand,
    condition,
    n.startPosition.row + 1,
  );
  return signatures.length > 0
    ? { strength: 'control', guard: { operand, signatures, condition } }
    : {};
}

/**
 * The site of candidate node `n` (pattern `pattern`) in function `fn`, or null when the fix does
 * not add it. A text site needs more tests of its condition in the fixed function than at the
 * parent (text-count.ts, the count its test makes); a control site needs the fix to add the
 * check as written (the parent may hold it negated, mirrored or through a local, which its
 * control check does not read as the same statements governed).
 */
function siteOf(
  language: SourceLanguage,
  fn: FunctionInfo,
  parentFn: FunctionInfo | undefined,
  n: Node,
  kind: PatternKind,
  operandNode: Node | undefined,
  pattern: FixPattern,
): Omit<FixSite, 'file'> | null {
  const count = (f: FunctionInfo | undefined, literal = false): number =>
    f ? countPattern(language, f.body, pattern, literal) : 0;
  const fixCount = count(fn);
  const parentCount = count(parentFn);
  const text = fixCount > parentCount;
  if (!text && count(fn, true) <= count(parentFn, true)) return null;
  const body = fn.body;
  const parentBody = parentFn?.body ?? null;
  const control: Partial<FixSite> = !body
    ? {}
    : operandNode
      ? controlOf(language, body, parentBody, operandNode)
      : kind === 'comparison' || kind === 'length_check'
        ? conditionControlOf(language, n, body, parentBody)
        : {};
  if (!text && control.strength !== 'control') return null;
  return {
    function: fn.qualified,
    name: fn.name,
    receiver: fn.receiver,
    pattern,
    parentCount,
    fixCount,
    line: n.startPosition.row + 1,
    strength: 'text',
    ...control,
  };
}

/**
 * The sites of one function, best first, at most {@link MAX_SITES_PER_FUNCTION}: its control
 * null guards (one per operand) and C comparisons (one per condition); beside comparisons alone,
 * its text null checks too (a comparison does not cover them); else its text null checks, else
 * its single best other pattern. A text null check beside a control null guard is dropped: it
 * would reject correct fixes written differently (through an alias, with the check inverted) and
 * adds nothing against a no-op.
 */
function pickSites(all: FixSite[]): FixSite[] {
  const guards = all.filter((s) => s.pattern.kind === 'null_check');
  const seen = new Set<string>();
  const control = (nulls: boolean): FixSite[] =>
    all.filter((s) => {
      if (s.strength !== 'control' || (s.pattern.kind === 'null_check') !== nulls) return false;
      const c = s.guard!.condition;
      const id = `${s.guard!.operand}\u0000${c ? `${c.op}\u0000${c.value}` : ''}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  const nullControl = control(true);
  const conditions = control(false);
  // a control null guard covers the function's null checks; a comparison does not
  const picked =
    nullControl.length > 0
      ? [...nullControl, ...conditions]
      : conditions.length > 0
        ? [...conditions, ...guards]
        : guards.length > 0
          ? guards
          : all.slice(0, 1);
  return picked.slice(0, MAX_SITES_PER_FUNCTION);
}

/** Input of {@link deriveFixSites} for one changed file. */
export interface FileChange {
  file: string;
  language: SourceLanguage;
  /** File text at the parent commit, or null when the fix creates the file. */
  parentSource: string | null;
  /** File text after the fix, or null when the fix deletes the file. */
  fixSource: string | null;
  /** 1-based line numbers of lines the fix adds (in the fixed file). */
  addedLines: ReadonlySet<number>;
}

/** Maximum assertions per function (distinct guards). */
export const MAX_SITES_PER_FUNCTION = 3;

/**
 * Derives the Strategy B fix sites of one changed file.
 * @returns sites (one per distinct guard, at most {@link MAX_SITES_PER_FUNCTION} per function;
 *   without a guard the single best other pattern) and notes on touched functions that gave none
 *   (formatting-only, rename-only, only deletions, no non-vacuous added expression)
 */
export async function deriveFixSites(
  change: FileChange,
): Promise<{ sites: FixSite[]; notes: SiteNote[] }> {
  const { file, language } = change;
  const notes: SiteNote[] = [];
  if (change.fixSource === null)
    return { sites: [], notes: [{ file, function: null, note: 'file deleted by the fix' }] };
  if (change.addedLines.size === 0) {
    return {
      sites: [],
      notes: [{ file, function: null, note: 'the fix only deletes lines here' }],
    };
  }
  const fixTree = await parseSource(language, change.fixSource);
  const parentTree =
    change.parentSource === null ? null : await parseSource(language, change.parentSource);
  const fixFns = listFunctions(language, fixTree.rootNode);
  const parentFns = parentTree ? listFunctions(language, parentTree.rootNode) : [];
  const parentByName = new Map(parentFns.map((f) => [f.qualified, f]));
  const fixNames = new Set(fixFns.map((f) => f.qualified));
  const sites: FixSite[] = [];
  try {
    const touchedRows = [...change.addedLines].map((l) => l - 1);
    // innermost function per added row
    const innermost = (row: number): FunctionInfo | undefined =>
      fixFns
        .filter((f) => f.startRow <= row && row <= f.endRow)
        .sort((a, b) => a.endRow - a.startRow - (b.endRow - b.startRow))[0];
    const touched = new Map<string, { fn: FunctionInfo; rows: Set<number> }>();
    for (const r of touchedRows) {
      const fn = innermost(r);
      if (!fn) continue;
      const e = touched.get(fn.qualified) ?? { fn, rows: new Set<number>() };
      e.rows.add(r);
      touched.set(fn.qualified, e);
    }
    if (touched.size === 0)
      notes.push({ file, function: null, note: 'added lines are outside any function' });
    for (const { fn, rows } of touched.values()) {
      const parentFn = parentByName.get(fn.qualified);
      const fixShape = shapeOf(fn.body);
      if (!parentFn) {
        const renamedFrom = parentFns.find(
          (p) => !fixNames.has(p.qualified) && shapeOf(p.body) === fixShape,
        );
        if (renamedFrom) {
          notes.push({
            file,
            function: fn.qualified,
            note: `rename only (was ${renamedFrom.qualified})`,
          });
          continue;
        }
      }
      if (
        parentFn &&
        leafTokens(parentFn.body ?? parentFn.node).join(' ') ===
          leafTokens(fn.body ?? fn.node).join(' ')
      ) {
        notes.push({ file, function: fn.qualified, note: 'formatting or comments only' });
        continue;
      }
      if (parentFn && shapeOf(parentFn.body) === fixShape) {
        notes.push({ file, function: fn.qualified, note: 'identifier rename only' });
        continue;
      }
      const found = new Map<string, FixSite>();
      const visit = (n: Node): void => {
        if (
          n.type === 'comment' ||
          (n.type.startsWith('function_definition') && n !== fn.node && language === 'python')
        )
          return;
        const onAdded = [...rows].some((r) => r >= n.startPosition.row && r <= n.endPosition.row);
        if (!onAdded) return;
        if (CANDIDATE_TYPES[language].has(n.type)) {
          const c = classify(language, n);
          if (c && !isVacuous(c)) {
            const id = `${c.kind}\u0000${c.key}`;
            if (!found.has(id)) {
              const { operandNode, ...rest } = c;
              const site = siteOf(change.language, fn, parentFn, n, c.kind, operandNode, {
                ...rest,
                text: n.text,
              });
              if (site) found.set(id, { ...site, file });
            }
          }
        }
        // a site is its first added occurrence in live code: not in `#if 0`, nor in `if (0)`
        // (real Open5GS 1552 adds its condition first inside `#if 0`, then as the real guard)
        for (const c of liveChildren(n)) visit(c);
      };
      if (fn.body) visit(fn.body);
      const all = [...found.values()].sort(
        (a, b) =>
          KIND_RANK[a.pattern.kind] - KIND_RANK[b.pattern.kind] ||
          b.pattern.key.length - a.pattern.key.length ||
          a.line - b.line,
      );
      if (all.length === 0) {
        notes.push({
          file,
          function: fn.qualified,
          note: 'no non-vacuous expression added by the fix',
        });
        continue;
      }
      sites.push(...pickSites(all));
    }
  } finally {
    fixTree.delete();
    parentTree?.delete();
  }
  return { sites, notes };
}
