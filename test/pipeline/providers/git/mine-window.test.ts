/**
 * Mining a window (`since`, the refresh's cutoff) of a real mirror: a PR merged in the window
 * keeps every commit of its branch whatever their dates, so its record equals the one a
 * whole-history mining gives. Before, `git log --since` dropped the PR's own commits dated before
 * the window: the PR at a release's cutoff came back with no commit messages and its merge time as
 * its first commit, a link input unlike the last run's, and every stage redid it on each refresh
 * (issue 32, found on the real free5gc/udm mirror: PR 85 and PR 94).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mineMirror, type GitMergedPR } from '../../../../pipeline/providers/git/mirror-source.js';
import { gitAt } from '../../../fixtures/git-repo.js';
import { mergeFix, startHistory, syncMirror } from '../../../fixtures/repos/go-history.js';

let root: string;
let mirror: string;

/** A PR whose branch commits are older than its merge: work on Jan 5 and 15, merged Feb 1. */
function mergeOldBranch(work: string, pr: number): void {
  gitAt('2024-01-05T09:00:00Z', work, 'checkout', '-q', '-b', 'fix/slow');
  writeFileSync(join(work, 'smf', 'smf.go'), 'package smf\n\nfunc Node() int { return 1 }\n');
  gitAt('2024-01-05T09:00:00Z', work, 'add', '-A');
  gitAt('2024-01-05T09:00:00Z', work, 'commit', '-q', '-m', 'smf: first try\n\nFixes #3');
  writeFileSync(join(work, 'smf', 'smf.go'), 'package smf\n\nfunc Node() int { return 2 }\n');
  gitAt('2024-01-15T09:00:00Z', work, 'add', '-A');
  gitAt('2024-01-15T09:00:00Z', work, 'commit', '-q', '-m', 'smf: review');
  const head = gitAt(null, work, 'rev-parse', 'HEAD');
  gitAt('2024-02-01T12:00:00Z', work, 'checkout', '-q', 'main');
  gitAt(
    '2024-02-01T12:00:00Z',
    work,
    'merge',
    '-q',
    '--no-ff',
    '-m',
    `Merge pull request #${pr} from dev/fix/slow`,
    'fix/slow',
  );
  gitAt(null, work, 'update-ref', `refs/pull/${pr}/head`, head);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-mine-window-'));
  const h = startHistory(root, ['amf', 'smf'], '2024-01-01T00:00:00Z');
  mirror = h.mirror;
  mergeFix(h.work, { pkg: 'amf', pr: 2, issue: 1, mergedAt: '2024-01-10T00:00:00Z' });
  mergeOldBranch(h.work, 4);
  syncMirror(mirror);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const prOf = (prs: GitMergedPR[], merged: string): GitMergedPR | undefined =>
  prs.find((p) => p.merged_at === merged);

describe('mining a window of a mirror', () => {
  it('a PR merged in the window keeps its older commits: the same record as the whole history', async () => {
    const whole = await mineMirror(mirror, { branch: 'main', issuesElsewhere: false });
    const full = prOf(whole.prs, '2024-02-01T12:00:00Z')!;
    expect(full.commit_messages).toHaveLength(2);
    expect(full.first_commit_at).toBe('2024-01-05T09:00:00Z');
    // the window starts after both branch commits, and at the merge itself (a release's cutoff)
    for (const since of ['2024-01-20T00:00:00Z', '2024-02-01T12:00:00Z']) {
      const win = await mineMirror(mirror, {
        branch: 'main',
        issuesElsewhere: false,
        since: new Date(since),
      });
      expect(prOf(win.prs, full.merged_at), since).toEqual(full);
      // what landed before the window stays out
      expect(prOf(win.prs, '2024-01-10T00:00:00Z'), since).toBeUndefined();
    }
  });

  it('a window after the last landing mines nothing; one before the first, everything', async () => {
    const whole = await mineMirror(mirror, { branch: 'main', issuesElsewhere: false });
    const late = await mineMirror(mirror, {
      branch: 'main',
      issuesElsewhere: false,
      since: new Date('2024-02-01T12:00:01Z'),
    });
    expect(late.prs).toEqual([]);
    const early = await mineMirror(mirror, {
      branch: 'main',
      issuesElsewhere: false,
      since: new Date('2023-12-01T00:00:00Z'),
    });
    expect(early.prs).toEqual(whole.prs);
  });
});
