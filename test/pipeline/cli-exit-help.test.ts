/**
 * `telebench <command> --help` lists the exit codes docs/cli.md gives (issue msgs: `refresh --help`
 * named only exit 0, so a timer's author could not tell failed items (1) from bad input (2) or a
 * preflight stop (3)). Through the real CLI for the commands a timer or a grader runs; the block
 * itself (pipeline/cli/exit-help.ts) checked pure.
 */
import { describe, it, expect } from 'vitest';
import { runCli } from '../fixtures/cli.js';
import { exitCodesHelp } from '../../pipeline/cli/exit-help.js';

/** The codes the `Exit codes` block of a help text lists, in order (none when it has no block). */
function listedCodes(help: string): string[] {
  const block = help.split('Exit codes (docs/cli.md):\n')[1];
  if (block === undefined) return [];
  return [...block.matchAll(/^ {2}(\d+(?:\/\d+)?) +\S/gm)].map((m) => m[1]!);
}

describe('exit codes in --help', () => {
  it('the block lists the codes given, in order, and the interrupt codes', () => {
    const text = exitCodesHelp({ 0: 'done', 2: 'bad input' });
    expect(listedCodes(text)).toEqual(['0', '2', '130/143']);
    // a help text without the block lists nothing (what `refresh --help` printed before)
    expect(listedCodes('Usage: telebench refresh\n  nothing new -> no version (exit 0)\n')).toEqual(
      [],
    );
  });

  it.each([['refresh'], ['release'], ['evaluate'], ['verify'], ['publish']])(
    '`%s --help` lists 0, 1, 2 and 3 (docs/cli.md)',
    async (command) => {
      const r = await runCli([command, '--help']);
      expect(r.code, r.stderr).toBe(0);
      expect(listedCodes(r.stdout)).toEqual(['0', '1', '2', '3', '130/143']);
    },
  );

  it('`refresh --help` no longer reads as if exit 0 were the only outcome', async () => {
    const r = await runCli(['refresh', '--help']);
    expect(r.stdout).not.toContain('(exit 0)');
    expect(r.stdout).toMatch(/^ {2}1 +items failed/m);
    expect(r.stdout).toMatch(/^ {2}3 +a stage stopped at preflight/m);
  });
});
