/**
 * Reads a unified diff (the `patch` of a Resolved instance, base_commit..merge_commit) into the
 * per-file facts Strategy B needs: old and new path and the added line numbers. Uses the `diff`
 * package's parser.
 */
import type * as jsdiffTypes from 'diff';
import { SkipItem } from '../../../pipeline/errors.js';
import type { SourceLanguage } from '../../../pipeline/providers/treesitter/parser.js';
import { lazy } from '../../../pipeline/lazy.js';

const jsdiff = lazy<typeof jsdiffTypes>('diff');

/** One file of a diff. Paths are repository-relative, `null` for /dev/null. */
export interface DiffFile {
  oldPath: string | null;
  newPath: string | null;
  /** 1-based line numbers (new file) of added lines. */
  addedLines: Set<number>;
  deletedCount: number;
}

const strip = (p: string | undefined): string | null => {
  if (!p || p === '/dev/null') return null;
  return p.replace(/^[ab]\//, '');
};

/**
 * Parses a unified diff (git or plain).
 * @throws SkipItem `patch_unreadable` when the text has no file header
 */
export function readDiff(patch: string, instanceId: string): DiffFile[] {
  let parsed;
  try {
    parsed = jsdiff().parsePatch(patch);
  } catch (err) {
    throw new SkipItem(
      'patch_unreadable',
      `the patch of ${instanceId} is not a unified diff: ${(err as Error).message}`,
    );
  }
  const files: DiffFile[] = [];
  for (const f of parsed) {
    if (!f.oldFileName && !f.newFileName) continue;
    const added = new Set<number>();
    let deleted = 0;
    for (const h of f.hunks) {
      let line = h.newStart;
      for (const l of h.lines) {
        if (l.startsWith('+')) added.add(line++);
        else if (l.startsWith('-')) deleted++;
        else if (l.startsWith(' ')) line++;
      }
    }
    files.push({
      oldPath: strip(f.oldFileName),
      newPath: strip(f.newFileName),
      addedLines: added,
      deletedCount: deleted,
    });
  }
  if (files.length === 0 && patch.trim() !== '') {
    throw new SkipItem('patch_unreadable', `the patch of ${instanceId} names no file`);
  }
  return files;
}

/** Language of a source file by extension, or null for other files. */
export function languageOfPath(path: string): SourceLanguage | null {
  if (path.endsWith('_test.go')) return null;
  if (path.endsWith('.go')) return 'go';
  if (/\.(c|h)$/.test(path)) return 'c';
  if (path.endsWith('.py'))
    return /(^|\/)(test_[^/]*|[^/]*_test)\.py$/.test(path) ? null : 'python';
  return null;
}
