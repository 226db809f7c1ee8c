/**
 * Host-side inputs of a C (`c-meson`) environment with a kept build (registry `environment`,
 * docs/environments.md): the source tree at `environment_setup_commit`, the meson subprojects its
 * `subprojects/*.wrap` files name (read from the mirrors, never downloaded by meson). The delta
 * from that tree to an instance's `base_commit` (which the instance layer writes over the env
 * layer's tree, so that the kept build directory rebuilds only what changed) is `tree-delta.ts`'s.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, posix } from 'node:path';
import { hashJson } from '../../../pipeline/hash.js';
import { ensureMirror, fileAt, git, gitPaths } from '../../../pipeline/providers/git/repo.js';
import { exportTree } from '../../../pipeline/providers/git/export-tree.js';
import { mirrorSource } from '../resolve/resolve.js';
import type { MesonSelection } from '../../../pipeline/providers/docker/meson-step.js';
import type { EnvironmentSpec } from '../registry.js';

/** One `[wrap-git]` subproject as resolved on the host. */
export interface ResolvedSubproject {
  /** Folder name under `subprojects/` (the wrap's `directory`, else the wrap file's name). */
  directory: string;
  /** `owner/name` of the wrap's GitHub URL. */
  repo: string;
  /** The wrap's `revision` (a branch, tag or commit). */
  revision: string;
  /** The commit used: a branch revision is the branch's last commit at or before the env commit's date. */
  commit: string;
}

/** A subproject the host could not provide (meson then fails only if the build really needs it). */
export interface MissingSubproject {
  directory: string;
  url: string;
  reason: string;
}

/** Parses a meson `.wrap` file's `[wrap-git]` section: `{ url, revision, directory }` or null. */
export function parseWrapGit(
  text: string,
  fileName: string,
): {
  url: string;
  revision: string;
  directory: string;
} | null {
  let section = '';
  const kv: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const sec = /^\[(.+)\]$/.exec(line);
    if (sec) {
      section = sec[1]!.trim();
      continue;
    }
    const m = /^([A-Za-z_-]+)\s*=\s*(.*)$/.exec(line);
    if (m && section === 'wrap-git') kv[m[1]!] = m[2]!.trim();
  }
  if (!kv.url) return null;
  return {
    url: kv.url,
    revision: kv.revision ?? 'HEAD',
    directory: kv.directory ?? fileName.replace(/\.wrap$/, ''),
  };
}

