/**
 * `swe5g.resolve`: from a kept Candidate to a Resolved record: the fix diff
 * `base_commit..merge_commit` split into `patch` (source) and `test_patch` (test files, by path),
 * `environment_setup_commit` (Go: the commit that last set go.mod/go.sum; C: the commit that
 * last set the configure state after the version tag, c-configure.ts; Python with registry
 * requirement files: the commit that last set them, python-env-commit.ts; else the base), `version` (go.mod `go` line, else the newest tag reaching the base)
 * and `test_dirs` (the Go packages / C and Python source folders the fix touches, see packages.ts). Works on a bare mirror per repository in the
 * state folder (`<state>/git/<owner>+<name>.git`), cloned from a local mirror when
 * the mirrors folder has one (`swe5g.mining.mirrors_dir`, `$TELEBENCH_MIRRORS_DIR`, else
 * `<state>/mirrors` that `swe5g.mine` fills), else from `<git_url_base>/<owner>/<name>.git`.
 *
 * Commit terms (SWE-Bench 5G contract): `base_commit` is the first parent of `merge_commit`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineStage } from '../../../pipeline/stage.js';
import { withoutIssueText } from '../statement/current.js';
import { SkipItem } from '../../../pipeline/errors.js';
import {
  absentFiles,
  commitInfo,
  diffSplit,
  ensureMirror,
  fileAt,
  isDocumentPath,
  tagsReaching,
  git,
} from '../../../pipeline/providers/git/repo.js';
import type { Candidate, Resolved } from '../types.js';
import { sameKeyIn } from './plan.js';
import { packageDirs } from './packages.js';
import { type HasSwe5g } from '../config.js';
import { gitUrlBase, mirrorsDir } from '../mine/source.js';
import { swe5gFilter } from '../filter/filter.js';
import { inRunOrder } from '../run-order.js';
import { registryById, type RegistryEntry } from '../registry.js';
import { entryReads } from './reads.js';
import { configureStateCommit } from './c-configure.js';
import { lastFirstParentChange } from './env-commit.js';
import { pythonEnvironmentCommit, type PythonEnvFiles } from './python-env-commit.js';

/** Local folder of the bare mirror of `owner/name` inside the state folder. */
export function mirrorPath(stateDir: string, repo: string): string {
  return join(stateDir, 'git', `${repo.replace('/', '+')}.git`);
}

/**
 * Where to clone `owner/name` from: a local mirror (`<mirrors_dir>/<owner>+<name>/repo` or
 * `<mirrors_dir>/<owner>/<name>.git`) when present, else `<git_url_base>/<owner>/<name>.git`
 * (a URL, or a folder for tests).
 */
export function mirrorSource(
  repo: string,
  gitUrlBase: string,
  mirrorsDir: string | undefined,
): string {
  const [owner = '', name = ''] = repo.split('/');
  if (mirrorsDir) {
    for (const p of [
      join(mirrorsDir, `${owner}+${name}`, 'repo'),
      join(mirrorsDir, owner, `${name}.git`),
    ])
      if (existsSync(join(p, 'HEAD'))) return p;
  }
  return `${gitUrlBase.replace(/\/$/, '')}/${owner}/${name}.git`;
}

/** The `go` directive of a go.mod text (`1.21`, `1.22.3`), or undefined. */
export function goDirective(goMod: string): string | undefined {
  return /^go\s+(\d+\.\d+(?:\.\d+)?)\s*$/m.exec(goMod)?.[1];
}

/** The commit a tag points to (annotated tags peeled). */
async function tagCommit(mirrorDir: string, tag: string): Promise<string> {
  return (await git(mirrorDir).raw(['rev-parse', '--verify', `refs/tags/${tag}^{commit}`])).trim();
}

/**
 * A Go instance's `environment_setup_commit`: the newest first-parent ancestor of `base` (or
 * `base` itself) that changed the module's `go.mod` or `go.sum`. No first-parent commit between it
 * and `base` touches them, so its dependency files are the base's (checked; `base` when they
 * differ or no commit names them). The instances of one dependency state share this commit, so
 * they share one env layer, and it holds that commit's Go build cache (issue 21, layers;
 * SWE-bench likewise shares one environment per version); each instance layer compiles only what
 * changed since.
 * @param moduleDir the module's folder in the repository ('' for the root)
 */
export async function goEnvironmentCommit(
  mirrorDir: string,
  base: string,
  moduleDir: string,
): Promise<string> {
  const files = ['go.mod', 'go.sum'].map((f) => join(moduleDir, f));
  const out = await lastFirstParentChange(mirrorDir, { base, pathspec: files });
  if (!out || out === base) return base;
  for (const f of files)
    if ((await fileAt(mirrorDir, out, f)) !== (await fileAt(mirrorDir, base, f))) return base;
  return out;
}

/** What {@link resolveCandidate} reads of a registry entry. */
export type ResolveEntry = Pick<RegistryEntry, 'path' | 'language' | 'reads'> & {
  /** A Python entry's requirement files and interpreter (its environment commit's rule). */
  environment?: { python?: PythonEnvFiles | undefined } | undefined;
};

/**
 * Resolves one candidate against a mirror that holds both commits.
 * @param entry the candidate's registry entry: what a monorepo folder reads (absent files), a
 *   Python entry's requirement files (its environment commit); absent: the whole repository, and
 *   a Python instance's environment commit is its base
 * @throws SkipItem `base_commit_mismatch` when `base_commit` is not the first parent of
 *   `merge_commit`; `empty_patch` when the fix changes no source file; `object_missing` when the
 *   mirror lacks files of `base_commit` a build or test may read (the list is in the detail;
 *   absent documents and images, and for a monorepo folder `entry` the files outside what it
 *   reads (reads.ts), are only listed in `absent_files`)
 */
