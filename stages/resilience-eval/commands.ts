/**
 * CLI command of the TeleResilienceBench evaluation:
 *
 *   telebench score <predictions.jsonl...> [--instances FILE...] [--num-ctx N] [--json FILE]
 *                   [--html FILE] [--vram MODEL=GB...] [--on-duplicate error|first|last]
 *
 * Scores predictions made elsewhere (our JSON Lines, the published experiment files, or Inspect AI
 * logs `.eval` / `.json` of inspect/teleresiliencebench/, whose stored replies are read) in the
 * three parse modes, beside the recorded predictions when the file has them, and prints the
 * Markdown tables (and the HTML report with `--html`). Malformed rows are listed with file, line
 * and column and the others are scored; the exit code is 1 when any row was malformed or a
 * `sample_id` is duplicated, else 0.
 */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError, TelebenchError } from '../../pipeline/errors.js';

/**
 * Registers `telebench score` on `program`. Bad input exits 1 with the file, line and column named
 * and no stack trace: an empty file, bad JSON, a missing column or cell, a row of neither schema,
 * a duplicated `sample_id` (both places named; `--on-duplicate first|last` says which wins). The
 * action throws ConfigError (`config_invalid`, exit 2) for a bad option and TelebenchError
 * `input_missing` (exit 2) for an unreadable file.
 */
export function addScoreCommand(program: Command): void {
  program
    .command('score')
    .description(
      'TeleResilienceBench: score predictions made elsewhere (JSON Lines, incl. the published experiment files, or Inspect AI logs) in the recorded, published, strict and lenient parse modes',
    )
    .argument(
      '<predictions...>',
      'JSON Lines files of predictions, or Inspect AI logs (.eval, .json) of the TeleResilienceBench task',
    )
    .option(
      '--instances <file...>',
      'instances (our schema or the published one) giving gold and the generator answer',
    )
    .option(
      '--num-ctx <n>',
      "context window of the run: prompts at it are flagged (default: the published runs' 2048)",
    )
    .option(
      '--on-duplicate <policy>',
      'a sample_id twice (predictions of one model, or instances): error (default), first or last wins',
      'error',
    )
    .option('--json <file>', 'also write the per-row scores and summaries as JSON')
    .option('--html <file>', 'also write the report: Table I per mode and the figures')
    .option('--vram <model=GB...>', "VRAM per model for the report's CFR-against-VRAM figure")
    .action(
      async (
        files: string[],
        flags: {
          instances?: string[];
          numCtx?: string;
          json?: string;
          html?: string;
          vram?: string[];
          onDuplicate: string;
        },
      ): Promise<void> => {
        // loaded when the command runs, so declaring it loads no evaluation code
        const { indexInstances } = await import('./eval-instance.js');
        const { scoreFiles, readPredictionInputs, PUBLISHED_NUM_CTX, rowErrorText } =
          await import('./score.js');
        const { scoreMarkdown } = await import('./tables.js');
        const { DUPLICATE_POLICIES } = await import('./input-text.js');
        const numCtx = Number(flags.numCtx ?? PUBLISHED_NUM_CTX);
        if (!Number.isInteger(numCtx) || numCtx <= 0)
          throw new ConfigError(`--num-ctx: expected a positive integer, got ${flags.numCtx}`, {});
        const policy = DUPLICATE_POLICIES.find((p) => p === flags.onDuplicate);
        if (!policy)
          throw new ConfigError(
            `--on-duplicate: expected one of ${DUPLICATE_POLICIES.join(', ')}, got ${flags.onDuplicate}`,
            {},
          );
        const vram = new Map<string, number>();
        for (const v of flags.vram ?? []) {
          const m = /^(.+)=(\d+(?:\.\d+)?)$/.exec(v);
          if (!m)
            throw new ConfigError(`--vram: expected MODEL=GB (gemma4:31b=19.9), got ${v}`, {});
          vram.set(m[1]!, Number(m[2]));
        }
        let results: ReturnType<typeof scoreFiles>;
        try {
          const instances = indexInstances(flags.instances ?? [], policy);
          results = scoreFiles(
            await readPredictionInputs(files, instances),
            instances,
            numCtx,
            policy,
          );
        } catch (e) {
          if (!(e instanceof TelebenchError) || e.tier !== 'content') throw e;
          process.stderr.write(`telebench score: ${e.message}\n`);
          process.exitCode = 1;
          return;
        }
        process.stdout.write(scoreMarkdown(results));
        if (flags.json) writeFileSync(flags.json, `${JSON.stringify(results, null, 1)}\n`);
        if (flags.html) {
          const { writeScoreHtml } = await import('./score-report.js');
          await writeScoreHtml(flags.html, results, vram);
        }
        const bad = results.flatMap((r) => r.s.errors);
        for (const e of bad) process.stderr.write(`malformed row: ${rowErrorText(e)}\n`);
        process.exitCode = bad.length ? 1 : 0;
      },
    );
}
