/**
 * The language-specific text of the audit's mutants (Go, C, Python): the statements a mutant
 * inserts or rewrites around a fix's guard, and the tree-sitter node types it reads. The shapes
 * (stages/swe5g/audit/mutants.ts) are the same in every language; only this text differs.
 */
import type { Node, SourceLanguage } from '../../../pipeline/providers/treesitter/parser.js';

/** What one language writes for the mutants. `ind` is the guard's indentation. */
export interface MutantSyntax {
  /** The guard's condition evaluated in a statement that changes nothing. */
  emptyIf(cond: string, ind: string): string;
  /** A statement (the gold guard, indented by `ind`) inside code that never runs. */
  deadCode(stmt: string, ind: string): string[];
  /** A local variable `name` holding `expr` (one line, before the guard). */
  local(name: string, expr: string, ind: string): string;
  /** `cond` negated. */
  not(cond: string): string;
  /** An empty body for a guard (replaces its consequence). */
  emptyBody(ind: string): string;
  /** Statements that end a branch early. */
  exits: ReadonlySet<string>;
  /** Binary `&&`/`||` of a condition: whether `n` is one, and its left operand. */
  shortCircuitLeft(n: Node): Node | null;
  /** The name of the audit's local variable (the language's naming style). */
  localName(i: number): string;
}

const goStyleShortCircuit = (n: Node): Node | null => {
  if (n.type !== 'binary_expression') return null;
  const op = n.childForFieldName('operator')?.text;
  return op === '&&' || op === '||' ? n.childForFieldName('left') : null;
};

/** Indents every line of `text` by `by` (empty lines stay empty). */
export function indentLines(text: string, by: string): string {
  return text
    .split('\n')
    .map((l) => (l.trim() === '' ? l : by + l))
    .join('\n');
}

const GO: MutantSyntax = {
  emptyIf: (cond, ind) => `${ind}if ${cond} {\n${ind}}\n`,
  deadCode: (stmt, ind) => [`${ind}if false {\n${indentLines(stmt, '\t')}\n${ind}}\n`],
  local: (name, expr, ind) => `${ind}${name} := ${expr}\n`,
  not: (cond) => `!(${cond})`,
  emptyBody: (ind) => `{\n${ind}}`,
  exits: new Set(['return_statement']),
  shortCircuitLeft: goStyleShortCircuit,
  localName: (i) => `auditV${i}`,
};

const C: MutantSyntax = {
  // the condition node of a C `if` keeps its parentheses: `(p == NULL)`
  emptyIf: (cond, ind) => `${ind}if ${cond} { }\n`,
  deadCode: (stmt, ind) => [
    `${ind}if (0) {\n${indentLines(stmt, '    ')}\n${ind}}\n`,
    `#if 0\n${stmt}\n#endif\n`,
  ],
  local: (name, expr, ind) => `${ind}__auto_type ${name} = ${expr};\n`,
  not: (cond) => `(!${cond})`,
  emptyBody: () => '{ }',
  exits: new Set(['return_statement', 'goto_statement']),
  shortCircuitLeft: goStyleShortCircuit,
  localName: (i) => `audit_v${i}`,
};

const PYTHON: MutantSyntax = {
  emptyIf: (cond, ind) => `${ind}if ${cond}:\n${ind}    pass\n`,
  deadCode: (stmt, ind) => [`${ind}if False:\n${indentLines(stmt, '    ')}\n`],
  local: (name, expr, ind) => `${ind}${name} = ${expr}\n`,
  not: (cond) => `not (${cond})`,
  emptyBody: () => 'pass',
  exits: new Set(['return_statement', 'raise_statement']),
  shortCircuitLeft: (n) =>
    n.type === 'boolean_operator' ? (n.childForFieldName('left') ?? null) : null,
  localName: (i) => `audit_v${i}`,
};

/** The mutant syntax of a language. */
export const SYNTAX: Record<SourceLanguage, MutantSyntax> = { go: GO, c: C, python: PYTHON };
