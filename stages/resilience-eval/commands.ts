/**
 * CLI command of the TeleResilienceBench evaluation:
 *
 *   telebench score <predictions.jsonl...> [--instances FILE...] [--num-ctx N] [--json FILE]
 *
 * Scores predictions made elsewhere (our JSON Lines or the published experiment files) in the
 * three parse modes, beside the recorded predictions when the file has them, and prints the
 * Markdown tables. Malformed rows are listed with their line numbers and the others are scored;
 * the exit code is 1 when any row was malformed, else 0.
 */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../../pipeline/errors.js';
import type { EvalInstance } from './eval-instance.js';

/**
 * Registers `telebench score` on `program`. The action throws ConfigError (`config_invalid`) for a
 * bad `--num-ctx`, TelebenchError `input_missing` for an unreadable file and `bad_instance_row`
 * for a bad instances file.
 */
export function addScoreCommand(program: Command): void {
  program
    .command('score')
    .description(
      'TeleResilienceBench: score predictions made elsewhere (JSON Lines, incl. the published experiment files) in the strict, lenient and published parse modes',
    )
    .argument('<predictions...>', 'JSON Lines files of predictions')
    .option(
      '--instances <file...>',
      'instances (our schema or the published one) giving gold and the generator answer',
    )
    .option(
      '--num-ctx <n>',
      "context window of the run: prompts at it are flagged (default: the published runs' 2048)",
    )
    .option('--json <file>', 'also write the per-row scores and summaries as JSON')
    .action(
      async (
        files: string[],
        flags: { instances?: string[]; numCtx?: string; json?: string },
      ): Promise<void> => {
        // loaded when the command runs, so declaring it loads no evaluation code
        const { readEvalInstances } = await import('./eval-instance.js');
        const { scoreFiles, PUBLISHED_NUM_CTX } = await import('./score.js');
        const { scoreMarkdown } = await import('./tables.js');
        const numCtx = Number(flags.numCtx ?? PUBLISHED_NUM_CTX);
        if (!Number.isInteger(numCtx) || numCtx <= 0)
          throw new ConfigError(`--num-ctx: expected a positive integer, got ${flags.numCtx}`, {});
        const instances = new Map<string, EvalInstance>();
        for (const f of flags.instances ?? [])
          for (const i of readEvalInstances(f)) instances.set(i.sample_id, i);
        const results = scoreFiles(files, instances, numCtx);
        process.stdout.write(scoreMarkdown(results));
        if (flags.json) writeFileSync(flags.json, `${JSON.stringify(results, null, 1)}\n`);
        const bad = results.flatMap((r) => r.s.errors);
        for (const e of bad) process.stderr.write(`malformed row: line ${e.line}: ${e.message}\n`);
        process.exitCode = bad.length ? 1 : 0;
      },
    );
}
