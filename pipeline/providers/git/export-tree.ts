/**
 * A commit's tree written into a plain folder (no `.git`), from a bare mirror that may lack some
 * blobs. One exporter for every scratch copy: testgen's host checks (`stages/swe5g/testgen/
 * executor.ts`, `scratchCheckout`) and the C environment's subproject trees
 * (`stages/swe5g/build/c-env.ts`). The instance image's clean repository is `exportCleanRepo`
 * (repo.ts), which applies the same rule to a git repository.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Zx from 'zx';
import { TelebenchError } from '../../errors.js';
import { lazy } from '../../lazy.js';
import { absentFiles, refuseReadAbsent, type AbsentFile } from './repo.js';

const zx = lazy<typeof Zx>('zx');

/** The first lines of a failed command's stderr (or its message). */
const firstLines = (err: unknown): string =>
  String((err as { stderr?: string }).stderr ?? (err as Error).message)
    .trim()
    .split('\n')
    .slice(0, 3)
    .join(' ');

/**
 * `commit`'s tree without `absent` into `dir`, through a throw-away index: `read-tree` reads trees
 * only, `update-index --force-remove` drops the absent paths, `checkout-index` writes the rest
 * (git archive cannot: it reads every blob of the tree even under an exclude pathspec).
 */
async function checkoutWithout(
  mirror: string,
  commit: string,
  dir: string,
  absent: readonly AbsentFile[],
  paths: readonly string[],
): Promise<void> {
  const idxDir = mkdtempSync(join(tmpdir(), 'telebench-index-'));
  try {
    const $ = zx().$({
      quiet: true,
      env: { ...process.env, GIT_INDEX_FILE: join(idxDir, 'index') },
    });
    const g = ['--git-dir', mirror, '--work-tree', dir];
    await $`git ${g} read-tree ${commit}`;
    await $({
      input: absent.map((f) => `${f.path}\0`).join(''),
    })`git ${g} update-index --force-remove -z --stdin`;
    if (paths.length === 0) await $`git ${g} checkout-index --all --force`;
    else {
      const files = (await $`git ${g} ls-files -z -- ${paths}`).stdout;
      await $({ input: files })`git ${g} checkout-index --force -z --stdin`;
    }
  } finally {
    rmSync(idxDir, { recursive: true, force: true });
  }
}

/**
 * Writes the tree of `commit` (no `.git`) into `dest` (replaced; written beside it as
 * `<dest>.part` first, so a failed export leaves nothing half-written). When the mirror lacks
 * blobs of the tree (a partial clone: Magma's snapshot lacks some `.gif`s and a `.docx`), the
 * export goes on without them if every absent file is a document no build or test reads
 * (`isDocumentPath`) or one `unread` names (an instance's `absent_files` from resolve).
 * @param mirror  a (bare) git repository holding `commit`
 * @param unread  paths the caller knows no build or test opens
 * @param paths   only these folders or files of the tree (repository-relative; `''` or none: the
 *   whole tree); absent files elsewhere do not matter
 * @returns the files left out (`[]` for a complete mirror)
 * @throws TelebenchError `source_objects_missing` (tier content) naming the absent files a build
 *   or test may read; `git_export_failed` (tier infra) naming the commit and git's message when
 *   the commit or a tree cannot be read
 */
export async function exportTree(
  mirror: string,
  commit: string,
  dest: string,
  unread: (path: string) => boolean = () => false,
  paths: readonly string[] = [],
): Promise<AbsentFile[]> {
  const part = `${dest}.part`;
  // a pathspec per folder; the whole tree when one of them is the root
  const spec = paths.includes('') ? [] : [...new Set(paths)];
  const inSpec = (p: string): boolean =>
    spec.length === 0 || spec.some((d) => p === d || p.startsWith(`${d}/`));
  rmSync(part, { recursive: true, force: true });
  mkdirSync(part, { recursive: true });
  let absent: AbsentFile[] = [];
  try {
    try {
      await zx().$({
        quiet: true,
      })`git -C ${mirror} archive --format=tar ${commit} ${spec.length ? ['--', ...spec] : []} | tar -x -C ${part}`;
    } catch (err) {
      absent = (await absentFiles(mirror, commit).catch(() => [])).filter((f) => inSpec(f.path));
      if (absent.length === 0)
        throw new TelebenchError(
          'git_export_failed',
          `could not export the tree of ${commit} from ${mirror}: ${firstLines(err)}`,
          { tier: 'infra', context: { mirror, commit }, cause: err },
        );
      refuseReadAbsent(mirror, commit, absent, unread);
      rmSync(part, { recursive: true, force: true });
      mkdirSync(part, { recursive: true });
      await checkoutWithout(mirror, commit, part, absent, spec).catch((e: unknown) => {
        throw new TelebenchError(
          'git_export_failed',
          `could not export the tree of ${commit} from ${mirror} without its ${absent.length} absent file(s): ${firstLines(e)}`,
          { tier: 'infra', context: { mirror, commit }, cause: e },
        );
      });
    }
  } catch (err) {
    rmSync(part, { recursive: true, force: true });
    throw err;
  }
  rmSync(dest, { recursive: true, force: true });
  renameSync(part, dest);
  return absent;
}
