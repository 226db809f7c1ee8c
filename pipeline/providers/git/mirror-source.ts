/**
 * The git mirror candidate source of SWE-Bench 5G mining: finds merged pull requests in a local
 * (bare) clone when the GitHub API is unavailable (no network, no token, or by choice).
 * simple-git (why: a maintained typed wrapper over the real `git` binary) runs the git commands.
 *
 * It walks EVERY commit reachable from the default branch (issue 21: Open5GS's `main` was
 * fast-forwarded onto branches that had merged main, so 857 of its 5,080 commits are off the
 * first-parent line), reads `refs/pull/N/head`, computes `git patch-id --stable` of the commits and
 * of the PR heads in one batch (`patch-ids.ts`, cached per commit), and matches each commit to its
 * PR by the best evidence (`landings.ts`): a merge commit's `#N`, the commit being (or merging) a
 * PR head, an equal patch-id (a maintainer's rebase or squash), a `(#N)` subject. A commit whose
 * diff needs an object the mirror lacks is skipped as `object_missing`; the rest goes on.
 * Nothing the history lacks (PR body, issue text, PR creation time) is invented: left empty.
 * Every commit that looks like a landing but is not taken is returned in `skipped` with its reason.
 *
 * Only `git clone --mirror` (or a fetch of `+refs/pull/*:refs/pull/*`) keeps GitHub's
 * `refs/pull/N/head`; a plain `git clone --bare` has none, and then squash, rebase and manual
 * merges cannot be told from direct pushes: {@link mineMirror} reports `pull_refs: 0` so the stage
 * can warn.
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SimpleGit } from 'simple-git';
import { TelebenchError } from '../../errors.js';
import { gitClient } from './client.js';
import { diffFacts, diffKey, type DiffCache, type DiffRequest } from './patch-ids.js';
import {
  headsAtOf,
  insidePrMerges,
  isPrMerge,
  matchLandings,
  type LandingEvidence,
  type LandingFacts,
  type LandingMatch,
  type SkippedCommit,
  type WalkCommit,
} from './landings.js';

export type {
  SkippedCommit,
  SkipReason as SkippedCommitReason,
  LandingEvidence,
} from './landings.js';

/** One merged PR as seen in the history. Dates are ISO 8601 (git's strict format). */
export interface GitMergedPR extends LandingFacts {
  merge_commit: string;
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
  /** Branch whose history is walked (`main`); falls back to HEAD when missing. */
  branch: string;
  /** True when `#N` in this repository cannot be an issue (issues are filed elsewhere). */
  issuesElsewhere: boolean;
  /** Only what landed at or after this date (on the branch's first-parent line), with every
   * commit of a PR merged then, whatever its own date. */
  since?: Date;
  /** At most this many PRs, newest first (0 or undefined: all). */
  maxPrs?: number;
  /** Patch-ids and changed files by commit, kept across runs (the run's key-value store). */
  cache?: DiffCache;
}

/** How the walk went: commits scanned, landings by evidence, what could not be read. */
export interface MiningStats {
  /** Commits reachable from the branch (within `since`). */
  commits_scanned: number;
  /** Of them, commits inside a merged PR (its own commits, not candidates). */
  inside_merged_prs: number;
  /** Landings (one per PR) by the evidence that matched them. */
  by_evidence: Partial<Record<LandingEvidence, number>>;
  /** Commits skipped because their diff needs an absent object. */
  object_missing: number;
  /** PR heads whose diff could not be read (absent object): no patch-id for them. */
  pr_heads_unreadable: number;
  /** Diffs read from git this time / taken from the cache. */
  diffs_read: number;
  diffs_cached: number;
}

/** Result of {@link mineMirror}. */
export interface MirrorMining {
  prs: GitMergedPR[];
  skipped: SkippedCommit[];
  /** Number of `refs/pull/N/head` refs in the mirror (0: not a `git clone --mirror`). */
  pull_refs: number;
  /** Highest N of `refs/pull/N/head` (0 when none): no PR or issue of this repository is above. */
  max_pull_number: number;
  stats: MiningStats;
  /** Changed files of each commit whose diff was read (landings, skipped commits): a folder's path filter. */
  files_of: ReadonlyMap<string, readonly { path: string; additions: number; deletions: number }[]>;
}

