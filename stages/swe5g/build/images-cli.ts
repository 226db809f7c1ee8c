/**
 * `telebench images` (base, ls, prune), declared without loading Docker or build code: the actions
 * are in `images-command.ts`, imported when a subcommand runs.
 */
import type { Command } from 'commander';

const actions = () => import('./images-command.js');

/** Registers `telebench images` on the CLI program. */
export function addImagesCommand(program: Command): void {
  const images = program
    .command('images')
    .description('Docker images of SWE-Bench 5G: offline base, listing with layer sizes, pruning');

  images
    .command('base')
    .description(
      'Build the offline base images (debootstrap minbase rootfs + host Go toolchain) when missing',
    )
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .option('--force', 'rebuild even when the images exist')
    .action(async (opts: { config?: string; force?: boolean }) =>
      (await actions()).imagesBase(opts),
    );

  images
    .command('ls')
    .description(
      "List this state folder's telebench images (those its swe5g.build items recorded) with the size each layer adds",
    )
    .option('--state <dir>', 'state directory (default TELEBENCH_HOME or ./cache)')
    .option('--all', 'every telebench image of the Docker engine, whichever state built it')
    .action(async (_opts: unknown, cmd: Command) => (await actions()).imagesLs(cmd));

  images
    .command('prune')
    .description('Remove telebench images that no pending or validated, unreleased instance needs')
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .option('--state <dir>', 'state directory (default TELEBENCH_HOME or ./cache)')
    .option('--dry-run', 'only list what would be removed')
    .action(async (opts: { config?: string; state?: string; dryRun?: boolean }) =>
      (await actions()).imagesPrune(opts),
    );
}
