/**
 * `telebench evaluate --predictions FILE [--config FILE]`: grades predictions in SWE-bench's format
 * (JSON Lines `instance_id, model_name_or_path, model_patch`, from any agent: SWE-agent,
 * OpenHands, Agentless, or `swe5g-eval`'s own files) on the complete validated instances of the
 * state, through pipeline `swe5g-evaluate` (stage `swe5g.eval.grade`, resumable), then prints
 * `telebench report swe5g-eval`.
 */
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../../../pipeline/errors.js';

/**
 * Registers `telebench evaluate`. The action:
 * @throws ConfigError when `--predictions` names a missing file; then what `telebench run
 *   swe5g-evaluate` throws (configuration, preflight)
 */
export function addEvaluateCommand(program: Command): void {
  program
    .command('evaluate')
    .description(
      'grade SWE-bench-format predictions (JSON Lines: instance_id, model_name_or_path, model_patch) on the validated SWE-Bench 5G instances',
    )
    .requiredOption('--predictions <file>', 'JSON Lines predictions file')
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .action(async (flags: { predictions: string; config?: string }, cmd: Command) => {
      const abs = resolve(flags.predictions);
      if (!existsSync(abs))
        throw new ConfigError(`--predictions: file not found: ${abs}`, { file: abs });
      // loaded when the command runs, so declaring it loads no evaluation code
      const { PREDICTIONS_ENV } = await import('./stages.js');
      process.env[PREDICTIONS_ENV] = abs;
      const state = cmd.optsWithGlobals<{ state?: string }>().state;
      const pre = state ? ['--state', state] : [];
      const cfg = flags.config ? ['--config', flags.config] : [];
      await program.parseAsync([...pre, 'run', 'swe5g-evaluate', ...cfg], { from: 'user' });
      const code = typeof process.exitCode === 'number' ? process.exitCode : 0;
      await program.parseAsync([...pre, 'report', 'swe5g-evaluate', ...cfg], { from: 'user' });
      process.exitCode = code;
    });
}
