/**
 * The `telebench` command line (commander, why: the standard Node argument parser with
 * subcommands, help and typed options). This file and `commands.ts` are the composition root: the
 * only parts of `pipeline/` that import `stages/`.
 *
 * Commands are declared here; what they do is loaded when they run (`./commands.js` for the
 * engine's, the stages' command modules for theirs), so `--help` and `status` start fast
 * (`bench/cli-start.bench.ts`).
 *
 * Exit codes: 0 all done, 1 some items failed, 2 usage or configuration error, 3 a stage stopped at
 * preflight, 130 SIGINT, 143 SIGTERM.
 */
import { Command, CommanderError, Option } from 'commander';
import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { PIPELINE_NAMES, stageCommands } from '../../stages/commands.js';
import { ConfigError, TelebenchError } from '../errors.js';
import { PROJECT_ROOT } from '../manifest.js';
import { redact } from '../secrets.js';
import { addServeModelCommand } from './serve-model.js';
import type { RunFlags } from './commands.js';

/** The engine's command implementations, loaded when one of them runs (see commands.ts). */
const impl = () => import('./commands.js');

/** Resolves `--config` (default `config/default.yaml` in the current folder, else in the checkout). */
export function resolveConfigPath(flag: string | undefined): string {
  if (flag) return resolve(flag);
  const local = resolve('config/default.yaml');
  return existsSync(local) ? local : join(PROJECT_ROOT, 'config', 'default.yaml');
}

const intArg =
  (name: string) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new ConfigError(`${name} expects a whole number of at least 1, got "${v}"`);
    return n;
  };

/**
 * The words that start this CLI the way it was started, for hints a person copies: `npx telebench`
 * when started through a package's `node_modules/.bin/telebench` link (npx, npm exec), `telebench`
 * through a `telebench` link elsewhere (a global install on PATH), else `node <script>` with the
 * script path relative to the current folder when inside it (`node bin/telebench.js` in a
 * checkout, as `make run` starts it). The environment is not used: npm's variables are inherited
 * by every process a script starts.
 */
export function selfCommand(
  argv1: string | undefined = process.argv[1],
  cwd: string = process.cwd(),
): string[] {
  if (!argv1) return ['telebench'];
  if (basename(argv1) === 'telebench')
    return /node_modules[\\/]\.bin$/.test(dirname(argv1)) ? ['npx', 'telebench'] : ['telebench'];
  const rel = relative(cwd, argv1);
  return ['node', rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : argv1];
}

/** `a` quoted for a POSIX shell when it needs quoting. */
export function shellQuote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/**
 * Builds the commander program with every command (the engine's and those of
 * `stages/commands.ts`). Declaring loads no command's implementation. Its actions throw
 * ConfigError (exit 2) and PreflightError (exit 3), which {@link main} turns into exit codes;
 * usage errors surface as CommanderError (exit 2).
 */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('telebench')
    .description(
      'Builds and releases benchmark datasets for AI in telecommunications (SWE-Bench 5G, TeleResilienceBench).',
    )
    .option(
      '--state <dir>',
      'state directory (state.db, blobs, runs, releases); default $TELEBENCH_HOME or ./cache',
    )
    .showHelpAfterError()
    .exitOverride();

  program
    .command('run')
    .description('run a pipeline (resumable: a second run does only what is not done yet)')
    .argument('<pipeline>', `one of: ${PIPELINE_NAMES.join(', ')}`)
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .option('--from <stage>', 'run this stage and every stage after it')
    .option('--only <stage>', 'run only this stage')
    .option('--retry-failed', 'run failed items again')
    .option('--dry-run', 'plan every stage and print what would run; change nothing')
    .option('--limit <n>', 'at most N items per stage', intArg('--limit'))
    .option('--verbose', 'in a pipe, print every item event')
    .action(async (name: string, flags: RunFlags, cmd: Command) => {
      const { runCommand } = await impl();
      process.exitCode = await runCommand(name, { ...flags, state: cmd.optsWithGlobals().state });
    });

  program
    .command('status')
    .description(
      'per stage: item counts by state, skip reasons and error codes; with executor swarm, the tasks per node',
    )
    .option('--json', 'print JSON')
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .action(async (flags: { json?: boolean; config?: string }, cmd: Command) =>
      (await import('./status.js')).statusCommand(flags, cmd),
    );

  program
    .command('show')
    .description("an item's input, output, error and artifacts")
    .argument('<stage>')
    .argument('<item-key>')
    .action(async (stage: string, key: string, _flags: unknown, cmd: Command) =>
      (await impl()).showCommand(stage, key, cmd),
    );

  program
    .command('items')
    .description("a stage's item keys with their state and skip reason or error code")
    .argument('<stage>')
    .addOption(
      // the store's ItemState values (not imported: this module loads at every start)
      new Option('--state-filter <state>', 'only items in this state').choices([
        'pending',
        'running',
        'done',
        'failed',
        'skipped',
        'orphaned',
      ]),
    )
    .option('--limit <n>', 'at most N items', intArg('--limit'))
    .action(async (stage: string, flags: { stateFilter?: string; limit?: number }, cmd: Command) =>
      (await impl()).itemsCommand(stage, flags, cmd),
    );

  program
    .command('report')
    .description('Markdown report: `run` (the last run, default) or a pipeline name')
    .argument('[target]', 'run, or a pipeline name', 'run')
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .action(async (target: string, flags: { config?: string }, cmd: Command) =>
      (await impl()).reportCommand(target, flags, cmd),
    );

  const configCmd = program.command('config').description('configuration helpers');
  configCmd
    .command('check')
    .description(
      'validate a configuration file and the registries it names (repositories, subsets)',
    )
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .action(async (flags: { config?: string }) => {
      const file = (await impl()).configCheck(flags.config);
      process.stdout.write(`${file}: valid\n`);
    });
  configCmd
    .command('schema')
    .description('write the JSON Schema of the configuration (for editors)')
    .option('--out <file>', 'output file', join(PROJECT_ROOT, 'config', 'telebench.schema.json'))
    .action(async (flags: { out: string }) => {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(flags.out, (await impl()).configJsonSchema());
      process.stdout.write(`wrote ${flags.out}\n`);
    });

  addServeModelCommand(program);
  for (const add of stageCommands) add(program);
  return program;
}

/**
 * Runs the CLI with `argv` (without node and script). Never throws: prints the error and returns
 * the exit code.
 */
export async function main(argv: string[]): Promise<number> {
  // A reader that closes the pipe early (`telebench items X | head -1`) is not an error: stop
  // quietly as other command-line tools do, instead of an unhandled EPIPE stack trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return 0;
      return 2;
    }
    if (err instanceof TelebenchError && (err.tier === 'config' || err.tier === 'preflight')) {
      process.stderr.write(`telebench: ${redact(err.message)}\n`);
      return err.tier === 'config' ? 2 : 3;
    }
    // One rule for every command: an outside service that cannot be reached or is unavailable
    // right now (tiers transient and rate-limit, after the provider's own retries) is a missing
    // outside service, exit 3, as when a stage stops at preflight.
    if (err instanceof TelebenchError && (err.tier === 'transient' || err.tier === 'rate-limit')) {
      process.stderr.write(
        `telebench: ${redact(err.message)} [${err.code}]\n  -> an outside service is not reachable or not available; run the command again when it is\n`,
      );
      return 3;
    }
    const e = err as Error;
    process.stderr.write(`telebench: internal error: ${redact(e.stack ?? String(e))}\n`);
    return 1;
  }
}