export async function resolveCandidate(
  mirrorDir: string,
  cand: Candidate,
  entry?: ResolveEntry,
): Promise<Resolved> {
  const merge = await commitInfo(mirrorDir, cand.merge_commit);
  if (merge.parents[0] !== cand.base_commit) {
    throw new SkipItem(
      'base_commit_mismatch',
      `${cand.instance_id}: base_commit ${cand.base_commit} is not the first parent of ${cand.merge_commit} (${merge.parents[0] ?? 'none'})`,
      { parents: merge.parents },
    );
  }
  const absent = await absentFiles(mirrorDir, cand.base_commit);
  const read =
    absent.length > 0 && entry ? await entryReads(mirrorDir, cand.base_commit, entry) : () => true;
  const needed = absent.filter((f) => !isDocumentPath(f.path) && read(f.path));
  if (needed.length > 0)
    throw new SkipItem(
      'object_missing',
      `${cand.instance_id}: the mirror lacks ${needed.length} file(s) of base_commit ${cand.base_commit.slice(0, 12)} that a build or test may read: ${needed
        .slice(0, 10)
        .map((f) => `${f.path} (${f.object})`)
        .join(', ')}${needed.length > 10 ? `, and ${needed.length - 10} more` : ''}`,
      { absent: needed },
    );
  const split = await diffSplit(mirrorDir, cand.base_commit, cand.merge_commit, cand.language);
  if (split.patch.trim() === '') {
    throw new SkipItem('empty_patch', `${cand.instance_id}: the fix changes only test files`, {
      test_files: split.test_files,
    });
  }
  let version = '';
  let envCommit = cand.base_commit;
  if (cand.language === 'go') {
    const moduleDir = cand.registry_id.includes(':') ? cand.registry_id.split(':')[1]! : '';
    const goMod = await fileAt(mirrorDir, cand.base_commit, join(moduleDir, 'go.mod'));
    version = (goMod && goDirective(goMod)) ?? '';
    envCommit = await goEnvironmentCommit(mirrorDir, cand.base_commit, moduleDir);
  }
  const py = entry?.environment?.python;
  if (cand.language === 'python' && py) {
    // the folder the build reads the era's evidence in (build.ts: the registry id's folder)
    const folder = cand.registry_id.includes(':') ? cand.registry_id.split(':')[1]! : '';
    envCommit = await pythonEnvironmentCommit(mirrorDir, cand.base_commit, folder, py);
  }
  if (!version) {
    version = (await tagsReaching(mirrorDir, cand.base_commit))[0] ?? '';
    // C: the commit that last set the configure state after the version's tag (the tag when
    // none did; c-configure.ts), so instances of one configure state share the env layer's kept
    // build and their layer builds only the delta, never a meson regeneration
    if (version && cand.language === 'c')
      envCommit = await configureStateCommit(
        mirrorDir,
        await tagCommit(mirrorDir, version),
        cand.base_commit,
      );
  }
  if (!version) version = '0.0';
  const test_dirs = packageDirs(split.source_files, cand.language);
  return {
    ...cand,
    patch: split.patch,
    test_patch: split.test_patch,
    // Go: the commit that last set go.mod/go.sum (see goEnvironmentCommit), whose build cache
    // the instances of that dependency state share. Python: the commit that last set the
    // registry's requirement files when its environment is the base's (python-env-commit.ts),
    // else the base commit, whose env image the instances of that state share. C: the commit that
    // last set meson's configure state after the version tag (c-configure.ts), whose kept build
    // the instances of that configure state share.
    environment_setup_commit: envCommit,
    version,
    test_dirs,
    ...(absent.length > 0 ? { absent_files: absent } : {}),
  };
}

/**
 * Stage `swe5g.resolve`: one item per kept candidate of `swe5g.filter`.
 * @throws SkipItem `base_commit_mismatch` | `empty_patch`; TelebenchError `git_mirror_failed`
 *   (transient) | `commit_not_found` (content)
 */
export const resolveStage = defineStage<Candidate, Resolved, HasSwe5g>({
  name: 'swe5g.resolve',
  // 2: object_missing / absent_files (issue 21); 3: a C instance's environment_setup_commit is
  // its version tag's commit; 4: a Go instance's is the commit that last set go.mod/go.sum (its
  // env layer's build cache is shared), and go.mod is read in the module's folder; 5: a
  // monorepo folder's absent files outside what it reads are listed, not object_missing; 6: a C
  // instance's is the commit that last set meson's configure state after the version tag; 7: a
  // Python instance whose entry names requirement files gets the commit that last set them, when
  // its environment (requirements, interpreter) is the base's (python-env-commit.ts)
  version: 7,
  needs: ['swe5g.filter'],
  // the issue and PR text is not read here: a new problem statement does not re-resolve (issue 31)
  cacheKey: (c) => withoutIssueText(c),
  itemNeeds: sameKeyIn('swe5g.filter'),
  description:
    'Splits each kept PR into patch / test_patch and finds its environment commit and version.',
  concurrency: () => 4,
  plan: (ctx) =>
    inRunOrder(
      ctx,
      [...ctx.store.outputs(swe5gFilter)].map((o) => ({ key: o.key, input: o.output })),
    ),
  async run(item, ctx) {
    const cand = item.input;
    const source = mirrorSource(cand.repo, gitUrlBase(ctx), mirrorsDir(ctx));
    const dir = mirrorPath(ctx.stateDir, cand.repo);
    await ensureMirror(source, dir, [cand.base_commit, cand.merge_commit]);
    const registry = ctx.memo('swe5g.resolve.registry', () =>
      registryById(ctx.config, ctx.configFile),
    );
    return resolveCandidate(dir, cand, registry.get(cand.registry_id));
  },
});
