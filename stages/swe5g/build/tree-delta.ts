/**
 * The instance layer as a delta over the env layer's repository (issue 21 for C, issue 31 for
 * monorepo folders): the env layer holds the clean repository of `environment_setup_commit` at
 * /testbed, and the instance layer removes what the base commit no longer has, writes only the
 * files that differ at `base_commit`, and adds a `.git` with the commits after the env commit
 * (`instance-git.ts`). One mechanism for every recipe that keeps a tree in its env layer: C with a
 * registry `environment` (the kept meson build), and Go and Python monorepo folders
 * (`magma/magma:<folder>`), whose instance layers would otherwise carry the whole monorepo.
 */
import { cpSync, existsSync, lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { absentFiles, exportCleanRepo, gitPaths } from '../../../pipeline/providers/git/repo.js';
import type { ImageRecipe, InstanceDelta } from '../../../pipeline/providers/docker/recipes.js';
import { instanceGitOverEnv, type InstanceGit } from './instance-git.js';

/** Paths that differ between the env tree and a base commit (repository-relative, sorted). */
export interface TreeDelta {
  /** Added, modified, type- or mode-changed at the base commit (written by the instance layer). */
  changed: string[];
  /**
   * Removed by the instance layer before the copy (`rm -rf`): files of the env commit absent at
   * the base commit, folders of the env tree absent at the base (the topmost of each; an emptied
   * folder is gone from `git archive` too), and changed files whose blob the mirror lacks (the
   * base's export leaves them out, `exportCleanRepo`).
   */
  deleted: string[];
}

/** Every folder of `commit`'s tree (`git ls-tree -r -d`), repository-relative. */
async function foldersOf(mirror: string, commit: string): Promise<Set<string>> {
  return new Set(await gitPaths(mirror, ['ls-tree', '-r', '-d', '--name-only', commit]));
}

/**
 * The delta from `envCommit` to `baseCommit` (`git diff --no-renames`: a rename is a deletion
 * and an addition; type and mode changes count as changed). Empty when the two are equal.
 * @throws Error from git when a commit is not in `mirror`
 */
export async function treeDelta(
  mirror: string,
  envCommit: string,
  baseCommit: string,
): Promise<TreeDelta> {
  if (envCommit === baseCommit) return { changed: [], deleted: [] };
  const diff = (filter: string): Promise<string[]> =>
    gitPaths(mirror, [
      'diff',
      '--name-only',
      '--no-renames',
      `--diff-filter=${filter}`,
      envCommit,
      baseCommit,
    ]);
  const [changedAll, deletedFiles, envDirs, baseDirs] = await Promise.all([
    diff('d'),
    diff('D'),
    foldersOf(mirror, envCommit),
    foldersOf(mirror, baseCommit),
  ]);
  const gone = [...envDirs].filter((d) => !baseDirs.has(d));
  const goneSet = new Set(gone);
  const topmost = gone.filter((d) => !goneSet.has(posix.dirname(d)));
  const absent = new Set((await absentFiles(mirror, baseCommit)).map((f) => f.path));
  const changed = changedAll.filter((p) => !absent.has(p));
  const deleted = [
    ...deletedFiles.filter((p) => !under(p, goneSet)),
    ...topmost,
    ...changedAll.filter((p) => absent.has(p)),
  ];
  return { changed: [...changed].sort(), deleted: [...new Set(deleted)].sort() };
}

/** True when a parent folder of `path` is in `dirs`. */
function under(path: string, dirs: Set<string>): boolean {
  for (let d = posix.dirname(path); d !== '.'; d = posix.dirname(d)) if (dirs.has(d)) return true;
  return false;
}

/** The instance recipe's `deleted.lst`: the delta's deleted paths, NUL-terminated. */
export function deletedListOf(delta: TreeDelta): string {
  return delta.deleted.map((p) => `${p}\0`).join('');
}

/**
 * Builds the instance layer's copy folder: the delta's changed files (from `cleanRepo`, made by
 * `exportCleanRepo`) and a `.git`: `gitDir` `clean` copies the clean repository's whole `.git`
 * (only `base_commit`; the recipe then removes the env layer's), a folder path copies that folder
 * (`instanceGitOverEnv`: the commits after the env commit), `none` copies none (the base is the
 * env commit: the env layer's repository is the base's).
 * @returns the folder (replaced) and the NUL-separated list of paths to delete
 */
export function deltaContext(
  cleanRepo: string,
  delta: TreeDelta,
  dest: string,
  gitDir: string = 'clean',
): {
  dir: string;
  deletedList: string;
} {
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  if (gitDir !== 'none') {
    const from = gitDir === 'clean' ? join(cleanRepo, '.git') : gitDir;
    cpSync(from, join(dest, '.git'), { recursive: true, verbatimSymlinks: true });
  }
  for (const p of delta.changed) {
    const src = join(cleanRepo, p);
    if (!existsSync(src) && !isSymlink(src)) continue; // left out of the export
    mkdirSync(join(dest, posix.dirname(p)), { recursive: true });
    cpSync(src, join(dest, p), { recursive: true, verbatimSymlinks: true });
  }
  if (gitDir === 'clean') {
    mkdirSync(join(dest, '.git', 'info'), { recursive: true });
    writeFileSync(join(dest, '.git', 'info', 'exclude'), '.telebench/\nsubprojects/*/\n', {
      flag: 'a',
    });
  }
  return { dir: dest, deletedList: deletedListOf(delta) };
}

function isSymlink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Host folder of the env layer's repository of a Go or Python monorepo folder:
 * `<state>/swe5g/envrepo/<owner+name>@<environment_setup_commit>` (every folder of the
 * repository at that commit shares it).
 */
export function envRepoPath(stateDir: string, repo: string, envCommit: string): string {
  return join(stateDir, 'swe5g', 'envrepo', `${repo.replace('/', '+')}@${envCommit}`);
}

const envRepos = new Map<string, Promise<void>>();

/**
 * One export of an env repository per folder in this process (the items of a version build at
 * once): `fresh` exports again (the env image is about to be built from it), else only when the
 * folder holds no repository. The repository is the env commit's clean repository (depth 1, as
 * `exportCleanRepo`, without the files `unread` allows to be absent from the mirror), its
 * `.telebench/` and subprojects excluded from `git status`.
 * @throws TelebenchError `source_objects_missing` (content) | `git_export_failed` (infra)
 */
export function envRepoOnce(
  mirror: string,
  envCommit: string,
  dest: string,
  fresh: boolean,
  unread: (path: string) => boolean = () => false,
): Promise<void> {
  let p = envRepos.get(dest);
  if (!p) {
    p =
      fresh || !existsSync(join(dest, '.git', 'HEAD'))
        ? exportCleanRepo(mirror, envCommit, dest, unread).then(() => {
            writeFileSync(join(dest, '.git', 'info', 'exclude'), '.telebench/\nsubprojects/*/\n', {
              flag: 'a',
            });
          })
        : Promise.resolve();
    envRepos.set(dest, p);
    p.catch(() => envRepos.delete(dest));
  }
  return p;
}

/** What an instance layer built as a delta wrote (Built `delta`). */
export interface DeltaRecord {
  env_commit: string;
  /** Files written, and paths removed, by the instance layer. */
  changed: number;
  deleted: number;
  /**
   * The instance layer's `.git` over the env layer's repository (the commits after the env
   * commit); absent when the whole clean `.git` was copied (base = env commit needs none, or the
   * history could not be made complete) or when the image was already built.
   */
  git?: InstanceGit;
}

/** What an instance's build needs to know of it ({@link instanceSource}). */
interface SourceSubject {
  instance_id: string;
  environment_setup_commit: string;
  base_commit: string;
}

/**
 * The instance layer's source and recipe: the clean repository of `base_commit` in
 * `<state>/swe5g/instances/<id>/testbed` (the local executor's tree and `built.source_dir`),
 * exported unless the image exists; with `envRepo` (the env layer holds that repository) the
 * recipe copies only the delta ({@link treeDelta}, {@link deltaContext}) and a `.git` of the
 * commits after the env commit (`<id>/delta.git`), or the whole clean `.git` when that history
 * cannot be made complete (`replaceGit`).
 * @param recipeOf the instance recipe for a delta (undefined: the whole repository)
 * @param hasImage whether the engine holds an image (an existing instance is not re-exported)
 * @throws TelebenchError from `exportCleanRepo`
 */
export async function instanceSource(opts: {
  mirror: string;
  stateDir: string;
  res: SourceSubject;
  unread: (path: string) => boolean;
  envRepo: string | undefined;
  recipeOf: (delta?: InstanceDelta) => ImageRecipe;
  hasImage: (name: string) => Promise<boolean>;
}): Promise<{ inst: ImageRecipe; source_dir: string; delta?: DeltaRecord }> {
  const { mirror, res, envRepo, recipeOf } = opts;
  const dir = join(opts.stateDir, 'swe5g', 'instances', res.instance_id);
  const source_dir = join(dir, 'testbed');
  const exported = existsSync(join(source_dir, '.git'));
  if (!envRepo) {
    const inst = recipeOf(undefined);
    if (!exported || !(await opts.hasImage(inst.name)))
      await exportCleanRepo(mirror, res.base_commit, source_dir, opts.unread);
    return { inst, source_dir };
  }
  const env = res.environment_setup_commit;
  const delta = await treeDelta(mirror, env, res.base_commit);
  const d: InstanceDelta = { dir: join(dir, 'delta'), deletedList: deletedListOf(delta) };
  const record: DeltaRecord = {
    env_commit: env,
    changed: delta.changed.length,
    deleted: delta.deleted.length,
  };
  let inst = recipeOf(d);
  if (exported && (await opts.hasImage(inst.name))) return { inst, source_dir, delta: record };
  const whole = recipeOf({ ...d, replaceGit: true });
  if (exported && (await opts.hasImage(whole.name)))
    return { inst: whole, source_dir, delta: record };
  await exportCleanRepo(mirror, res.base_commit, source_dir, opts.unread);
  let instGit: InstanceGit | null | undefined;
  if (env !== res.base_commit) {
    // the env repository on the host (exported when the env image was built; again if removed)
    await envRepoOnce(mirror, env, envRepo, false, opts.unread);
    instGit = await instanceGitOverEnv({
      mirror,
      envCommit: env,
      baseCommit: res.base_commit,
      cleanRepo: source_dir,
      envGit: join(envRepo, '.git'),
      destGit: `${d.dir}.git`,
    });
  }
  // null: the history since the env commit is incomplete; the whole clean .git replaces it
  if (instGit === null) inst = whole;
  const gitDir = instGit === undefined ? 'none' : instGit ? `${d.dir}.git` : 'clean';
  deltaContext(source_dir, delta, d.dir, gitDir);
  return { inst, source_dir, delta: { ...record, ...(instGit ? { git: instGit } : {}) } };
}