/** `owner/name` of a GitHub clone URL (`https://github.com/open5gs/freeDiameter.git`), or null. */
export function githubRepoOfUrl(url: string): string | null {
  const m = /github\.com[/:]([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : null;
}

/**
 * Resolves the `[wrap-git]` subprojects of `subprojects/*.wrap` at `commit` from local mirrors
 * (`<mirrors_dir>/<owner>+<name>/repo`) or `<git_url_base>/<owner>/<name>.git`, and checks each
 * out (no `.git`) under `<dest>/<directory>`. A branch revision is pinned to the branch's last
 * commit at or before `commit`'s committer date, so an old environment gets the subproject of its
 * time. A wrap whose repository cannot be had is returned in `missing` (many wraps are fallbacks
 * of a system library the base layer installs); with `offline` (`swe5g.source: git`) a repository
 * that is neither in the mirrors folder nor already kept in the state is missing, never fetched.
 * @param stateDir where subproject mirrors are kept (`<state>/git/<owner>+<name>.git`)
 * @returns resolved and missing subprojects; `dest` holds the resolved trees
 */
export async function resolveSubprojects(opts: {
  mirror: string;
  commit: string;
  dest: string;
  stateDir: string;
  gitUrlBase: string;
  mirrorsDir: string | undefined;
  /** `swe5g.source: git`: nothing is fetched; a subproject not in the mirrors folder is missing. */
  offline?: boolean;
}): Promise<{ resolved: ResolvedSubproject[]; missing: MissingSubproject[] }> {
  const wraps = (
    await gitPaths(opts.mirror, ['ls-tree', '-z', '--name-only', opts.commit, 'subprojects/'])
  ).filter((p) => p.endsWith('.wrap'));
  const date = (await git(opts.mirror).raw(['show', '-s', '--format=%cI', opts.commit])).trim();
  const resolved: ResolvedSubproject[] = [];
  const missing: MissingSubproject[] = [];
  rmSync(opts.dest, { recursive: true, force: true });
  mkdirSync(opts.dest, { recursive: true });
  for (const path of wraps.sort()) {
    const text = (await fileAt(opts.mirror, opts.commit, path)) ?? '';
    const wrap = parseWrapGit(text, posix.basename(path));
    if (!wrap) continue; // wrap-file / wrap-svn: not resolved here
    const repo = githubRepoOfUrl(wrap.url);
    if (!repo) {
      missing.push({ directory: wrap.directory, url: wrap.url, reason: 'not a GitHub URL' });
      continue;
    }
    const source = mirrorSource(repo, opts.gitUrlBase, opts.mirrorsDir);
    const dir = join(opts.stateDir, 'git', `${repo.replace('/', '+')}.git`);
    const fromBase = source === mirrorSource(repo, opts.gitUrlBase, undefined);
    if (opts.offline && fromBase && !existsSync(join(dir, 'HEAD'))) {
      missing.push({
        directory: wrap.directory,
        url: wrap.url,
        reason: `not in the mirrors folder (swe5g.source: git fetches nothing; add ${repo.replace('/', '+')}/repo there)`,
      });
      continue;
    }
    try {
      await ensureMirror(source, dir);
    } catch (err) {
      missing.push({ directory: wrap.directory, url: wrap.url, reason: (err as Error).message });
      continue;
    }
    const g = git(dir);
    const rev = wrap.revision;
    let commit = '';
    const isBranch = (await g.raw(['branch', '--list', rev])).trim() !== '';
    if (isBranch) {
      commit = (await g.raw(['rev-list', '-1', `--before=${date}`, rev])).trim();
      if (!commit) commit = (await g.raw(['rev-list', '--max-parents=0', '-1', rev])).trim();
    } else {
      commit = (
        await g.raw(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]).catch(() => '')
      ).trim();
    }
    if (!commit) {
      missing.push({
        directory: wrap.directory,
        url: wrap.url,
        reason: `revision ${rev} not in ${source}`,
      });
      continue;
    }
    await exportTree(dir, commit, join(opts.dest, wrap.directory));
    resolved.push({ directory: wrap.directory, repo, revision: rev, commit });
  }
  return { resolved, missing };
}

/** Content key of an env tree plus its subprojects (names the env image). */
export function cEnvKey(repo: string, envCommit: string, subs: ResolvedSubproject[]): string {
  // layout 2: nothing of telebench's own inside /testbed/subprojects (a clean git status)
  // layout 3: /testbed holds the env commit's clean repository (instance-git.ts, tree-delta.ts)
  return hashJson({
    layout: 3,
    repo,
    envCommit,
    subs: subs.map((s) => [s.directory, s.commit]),
  });
}

/**
 * The meson step's selection for a registry entry's `environment` (undefined without one: the
 * C recipe then configures and builds the whole project in each step, as before).
 * @param compile repository-relative files whose objects are built (the fix's C/C++ sources and
 *   headers; none for the env layer, which instances share)
 */
export function mesonSelection(
  env: EnvironmentSpec | undefined,
  compile: readonly string[] = [],
): MesonSelection | undefined {
  if (!env) return undefined;
  return {
    suites: env.suites ?? [],
    tests: env.tests ?? [],
    setupOptions: env.meson_options,
    compile: keptCompileFiles(compile),
  };
}

/** The files of `files` whose objects a kept build compiles: C/C++ sources and headers, sorted. */
export function keptCompileFiles(files: readonly string[]): string[] {
  return files.filter((f) => /\.(c|cc|cpp|cxx|h|hh|hpp)$/.test(f)).sort();
}
