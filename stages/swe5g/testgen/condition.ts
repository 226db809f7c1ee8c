/**
 * Strategy B control for conditions that are not null checks (docs/strategy-b.md, "Conditions"):
 * a comparison the fix adds (`if (bitrate >= INT64_MAX / mul) bitrate = INT64_MAX; else bitrate
 * *= mul;`, `if (type == X_TYPE) list = &remote;`) counts only when the statements it governs
 * run on its side alone. The governed statements are the fix's *effects*: expression statements
 * (assignments, calls; not logging, assertions or jumps) of the fixed function each of whose
 * occurrences is reached only when the condition holds (`effect+:`) or only when it fails
 * (`effect-:`), and which the parent either lacks or reaches without the condition. The
 * generated check asks for every recorded effect in live code and for each occurrence on its
 * side of the condition, so a no-op `if (C) {}`, the gold with its body emptied and the gold in
 * `if (0)` fail it, while the condition through a local, inverted with the branches swapped, or
 * an early return in place of `else` pass.
 *
 * The condition is `operand op value` (operand: a name or field path, through one level of local
 * alias; value: the other side's tokens); `value op operand` (mirrored) and the negated operator
 * are the same condition. C, Go and Python alike (the checkers: C tokens, `go/ast`, Python `ast`).
 */
import type { Node, SourceLanguage } from '../../../pipeline/providers/treesitter/parser.js';
import { leafTokens } from '../../../pipeline/providers/treesitter/parser.js';
import { PATH_TYPES, guardedUses } from './control.js';
import { C_ASSERTS, comparisonParts, unparen } from './patterns.js';

/** `operand op value` is the condition (its true side is `sign` +1 of the effects recorded). */
export interface Condition {
  op: string;
  value: string;
  /** +1: uses are good where the condition holds; -1: where it fails. */
  sign: 1 | -1;
}

/** The relational and equality operators a condition may use. */
export const RELATIONAL = new Set(['==', '!=', '<', '<=', '>', '>=']);
/** The operator with its operands swapped (`a < b` is `b > a`). */
export const MIRROR: Record<string, string> = {
  '==': '==',
  '!=': '!=',
  '<': '>',
  '>': '<',
  '<=': '>=',
  '>=': '<=',
};
/** The operator of the negated comparison (`!(a < b)` is `a >= b`). */
export const NEGATE: Record<string, string> = {
  '==': '!=',
  '!=': '==',
  '<': '>=',
  '>=': '<',
  '>': '<=',
  '<=': '>',
};

/**
 * Polarity of comparison `parts` against the condition: `cond.sign` when it says the same as
 * `operand op value` (also mirrored), `-cond.sign` when it says its negation, else 0.
 */
export function conditionPolarity(
  cond: Condition,
  parts: [Node, string, Node],
  isMember: (n: Node) => boolean,
  text: (n: Node) => string,
): 1 | -1 | 0 {
  const [l, op, r] = parts;
  let o: string | undefined;
  if (isMember(l) && text(r) === cond.value) o = op;
  else if (isMember(r) && text(l) === cond.value) o = MIRROR[op];
  if (o === cond.op) return cond.sign;
  if (o !== undefined && o === NEGATE[cond.op]) return cond.sign === 1 ? -1 : 1;
  return 0;
}

/** Logging calls (`ogs_error`, `d_warn`, `warn`, `logWarnf`, `x.Errorf`, `printf`): not effects. */
const LOGGING =
  /^(\w+_|log|logger)?(debug|info|warn|warning|error|fatal|trace|log|log_\w+|print|printf|fprintf|puts|syslog)(f|ln)?$/i;

/**
 * Effect signature of an expression statement (`effect:` + its tokens without whitespace), or
 * null for a logging call, an assertion, an expression that is no assignment, update or call
 * (they change no state the test can ask for) or a C statement without its semicolon (a statement
 * macro followed by its block).
 */
export function effectSignature(language: SourceLanguage, stmt: Node): string | null {
  if (!EFFECT_TYPES[language].has(stmt.type)) return null;
  // C: a statement macro with a block (`ogs_list_for_each(&l, b) { ... }`) has no semicolon and
  // is a loop to the checker, not a statement
  if (language === 'c' && (stmt.lastChild?.type !== ';' || stmt.lastChild.isMissing)) return null;
  const e =
    stmt.type === 'expression_statement'
      ? stmt.namedChildren.find((c): c is Node => c !== null && c.type !== 'comment')
      : stmt;
  if (!e) return null;
  const x = unparen(e);
  if (!CHANGES_STATE.has(x.type)) return null;
  if (x.type === 'call_expression' || x.type === 'call') {
    const fn = x.childForFieldName('function');
    const name = (fn?.text ?? '').split(/\.|->/).pop()!;
    if (LOGGING.test(name) || (language === 'c' && C_ASSERTS.includes(name))) return null;
  }
  return `effect:${leafTokens(e).join('').replace(/\s+/g, '')}`;
}

