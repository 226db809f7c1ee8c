/**
 * `telebench publish <dataset> <V>`: uploads a written release folder to a Hub dataset repository
 * in one commit with `parentCommit` (a concurrent change makes the commit fail instead of being
 * overwritten), then tags the commit `V`. The repository ends up holding the release's files;
 * files under `data/` that the release lacks are deleted, other files others added are kept. `--dry-run` prints the difference against the Hub's current files
 * and writes nothing. A tag `V` that already exists with the same files is a no-op; with other
 * files it is refused (a published version is never changed, as locally).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TelebenchError } from '../../pipeline/errors.js';
import {
  commitFiles,
  createDatasetRepo,
  createTag,
  datasetRepoExists,
  hubUser,
  listTags,
  planChanges,
  remoteFiles,
  revisionCommit,
  type FileChange,
  type HubTarget,
  type LocalFile,
} from '../../pipeline/providers/hub/publish.js';
import { readManifest, releaseDir } from './assemble.js';
import { sha256 as createSha } from '../../pipeline/hash.js';

/** What a publish did (or, in a dry run, would do). */
export interface PublishResult {
  repo: string;
  version: string;
  status: 'published' | 'already-published' | 'dry-run';
  /** The repository was (or, in a dry run, would be) created. */
  createdRepo: boolean;
  changes: FileChange[];
  commit: string | null;
  tag: string;
}

/**
 * Files of a written release (every file listed in its manifest plus manifest.json).
 * @throws TelebenchError `release_not_found` when the folder has no manifest, `release_corrupt` when a file's hash differs from the manifest
 */
export function releaseFiles(stateDir: string, dataset: string, version: string): LocalFile[] {
  const dir = releaseDir(stateDir, dataset, version);
  const m = readManifest(dir);
  if (!m) {
    throw new TelebenchError(
      'release_not_found',
      `no release ${dataset} ${version} at ${dir}: run \`telebench release ${dataset} --version ${version}\` first`,
      {
        tier: 'config',
        context: { dir },
      },
    );
  }
  const files: LocalFile[] = [];
  for (const [p, meta] of Object.entries(m.files)) {
    const bytes = new Uint8Array(readFileSync(join(dir, p)));
    const digest = createSha(bytes);
    if (digest !== meta.sha256) {
      throw new TelebenchError(
        'release_corrupt',
        `${join(dir, p)} changed after release (sha256 ${digest.slice(0, 12)} != manifest ${meta.sha256.slice(0, 12)})`,
        {
          tier: 'config',
        },
      );
    }
    files.push({ path: p, bytes });
  }
  files.push({
    path: 'manifest.json',
    bytes: new Uint8Array(readFileSync(join(dir, 'manifest.json'))),
  });
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * Remote paths a release owns: everything under `data/` (a config dropped since the last version
 * is deleted). Other files that someone else added (notes, scripts) are left alone.
 */
export const managed = (path: string): boolean => path.startsWith('data/');

/** Human lines of a change list (`+ add`, `~ update`, `- delete`; unchanged files counted). */
export function formatChanges(changes: readonly FileChange[]): string {
  const sign = { add: '+', update: '~', delete: '-', same: '=' } as const;
  const lines = changes
    .filter((c) => c.change !== 'same')
    .map((c) => `  ${sign[c.change]} ${c.change.padEnd(6)} ${c.path} (${c.bytes} bytes)`);
  const same = changes.filter((c) => c.change === 'same').length;
  if (same) lines.push(`  = ${same} file(s) unchanged`);
  return lines.length ? lines.join('\n') : '  (no files)';
}

/**
 * Publishes (or, with `dryRun`, compares) a written release.
 * @throws TelebenchError `hub_token_missing` (no HF_TOKEN, not a dry run), `hub_unauthorized` (401),
 *   `hub_branch_moved` (412: nothing written, run again), `hub_version_exists` (tag V holds other files)
 */
export async function publishRelease(args: {
  stateDir: string;
  dataset: string;
  version: string;
  target: HubTarget;
  branch: string;
  private: boolean;
  dryRun: boolean;
  log?: (line: string) => void;
}): Promise<PublishResult> {
  const { target: t, version } = args;
  const log = args.log ?? (() => undefined);
  const local = releaseFiles(args.stateDir, args.dataset, version);
  if (!args.dryRun) await hubUser(t);
  const exists = await datasetRepoExists(t);
  if (!exists) {
    const changes = planChanges(local, new Map(), managed);
    if (args.dryRun)
      return {
        repo: t.repo,
        version,
        status: 'dry-run',
        createdRepo: true,
        changes,
        commit: null,
        tag: version,
      };
    await createDatasetRepo(t, { private: args.private });
    log(`created dataset repository ${t.repo}`);
  }
  const tags = await listTags(t);
  const tagged = tags.get(version);
  if (tagged) {
    const atTag = planChanges(local, await remoteFiles(t, tagged), () => false);
    const differs = atTag.filter((c) => c.change !== 'same');
    if (differs.length === 0) {
      return {
        repo: t.repo,
        version,
        status: args.dryRun ? 'dry-run' : 'already-published',
        createdRepo: false,
        changes: atTag,
        commit: tagged,
        tag: version,
      };
    }
    throw new TelebenchError(
      'hub_version_exists',
      `${t.repo} already has tag ${version} with other files (${differs.map((c) => c.path).join(', ')}); a published version is never changed: release and publish a new version`,
      { tier: 'config', context: { repo: t.repo, tag: version, commit: tagged } },
    );
  }
  const head = await revisionCommit(t, args.branch);
  const changes = planChanges(local, await remoteFiles(t, head), managed);
  if (args.dryRun)
    return {
      repo: t.repo,
      version,
      status: 'dry-run',
      createdRepo: !exists,
      changes,
      commit: head,
      tag: version,
    };
  const toWrite = changes
    .filter((c) => c.change === 'add' || c.change === 'update')
    .map((c) => local.find((f) => f.path === c.path)!);
  const deletes = changes.filter((c) => c.change === 'delete').map((c) => c.path);
  let commitId = head;
  if (toWrite.length + deletes.length > 0) {
    commitId = await commitFiles(t, {
      branch: args.branch,
      parentCommit: head,
      title: `Release ${args.dataset} ${version}`,
      description: `telebench release ${args.dataset} ${version}: ${toWrite.length} file(s) written, ${deletes.length} deleted.`,
      files: toWrite,
      deletes,
    });
    log(`committed ${commitId} on ${t.repo}@${args.branch}`);
  }
  await createTag(t, { revision: commitId, tag: version, message: `${args.dataset} ${version}` });
  log(`tagged ${commitId.slice(0, 12)} as ${version}`);
  return {
    repo: t.repo,
    version,
    status: 'published',
    createdRepo: !exists,
    changes,
    commit: commitId,
    tag: version,
  };
}
