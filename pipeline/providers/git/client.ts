/**
 * The one simple-git client factory of the git providers (`repo.ts`, `mirror-source.ts`).
 *
 * simple-git (why: a maintained typed wrapper over the real `git` binary) settles a call by
 * default 50 ms after the git process *exits*, even when its stdout has not been read to the end
 * yet; on a loaded machine a long output (`git log` of a whole history) can then come back short
 * with no error (steveukx/git-js#608; seen here: a whole-history walk of free5gc/amf read 397 of
 * its 527 commits, exit 0). Here a call settles only when git's output streams have *closed*, so
 * every byte git wrote has been read.
 */
import type * as sgTypes from 'simple-git';
import type { SimpleGit } from 'simple-git';
import { lazy } from '../../lazy.js';

const sg = lazy<typeof sgTypes>('simple-git');

/**
 * A simple-git client on `dir` (work tree or bare git directory) that runs git with exactly `env`
 * (no other variable of this process) and resolves each call after git's stdout and stderr close.
 * @param dir the directory git runs in (`baseDir`)
 * @param env the whole environment of the git processes (PATH and HOME included by the caller)
 */
export function gitClient(dir: string, env: Record<string, string>): SimpleGit {
  return sg()
    .simpleGit({ baseDir: dir, trimmed: false, completion: { onClose: true, onExit: false } })
    .env(env);
}
