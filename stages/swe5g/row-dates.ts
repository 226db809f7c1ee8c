/**
 * The three dates a released SWE-Bench 5G row carries besides `created_at` (issue 32): the linked
 * issue's creation, the merge, and the base commit's committer date, all ISO 8601 UTC
 * (datasets/swe-bench-5g/dates.ts). The first two come from the candidate (`swe5g.filter`), the
 * third from the state's git mirror of the repository (`swe5g.resolve` made it), read when the
 * release collects its rows, so no stage has to run again for a state validated before the fields.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { toUtcIso } from '../../datasets/swe-bench-5g/dates.js';
import { mirrorPath } from './resolve/resolve.js';
import type { Candidate } from './types.js';

/** The derived date fields of a row ('' when unknown). */
export interface RowDates {
  issue_created_at: string;
  merged_at: string;
  base_commit_date: string;
}

/** No date known (a row collected without its candidate). */
export const NO_DATES: RowDates = { issue_created_at: '', merged_at: '', base_commit_date: '' };

/**
 * The issue and merge dates of a candidate, UTC: the earliest linked issue's `created_at` (issues
 * files may carry any offset), the PR's `merged_at`.
 */
export function candidateDates(
  c: Partial<Pick<Candidate, 'issues' | 'merged_at'>>,
): Omit<RowDates, 'base_commit_date'> {
  // a record stored without its issue text (stages whose cache key leaves it out) has no issues
  const issues = (c.issues ?? [])
    .map((i) => toUtcIso(i.created_at))
    .filter((d) => d !== '')
    .sort();
  return { issue_created_at: issues[0] ?? '', merged_at: toUtcIso(c.merged_at ?? '') };
}

/**
 * Committer dates (UTC) of commits, read from the state's bare mirrors (`<state>/git/<owner>+<name>.git`).
 * @returns sha -> date; a commit whose mirror is missing or lacks it is absent (its row says '')
 */
export function baseCommitDates(
  stateDir: string,
  commits: readonly { repo: string; base_commit: string }[],
): Map<string, string> {
  const out = new Map<string, string>();
  const byRepo = new Map<string, string[]>();
  for (const c of commits) byRepo.set(c.repo, [...(byRepo.get(c.repo) ?? []), c.base_commit]);
  for (const [repo, shas] of byRepo) {
    const git = mirrorPath(stateDir, repo);
    if (!existsSync(git)) continue;
    const read = (list: string[]) =>
      execFileSync('git', ['-C', git, 'show', '-s', '--format=%H %cI', ...list], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    let text = '';
    try {
      text = read([...new Set(shas)]);
    } catch {
      // one commit the mirror lacks fails the whole call: read them one by one
      for (const sha of new Set(shas)) {
        try {
          text += read([sha]);
        } catch {
          // not in the mirror: unknown
        }
      }
    }
    for (const line of text.split('\n')) {
      const [sha, date] = line.trim().split(' ');
      if (sha && date) out.set(sha, toUtcIso(date));
    }
  }
  return out;
}
