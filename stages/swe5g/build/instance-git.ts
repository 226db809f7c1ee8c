/**
 * The `.git` of a C instance layer over an env layer that already holds the clean repository of
 * `environment_setup_commit` (issue 21: the instance layer adds only what came after the env
 * commit). The env layer's `/testbed/.git` is a depth-1 repository at the env commit
 * (`exportCleanRepo`); the instance layer adds one pack with the commits after it up to
 * `base_commit` (and the objects they introduce), and replaces HEAD, refs, `shallow`, the index
 * and the config, so that `/testbed` is the repository at `base_commit` with the history since
 * the env commit. The image contract holds: every object is reachable from `main` (= base_commit)
 * and none is after it (docs/images.md).
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type * as Zx from 'zx';
import { lazy } from '../../../pipeline/lazy.js';
import { git } from '../../../pipeline/providers/git/repo.js';

const zx = lazy<typeof Zx>('zx');

/** What {@link instanceGitOverEnv} wrote. */
export interface InstanceGit {
  /** Commits after the env commit up to and including base_commit. */
  commits: number;
  /** Objects in the instance layer's pack. */
  objects: number;
  /** Bytes of the pack and its index. */
  pack_bytes: number;
  /** Commits marked shallow: the env commit and the parents of merged side branches before it. */
  shallow: string[];
}

/** Object ids of `commit`'s tree (the root tree, every subtree and blob; no submodule commits). */
async function treeObjects(mirror: string, commit: string): Promise<Set<string>> {
  const out = await git(mirror).raw([
    'ls-tree',
    '-r',
    '-t',
    '--format=%(objecttype) %(objectname)',
    commit,
  ]);
  const ids = new Set<string>([(await git(mirror).raw(['rev-parse', `${commit}^{tree}`])).trim()]);
  for (const line of out.split('\n')) {
    const [type, id] = line.split(' ');
    if (id && (type === 'blob' || type === 'tree')) ids.add(id);
  }
  return ids;
}

/**
 * Writes into `destGit` (a `.git` folder, created) the files the instance layer copies over the
 * env layer's `/testbed/.git`: `objects/pack/pack-*.{pack,idx}` with the objects of
 * `git rev-list --objects base ^env` plus the commits (and tree objects the env tree lacks) of
 * every parent outside that range (a side branch forked before the env commit; marked shallow with
 * the env commit), and HEAD, `packed-refs` (`main` = base_commit), `shallow`, `index` and `config`
 * copied from `cleanRepo` (the clean repository of base_commit, `exportCleanRepo`). Then checks
 * on the host, with the env repository's objects as alternates, that every object of `main`'s
 * history is present.
 * @param envGit the env layer's `.git` on the host (depth 1 at envCommit)
 * @returns counts and the shallow commits; null when the history cannot be made complete
 *   (e.g. the mirror lacks an object): the caller then copies the whole clean `.git`
 */
export async function instanceGitOverEnv(opts: {
  mirror: string;
  envCommit: string;
  baseCommit: string;
  cleanRepo: string;
  envGit: string;
  destGit: string;
}): Promise<InstanceGit | null> {
  try {
    return await packAndCheck(opts);
  } catch {
    // a commit or object the mirror lacks: the caller copies the whole clean .git
    rmSync(opts.destGit, { recursive: true, force: true });
    return null;
  }
}

async function packAndCheck(
  opts: Parameters<typeof instanceGitOverEnv>[0],
): Promise<InstanceGit | null> {
  const { mirror, envCommit, baseCommit, destGit } = opts;
  const g = git(mirror);
  const lines = (await g.raw(['rev-list', '--parents', baseCommit, `^${envCommit}`]))
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' '));
  const inRange = new Set([envCommit, ...lines.map((l) => l[0]!)]);
  const outside = [...new Set(lines.flatMap((l) => l.slice(1)).filter((p) => !inRange.has(p)))];
  const listed = (await g.raw(['rev-list', '--objects', baseCommit, `^${envCommit}`]))
    .split('\n')
    .filter(Boolean);
  const ids = new Set(
    listed.map((l) => l.slice(0, l.indexOf(' ') > 0 ? l.indexOf(' ') : undefined)),
  );
  if (outside.length > 0) {
    const envTree = await treeObjects(mirror, envCommit);
    for (const x of outside) {
      ids.add(x);
      for (const id of await treeObjects(mirror, x)) if (!envTree.has(id)) ids.add(id);
    }
  }
  rmSync(destGit, { recursive: true, force: true });
  const packDir = join(destGit, 'objects', 'pack');
  mkdirSync(packDir, { recursive: true });
  const list = join(destGit, 'objects.lst');
  writeFileSync(list, [...ids].join('\n') + '\n');
  try {
    await zx().$({
      quiet: true,
    })`git -C ${mirror} pack-objects --quiet ${join(packDir, 'pack')} < ${list}`;
  } catch {
    rmSync(destGit, { recursive: true, force: true });
    return null;
  }
  rmSync(list);
  const src = join(opts.cleanRepo, '.git');
  for (const f of ['HEAD', 'config', 'index', 'description']) {
    if (existsSync(join(src, f))) copyFileSync(join(src, f), join(destGit, f));
  }
  writeFileSync(
    join(destGit, 'packed-refs'),
    `# pack-refs with: peeled fully-peeled sorted \n${baseCommit} refs/heads/main\n`,
  );
  const shallow = [envCommit, ...outside].sort();
  writeFileSync(join(destGit, 'shallow'), shallow.map((c) => `${c}\n`).join(''));
  mkdirSync(join(destGit, 'info'), { recursive: true });
  mkdirSync(join(destGit, 'refs', 'heads'), { recursive: true });
  writeFileSync(join(destGit, 'info', 'exclude'), '.telebench/\nsubprojects/*/\n');
  // the check: main's whole history resolves with the env objects beside the new pack
  const alt = join(destGit, 'objects', 'info', 'alternates');
  mkdirSync(join(destGit, 'objects', 'info'), { recursive: true });
  writeFileSync(alt, `${join(opts.envGit, 'objects')}\n`);
  let complete = true;
  try {
    await zx().$({ quiet: true })`git --git-dir=${destGit} rev-list --objects --all > /dev/null`;
  } catch {
    complete = false;
  }
  rmSync(join(destGit, 'objects', 'info'), { recursive: true, force: true });
  if (!complete) {
    rmSync(destGit, { recursive: true, force: true });
    return null;
  }
  const pack_bytes = readdirSync(packDir).reduce((n, f) => n + statSync(join(packDir, f)).size, 0);
  return { commits: lines.length, objects: ids.size, pack_bytes, shallow };
}
