/**
 * `telebench evaluate --predictions FILE [--dataset PATH] [--after DATE] [--config FILE]`: grades predictions in
 * any shape SWE-bench accepts (JSON Lines, a JSON list, or the JSON object keyed by instance_id
 * that mini-swe-agent and SWE-agent write as `preds.json`; see `predictions.ts`) on the complete
 * validated instances of the state, or with `--dataset` on the rows of a released dataset alone
 * (dataset.ts: no state of the build needed; images pulled by `image_name`), through pipeline
 * `swe5g-evaluate` (stage `swe5g.eval.grade`, resumable), then prints `telebench report
 * swe5g-eval` and one line counting this file's rows. `--after DATE` keeps only instances dated
 * after a model's cutoff (window.ts); the report says the window and how many it kept. A dataset with a bad row stops before
 * anything runs (exit 2, each bad row named `file:line: field ...`).
 * A file with no usable row stops before anything runs (exit 1, each bad row named); so does a
 * file whose every row was skipped (unknown instance, invalid).
 */
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../../../pipeline/errors.js';
import { exitCodesHelp } from '../../../pipeline/cli/exit-help.js';

/**
 * Registers `telebench evaluate`. The action:
 * @throws ConfigError when `--predictions` names a missing file; then what `telebench run
 *   swe5g-evaluate` throws (configuration, preflight)
 */
export function addEvaluateCommand(program: Command): void {
  program
    .command('evaluate')
    .description(
      'grade SWE-bench predictions (JSON Lines, a JSON list, or preds.json keyed by instance_id: instance_id, model_name_or_path, model_patch) on the validated SWE-Bench 5G instances',
    )
    .requiredOption(
      '--predictions <file>',
      'predictions file: JSON Lines, a JSON list, or a JSON object keyed by instance_id',
    )
    .option(
      '--dataset <path>',
      'grade on a released dataset instead of the validated instances of the state: a release folder, a folder of JSON Lines files or one rows file (images pulled by image_name)',
    )
    .option(
      '--after <date>',
      "grade only instances dated after a model's cutoff: YYYY-MM-DD (from the next day on) or a time with its zone; the date is the earlier of issue and PR creation",
    )
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .addHelpText(
      'after',
      exitCodesHelp({
        0: 'every item graded (resolved or not: the report says which)',
        1: 'items failed (named above), or no row of the predictions file was usable or graded',
        2: 'bad input or configuration (a missing predictions file, a bad --dataset row or --after, --dataset without the docker executor)',
        3: 'a stage stopped at preflight (the Docker engine or an image missing)',
      }),
    )
    .action(
      async (
        flags: { predictions: string; dataset?: string; after?: string; config?: string },
        cmd: Command,
      ) => {
        const abs = resolve(flags.predictions);
        if (!existsSync(abs))
          throw new ConfigError(`--predictions: file not found: ${abs}`, { file: abs });
        if (flags.after !== undefined) {
          // checked before anything runs (exit 2); the stages read it from the environment
          const { parseAfter } = await import('../../../datasets/swe-bench-5g/dates.js');
          const { AFTER_ENV } = await import('./window.js');
          parseAfter(flags.after, '--after');
          process.env[AFTER_ENV] = flags.after;
        }
        if (flags.dataset) {
          // checked before anything runs: every bad row named with file:line and field (exit 2)
          const { DATASET_ENV, readDatasetRows } = await import('./dataset.js');
          const dataset = resolve(flags.dataset);
          readDatasetRows(dataset);
          process.env[DATASET_ENV] = dataset;
        }
        // loaded here, not at start: predictions.ts brings zod (test/pipeline/cli-package.test.ts)
        const { noUsableRow, readPredictions } = await import('./predictions.js');
        const read = readPredictions(abs);
        const why = noUsableRow(abs, read);
        if (why) {
          process.stderr.write(`telebench evaluate: ${why}\n`);
          process.exitCode = 1;
          return;
        }
        // loaded when the command runs, so declaring it loads no evaluation code
        const { PREDICTIONS_ENV } = await import('./stages.js');
        process.env[PREDICTIONS_ENV] = abs;
        const state = cmd.optsWithGlobals<{ state?: string }>().state;
        const pre = state ? ['--state', state] : [];
        const cfg = flags.config ? ['--config', flags.config] : [];
        await program.parseAsync([...pre, 'run', 'swe5g-evaluate', ...cfg], { from: 'user' });
        let code = typeof process.exitCode === 'number' ? process.exitCode : 0;
        await program.parseAsync([...pre, 'report', 'swe5g-evaluate', ...cfg], { from: 'user' });
        const { fileTally, tallyLine } = await import('./file-tally.js');
        const tally = fileTally(state, abs, read);
        process.stderr.write(`${tallyLine(tally)}\n`);
        if (code === 0 && tally.graded === 0) code = 1;
        process.exitCode = code;
      },
    );
}
