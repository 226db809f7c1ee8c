/**
 * `telebench plan`, declared without loading any stage (the action is in `command.ts`):
 *
 *   telebench plan [--config FILE] [--sample N] [--seed S] [--depth testgen|validate|audit] [--json]
 *
 * An estimate of a whole SWE-Bench 5G run before it starts: mining (cheap) gives the exact funnel,
 * a seeded random sample of N kept candidates per project goes through the later stages in the
 * same state (a later `telebench run swe5g` reuses that work), and its outcomes are projected to
 * every candidate with intervals (docs/how-to/plan-a-run.md). A command of its own rather than
 * `run --estimate`: `run` is the engine's and knows no branch; the estimate is SWE-Bench 5G's, as
 * `mine`, `images` and `evaluate` are.
 */
import { Option, type Command } from 'commander';
import { ConfigError } from '../../../pipeline/errors.js';
import { DEPTHS, type Depth } from './estimate.js';

/** The flags of `telebench plan` after parsing. */
export interface PlanFlags {
  config?: string;
  sample: number;
  seed: number;
  depth: Depth;
  json?: boolean;
}

const wholeNumber =
  (flag: string, min: number) =>
  (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isInteger(n) || n < min)
      throw new ConfigError(`${flag} expects a whole number of at least ${min}, got "${v}"`);
    return n;
  };

/**
 * Registers `telebench plan` on `program`. The action:
 * @throws ConfigError (exit 2) for a bad flag (`--sample 0`), a sample larger than a project's
 *   kept candidates, no kept candidate at all, or what `telebench run` throws for the
 *   configuration (a missing registry file); PreflightError (exit 3) as `telebench run` does
 */
export function addPlanCommand(program: Command): void {
  program
    .command('plan')
    .description(
      'SWE-Bench 5G: estimate a whole run before it starts (mine, then a random sample per project through the later stages, projected with intervals)',
    )
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .option('--sample <n>', 'kept candidates sampled per project', wholeNumber('--sample', 1), 10)
    .option('--seed <n>', 'seed of the random sample', wholeNumber('--seed', 0), 1)
    .addOption(
      new Option(
        '--depth <stage>',
        'how far the sample goes (testgen: no Docker; audit: what a default release keeps)',
      )
        .choices([...DEPTHS])
        .default('audit'),
    )
    .option('--json', 'print the estimate as JSON (for scripts)')
    .action(async (flags: PlanFlags, cmd: Command) => {
      const { planCommand } = await import('./command.js');
      const state = cmd.optsWithGlobals<{ state?: string }>().state;
      process.exitCode = await planCommand({ ...flags, ...(state ? { state } : {}) });
    });
}
