/**
 * The git mirror candidate source of SWE-Bench 5G mining: finds merged pull requests in a local
 * (bare) clone when the GitHub API is unavailable (no network, no token, or by choice).
 * simple-git (why: a maintained typed wrapper over the real `git` binary) runs the git commands.
 *
 * What it recognises on the first-parent line of the default branch (issue 3, "Git mirror source"):
 * - `Merge pull request #N from owner/branch`: a GitHub merge; base = first parent, pr_head = second
 *   parent (equal to `refs/pull/N/head` when the mirror has it).
 * - a single-parent commit that *is* `refs/pull/M/head` (a rebase or fast-forward merge: the PR's
 *   own commit landed unchanged): PR M's landing, base = its first parent (what the GitHub API
 *   reports as the parent of `merge_commit_sha` too). A `(#N)` in its subject is then an issue
 *   mention for the link stage, unless `refs/pull/N/head` exists (then the commit is N's squash and
 *   M was opened later from a branch already holding it: recorded as a skipped note).
 * - a merge commit whose second parent is `refs/pull/M/head` without GitHub's merge subject
 *   (`Merge branch 'x' into y`, a merge made outside GitHub): PR M's landing.
 * - a subject ending `(#N)` on a single-parent commit: a squash merge. N counts as a PR only
 *   when `refs/pull/N/head` exists or the issues live in another repository (then `#N` in this
 *   repository can only be a PR); otherwise (Open5GS) `(#N)` usually names an issue and the commit
 *   is not a candidate.
 * - `Merged in branch (pull request #N)`: an internal merge of another forge (Bitbucket); N is not
 *   a GitHub PR number. Reported with `foreign_forge: true` so the filter can reject it.
 * The oldest commit naming a PR number is its landing commit; later ones are follow-ups.
 * Nothing the history lacks (PR body, issue text, PR creation time) is invented: left empty.
 * Every commit that looks like a landing but is not taken is returned in `skipped` with its reason.
 *
 * Only `git clone --mirror` (or a fetch of `+refs/pull/*:refs/pull/*`) keeps GitHub's
 * `refs/pull/N/head`; a plain `git clone --bare` has none, and then squash, rebase and manual
 * merges cannot be told from direct pushes: {@link mineMirror} reports `pull_refs: 0` so the stage
 * can warn.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type * as sgTypes from 'simple-git';
import type { SimpleGit } from 'simple-git';
import { TelebenchError } from '../../errors.js';
import { lazy } from '../../lazy.js';

const sg = lazy<typeof sgTypes>('simple-git');

/** One merged PR as seen in the history. Dates are ISO 8601 (git's strict format). */
export interface GitMergedPR {
  /** GitHub PR number, or the foreign forge's number when `foreign_forge`. */
  number: number;
  merge_commit: string;
  base_commit: string;
  /** Second parent (merge) or `refs/pull/N/head`; null when neither is known. */
  pr_head: string | null;
  /** `rebase`: the PR's own head commit is on the branch (rebase or fast-forward merge). */
  merge_style: 'merge' | 'squash' | 'rebase';
  foreign_forge: boolean;
  /** Why this commit is read as the landing of PR `number` (shown in the mining report). */
  landing: string;
  /** PR title when the history carries it (merge: second paragraph; squash: subject without `(#N)`). */
  title: string;
  /** Head branch (`fix/1079-reject-nia0`) from `Merge pull request #N from owner/branch`, else ''. */
  head_ref: string;
  /** Fork owner login from the merge subject, else the author name of the PR's last commit. */
  author: string;
  /** Full messages of the PR's commits (base..head), or the squash commit's message. */
  commit_messages: string[];
  /** Author date of the earliest PR commit (the history does not know the PR's creation time). */
  first_commit_at: string;
  /** Committer date of merge_commit. */
  merged_at: string;
  changed_files: { path: string; additions: number; deletions: number }[];
}

