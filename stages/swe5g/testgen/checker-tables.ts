/**
 * The shared operator tables of condition.ts ({@link MIRROR}, {@link NEGATE}, {@link RELATIONAL})
 * written as literals of the in-image checkers' languages, so the Go, Python and C checkers
 * (checker-go.ts, checker-py.ts, checker-c.ts, checker-text.ts) read the very tables the
 * generation-time rules use instead of copies.
 */
import { MIRROR, NEGATE, RELATIONAL } from './condition.js';

/** A string-to-string table as a Python dict literal (`{"<": ">", ...}`). */
export function pyDict(table: Readonly<Record<string, string>>): string {
  return `{${Object.entries(table)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`;
}

/** A string-to-string table as a Go `map[string]string` literal. */
export function goMap(table: Readonly<Record<string, string>>): string {
  return `map[string]string{${Object.entries(table)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`;
}

/** A set of strings as a Python set literal. */
export function pySet(values: Iterable<string>): string {
  return `{${[...values].map((v) => JSON.stringify(v)).join(', ')}}`;
}

/** Python: `_MIRROR`, `_NEGATE` and `_REL` (the relational operators), one assignment a line. */
export const PY_TABLES = `_REL = ${pySet(RELATIONAL)}
_MIRROR = ${pyDict(MIRROR)}
_NEGATE = ${pyDict(NEGATE)}`;

/** Go: `f2pMirror` and `f2pNegate` (operator strings, `token.Token.String()`). */
export const GO_TABLES = `var f2pMirror = ${goMap(MIRROR)}
var f2pNegate = ${goMap(NEGATE)}`;
