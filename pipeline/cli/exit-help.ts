/**
 * The `Exit codes:` block a command's `--help` ends with (commander `addHelpText('after', ...)`),
 * so `telebench <command> --help` says what docs/cli.md says: the one rule of every command
 * (0 done, 1 items failed, 2 usage or configuration error, 3 a stage stopped at preflight or an
 * outside service missing, 130/143 interrupted) in the command's own words.
 */

/** What each exit code means for one command, in its words (a code left out is not listed). */
export interface ExitMeanings {
  0: string;
  1?: string;
  2: string;
  3?: string;
}

/**
 * The help block: `Exit codes (docs/cli.md):` then one indented line per code given, then
 * `130/143 interrupted (SIGINT/SIGTERM)`. Pure.
 * @param m the meaning of each code
 * @returns the text, starting with a blank line (commander prints it after the options)
 */
export function exitCodesHelp(m: ExitMeanings): string {
  const lines = (['0', '1', '2', '3'] as const)
    .filter((c) => m[c] !== undefined)
    .map((c) => `  ${c}        ${m[c]}`);
  return `\nExit codes (docs/cli.md):\n${lines.join('\n')}\n  130/143  interrupted (SIGINT/SIGTERM)\n`;
}
