/**
 * The one walk behind every environment commit (Go: the commit that last set go.mod/go.sum,
 * `goEnvironmentCommit`; C: the commit that last set meson's configure state,
 * `configureStateCommit`): the newest commit of a base's first-parent line that changes a file
 * of interest. Merges are compared with their first parent, so a merge counts with what its side
 * branch brought in.
 */
import { git } from '../../../pipeline/providers/git/repo.js';

/** What {@link lastFirstParentChange} looks for. */
export interface ChangeQuery {
  /** The commit whose first-parent line is walked (itself included). */
  base: string;
  /** Walk only commits after this one (`since..base`); the whole line when absent. */
  since?: string;
  /** git pathspecs limiting the walk (repository-relative paths); every path when absent. */
  pathspec?: string[];
  /** Which changed paths count (after `pathspec`); every path when absent. */
  accept?: (path: string) => boolean;
}

/**
 * The newest first-parent commit of `q.base` (within `q.since..q.base`) that changes a path both
 * `q.pathspec` and `q.accept` take.
 * @param mirror a git repository (bare) holding the commits
 * @returns the full commit id, or undefined when no commit of the walk changes such a path
 * @throws Error naming the git command and its stderr when git fails (a commit not in the mirror)
 */
export async function lastFirstParentChange(
  mirror: string,
  q: ChangeQuery,
): Promise<string | undefined> {
  const out = await git(mirror).raw([
    'log',
    '--first-parent',
    '--diff-merges=first-parent',
    '--name-only',
    '-z',
    '--format=%x01%H',
    // with no predicate the first commit git lists is the answer
    ...(q.accept ? [] : ['-n', '1']),
    q.since ? `${q.since}..${q.base}` : q.base,
    ...(q.pathspec ? ['--', ...q.pathspec] : []),
  ]);
  // newest first, per commit: "\x01<sha>\0\n<path>\0<path>\0..." (paths verbatim)
  for (const chunk of out.split('\x01').slice(1)) {
    const [head = '', ...rest] = chunk.split('\0');
    const files = rest.map((p, i) => (i === 0 ? p.replace(/^\n/, '') : p)).filter(Boolean);
    if (files.length > 0 && (!q.accept || files.some(q.accept))) return head.trim();
  }
  return undefined;
}
