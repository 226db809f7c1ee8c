/**
 * Go modules of an instance's env layer: the `go.mod`/`go.sum` of the environment commit and,
 * when the fix changes them (a dependency bump), the ones after the fix, so the fixed code
 * compiles in the test steps (`GOPROXY=off`); and the `go_modules: host` module cache, which
 * also holds every module the folder's packages and tests import (the import check, go-imports.ts).
 * The host's Go, its mirror routing and the reading of a module it cannot have as
 * `dependency_unavailable` are in go-host-download.ts.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type * as Zx from 'zx';
import { fileAt } from '../../../pipeline/providers/git/repo.js';
import { hashJson } from '../../../pipeline/hash.js';
import { lazy } from '../../../pipeline/lazy.js';
import type { Resolved } from '../types.js';
import { goReplaceDirs } from '../resolve/reads.js';
import { goOnHost, hostGo } from './go-host-download.js';
import {
  exportModuleTree,
  hostImports,
  type GoImportsRecord,
  type HostTree,
} from './go-imports.js';

export {
  goModuleFailure,
  infoOverlay,
  mirrorRouting,
  type GoModuleFailure,
} from './go-host-download.js';
export type { GoImportsRecord, HostTree } from './go-imports.js';

const zx = lazy<typeof Zx>('zx');

/**
 * The Go dependency files of an instance's env layer: `go.mod`/`go.sum` at
 * `environment_setup_commit`, plus `fix.go.mod`/`fix.go.sum` at `merge_commit` when they differ
 * (the patch is base..merge of the non-test files, so these are the files after the fix); without
 * a `merge_commit` (a released row rebuilt by `telebench verify`) only the former. A module with
 * local `replace` folders (a Magma folder's `=> ../../../orc8r/lib/go`) also gets their go.mod
 * files as `_local/<folder>/go.mod` (`fix._local/...` after the fix), which `go mod download`
 * needs to load the module graph ({@link downloadFiles}; `go_modules: host` only).
 * @param mirror the repository's bare mirror; @param moduleDir the module's folder ('' = root)
 * @returns name -> content (absent names: the file does not exist at that commit)
 */
export async function goDepFiles(
  mirror: string,
  res: Pick<Resolved, 'environment_setup_commit'> & Partial<Pick<Resolved, 'merge_commit'>>,
  moduleDir: string,
): Promise<Record<string, string>> {
  const at = (commit: string, n: string): Promise<string | undefined> =>
    fileAt(mirror, commit, moduleDir ? `${moduleDir}/${n}` : n);
  const out: Record<string, string> = {};
  for (const n of ['go.mod', 'go.sum']) {
    const text = await at(res.environment_setup_commit, n);
    if (text !== undefined) out[n] = text;
  }
  // a monorepo module's local replace folders: their go.mod files are part of the module graph
  const locals = async (goMod: string, commit: string, prefix: string): Promise<void> => {
    for (const dir of goReplaceDirs(goMod, moduleDir)) {
      const text = await fileAt(mirror, commit, dir ? `${dir}/go.mod` : 'go.mod');
      if (text !== undefined) out[`${prefix}${LOCAL}${dir}/go.mod`] = text;
    }
  };
  if (out['go.mod'] !== undefined) await locals(out['go.mod'], res.environment_setup_commit, '');
  // no merge commit (a released row): the files at the environment commit only
  if (out['go.mod'] === undefined || !res.merge_commit) return out;
  const fixMod = await at(res.merge_commit, 'go.mod');
  const fixSum = await at(res.merge_commit, 'go.sum');
  if (
    fixMod !== undefined &&
    (fixMod !== out['go.mod'] || (fixSum ?? '') !== (out['go.sum'] ?? ''))
  ) {
    out['fix.go.mod'] = fixMod;
    out['fix.go.sum'] = fixSum ?? '';
    await locals(fixMod, res.merge_commit, 'fix.');
  }
  return out;
}

/** Folder of a download work tree holding the go.mod files of local replace targets. */
const LOCAL = '_local/';

/**
 * The files of one `go mod download` work folder from {@link goDepFiles}' result (`fix`: the
 * fix's): `go.mod` with each local `replace` target (`=> ../../orc8r/lib/go`) pointed at
 * `./_local/<repository folder>`, `go.sum`, and `_local/<folder>/go.mod` for each target, so the
 * module graph of a monorepo module (Magma) loads without the rest of the repository. Without
 * local replaces: `go.mod` and `go.sum` as they are.
 * @param moduleDir the module's folder in the repository ('' for the root)
 */
export function downloadFiles(
  depFiles: Record<string, string>,
  fix: boolean,
  moduleDir: string,
): Record<string, string> {
  const p = fix ? 'fix.' : '';
  const out: Record<string, string> = { 'go.sum': depFiles[`${p}go.sum`] ?? '' };
  for (const [k, v] of Object.entries(depFiles))
    if (k.startsWith(`${p}${LOCAL}`)) out[k.slice(p.length)] = v;
  out['go.mod'] = (depFiles[`${p}go.mod`] ?? '').replace(
    /=>(\s*)(\.{1,2}\/\S*|\.{1,2})(?=\s|$)/g,
    (all, space: string, rel: string) => {
      const dir = posix.normalize(posix.join(moduleDir || '.', rel));
      return out[`${LOCAL}${dir}/go.mod`] !== undefined ? `=>${space}./${LOCAL}${dir}` : all;
    },
  );
  return out;
}

