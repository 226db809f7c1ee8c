/**
 * CLI commands of the release branch, registered through `stageCommands` in stages/commands.ts:
 *   telebench release <dataset> --version V [--config F] [--no-verify] [--push REGISTRY]
 *   telebench publish <dataset> <V> [--repo owner/name] [--dry-run] [--config F] [--push REGISTRY]
 *   telebench verify  <dataset> <V> [--config F]
 *   telebench refresh <dataset> [--version V|auto] [--config F] [--no-verify]
 * `<dataset>` is the id or an alias of a registered dataset (`stages/index.ts`, `DATASET_ENTRIES`):
 * `swe-bench-5g` (alias `swe5g`) or `teleresiliencebench` (alias `resilience`).
 */
import type { Command } from 'commander';
import { redact } from '../../pipeline/secrets.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { ReleaseWiring } from './release.js';
import { exitCodesHelp } from '../../pipeline/cli/exit-help.js';

/** Help text of `<dataset>`: the registry is not loaded for help; an unknown name lists the known. */
const DATASET_ARG = 'id or alias of a registered dataset (an unknown name lists them)';

/** The actions, loaded when a command runs (so declaring the commands loads no release code). */
const actions = () => import('./command-actions.js');

/** What the commands need from the composition root: the datasets, pipelines and stages. */
export type ReleaseCommandWiring = ReleaseWiring;

/**
 * Runs a command body: configuration and preflight errors, and an outside service that cannot be
 * reached or is unavailable (tiers transient and rate-limit: a Hub outage) go to the CLI's one rule
 * (exit 2, 3, 3); any other TelebenchError (a moved branch, a refused tag) is printed as one clear
 * line with exit code 1, never as an internal error with a stack.
 */
