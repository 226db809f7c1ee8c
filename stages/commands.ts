/**
 * The CLI's light view of the stages: the pipeline names and the commands that the dataset
 * branches add (`release`, `publish`, `verify`, `mine`, `plan`, `images`, `score`, `evaluate`). Importing
 * this file loads no stage: each command module declares its command and loads what it does on
 * first run, so `telebench --help` stays fast (`bench/cli-start.bench.ts`). `stages/index.ts` holds
 * the stages and pipelines themselves; `test/pipeline/cli-package.test.ts` checks that
 * {@link PIPELINE_NAMES} lists exactly its pipelines.
 */
import type { Command } from 'commander';
import { addMineCommand } from './swe5g/commands.js';
import { addScoreCommand } from './resilience-eval/commands.js';
import { addImagesCommand } from './swe5g/build/images-cli.js';
import { releaseCommands } from './release/commands.js';
import { addEvaluateCommand } from './swe5g/evaluate/command.js';
import { addPlanCommand } from './swe5g/plan/cli.js';

/** Every pipeline name, in `stages/index.ts`'s order (for `telebench run --help`). */
export const PIPELINE_NAMES: readonly string[] = [
  'swe5g',
  'swe5g-eval',
  'swe5g-evaluate',
  'swe5g-mine',
  'resilience',
  'resilience-eval',
  'selftest',
  'all',
];

/** Extra CLI commands contributed by the dataset branches (`images`, `release`, `publish`, ...). */
export const stageCommands: ((program: Command) => void)[] = [
  ...releaseCommands(async () => (await import('./index.js')).releaseWiring),
  addMineCommand,
  addPlanCommand,
  addImagesCommand,
  addScoreCommand,
  addEvaluateCommand,
];
