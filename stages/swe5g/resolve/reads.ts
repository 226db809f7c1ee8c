/**
 * What a registry folder of a monorepo reads (issue 21, Magma): the folders whose files its build
 * and tests can open. A file the mirror lacks outside them (Magma's snapshot lacks the
 * `cn/deploy/helm/templates/virtctl` binary of 2021-2023, in a Helm chart no Go module or Python
 * package reads) cannot change a verdict: the instance goes on without it, the file listed in
 * `absent_files`. Whole-repository entries read everything.
 */
import { posix } from 'node:path';
import { fileAt } from '../../../pipeline/providers/git/repo.js';

/**
 * The local directories a go.mod's `replace` lines point to (`=> ../lib/go`, `=> ./sub`),
 * repository-relative from `moduleDir`; module-path replacements (`=> example.com/x v1`) are not
 * folders.
 */
export function goReplaceDirs(goMod: string, moduleDir: string): string[] {
  const out: string[] = [];
  for (const m of goMod.matchAll(/=>\s*(\.{1,2}\/\S*|\.{1,2})(?:\s|$)/g)) {
    const dir = posix.normalize(posix.join(moduleDir || '.', m[1]!));
    if (!dir.startsWith('..')) out.push(dir === '.' ? '' : dir);
  }
  return [...new Set(out)];
}

/**
 * A predicate "this repository path may be read by the entry's build or tests" for the entry's
 * folder `path` at `commit`: true under `path`, under each of `reads` (registry `reads`), under a
 * Go module's local `replace` directories, and for the repository root's own files (build and
 * workspace files); false elsewhere. No `path` (a whole repository): always true.
 * @throws TelebenchError as {@link fileAt} when go.mod cannot be read
 */
export async function entryReads(
  mirrorDir: string,
  commit: string,
  entry: { path?: string; language: string; reads?: readonly string[] },
): Promise<(path: string) => boolean> {
  if (!entry.path) return () => true;
  const dirs = [entry.path, ...(entry.reads ?? [])];
  if (entry.language === 'go') {
    const goMod = await fileAt(mirrorDir, commit, posix.join(entry.path, 'go.mod'));
    if (goMod) dirs.push(...goReplaceDirs(goMod, entry.path));
  }
  const prefixes = dirs.map((d) => (d === '' ? '' : `${d.replace(/\/+$/, '')}/`));
  return (p) => !p.includes('/') || prefixes.some((d) => d === '' || p.startsWith(d));
}