/** Options of {@link mineMirror}. */
export interface MineMirrorOptions {
  /** Branch whose first-parent line is scanned (`main`); falls back to HEAD when missing. */
  branch: string;
  /** True when `#N` in this repository cannot be an issue (issues are filed elsewhere). */
  issuesElsewhere: boolean;
  /** Only merges committed at or after this date. */
  since?: Date;
  /** At most this many PRs, newest first (0 or undefined: all). */
  maxPrs?: number;
}

/** Why a commit of the first-parent line that looks like a landing was not taken. */
export type SkippedCommitReason =
  /** `(#N)` names an issue: issues are filed in this repository and no `refs/pull/N/head` exists. */
  | 'issue_number_in_subject'
  /** A later commit naming (or being the head of) a PR that already landed: a follow-up/backport. */
  | 'follow_up'
  /** The PR's head was already in the base's history: the commit is not that PR's landing. */
  | 'pr_head_already_merged'
  /** Also `refs/pull/M/head`, but `(#N)` has its own `refs/pull/N/head`: N's squash, not M's. */
  | 'head_of_later_pr';

/** A commit not taken as a landing, with the reason (shown in the mining report). */
export interface SkippedCommit {
  commit: string;
  subject: string;
  reason: SkippedCommitReason;
  detail: string;
}

/** Result of {@link mineMirror}. */
export interface MirrorMining {
  prs: GitMergedPR[];
  skipped: SkippedCommit[];
  /** Number of `refs/pull/N/head` refs in the mirror (0: not a `git clone --mirror`). */
  pull_refs: number;
  /** Highest N of `refs/pull/N/head` (0 when none): no PR or issue of this repository is above. */
  max_pull_number: number;
}

