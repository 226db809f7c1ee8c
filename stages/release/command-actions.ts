/**
 * What `telebench release`, `publish` and `verify` do (declared in `commands.ts`, which imports
 * this module when one of them runs). Errors: see {@link releaseCommands}.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfigFile } from '../../pipeline/config/load.js';
import { openState, resolveStateDir } from '../../pipeline/state.js';
import { PROJECT_ROOT } from '../../pipeline/manifest.js';
import { secret } from '../../pipeline/secrets.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { StoreReader } from '../../pipeline/stage.js';
import { storeReader } from '../../pipeline/runner.js';
import { appConfigSchema, type AppConfig } from '../config.js';
import { imageHooksOf, releaseDataset, type ReleaseWiring } from './release.js';
import {
  latestRelease,
  newKeys,
  refreshHooksOf,
  refreshRun,
  sourceChanges,
  windowReport,
} from './refresh.js';
import { releaseSettings } from './config.js';
import { outcomeText, resumeArgs, type RefreshOutcome } from './refresh-report.js';
import { formatChanges, publishRelease } from './publish.js';
import { verifyRelease } from './verify.js';
import { checkVersion, readReleaseRows, releaseDir, validateRows } from './assemble.js';
import { PUSHED_IMAGES_KV } from '../../pipeline/providers/docker/registry.js';
import type { KeyValue } from '../../pipeline/store/store.js';

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

const stderrLog = (m: string) => process.stderr.write(`${m}\n`);

/** `telebench release <dataset> --version V`. */
export async function releaseAction(
  name: string,
  flags: { version: string; config?: string; verify: boolean; push?: string },
  cmd: Command,
  wiring: ReleaseWiring,
): Promise<void> {
  const entry = wiring.datasets.byName(name);
  const dataset = entry.definition;
  if (flags.version !== 'auto') checkVersion(flags.version);
  if (flags.push) imageHooksOf(entry, 'release --push');
  const configFile = configPath(flags.config);
  const config = loadConfigFile(configFile, appConfigSchema);
  const settings = releaseSettings(config);
  const stateDir = resolveStateDir(cmd.optsWithGlobals().state);
  const verifier =
    flags.verify && settings.verify_before_release && entry.verify
      ? entry.verify.verifier(config, { stateDir, configFile, log: stderrLog })
      : null;
  await withState(cmd.optsWithGlobals().state, wiring, async ({ dir, reader, kv }) => {
    const out = await releaseDataset({
      ctx: { store: reader, config, stateDir: dir, log: stderrLog },
      wiring,
      entry,
      version: flags.version,
      verifier,
      push: flags.push
        ? {
            registry: flags.push,
            flag: 'release --push',
            log: (m) => process.stderr.write(`pushed ${m}\n`),
            record: (local, ref) => kv.set(PUSHED_IMAGES_KV, local, ref),
          }
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

/** `telebench publish <dataset> <version>`. */
export async function publishAction(
  name: string,
  version: string,
  flags: { repo?: string; dryRun?: boolean; config?: string; push?: string },
  cmd: Command,
  wiring: ReleaseWiring,
): Promise<void> {
  const entry = wiring.datasets.byName(name);
  const dataset = entry.definition;
  const images = flags.push ? imageHooksOf(entry, 'publish --push') : null;
  checkVersion(version);
  const config = loadConfigFile(configPath(flags.config), appConfigSchema);
  const hub = releaseSettings(config).hub;
  const repo = flags.repo ?? hub.repos[dataset.id] ?? `telebench/${dataset.id}`;
  if (!repo || !/^[\w.-]+\/[\w.-]+$/.test(repo)) {
    throw new TelebenchError(
      'publish_repo_missing',
      `no Hub repository for ${dataset.id}: pass --repo owner/name or set release.hub.repos.${dataset.id}`,
      { tier: 'config' },
    );
  }
  const stateDir = resolveStateDir(cmd.optsWithGlobals().state);
  if (images && flags.push && !flags.dryRun) {
    const rows = validateRows(dataset, readReleaseRows(releaseDir(stateDir, dataset.id, version)));
    await images.republish(rows, {
      registry: flags.push,
      flag: `publish --push (${dataset.id} ${version})`,
      log: (m) => process.stderr.write(`pushed ${m}\n`),
    });
  }
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
  wiring: ReleaseWiring,
): Promise<void> {
  const entry = wiring.datasets.byName(name);
  checkVersion(version);
  const configFile = configPath(flags.config);
  const config = loadConfigFile(configFile, appConfigSchema);
  const stateDir = resolveStateDir(cmd.optsWithGlobals().state);
  const summary = await verifyRelease({
    stateDir,
    entry,
    version,
    env: { stateDir, configFile, log: stderrLog },
    config,
  });
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (summary.gold_resolved !== summary.attempted || summary.empty_patch_resolved > 0)
    process.exitCode = 1;
}

/**
 * `telebench refresh <dataset> [--version V|auto]`: the pipeline over what landed since the latest
 * release's cutoff, then release N+1 (previous rows as released + new ones), or "nothing new"
 * (no version written). A pipeline run that does not finish stops here with its exit code and
 * writes no release; the next refresh retries its failed items (`--retry-failed`). Exit 1 when
 * items failed (with or without a new version), else 0 (docs/cli.md).
 */
export async function refreshAction(
  name: string,
  flags: { version: string; config?: string; verify: boolean },
  cmd: Command,
  wiring: ReleaseWiring,
): Promise<void> {
  const entry = wiring.datasets.byName(name);
  const id = entry.definition.id;
  const hooks = refreshHooksOf(entry);
  if (flags.version !== 'auto') checkVersion(flags.version);
  const configFile = configPath(flags.config);
  const config = loadConfigFile(configFile, appConfigSchema);
  const stateFlag = cmd.optsWithGlobals().state as string | undefined;
  const stateDir = resolveStateDir(stateFlag);
  const prev = latestRelease(stateDir, id);
  const run = refreshRun(hooks, prev, config, configFile);
  const narrowed = run.config as AppConfig;
  const from =
    hooks.kind === 'window'
      ? `cutoff ${prev.manifest.cutoff ?? 'not recorded'}`
      : `${Object.keys(prev.manifest.sources ?? {}).length} source file(s)`;
  stderrLog(
    `refresh ${id}: from ${prev.manifest.version} (${prev.rows.length} rows, ${from}); running ${entry.pipeline} on ${run.over}`,
  );
  const { runCommand } = await import('../../pipeline/cli/commands.js');
  const { selfCommand } = await import('../../pipeline/cli/main.js');
  const code = await runCommand(
    entry.pipeline,
    { config: configFile, state: stateFlag, retryFailed: true },
    { config: () => narrowed, resume: resumeArgs(selfCommand(), cmd, name) },
  );
  // exit 1 = some items failed: release what held (a candidate that cannot build must not stop
  // the dataset moving), the cutoff held at the earliest failed one so the next refresh retries it
  if (code !== 0 && code !== 1) {
    stderrLog(
      `refresh ${id}: the ${entry.pipeline} run exited ${code}; no release written (${prev.manifest.version} stays the latest)`,
    );
    process.exitCode = code;
    return;
  }
  if (code === 1) process.exitCode = 1;
  const settings = releaseSettings(narrowed);
  const verifier =
    flags.verify && settings.verify_before_release && entry.verify
      ? entry.verify.verifier(narrowed, { stateDir, configFile, log: stderrLog })
      : null;
  await withState(stateFlag, wiring, async ({ dir, reader }) => {
    const ctx = { store: reader, config: narrowed, stateDir: dir, log: stderrLog };
    const carry = {
      version: prev.manifest.version,
      rows: prev.rows,
      cutoff: prev.manifest.cutoff ?? null,
    };
    const { added, leftOut, held } = newKeys(ctx, wiring, entry, carry);
    // what became of each PR of the window that N lacks (nothing new must say why, issue msgs)
    const window =
      hooks.kind === 'window' && run.since
        ? windowReport(hooks, reader, run.since, { held, added, leftOut })
        : null;
    const changes =
      hooks.kind === 'sources' ? sourceChanges(prev.manifest.sources, hooks.sourcesOf(reader)) : [];
    for (const c of changes) stderrLog(`refresh ${id}: source ${c}`);
    const outcome = {
      dataset: id,
      previous: prev.manifest.version,
      leftOut,
      window,
      failed: code === 1,
    };
    const say = (o: Pick<RefreshOutcome, 'nothingNew' | 'refreshed' | 'nextFrom'>) =>
      process.stdout.write(outcomeText({ ...outcome, ...o }));
    const nothingNew = (why: string) =>
      say({ nothingNew: why, refreshed: [], nextFrom: run.since });
    if (hooks.kind === 'window' && added.length === 0)
      return nothingNew(
        `no ${id} row landed at or after ${run.since} that ${prev.manifest.version} lacks`,
      );
    const out = await releaseDataset({
      ctx,
      wiring,
      entry,
      version: flags.version,
      verifier,
      carry,
    });
    if (!out.plan)
      return nothingNew(
        hooks.kind === 'sources'
          ? `${changes.length ? `the source changes (${changes.join('; ')})` : `no source file of ${id} changed, and they`} bring no new or changed row`
          : `the ${added.length} new candidate(s) (${added.join(', ')}) did not reproduce at release`,
      );
    const keys = new Set(out.plan.rows.map((r) => entry.definition.key(r)));
    const removed = prev.rows.filter((r) => !keys.has(entry.definition.key(r))).length;
    say({
      nothingNew: null,
      nextFrom: hooks.kind === 'window' ? (out.manifest.cutoff ?? null) : null,
      refreshed: [
        `refreshed: ${id} ${prev.manifest.version} -> ${out.manifest.version} (${out.status}) at ${out.dir}`,
        `  rows ${prev.rows.length} -> ${out.manifest.counts.rows}; new candidates released ${added.filter((k) => keys.has(k)).length} of ${added.length}; removed ${removed}`,
        hooks.kind === 'window'
          ? `  cutoff ${out.manifest.cutoff ?? 'unknown'} (the next refresh mines from here)`
          : `  sources: ${changes.length ? changes.join('; ') : 'unchanged'}`,
      ],
    });
  });
}