/** A simple-git client on `dir` with prompts disabled. */
function client(dir: string): SimpleGit {
  // Only what git needs: passing the whole environment would hand EDITOR/PAGER to git.
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const k of ['PATH', 'HOME', 'TMPDIR']) if (process.env[k]) env[k] = process.env[k]!;
  return gitClient(dir, env);
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
 * The exclusion that makes `ref`'s walk "what landed at or after `since`": `^B` with B the newest
 * first-parent commit of `ref` committed before `since`, so a PR merged in the window keeps every
 * commit of its branch whatever their dates (`git log --since` dropped a PR's own commits dated
 * before the window: the PR at a release's cutoff came back with no commit messages and its merge
 * time as `created_at`, a link input unlike a whole-history run's, and was redone by every stage
 * on each refresh; issue 32). [] when nothing landed before `since` (the whole history).
 */
async function landedBefore(g: SimpleGit, ref: string, since: Date): Promise<string[]> {
  const before = new Date(since.getTime() - 1000).toISOString();
  const b = (await g.raw(['rev-list', '-1', '--first-parent', `--before=${before}`, ref])).trim();
  return b ? [`^${b}`] : [];
}

/**
 * Every commit reachable from `ref` (landed at or after `since`: {@link landedBefore}), newest
 * first (`--date-order`), proven whole:
 * the records read are counted against `git rev-list --count` of the same range.
 * @throws TelebenchError `git_walk_short` (tier transient: a retry reads again) when fewer or more
 *   commits were read than git counts, with both counts, so a short read never becomes a smaller
 *   funnel (issue 31: a walk of free5gc/amf once read 397 of 527 commits with no error)
 */
async function walk(
  g: SimpleGit,
  gitDir: string,
  ref: string,
  since?: Date,
): Promise<WalkCommit[]> {
  const range = [ref, ...(since ? await landedBefore(g, ref, since) : []), '--'];
  const args = ['log', '--date-order', '-z', '--format=%H%x1f%P%x1f%an%x1f%aI%x1f%cI%x1f%B'];
  const out = parseWalk(await g.raw([...args, ...range]));
  const expected = Number((await g.raw(['rev-list', '--count', ...range])).trim());
  if (out.length !== expected)
    throw new TelebenchError(
      'git_walk_short',
      `the history walk of ${ref} in ${gitDir} read ${out.length} commits where git counts ${expected}`,
      { tier: 'transient', context: { gitDir, ref, read: out.length, expected } },
    );
  return out;
}

/**
 * A git strict ISO 8601 date with the committer's offset (`2024-03-01T18:00:00+08:00`) as UTC
 * without fractions (`2024-03-01T10:00:00Z`, GitHub's own form), so dates from git and from the API
 * compare and sort as strings (issue 32: rows carried `+08:00` and `-07:00` under a card that says
 * UTC, and a string sort of mixed offsets picked the wrong first commit).
 * @returns the UTC form; the text unchanged when it is not a date
 */
