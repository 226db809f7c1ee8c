/**
 * Statement macros that tree-sitter's C grammar cannot parse, rewritten before parsing into plain
 * C of the same byte length, so every node keeps the rows, columns and byte offsets of the
 * original source.
 *
 * Open5GS's string switch (`lib/core/ogs-macros.h`, `SWITCH_CASE_INIT`):
 *
 * ```c
 * SWITCH(message->h.resource.component[0])
 * CASE(OGS_SBI_RESOURCE_NAME_NF_INSTANCES)
 *     ...
 *     break;
 * DEFAULT
 *     ...
 * END
 * ```
 *
 * expands to `{ ... for (...) { {`, `} if (... strcmp(...) == 0) {`, `} {` and `}}}`. Written
 * without semicolons, each line is a syntax error to the grammar, whose recovery then lets one
 * function swallow the functions after it (Open5GS's `ogs_sbi_build_request` parsed as lines
 * 331-2217 of `lib/sbi/message.c`, 45 functions instead of 60). The rewrite keeps the blocks the
 * macros open and close, and keeps the expression as a statement, not as a condition (a `CASE`
 * is a string comparison, never a guard Strategy B may count): `SWITCH(X)` -> `{(X);{{`,
 * `CASE(X)` -> `}(X);{`, `DEFAULT` -> `} {`, `END` -> `}}}` (padded with spaces to the original
 * length).
 */

const SWITCH = /^(\s*)SWITCH\s*\((.*)\)(\s*)$/;
const CASE = /^(\s*)CASE\s*\((.*)\)(\s*)$/;
const BARE = /^(\s*)(DEFAULT|END)(\s*)$/;

/** `text` padded with spaces on the right to `length` characters (never cut). */
const pad = (text: string, length: number): string =>
  text.length >= length ? text : text + ' '.repeat(length - text.length);

/**
 * Rewrites the string-switch statement macros of a C file (see the module doc) when the file
 * uses them: a line holding only `SWITCH(...)`, `CASE(...)`, `DEFAULT` or `END`. A file with no
 * `SWITCH(` line is returned unchanged (a lone `END` elsewhere is someone else's macro).
 * @param source C source text
 * @returns text of the same length, line for line
 */
export function rewriteCStatementMacros(source: string): string {
  if (!/^\s*SWITCH\s*\(/m.test(source)) return source;
  return source
    .split('\n')
    .map((line) => {
      const sw = SWITCH.exec(line);
      if (sw) return pad(`${sw[1]}{(${sw[2]});{{`, line.length - sw[3]!.length) + sw[3];
      const cs = CASE.exec(line);
      if (cs) return pad(`${cs[1]}}(${cs[2]});{`, line.length - cs[3]!.length) + cs[3];
      const bare = BARE.exec(line);
      if (bare) {
        const code = bare[2] === 'END' ? '}}}' : '} {';
        return pad(`${bare[1]}${code}`, line.length - bare[3]!.length) + bare[3];
      }
      return line;
    })
    .join('\n');
}
