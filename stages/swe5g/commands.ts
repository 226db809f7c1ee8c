/**
 * CLI commands of the SWE-Bench 5G mining part:
 *
 *   telebench mine [--config FILE] [--issues-from FILE] [--limit N]
 *
 * runs the `swe5g-mine` pipeline (swe5g.mine -> swe5g.link -> swe5g.filter) and prints the
 * funnel. `--issues-from FILE` (JSON Lines of GitHub REST issue objects obtained elsewhere)
 * completes git-only candidates with their issue text; it overrides `swe5g.mining.issues_from`.
 * The state keeps a copy of the file (`<state>/inputs/issues-from.jsonl`), which every later run
 * in that state links with when the configuration names no issues file.
 */
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../../pipeline/errors.js';

/**
 * Registers `telebench mine` on `program`. Registering throws nothing; the action:
 * @throws ConfigError (`config_invalid`, from the action) when `--issues-from` names a missing
 *   file; the action then rethrows what `telebench run swe5g-mine` throws (a bad `--limit` or
 *   configuration file, a preflight failure)
 */
export function addMineCommand(program: Command): void {
  program
    .command('mine')
    .description(
      'SWE-Bench 5G mining only: mine merged PRs, link issues, filter (pipeline swe5g-mine); then `telebench report swe5g` shows the funnel',
    )
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .option(
      '--issues-from <file>',
      'JSON Lines of GitHub REST issues that complete git-only candidates (overrides swe5g.mining.issues_from)',
    )
    .option('--limit <n>', 'at most N items per stage')
    .action(
      async (
        flags: { config?: string; issuesFrom?: string; limit?: string },
        cmd: Command,
      ): Promise<void> => {
        if (flags.issuesFrom) {
          const abs = resolve(flags.issuesFrom);
          if (!existsSync(abs))
            throw new ConfigError(`--issues-from: file not found: ${abs}`, { file: abs });
          // loaded when the command runs, so declaring it loads no mining code
          const { ISSUES_FROM_ENV, keepIssuesFile } = await import('./link/link.js');
          const { resolveStateDir } = await import('../../pipeline/state.js');
          // the state keeps a copy: a later `telebench run swe5g` in it links with the same file
          const kept = keepIssuesFile(
            resolveStateDir(cmd.optsWithGlobals<{ state?: string }>().state),
            abs,
          );
          process.env[ISSUES_FROM_ENV] = kept;
        }
        const argv = ['run', 'swe5g-mine'];
        const state = cmd.optsWithGlobals<{ state?: string }>().state;
        if (state) argv.unshift('--state', state);
        if (flags.config) argv.push('--config', flags.config);
        if (flags.limit) argv.push('--limit', flags.limit);
        await program.parseAsync(argv, { from: 'user' });
      },
    );
}