const MERGE_RE = /^Merge pull request #(\d+) from (\S+)/;
const SQUASH_RE = /\(#(\d+)\)\s*$/;
const FOREIGN_RE = /^Merged in (\S+) \(pull request #(\d+)\)/;

/** A simple-git client on `dir` with prompts disabled. */
function client(dir: string): SimpleGit {
  // Only what git needs: passing the whole environment would hand EDITOR/PAGER to git.
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const k of ['PATH', 'HOME', 'TMPDIR']) if (process.env[k]) env[k] = process.env[k]!;
  return sg().simpleGit({ baseDir: dir, trimmed: false }).env(env);
}

/**
 * Finds the bare clone of `owner/name` under `mirrorsDir`. Layouts tried, in order:
 * `<owner>+<name>/repo`, `<owner>+<name>.git`, `<owner>+<name>`, `<owner>/<name>.git`, `<owner>/<name>`.
 * @returns the git directory, or undefined when none exists
 */
export function findMirror(mirrorsDir: string, owner: string, name: string): string | undefined {
  const candidates = [
    join(mirrorsDir, `${owner}+${name}`, 'repo'),
    join(mirrorsDir, `${owner}+${name}.git`),
    join(mirrorsDir, `${owner}+${name}`),
    join(mirrorsDir, owner, `${name}.git`),
    join(mirrorsDir, owner, name),
    join(mirrorsDir, owner, name, '.git'),
  ];
  for (const c of candidates) {
    if (existsSync(join(c, 'HEAD')) && existsSync(join(c, 'objects')) && statSync(c).isDirectory())
      return c;
  }
  return undefined;
}

/**
 * Lists the merged PRs of the mirror at `gitDir`, newest first.
 * @param gitDir a git directory (bare clone or `.git`)
 * @returns the PRs recognised on the first-parent line of `opts.branch` (see the module comment),
 *   the commits that looked like landings but were not taken (with the reason), and how many
 *   `refs/pull/N/head` the mirror holds
 * @throws TelebenchError `git_mirror_unreadable` (tier preflight) when git cannot read `gitDir`
 */
export async function mineMirror(gitDir: string, opts: MineMirrorOptions): Promise<MirrorMining> {
  const g = client(gitDir);
  let branchRef: string;
  let pullHeads: Map<number, string>;
  try {
    branchRef = await resolveBranch(g, opts.branch);
    pullHeads = await listPullHeads(g);
  } catch (err) {
    throw new TelebenchError(
      'git_mirror_unreadable',
      `cannot read the git mirror ${gitDir}: ${(err as Error).message}`,
      { tier: 'preflight', context: { gitDir }, cause: err },
    );
  }
  // head commit -> PR numbers whose refs/pull/N/head it is (lowest first: the first PR opened)
  const pullsAt = new Map<string, number[]>();
  for (const [n, sha] of [...pullHeads].sort((a, b) => a[0] - b[0]))
    pullsAt.set(sha, [...(pullsAt.get(sha) ?? []), n]);
  const args = ['log', '--first-parent', '-z', '--format=%H%x1f%P%x1f%an%x1f%aI%x1f%cI%x1f%B'];
  if (opts.since) args.push(`--since=${opts.since.toISOString()}`);
  args.push(branchRef, '--');
  const out = await g.raw(args);
  const found: GitMergedPR[] = [];
  const skipped: SkippedCommit[] = [];
  for (const rec of out.split('\0')) {
    if (rec.trim() === '') continue;
    const [sha, parentsText, authorName, , committedAt, message = ''] = rec
      .replace(/^\n/, '')
      .split('\x1f');
    if (!sha || parentsText === undefined || committedAt === undefined) continue;
    const parents = parentsText.split(' ').filter(Boolean);
    const subject = message.split('\n')[0]!.trim();
    const merge = MERGE_RE.exec(subject);
    const foreign = FOREIGN_RE.exec(subject);
    const squash = SQUASH_RE.exec(subject);
    const headOf = pullsAt.get(sha)?.[0];
    const mergedHeadOf = parents.length >= 2 ? pullsAt.get(parents[1]!)?.[0] : undefined;
    if (merge && parents.length >= 2) {
      const number = Number(merge[1]);
      const from = merge[2]!;
      const slash = from.indexOf('/');
      const head = parents[1]!;
      const paragraphs = message.split(/\n\s*\n/);
      found.push(
        await describe(g, {
          number,
          merge_commit: sha,
          base_commit: parents[0]!,
          pr_head: head,
          merge_style: 'merge',
          foreign_forge: false,
          landing: `merge commit "Merge pull request #${number}"`,
          title: (paragraphs[1] ?? '').trim().split('\n')[0] ?? '',
          head_ref: slash >= 0 ? from.slice(slash + 1) : from,
          author: slash >= 0 ? from.slice(0, slash) : '',
          merged_at: committedAt,
          messagesRange: `${parents[0]!}..${head}`,
        }),
      );
    } else if (foreign) {
      const number = Number(foreign[2]);
      found.push(
        await describe(g, {
          number,
          merge_commit: sha,
          base_commit: parents[0] ?? sha,
          pr_head: parents[1] ?? null,
          merge_style: parents.length >= 2 ? 'merge' : 'squash',
          foreign_forge: true,
          landing: `another forge's internal merge "(pull request #${number})"`,
          title: subject,
          head_ref: foreign[1]!,
          author: authorName ?? '',
          merged_at: committedAt,
          messagesRange: parents.length >= 2 ? `${parents[0]!}..${parents[1]!}` : undefined,
          ownMessage: message,
        }),
      );
    } else if (mergedHeadOf !== undefined) {
      // A merge made outside GitHub's button whose second parent is a PR head.
      found.push(
        await describe(g, {
          number: mergedHeadOf,
          merge_commit: sha,
          base_commit: parents[0]!,
          pr_head: parents[1]!,
          merge_style: 'merge',
          foreign_forge: false,
          landing: `merge commit whose second parent is refs/pull/${mergedHeadOf}/head`,
          title: subject,
          head_ref: '',
          author: authorName ?? '',
          merged_at: committedAt,
          messagesRange: `${parents[0]!}..${parents[1]!}`,
        }),
      );
    } else if (parents.length === 1 && squash && pullHeads.has(Number(squash[1]))) {
      const number = Number(squash[1]);
      if (headOf !== undefined && headOf !== number)
        skipped.push({
          commit: sha,
          subject,
          reason: 'head_of_later_pr',
          detail: `also refs/pull/${headOf}/head, but (#${number}) has its own refs/pull/${number}/head: PR ${number}'s squash`,
        });
      found.push(
        await describe(g, {
          number,
          merge_commit: sha,
          base_commit: parents[0]!,
          pr_head: pullHeads.get(number)!,
          merge_style: headOf === number ? 'rebase' : 'squash',
          foreign_forge: false,
          landing: `squash subject "(#${number})" with refs/pull/${number}/head`,
          title: subject.replace(SQUASH_RE, '').trim(),
          head_ref: '',
          author: authorName ?? '',
          merged_at: committedAt,
          ownMessage: message,
        }),
      );
    } else if (parents.length === 1 && headOf !== undefined) {
      // The PR's own commit is on the branch: rebase or fast-forward merge. A "(#N)" in the
      // subject is not this PR (its number is headOf): it stays in the message as a reference.
      found.push(
        await describe(g, {
          number: headOf,
          merge_commit: sha,
          base_commit: parents[0]!,
          pr_head: sha,
          merge_style: 'rebase',
          foreign_forge: false,
          landing: `the commit is refs/pull/${headOf}/head (rebase or fast-forward merge)${squash ? `; "(#${squash[1]})" in its subject is read as a reference, not the PR` : ''}`,
          title: subject,
          head_ref: '',
          author: authorName ?? '',
          merged_at: committedAt,
          ownMessage: message,
        }),
      );
    } else if (squash && parents.length === 1) {
      const number = Number(squash[1]);
      if (!opts.issuesElsewhere) {
        skipped.push({
          commit: sha,
          subject,
          reason: 'issue_number_in_subject',
          detail: `(#${number}) names an issue: issues are filed in this repository and the mirror has no refs/pull/${number}/head`,
        });
        continue;
      }
      found.push(
        await describe(g, {
          number,
          merge_commit: sha,
          base_commit: parents[0]!,
          pr_head: null,
          merge_style: 'squash',
          foreign_forge: false,
          landing: `squash subject "(#${number})" read as the PR: issues are filed in another repository; no refs/pull/${number}/head in the mirror`,
          title: subject.replace(SQUASH_RE, '').trim(),
          head_ref: '',
          author: authorName ?? '',
          merged_at: committedAt,
          ownMessage: message,
        }),
      );
    }
    if (opts.maxPrs && found.filter((f) => !f.foreign_forge).length >= opts.maxPrs) break;
  }
  const prs = await dedupe(g, found, skipped);
  return {
    prs,
    skipped,
    pull_refs: pullHeads.size,
    max_pull_number: Math.max(0, ...pullHeads.keys()),
  };
}

/**
 * One record per PR number: the landing commit is the oldest one naming it (later `(#N)` subjects
 * are follow-ups or backports); a squash commit whose `refs/pull/N/head` is already in its base's
 * history is a follow-up of a PR merged earlier, not the PR's landing. Dropped commits go to
 * `skipped` with their reason.
 */
async function dedupe(
  g: SimpleGit,
  found: GitMergedPR[],
  skipped: SkippedCommit[],
): Promise<GitMergedPR[]> {
  const kept = new Map<string, GitMergedPR>();
  const subjectOf = (f: GitMergedPR): string =>
    f.merge_style === 'merge' ? f.title : (f.commit_messages[0] ?? '').split('\n')[0]!;
  for (const f of [...found].reverse()) {
    const key = `${f.foreign_forge ? 'foreign' : 'github'}#${f.number}`;
    const first = kept.get(key);
    if (first) {
      skipped.push({
        commit: f.merge_commit,
        subject: subjectOf(f),
        reason: 'follow_up',
        detail: `PR ${f.number} already landed as ${first.merge_commit.slice(0, 12)}`,
      });
      continue;
    }
    if (f.merge_style === 'squash' && f.pr_head && !f.foreign_forge) {
      // pr_head reachable from base <=> base..pr_head is empty
      const ahead = await g.raw(['rev-list', '-n', '1', `${f.base_commit}..${f.pr_head}`, '--']);
      if (ahead.trim() === '') {
        skipped.push({
          commit: f.merge_commit,
          subject: subjectOf(f),
          reason: 'pr_head_already_merged',
          detail: `refs/pull/${f.number}/head is already in the history of ${f.base_commit.slice(0, 12)}`,
        });
        continue;
      }
    }
    kept.set(key, f);
  }
  const keep = new Set(kept.values());
  return found.filter((f) => keep.has(f));
}

/** A found PR before {@link describe} reads its commits and files. */
interface Partial0 extends Omit<
  GitMergedPR,
  'commit_messages' | 'first_commit_at' | 'changed_files'
> {
  /** `base..head` whose commits are the PR's commits (merge style). */
  messagesRange?: string;
  /** The squash commit's own message. */
  ownMessage?: string;
}

async function describe(g: SimpleGit, p: Partial0): Promise<GitMergedPR> {
  let commit_messages: string[] = [];
  let first_commit_at = p.merged_at;
  if (p.messagesRange) {
    const log = await g.raw(['log', '-z', '--format=%aI%x1f%B', p.messagesRange, '--']);
    const recs = log
      .split('\0')
      .map((r) => r.replace(/^\n/, ''))
      .filter((r) => r.trim() !== '');
    commit_messages = recs.map((r) => (r.split('\x1f')[1] ?? '').trim());
    const dates = recs.map((r) => r.split('\x1f')[0] ?? '').filter(Boolean);
    if (dates.length > 0) first_commit_at = dates.sort()[0]!;
  } else if (p.ownMessage !== undefined) {
    commit_messages = [p.ownMessage.trim()];
  }
  const numstat = await g.raw([
    'diff',
    '--numstat',
    '--no-renames',
    '-z',
    p.base_commit,
    p.merge_commit,
    '--',
  ]);
  const changed_files: GitMergedPR['changed_files'] = [];
  for (const entry of numstat.split('\0')) {
    const m = /^(-|\d+)\t(-|\d+)\t(.+)$/s.exec(entry.replace(/^\n/, ''));
    if (!m) continue;
    changed_files.push({
      path: m[3]!,
      additions: m[1] === '-' ? 0 : Number(m[1]),
      deletions: m[2] === '-' ? 0 : Number(m[2]),
    });
  }
  return {
    number: p.number,
    merge_commit: p.merge_commit,
    base_commit: p.base_commit,
    pr_head: p.pr_head,
    merge_style: p.merge_style,
    foreign_forge: p.foreign_forge,
    landing: p.landing,
    title: p.title,
    head_ref: p.head_ref,
    author: p.author,
    commit_messages,
    first_commit_at,
    merged_at: p.merged_at,
    changed_files,
  };
}

async function resolveBranch(g: SimpleGit, branch: string): Promise<string> {
  for (const ref of [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`]) {
    const ok = await g
      .raw(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])
      .then((s) => s.trim() !== '')
      .catch(() => false); // rev-parse --verify exits 1 when the ref is missing: try the next
    if (ok) return ref;
  }
  return 'HEAD';
}

async function listPullHeads(g: SimpleGit): Promise<Map<number, string>> {
  const out = await g.raw(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/pull/']);
  const map = new Map<number, string>();
  for (const line of out.split('\n')) {
    const m = /^([0-9a-f]{40}) refs\/pull\/(\d+)\/head$/.exec(line.trim());
    if (m) map.set(Number(m[2]), m[1]!);
  }
  return map;
}
