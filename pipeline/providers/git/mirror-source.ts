/**
 * The git mirror candidate source of SWE-Bench 5G mining: finds merged pull requests in a local
 * (bare) clone when the GitHub API is unavailable (no network, no token, or by choice).
 * simple-git (why: a maintained typed wrapper over the real `git` binary) runs the git commands.
 *
 * What it recognises on the first-parent line of the default branch (issue 3, "Git mirror source"):
 * - `Merge pull request #N from owner/branch`: a GitHub merge; base = first parent, pr_head = second
 *   parent (equal to `refs/pull/N/head` when the mirror has it).
 * - a subject ending `(#N)` on a single-parent commit: a squash/rebase merge. N counts as a PR only
 *   when `refs/pull/N/head` exists or the issues live in another repository (then `#N` in this
 *   repository can only be a PR); otherwise (Open5GS) `(#N)` usually names an issue and the commit
 *   is not a candidate.
 * - `Merged in branch (pull request #N)`: an internal merge of another forge (Bitbucket); N is not
 *   a GitHub PR number. Reported with `foreign_forge: true` so the filter can reject it.
 * The oldest commit naming a PR number is its landing commit; later ones are follow-ups.
 * Nothing the history lacks (PR body, issue text, PR creation time) is invented: left empty.
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
  merge_style: 'merge' | 'squash';
  foreign_forge: boolean;
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
 * @returns the PRs recognised on the first-parent line of `opts.branch` (see the module comment)
 * @throws TelebenchError `git_mirror_unreadable` (tier preflight) when git cannot read `gitDir`
 */
export async function mineMirror(gitDir: string, opts: MineMirrorOptions): Promise<GitMergedPR[]> {
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
  const args = ['log', '--first-parent', '-z', '--format=%H%x1f%P%x1f%an%x1f%aI%x1f%cI%x1f%B'];
  if (opts.since) args.push(`--since=${opts.since.toISOString()}`);
  args.push(branchRef, '--');
  const out = await g.raw(args);
  const found: GitMergedPR[] = [];
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
          title: subject,
          head_ref: foreign[1]!,
          author: authorName ?? '',
          merged_at: committedAt,
          messagesRange: parents.length >= 2 ? `${parents[0]!}..${parents[1]!}` : undefined,
          ownMessage: message,
        }),
      );
    } else if (squash && parents.length === 1) {
      const number = Number(squash[1]);
      if (!pullHeads.has(number) && !opts.issuesElsewhere) continue; // (#N) names an issue here
      found.push(
        await describe(g, {
          number,
          merge_commit: sha,
          base_commit: parents[0]!,
          pr_head: pullHeads.get(number) ?? null,
          merge_style: 'squash',
          foreign_forge: false,
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
  return dedupe(g, found);
}

/**
 * One record per PR number: the landing commit is the oldest one naming it (later `(#N)` subjects
 * are follow-ups or backports); a squash commit whose `refs/pull/N/head` is already in its base's
 * history is a follow-up of a PR merged earlier, not the PR's landing.
 */
async function dedupe(g: SimpleGit, found: GitMergedPR[]): Promise<GitMergedPR[]> {
  const kept = new Map<string, GitMergedPR>();
  for (const f of [...found].reverse()) {
    const key = `${f.foreign_forge ? 'foreign' : 'github'}#${f.number}`;
    if (kept.has(key)) continue;
    if (f.merge_style === 'squash' && f.pr_head && !f.foreign_forge) {
      // pr_head reachable from base <=> base..pr_head is empty
      const ahead = await g.raw(['rev-list', '-n', '1', `${f.base_commit}..${f.pr_head}`, '--']);
      const landedBefore = ahead.trim() === '';
      if (landedBefore) continue;
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