/** Expressions that change state: assignments, updates and calls (not a bare name or value). */
const CHANGES_STATE = new Set([
  'assignment_expression',
  'update_expression',
  'call_expression',
  'assignment_statement',
  'inc_statement',
  'dec_statement',
  'assignment',
  'augmented_assignment',
  'call',
]);

/** Statements that are effects: expression statements; Go also assignments and `x++`/`x--`. */
export const EFFECT_TYPES: Record<SourceLanguage, Set<string>> = {
  c: new Set(['expression_statement']),
  python: new Set(['expression_statement']),
  go: new Set(['expression_statement', 'assignment_statement', 'inc_statement', 'dec_statement']),
};

/**
 * Whether an `if` condition is the literal 0, false or False, or a conjunction holding one (its
 * then branch is dead code).
 */
export function isDeadCondition(cond: Node | null): boolean {
  if (!cond) return false;
  const x = unparen(cond);
  if (/^(0|false|False)$/.test(x.text.trim())) return true;
  const op = x.childForFieldName('operator')?.text;
  if (
    (x.type === 'binary_expression' && op === '&&') ||
    (x.type === 'boolean_operator' && op === 'and')
  )
    return (
      isDeadCondition(x.childForFieldName('left')) || isDeadCondition(x.childForFieldName('right'))
    );
  return false;
}

/**
 * The condition of comparison `n` as `operand op value`: the operand is the side that is a name
 * or field path (the left when both are), the value the other side's tokens.
 * @returns null when `n` is not a relational comparison or neither side is a path
 */
export function conditionOf(
  language: SourceLanguage,
  n: Node,
): { operandNode: Node; op: string; value: string } | null {
  const parts = comparisonParts(language, n);
  if (!parts || !RELATIONAL.has(parts[1])) return null;
  const [l, op, r] = parts;
  const path = PATH_TYPES[language];
  const tok = (x: Node): string => leafTokens(unparen(x)).join('').replace(/\s+/g, '');
  if (path.has(unparen(l).type)) return { operandNode: unparen(l), op, value: tok(r) };
  if (path.has(unparen(r).type)) return { operandNode: unparen(r), op: MIRROR[op]!, value: tok(l) };
  return null;
}

/** At most this many effects per side are recorded (the nearest to the condition first). */
export const MAX_EFFECTS_PER_SIDE = 2;

/**
 * Effect signatures the fix governs by the condition `operand op value` and the parent does not:
 * per side (`effect+:` where it holds, `effect-:` where it fails), the effects each of whose
 * occurrences in the fixed function is on that side and which the parent lacks or reaches
 * without the condition; at most {@link MAX_EFFECTS_PER_SIDE} per side, nearest to `line` first.
 * @param line 1-based line of the condition in the fixed file
 * @returns sorted signatures (empty: no control site)
 */
export function conditionSignatures(
  language: SourceLanguage,
  fixBody: Node,
  parentBody: Node | null,
  operand: string,
  cond: { op: string; value: string },
  line: number,
): string[] {
  const out: string[] = [];
  for (const sign of [1, -1] as const) {
    const c: Condition = { ...cond, sign };
    const fix = guardedUses(language, fixBody, operand, c);
    const parent = parentBody ? guardedUses(language, parentBody, operand, c) : [];
    const near = new Map<string, number>();
    for (const u of fix) {
      const d = Math.abs(u.line - line);
      near.set(u.sig, Math.min(near.get(u.sig) ?? Infinity, d));
    }
    const sigs = [...near.keys()].filter(
      (s) =>
        fix.every((u) => u.sig !== s || u.guarded) &&
        (parent.every((u) => u.sig !== s) || parent.some((u) => u.sig === s && !u.guarded)),
    );
    sigs.sort((a, b) => near.get(a)! - near.get(b)! || a.localeCompare(b));
    const prefix = sign === 1 ? 'effect+:' : 'effect-:';
    for (const s of sigs.slice(0, MAX_EFFECTS_PER_SIDE))
      out.push(prefix + s.slice('effect:'.length));
  }
  return out.sort();
}
