/**
 * Putting patches into a step's files, on the host, in a scratch copy of the instance's clean
 * tree at base_commit:
 * - {@link overlayFor}: the instance's own patches (gold `patch`, `test_patch`, `f2p_test_patch`),
 *   applied EXACTLY (`git apply`, no fuzz): validation and the release check;
 * - {@link applyPrediction}: a model's `model_patch`, with SWE-bench's chain of methods (its
 *   `GIT_APPLY_CMDS` in swebench/harness/run_evaluation.py, read at SWE-bench commit 6cd91d8,
 *   2026-08-09): `git apply --verbose`, `git apply --verbose --3way`, `git apply --verbose
 *   --reject`, `patch --batch --forward --fuzz=5 -p1 -i`, each from a clean tree, and, when none
 *   applies, `git apply --check --reverse` (the patch's changes are already there). A patch whose
 *   only difference from the tree is line endings (CRLF patch, LF files) is normalised first. An
 *   empty patch is not applied (`empty`; SWE-bench leaves empty predictions out of the run).
 */
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../../../pipeline/process.js';
import { overlayOf, type Overlay } from '../../../pipeline/providers/docker/overlay.js';
import { applyPatch, hostEnv, patchFiles } from '../../../pipeline/providers/git/repo.js';

/**
 * Applies patches in order to a copy of `sourceDir` and returns the overlay of the files they
 * touched, relative to the repository root: exact bytes and git mode (100644 / 100755 / 120000
 * symlink), null for a deleted file, names as git holds them (read NUL-separated by
 * {@link applyPatch}). Every executor writes it with the one overlay writer (issue 14, section 1).
 * @returns the {@link Overlay} (later patches win for a path two patches touch)
 * @throws TelebenchError `patch_does_not_apply` (tier content) naming the patch
 */
export async function overlayFor(sourceDir: string, patches: [string, string][]): Promise<Overlay> {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-apply-'));
  try {
    cpSync(sourceDir, dir, { recursive: true, verbatimSymlinks: true });
    const files: Overlay = {};
    for (const [label, patch] of patches) {
      const { changed, deleted } = await applyPatch(dir, patch, label);
      Object.assign(files, overlayOf(dir, changed));
      for (const p of deleted) files[p] = null;
    }
    return files;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Paths a unified diff touches (old and new names of every file; git and plain diffs), exact
 * names even where git quotes them (read by {@link patchFiles}).
 * @returns sorted, unique
 */
export function patchPaths(patch: string): string[] {
  const out = new Set<string>();
  for (const f of patchFiles(patch)) {
    if (f.oldPath !== null) out.add(f.oldPath);
    if (f.newPath !== null) out.add(f.newPath);
  }
  return [...out].sort();
}

/** SWE-bench's methods, in its order (see the module comment). */
export const APPLY_CHAIN = [
  ['git', 'apply', '--verbose'],
  ['git', 'apply', '--verbose', '--3way'],
  ['git', 'apply', '--verbose', '--reject'],
  ['patch', '--batch', '--forward', '--fuzz=5', '-p1', '-i'],
] as const;

/** How a prediction went in. */
export type PredictionApply =
  | {
      applied: true;
      /** The command line that applied it (`git apply --verbose`, ...), or `already applied`. */
      method: string;
      /** The patch's CRLF line endings were turned into LF (the tree's) before the chain. */
      line_endings_normalised: boolean;
      changed: string[];
      deleted: string[];
    }
  | {
      applied: false;
      /** `empty` (nothing to apply) or `failed` (no method applied it). */
      method: 'empty' | 'failed';
      error: string;
      line_endings_normalised: boolean;
    };

/**
 * Whether `patch` differs from the tree only in line endings: it has CRLF lines and every file it
 * changes that exists in `dir` has none.
 */
function crlfOnly(dir: string, patch: string): boolean {
  if (!patch.includes('\r\n')) return false;
  return patchPaths(patch.replaceAll('\r\n', '\n')).every((p) => {
    const f = join(dir, p);
    return !existsSync(f) || !lstatSync(f).isFile() || !readFileSync(f).includes('\r\n');
  });
}

/**
 * Applies a model patch in `dir` (a copy of the clean tree, left with the patch applied) with
 * SWE-bench's chain; each method starts from a fresh copy of `cleanDir`, so a method that applied
 * some hunks and failed (`--reject`, `--3way`) leaves nothing behind for the next.
 * @param dir the working copy (replaced by a fresh copy of `cleanDir` before each method)
 * @param cleanDir the clean tree at base_commit
 * @returns see {@link PredictionApply}; `changed`/`deleted` are the patch's paths present/absent
 *   afterwards (never `.orig` / `.rej` files a method left)
 * @throws TelebenchError `command_failed` (infra) when git or patch is not installed
 */
export async function applyPrediction(
  dir: string,
  cleanDir: string,
  modelPatch: string,
): Promise<PredictionApply> {
  if (modelPatch.trim() === '')
    return {
      applied: false,
      method: 'empty',
      error: 'the model patch is empty',
      line_endings_normalised: false,
    };
  const normalised = crlfOnly(cleanDir, modelPatch);
  let body = normalised ? modelPatch.replaceAll('\r\n', '\n') : modelPatch;
  if (!body.endsWith('\n')) body += '\n';
  const patchFile = join(mkdtempSync(join(tmpdir(), 'telebench-pred-')), 'model.patch');
  writeFileSync(patchFile, body);
  const env = { ...hostEnv(), GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  const fresh = (): void => {
    rmSync(dir, { recursive: true, force: true });
    cpSync(cleanDir, dir, { recursive: true, verbatimSymlinks: true });
  };
  const errors: string[] = [];
  try {
    let method = '';
    for (const [cmd, ...args] of APPLY_CHAIN) {
      fresh();
      const r = await runProcess({
        cmd,
        args: [...args, patchFile],
        cwd: dir,
        env,
        timeoutMs: 120_000,
      });
      if (r.code === 0) {
        method = [cmd, ...args].join(' ');
        break;
      }
      errors.push(`${[cmd, ...args].join(' ')}: ${r.out.trim().split('\n').slice(-3).join(' | ')}`);
    }
    if (!method) {
      fresh();
      const r = await runProcess({
        cmd: 'git',
        args: ['apply', '--check', '--reverse', patchFile],
        cwd: dir,
        env,
        timeoutMs: 120_000,
      });
      if (r.code === 0) method = 'already applied';
    }
    if (!method)
      return {
        applied: false,
        method: 'failed',
        error: `no method applied the model patch: ${errors.join('; ')}`.slice(0, 4000),
        line_endings_normalised: normalised,
      };
    const paths = patchPaths(body);
    const present = (p: string): boolean => {
      try {
        lstatSync(join(dir, p));
        return true;
      } catch {
        return false;
      }
    };
    return {
      applied: true,
      method,
      line_endings_normalised: normalised,
      changed: paths.filter(present),
      deleted: paths.filter((p) => !present(p)),
    };
  } finally {
    rmSync(join(patchFile, '..'), { recursive: true, force: true });
  }
}