export function utcIso(date: string): string {
  const t = Date.parse(date);
  return Number.isNaN(t) ? date : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The commits of `git log -z --format=%H%x1f%P%x1f%an%x1f%aI%x1f%cI%x1f%B` output, in order. */
export function parseWalk(raw: string): WalkCommit[] {
  const out: WalkCommit[] = [];
  for (const rec of raw.split('\0')) {
    if (rec.trim() === '') continue;
    const [sha, parents, author, authored, committed, message = ''] = rec
      .replace(/^\n/, '')
      .split('\x1f');
    if (!sha || parents === undefined || committed === undefined) continue;
    out.push({
      sha,
      parents: parents.split(' ').filter(Boolean),
      author: author ?? '',
      authored_at: utcIso(authored || committed),
      committed_at: utcIso(committed),
      message,
      subject: message.split('\n')[0]!.trim(),
      order: out.length,
    });
  }
  return out;
}

/**
 * First parent of each commit reachable from a PR head but not from `ref` (the PRs' own commits
 * that never landed as themselves), one `git rev-list --parents --stdin`.
 */
async function prOnlyParents(
  gitDir: string,
  ref: string,
  heads: readonly string[],
): Promise<Map<string, string | undefined>> {
  const map = new Map<string, string | undefined>();
  if (heads.length === 0) return map;
  const out = await gitWithInput(
    gitDir,
    ['rev-list', '--parents', '--stdin'],
    [...heads, `^${ref}`].join('\n') + '\n',
  );
  for (const line of out.split('\n')) {
    const [sha, first] = line.trim().split(' ');
    if (sha) map.set(sha, first);
  }
  return map;
}

/**
 * The PR heads' diffs to compare: each head against its parent (a rebase lands it as a new commit
 * with the same patch), and a multi-commit PR's whole change from its fork point (a squash).
 */
function headRequests(
  pullHeads: ReadonlyMap<number, string>,
  walked: ReadonlyMap<string, WalkCommit>,
  prOnly: ReadonlyMap<string, string | undefined>,
): {
  requests: DiffRequest[];
  byRequest: Map<string, number[]>;
  headParentOf: Map<number, string>;
} {
  const requests: DiffRequest[] = [];
  const byRequest = new Map<string, number[]>();
  const headParentOf = new Map<number, string>();
  const add = (r: DiffRequest, n: number): void => {
    const k = diffKey(r);
    if (!byRequest.has(k)) requests.push(r);
    byRequest.set(k, [...(byRequest.get(k) ?? []), n]);
  };
  for (const [n, head] of pullHeads) {
    const parent = walked.get(head)?.parents[0] ?? prOnly.get(head);
    if (parent) headParentOf.set(n, parent);
    if (walked.has(head) || !prOnly.has(head)) continue; // landed as itself, or not in the mirror
    add({ from: null, to: head }, n);
    let fork: string | undefined = head;
    let steps = 0;
    while (fork !== undefined && prOnly.has(fork) && steps <= 10_000) {
      fork = prOnly.get(fork);
      steps++;
    }
    if (fork !== undefined && steps > 1) add({ from: fork, to: head }, n);
  }
  return { requests, byRequest, headParentOf };
}

/**
 * Lists the merged PRs of the mirror at `gitDir`, newest first.
 * @param gitDir a git directory (bare clone or `.git`)
 * @returns the PRs matched over the whole history of `opts.branch` (see the module comment and
 *   `landings.ts` for the evidence), the commits that looked like landings but were not taken
 *   (with the reason), how many `refs/pull/N/head` the mirror holds, and the walk's counts
 * @throws TelebenchError `git_mirror_unreadable` (tier preflight) when git cannot read `gitDir`;
 *   `git_read_failed` (tier infra) when a diff fails for another reason than an absent object
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
  const commits = await walk(g, gitDir, branchRef, opts.since);
  const walked = new Map(commits.map((c) => [c.sha, c]));
  const headsAt = headsAtOf(pullHeads);
  const insideOf = insidePrMerges(commits, headsAt);
  const outside = commits.filter((c) => !insideOf.has(c.sha));
  const prOnly = await prOnlyParents(
    gitDir,
    branchRef,
    [...new Set(pullHeads.values())].filter((h) => !walked.has(h)),
  );
  const heads = headRequests(pullHeads, walked, prOnly);
  const own = (c: WalkCommit): DiffRequest | undefined =>
    c.parents.length === 1
      ? { from: null, to: c.sha }
      : isPrMerge(c, headsAt)
        ? { from: c.parents[0]!, to: c.sha }
        : undefined;
  const requests = [
    ...outside.map(own).filter((r): r is DiffRequest => r !== undefined),
    ...heads.requests,
  ];
  let cached = 0;
  const counting: DiffCache | undefined = opts.cache && {
    get: (k) => {
      const v = opts.cache!.get(k);
      if (v) cached++;
      return v;
    },
    set: (k, v) => opts.cache!.set(k, v),
  };
  const { facts, missing } = await diffFacts(gitDir, requests, counting);
  const skipped: SkippedCommit[] = [];
  const unreadable = new Set<string>();
  let headsUnreadable = 0;
  for (const m of missing) {
    const c = walked.get(m.request.to);
    if (!c || heads.byRequest.has(diffKey(m.request))) {
      headsUnreadable++;
      continue;
    }
    unreadable.add(c.sha);
    skipped.push({
      commit: c.sha,
      subject: c.subject,
      reason: 'object_missing',
      detail: `the mirror lacks object ${m.object}${m.paths.length > 0 ? ` (${m.paths.join(', ')})` : ''}, needed by the diff of ${c.sha.slice(0, 12)}`,
    });
  }
  const patchIdOf = new Map<string, string>();
  for (const c of outside) {
    const pid = c.parents.length === 1 ? facts.get(c.sha)?.patch_id : undefined;
    if (pid) patchIdOf.set(c.sha, pid);
  }
  const prsByPatchId = new Map<string, number[]>();
  for (const [k, prs] of heads.byRequest) {
    const pid = facts.get(k)?.patch_id;
    if (pid) prsByPatchId.set(pid, [...new Set([...(prsByPatchId.get(pid) ?? []), ...prs])]);
  }
  const matched = matchLandings({
    commits: outside.filter((c) => !unreadable.has(c.sha)),
    pullHeads,
    patchIdOf,
    prsByPatchId,
    headParentOf: heads.headParentOf,
    inside: new Set(),
    issuesElsewhere: opts.issuesElsewhere,
  });
  skipped.push(...matched.skipped);
  let landings = [...matched.landings].sort((a, b) => a.commit.order - b.commit.order);
  if (opts.maxPrs) {
    let n = 0;
    landings = landings.filter((l) => l.foreign_forge || ++n <= opts.maxPrs!);
  }
  const insideBy = new Map<string, WalkCommit[]>();
  for (const c of commits) {
    const m = insideOf.get(c.sha);
    if (m) insideBy.set(m, [...(insideBy.get(m) ?? []), c]);
  }
  const by_evidence: MiningStats['by_evidence'] = {};
  for (const l of landings) by_evidence[l.evidence] = (by_evidence[l.evidence] ?? 0) + 1;
  const files_of = new Map<string, GitMergedPR['changed_files']>();
  for (const c of outside) {
    const f = facts.get(c.parents.length >= 2 ? `${c.parents[0]!}..${c.sha}` : c.sha);
    if (f) files_of.set(c.sha, f.files);
  }
  for (const m of missing)
    if (walked.has(m.request.to))
      files_of.set(
        m.request.to,
        m.paths.map((path) => ({ path, additions: 0, deletions: 0 })),
      );
  return {
    files_of,
    prs: landings.map((l) => describe(l, insideBy.get(l.commit.sha) ?? [], facts)),
    skipped,
    pull_refs: pullHeads.size,
    max_pull_number: Math.max(0, ...pullHeads.keys()),
    stats: {
      commits_scanned: commits.length,
      inside_merged_prs: insideOf.size,
      by_evidence,
      object_missing: unreadable.size,
      pr_heads_unreadable: headsUnreadable,
      diffs_read: requests.length - cached - missing.length,
      diffs_cached: cached,
    },
  };
}

/** The record of one landing: its messages (a merge: the PR's own commits), dates and files. */
function describe(
  l: LandingMatch,
  own: readonly WalkCommit[],
  facts: ReadonlyMap<string, { files: GitMergedPR['changed_files'] }>,
): GitMergedPR {
  const c = l.commit;
  const key = c.parents.length >= 2 ? `${c.parents[0]!}..${c.sha}` : c.sha;
  const dates = own.map((o) => o.authored_at).sort();
  const { commit: _, ...landing } = l;
  return {
    ...landing,
    merge_commit: c.sha,
    commit_messages: c.parents.length >= 2 ? own.map((o) => o.message.trim()) : [c.message.trim()],
    first_commit_at: dates[0] ?? c.committed_at,
    merged_at: c.committed_at,
    changed_files: facts.get(key)?.files ?? [],
  };
}

/** Runs git in `gitDir` with `input` on its stdin. @throws Error with git's stderr */
function gitWithInput(gitDir: string, args: string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
    for (const k of ['PATH', 'HOME', 'TMPDIR']) if (process.env[k]) env[k] = process.env[k]!;
    const p = execFile(
      'git',
      args,
      { cwd: gitDir, env, maxBuffer: 1 << 30 },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`git ${args.join(' ')}: ${stderr.trim() || err.message}`))
          : resolve(stdout),
    );
    p.stdin?.end(input);
  });
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
