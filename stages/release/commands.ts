/**
 * CLI commands of the release branch, registered through `commands` in stages/index.ts:
 *   telebench release <dataset> --version V [--config F] [--no-verify]
 *   telebench publish <dataset> <V> [--repo owner/name] [--dry-run] [--config F]
 *   telebench verify  <dataset> <V> [--config F]
 * `<dataset>` is `swe-bench-5g` (alias `swe5g`) or `teleresiliencebench` (alias `resilience`).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfigFile } from '../../pipeline/config/load.js';
import { openState, resolveStateDir } from '../../pipeline/state.js';
import { PROJECT_ROOT } from '../../pipeline/manifest.js';
import { redact, secret } from '../../pipeline/secrets.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { StoreReader } from '../../pipeline/stage.js';
import { appConfigSchema } from '../config.js';
import { datasetByName } from '../../datasets/index.js';
import { releaseDataset, type ReleaseWiring, type Verifier } from './release.js';
import { releaseSettings } from './config.js';
import { formatChanges, publishRelease } from './publish.js';
import { verifyRelease } from './verify.js';
import { checkVersion } from './assemble.js';
import type { VerifierEnv } from './verifier.js';

/** Wiring plus the verifier factory (null when the environments code is not there). */
export interface ReleaseCommandWiring extends ReleaseWiring {
  verifier(config: unknown, env: VerifierEnv): Verifier | null;
}

function configPath(flag: string | undefined): string {
  if (flag) return resolve(flag);
  const local = resolve('config/default.yaml');
  return existsSync(local) ? local : join(PROJECT_ROOT, 'config', 'default.yaml');
}

function withState<T>(
  stateFlag: string | undefined,
  wiring: ReleaseWiring,
  fn: (s: { dir: string; reader: StoreReader }) => Promise<T>,
): Promise<T> {
  const dir = resolveStateDir(stateFlag);
  const state = openState(dir);
  const reader: StoreReader = {
    outputs: <O>(stage: string) => {
      const v = wiring.stageVersion(stage);
      if (v === undefined)
        throw new TelebenchError('unknown_stage', `no stage named "${stage}"`, { tier: 'config' });
      return state.store.doneOutputs<O>(stage, v);
    },
    item: (s, k) => state.store.item(s, k),
    items: (s) => state.store.items(s),
  };
  return fn({ dir, reader }).finally(() => state.close());
}

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
 * The three commands, as functions adding themselves to the program. Registering throws nothing.
 * When a command runs, its action prints other TelebenchErrors as one line with exit code 1
 * (`hub_branch_moved`, `hub_unavailable`, `hub_version_exists`, ...) and rethrows to the CLI:
 * @throws ConfigError (from an action) `config_invalid` for an unknown dataset, a bad version or
 *   configuration file
 * @throws TelebenchError (from an action, tier config/preflight/bug) `publish_repo_missing`,
 *   `hub_token_missing`, `hub_unauthorized`, `release_not_found`, `release_version_exists`,
 *   `release_rows_invalid`, `unknown_stage`, `verify_not_applicable`, `verify_unavailable`
 */
