/**
 * What `telebench release`, `publish` and `verify` do (declared in `commands.ts`, which imports
 * this module when one of them runs). Errors: see {@link releaseCommands}.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { ReleaseCommandWiring } from './commands.js';
import { loadConfigFile } from '../../pipeline/config/load.js';
import { openState, resolveStateDir } from '../../pipeline/state.js';
import { PROJECT_ROOT } from '../../pipeline/manifest.js';
import { secret } from '../../pipeline/secrets.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { StoreReader } from '../../pipeline/stage.js';
import { storeReader } from '../../pipeline/runner.js';
import { appConfigSchema } from '../config.js';
import { datasetByName } from '../../datasets/index.js';
import { releaseDataset, type ReleaseWiring } from './release.js';
import { releaseSettings } from './config.js';
import { formatChanges, publishRelease } from './publish.js';
import { verifyRelease } from './verify.js';
import { checkVersion, readReleaseRows, releaseDir, validateRows } from './assemble.js';
import { pushRowImages } from './push.js';
import { DockerClient } from '../../pipeline/providers/docker/client.js';
import { parseDigestRef, PUSHED_IMAGES_KV } from '../../pipeline/providers/docker/registry.js';
import type { KeyValue } from '../../pipeline/store/store.js';
import type { Swe5gRow } from '../../datasets/index.js';

function configPath(flag: string | undefined): string {
  if (flag) return resolve(flag);
  const local = resolve('config/default.yaml');
  return existsSync(local) ? local : join(PROJECT_ROOT, 'config', 'default.yaml');
}

function withState<T>(
  stateFlag: string | undefined,
  wiring: ReleaseWiring,
  fn: (s: { dir: string; reader: StoreReader; kv: KeyValue }) => Promise<T>,
): Promise<T> {
  const dir = resolveStateDir(stateFlag);
  const state = openState(dir);
  const reader = storeReader(state.store, (name) => wiring.stageVersion(name), 'config');
  return fn({ dir, reader, kv: state.store }).finally(() => state.close());
}

/** `telebench release <dataset> --version V`. */
export async function releaseAction(
  name: string,
  flags: { version: string; config?: string; verify: boolean; push?: string },
  cmd: Command,
  wiring: ReleaseCommandWiring,
): Promise<void> {
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
  await withState(cmd.optsWithGlobals().state, wiring, async ({ dir, reader, kv }) => {
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
      pushImages: flags.push
        ? await imagePusher(flags.push, 'release --push', (local, ref) =>
            kv.set(PUSHED_IMAGES_KV, local, ref),
          )
        : null,
    });
    process.stdout.write(
      `${out.status === 'unchanged' ? 'already released with identical content (no-op)' : 'released'}: ${dataset.id} ${out.manifest.version} -> ${out.dir}\n` +
        `  rows ${out.manifest.counts.rows}; configs ${Object.entries(out.manifest.counts.by_config)
          .map(([c, n]) => `${c} ${n}`)
          .join(', ')}\n` +
        `  content digest ${out.manifest.content_digest}\n`,
    );
  });
}

/**
 * The image push of `--push REGISTRY` (Docker engine checked first).
 * @throws PreflightError when the engine does not answer
 */
async function imagePusher(
  registry: string,
  flag: string,
  record?: (local: string, ref: string) => void,
): Promise<(rows: Swe5gRow[]) => Promise<Swe5gRow[]>> {
  const docker = new DockerClient();
  await docker.ping();
  return (rows) =>
    pushRowImages(
      rows,
      registry,
      docker,
      flag,
      (m) => process.stderr.write(`pushed ${m}\n`),
      record,
    );
}

/**
 * `publish --push REGISTRY`: every row must already name its image by digest in REGISTRY (a
 * release made with `release --push REGISTRY`); the images are pushed again so the registry
 * surely holds them, and must push as the digests the rows name.
 * @throws TelebenchError `publish_images_local` (tier config) naming the rows that carry another
 *   name; then what {@link pushRowImages} throws
 */
async function pushReleasedImages(
  stateDir: string,
  datasetId: string,
  version: string,
  registry: string,
): Promise<void> {
  const rows = validateRows(
    datasetByName(datasetId),
    readReleaseRows(releaseDir(stateDir, datasetId, version)),
  ) as unknown as Swe5gRow[];
  const other = rows.filter((r) => parseDigestRef(r.image_name)?.registry !== registry);
  if (other.length > 0) {
    throw new TelebenchError(
      'publish_images_local',
      `publish --push ${registry}: ${other.length} row(s) of ${datasetId} ${version} do not name an image in ${registry} (e.g. ${other[0]!.instance_id}: '${other[0]!.image_name}'); release a new version with --push ${registry}, then publish it`,
      { tier: 'config', context: { registry, rows: other.map((r) => r.instance_id) } },
    );
  }
  await (
    await imagePusher(registry, 'publish --push')
  )(rows);
}

/** `telebench publish <dataset> <version>`. */
export async function publishAction(
  name: string,
  version: string,
  flags: { repo?: string; dryRun?: boolean; config?: string; push?: string },
  cmd: Command,
): Promise<void> {
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
  if (flags.push && dataset.id === 'swe-bench-5g' && !flags.dryRun)
    await pushReleasedImages(stateDir, dataset.id, version, flags.push);
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
}

/** `telebench verify <dataset> <version>`. */
export async function verifyAction(
  name: string,
  version: string,
  flags: { config?: string },
  cmd: Command,
  wiring: ReleaseCommandWiring,
): Promise<void> {
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
}