async function cliAction(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    if (
      err instanceof TelebenchError &&
      err.tier !== 'config' &&
      err.tier !== 'preflight' &&
      err.tier !== 'transient' &&
      err.tier !== 'rate-limit' &&
      err.tier !== 'bug'
    ) {
      process.stderr.write(`telebench: ${redact(err.message)} [${err.code}]\n`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}

/**
 * The four commands, as functions adding themselves to the program. Registering throws nothing
 * and loads nothing: `wiring` and the actions are loaded when a command runs.
 * When a command runs, its action prints other TelebenchErrors as one line with exit code 1
 * (`hub_branch_moved`, `hub_unavailable`, `hub_version_exists`, ...) and rethrows to the CLI:
 * @throws ConfigError (from an action) `config_invalid` for an unknown dataset (naming the
 *   registered ones), a bad version or configuration file
 * @throws TelebenchError (from an action, tier config/preflight/bug) `publish_repo_missing`,
 *   `hub_token_missing`, `hub_unauthorized`, `release_not_found`, `release_version_exists`,
 *   `release_rows_invalid`, `unknown_stage`, `verify_not_applicable`, `verify_unavailable`,
 *   `refresh_no_release`, `refresh_no_cutoff`, `refresh_not_supported`,
 *   and with `--push`: `release_no_images` (a dataset whose rows name no images), `release_image_missing`, `release_image_changed`, `publish_images_local`
 *   (tier config) and `registry_push_failed` (tier infra, printed as one line, exit 1)
 */
export function releaseCommands(
  wiring: () => Promise<ReleaseCommandWiring>,
): ((program: Command) => void)[] {
  return [
    (program) =>
      program
        .command('release')
        .description(
          'write an immutable release folder <state>/releases/<dataset>/<V>/ (JSON Lines, Parquet, card, manifest, changelog)',
        )
        .argument('<dataset>', DATASET_ARG)
        .requiredOption('--version <V>', 'release version (e.g. 1.0.0), or auto')
        .option('--config <file>', 'configuration file (default config/default.yaml)')
        .option(
          '--no-verify',
          'SWE-Bench 5G: do not re-run the gold patches first (the card says so)',
        )
        .option(
          '--push <registry>',
          'SWE-Bench 5G: push the instance images to REGISTRY (host:port) and name them by digest in image_name',
        )
        .addHelpText(
          'after',
          exitCodesHelp({
            0: 'released (or the same content was already released: a no-op)',
            1: 'the release could not be made (an image push that failed), named in one line',
            2: 'bad input or configuration (an unknown dataset, a bad --version, a version released with other content, --push on a dataset without images)',
            3: 'an outside service or input is missing (the Docker engine for the re-proof, the registry)',
          }),
        )
        .action(
          (
            name: string,
            flags: { version: string; config?: string; verify: boolean; push?: string },
            cmd: Command,
          ) =>
            cliAction(async () =>
              (await actions()).releaseAction(name, flags, cmd, await wiring()),
            ),
        ),
    (program) =>
      program
        .command('publish')
        .description(
          'upload a release to a Hugging Face dataset repository (one commit with parentCommit, tag V); HF_TOKEN from the environment',
        )
        .argument('<dataset>', DATASET_ARG)
        .argument('<version>', 'a version written by `telebench release`')
        .option('--repo <owner/name>', 'dataset repository (default release.hub.repos.<dataset>)')
        .option('--dry-run', 'print the difference against the Hub’s current files; write nothing')
        .option('--config <file>', 'configuration file (default config/default.yaml)')
        .option(
          '--push <registry>',
          'SWE-Bench 5G: push the instance images the rows name in REGISTRY (a release made with release --push REGISTRY) before the upload',
        )
        .addHelpText(
          'after',
          exitCodesHelp({
            0: 'uploaded and tagged (or, with --dry-run, the difference printed)',
            1: 'the Hub refused it (a moved branch, a version tagged there already), named in one line',
            2: 'bad input or configuration (an unknown dataset or version, no repository, no HF_TOKEN)',
            3: 'the Hub could not be reached or is unavailable',
          }),
        )
        .action(
          (
            name: string,
            version: string,
            flags: { repo?: string; dryRun?: boolean; config?: string; push?: string },
            cmd: Command,
          ) =>
            cliAction(async () =>
              (await actions()).publishAction(name, version, flags, cmd, await wiring()),
            ),
        ),
    (program) =>
      program
        .command('refresh')
        .description(
          'the next release from the latest one in the state: mine what landed since its cutoff (swe-bench-5g) or take the current subsets and source files (teleresiliencebench), run only the new candidates, release the previous rows plus the new ones with a changelog; nothing new -> no version written',
        )
        .argument('<dataset>', `${DATASET_ARG} (swe-bench-5g or teleresiliencebench)`)
        .option('--version <V>', 'version of the new release (e.g. 1.1.0), or auto', 'auto')
        .option('--config <file>', 'configuration file (default config/default.yaml)')
        .option(
          '--no-verify',
          'SWE-Bench 5G: do not re-run the gold patches first (the card says so)',
        )
        .addHelpText(
          'after',
          exitCodesHelp({
            0: 'nothing failed: a new version written, or nothing new (no version written)',
            1: 'items failed, with or without a new version (the next refresh retries them)',
            2: 'bad input or configuration (an unknown dataset, a bad --version, no release to refresh)',
            3: 'a stage stopped at preflight (an outside service or input missing): the command that resumes is printed',
          }),
        )
        .action(
          (
            name: string,
            flags: { version: string; config?: string; verify: boolean },
            cmd: Command,
          ) =>
            cliAction(async () =>
              (await actions()).refreshAction(name, flags, cmd, await wiring()),
            ),
        ),
    (program) =>
      program
        .command('verify')
        .description(
          're-run a released SWE-Bench 5G snapshot in fresh containers: the gold patch must resolve every instance, the empty patch none',
        )
        .argument('<dataset>', `${DATASET_ARG}, one whose rows can be executed`)
        .argument('<version>', 'a released version')
        .option('--config <file>', 'configuration file (default config/default.yaml)')
        .addHelpText(
          'after',
          exitCodesHelp({
            0: 'every instance held: the gold patch resolved it in every run, the empty patch in none',
            1: 'some instance did not hold',
            2: 'bad input or configuration (an unknown dataset or version)',
            3: 'an outside service is missing (the Docker engine)',
          }),
        )
        .action((name: string, version: string, flags: { config?: string }, cmd: Command) =>
          cliAction(async () =>
            (await actions()).verifyAction(name, version, flags, cmd, await wiring()),
          ),
        ),
  ];
}