export function releaseCommands(wiring: ReleaseCommandWiring): ((program: Command) => void)[] {
  return [
    (program) =>
      program
        .command('release')
        .description(
          'write an immutable release folder <state>/releases/<dataset>/<V>/ (JSON Lines, Parquet, card, manifest, changelog)',
        )
        .argument('<dataset>', 'swe-bench-5g (swe5g) or teleresiliencebench (resilience)')
        .requiredOption('--version <V>', 'release version (e.g. 1.0.0), or auto')
        .option('--config <file>', 'configuration file (default config/default.yaml)')
        .option(
          '--no-verify',
          'SWE-Bench 5G: do not re-run the gold patches first (the card says so)',
        )
        .action(
          (
            name: string,
            flags: { version: string; config?: string; verify: boolean },
            cmd: Command,
          ) =>
            cliAction(async () => {
              const dataset = datasetByName(name);
              if (flags.version !== 'auto') checkVersion(flags.version);
              const configFile = configPath(flags.config);
              const config = loadConfigFile(configFile, appConfigSchema);
              const settings = releaseSettings(config);
              const stateDir = resolveStateDir(cmd.optsWithGlobals().state);
              const verifier =
                flags.verify && settings.verify_before_release && dataset.id === 'swe-bench-5g'
                  ? wiring.verifier(config, {
                      stateDir,
                      configFile,
                      log: (m) => process.stderr.write(`${m}\n`),
                    })
                  : null;
              await withState(cmd.optsWithGlobals().state, wiring, async ({ dir, reader }) => {
                const out = await releaseDataset({
                  ctx: {
                    store: reader,
                    config,
                    stateDir: dir,
                    log: (m) => process.stderr.write(`${m}\n`),
                  },
                  wiring,
                  dataset,
                  version: flags.version,
                  verifier,
                });
                process.stdout.write(
                  `${out.status === 'unchanged' ? 'already released with identical content (no-op)' : 'released'}: ${dataset.id} ${out.manifest.version} -> ${out.dir}\n` +
                    `  rows ${out.manifest.counts.rows}; configs ${Object.entries(
                      out.manifest.counts.by_config,
                    )
                      .map(([c, n]) => `${c} ${n}`)
                      .join(', ')}\n` +
                    `  content digest ${out.manifest.content_digest}\n`,
                );
              });
            }),
        ),
    (program) =>
      program
        .command('publish')
        .description(
          'upload a release to a Hugging Face dataset repository (one commit with parentCommit, tag V); HF_TOKEN from the environment',
        )
        .argument('<dataset>', 'swe-bench-5g (swe5g) or teleresiliencebench (resilience)')
        .argument('<version>', 'a version written by `telebench release`')
        .option('--repo <owner/name>', 'dataset repository (default release.hub.repos.<dataset>)')
        .option('--dry-run', 'print the difference against the Hub’s current files; write nothing')
        .option('--config <file>', 'configuration file (default config/default.yaml)')
        .action(
          (
            name: string,
            version: string,
            flags: { repo?: string; dryRun?: boolean; config?: string },
            cmd: Command,
          ) =>
            cliAction(async () => {
              const dataset = datasetByName(name);
              checkVersion(version);
              const config = loadConfigFile(configPath(flags.config), appConfigSchema);
              const hub = releaseSettings(config).hub;
              const repo = flags.repo ?? hub.repos[dataset.id];
              if (!repo || !/^[\w.-]+\/[\w.-]+$/.test(repo)) {
                throw new TelebenchError(
                  'publish_repo_missing',
                  `no Hub repository for ${dataset.id}: pass --repo owner/name or set release.hub.repos.${dataset.id}`,
                  { tier: 'config' },
                );
              }
              const stateDir = resolveStateDir(cmd.optsWithGlobals().state);
              const out = await publishRelease({
                stateDir,
                dataset: dataset.id,
                version,
                target: {
                  hubUrl: process.env.TELEBENCH_HUB_URL ?? hub.url,
                  repo,
                  accessToken: secret('HF_TOKEN'),
                },
                branch: hub.branch,
                private: hub.private,
                dryRun: flags.dryRun === true,
                log: (m) => process.stderr.write(`${m}\n`),
              });
              const head =
                out.status === 'dry-run'
                  ? `dry run: ${out.createdRepo ? `would create ${repo}, then ` : ''}commit to ${repo}@${hub.branch} and tag ${out.tag}`
                  : out.status === 'already-published'
                    ? `already published: ${repo} tag ${out.tag} holds exactly these files (no-op)`
                    : `published ${dataset.id} ${version} to ${repo}: commit ${out.commit}, tag ${out.tag}`;
              process.stdout.write(`${head}\n${formatChanges(out.changes)}\n`);
            }),
        ),
    (program) =>
      program
        .command('verify')
        .description(
          're-run a released SWE-Bench 5G snapshot in fresh containers: the gold patch must resolve every instance, the empty patch none',
        )
        .argument('<dataset>', 'swe-bench-5g (swe5g)')
        .argument('<version>', 'a released version')
        .option('--config <file>', 'configuration file (default config/default.yaml)')
        .action((name: string, version: string, flags: { config?: string }, cmd: Command) =>
          cliAction(async () => {
            const dataset = datasetByName(name);
            checkVersion(version);
            const configFile = configPath(flags.config);
            const config = loadConfigFile(configFile, appConfigSchema);
            const stateDir = resolveStateDir(cmd.optsWithGlobals().state);
            const verifier = wiring.verifier(config, {
              stateDir,
              configFile,
              log: (m) => process.stderr.write(`${m}\n`),
            });
            const summary = await verifyRelease({ stateDir, dataset, version, verifier });
            process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
            if (summary.gold_resolved !== summary.attempted || summary.empty_patch_resolved > 0)
              process.exitCode = 1;
          }),
        ),
  ];
}