/** A `go_modules: host` module cache ({@link fillHostModCache}). */
export interface HostModCache {
  /** The GOMODCACHE folder (only these go.mod files' modules: it is copied into the env image). */
  dir: string;
  /** What the import check found; absent without a `tree` (the go.mod download only). */
  imports?: GoImportsRecord;
}

/**
 * Fills a module cache on the host for the `go_modules: host` mode, keyed by the hash of the
 * dependency files (and, with `tree`, of the environment commit, the folder and cgo): `go mod
 * download` of the environment commit's go.mod (and of the fix's, `fix.go.mod`, when it differs)
 * with the host's Go ({@link hostGo}: the minimal environment plus the user's Go variables, the
 * host's own module cache as a `file://` proxy ahead of the user's GOPROXY, so a module the host
 * already holds is never downloaded again and a module the proxy refuses still builds). A module
 * both refuse whose repository is in the mirrors folder (`github.com/<owner>/<name>` as
 * `<owner>+<name>/repo`, ...: free5GC's own modules at a pseudo-version the proxy never served)
 * is then taken from the mirror through git (`mirrorRouting`). With `tree`, the import check
 * (issue 31, go-imports.ts) then fetches every module the folder's packages and their tests import
 * with each go.mod, as the test steps load them, on an export of the folder and its local
 * `replace` targets at the environment commit (removed afterwards; the tree the tests see is
 * untouched).
 * @param depFiles {@link goDepFiles}' result
 * @param moduleDir the module's folder (its go.mod's local `replace` targets are relative to it)
 * @param mirrorsDir the mirrors folder (`swe5g.mining.mirrors_dir`), when there is one
 * @param tree the environment commit's tree to check the imports of; none: the download only
 * @throws TelebenchError `dependency_unavailable` (tier infra) naming `module@version`, what the
 *   host cache holds of it and what the proxy said (`permanent` for 403/404/410 or an unknown
 *   revision); `go_mod_download_failed` (tier transient) for any other failure or a time limit;
 *   `source_objects_missing` / `git_export_failed` from the tree's export
 */
export async function fillHostModCache(
  stateDir: string,
  depFiles: Record<string, string>,
  moduleDir = '',
  mirrorsDir?: string,
  tree?: HostTree,
): Promise<HostModCache> {
  const keyed = tree ? { depFiles, tree: [tree.commit, moduleDir, tree.cgo === true] } : depFiles;
  const key = hashJson(keyed).slice(0, 16);
  const cache = join(stateDir, 'swe5g', 'gomodcache', key);
  const report = join(cache, 'imports.json');
  const done = (): HostModCache => ({
    dir: join(cache, 'mod'),
    ...(tree ? { imports: JSON.parse(readFileSync(report, 'utf8')) as GoImportsRecord } : {}),
  });
  if (existsSync(join(cache, '.complete'))) return done();
  const works = [{ dir: join(cache, 'work'), mod: 'go.mod', sum: 'go.sum' }];
  if (depFiles['fix.go.mod'] !== undefined)
    works.push({ dir: join(cache, 'work-fix'), mod: 'fix.go.mod', sum: 'fix.go.sum' });
  for (const w of works) {
    for (const [rel, text] of Object.entries(
      downloadFiles(depFiles, w.mod === 'fix.go.mod', moduleDir),
    )) {
      mkdirSync(dirname(join(w.dir, rel)), { recursive: true });
      writeFileSync(join(w.dir, rel), text);
    }
  }
  const h = await hostGo(cache, works[0]!.dir, mirrorsDir);
  for (const w of works)
    await goOnHost(h, w.dir, ['mod', 'download'], { goMod: w.mod, what: 'go mod download' });
  if (tree) {
    const src = join(cache, 'src');
    const scratch = join(cache, 'imports');
    try {
      await exportModuleTree(tree, depFiles, moduleDir, src);
      const lists = works.map((w) => ({
        goMod: w.mod as 'go.mod' | 'fix.go.mod',
        mod: depFiles[w.mod]!,
        sum: depFiles[w.sum] ?? '',
      }));
      const found = await hostImports(h, join(src, moduleDir), lists, scratch, tree.cgo);
      writeFileSync(report, JSON.stringify(found));
    } finally {
      rmSync(src, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  // a go.mod without requirements downloads nothing: the folder is still the (empty) cache
  mkdirSync(join(cache, 'mod'), { recursive: true });
  await zx().$({ quiet: true })`chmod -R u+w ${join(cache, 'mod')}`;
  writeFileSync(join(cache, '.complete'), '');
  return done();
}

/**
 * {@link fillHostModCache} for callers that read only the cache folder, not the import check's
 * record.
 * @returns the GOMODCACHE folder
 * @throws TelebenchError as {@link fillHostModCache}
 */
export async function hostModCache(
  stateDir: string,
  depFiles: Record<string, string>,
  moduleDir = '',
  mirrorsDir?: string,
  tree?: HostTree,
): Promise<string> {
  return (await fillHostModCache(stateDir, depFiles, moduleDir, mirrorsDir, tree)).dir;
}
