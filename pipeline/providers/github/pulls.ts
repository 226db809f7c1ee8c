/**
 * The GitHub REST calls of SWE-Bench 5G mining, on {@link GithubClient} (conditional, paginated).
 * Request budget per repository: the closed-PR list and the default-branch commit list (both by
 * pages of 100, newest first, stopping at `since`), then per merged PR its files and its commits
 * (one page each for PRs up to 100 files/commits); per linked issue the issue, and its comments only
 * when it has some. Every one of them is a conditional GET, so an unchanged re-run costs only 304s.
 */
import type { components } from '@octokit/openapi-types';
import type { GithubClient } from './client.js';
import type { KeyValue } from '../../store/store.js';

export type PullSimple = components['schemas']['pull-request-simple'];
export type PullFile = components['schemas']['diff-entry'];
export type PullCommit = components['schemas']['commit'];
export type Issue = components['schemas']['issue'];
export type IssueComment = components['schemas']['issue-comment'];

/** A closed PR of the list, with the digests of the pages it came from. */
export interface ListedPulls {
  merged: PullSimple[];
  /** Closed without merge (kept to note other PRs that reference the same issue). */
  unmerged: PullSimple[];
  blobs: string[];
}

/**
 * Closed PRs of `owner/name`, most recently updated first, stopping at the first PR updated
 * before `since`.
 * @param base only PRs into this branch (the default branch)
 * @throws TelebenchError as GithubClient.get
 */
export async function listClosedPulls(
  gh: GithubClient,
  owner: string,
  name: string,
  opts: { base: string; since?: Date; perPage: number; maxMerged?: number },
): Promise<ListedPulls> {
  const out: ListedPulls = { merged: [], unmerged: [], blobs: [] };
  const sinceMs = opts.since?.getTime();
  const tooOld = (p: PullSimple): boolean =>
    sinceMs !== undefined && Date.parse(p.updated_at) < sinceMs;
  const enough = (): boolean => !!opts.maxMerged && out.merged.length >= opts.maxMerged;
  for await (const page of gh.paginate<PullSimple>(
    `/repos/${owner}/${name}/pulls`,
    {
      state: 'closed',
      base: opts.base,
      sort: 'updated',
      direction: 'desc',
      per_page: opts.perPage,
    },
    (items) => items.some(tooOld) || enough(),
  )) {
    out.blobs.push(page.blob);
    for (const p of page.data) {
      if (tooOld(p) || enough()) continue;
      if (p.merged_at) out.merged.push(p);
      else out.unmerged.push(p);
    }
  }
  return out;
}

/**
 * Parents of the commits on `branch` (sha -> parent shas), newest first, since `since`.
 * @throws TelebenchError as GithubClient.get
 */
export async function branchParents(
  gh: GithubClient,
  owner: string,
  name: string,
  opts: { branch: string; since?: Date; perPage: number; need: ReadonlySet<string> },
): Promise<{ parents: Map<string, string[]>; blobs: string[] }> {
  const parents = new Map<string, string[]>();
  const blobs: string[] = [];
  const params: Record<string, string | number> = { sha: opts.branch, per_page: opts.perPage };
  if (opts.since) params.since = opts.since.toISOString();
  const done = (): boolean => [...opts.need].every((s) => parents.has(s));
  if (opts.need.size === 0) return { parents, blobs };
  for await (const page of gh.paginate<{ sha: string; parents: { sha: string }[] }>(
    `/repos/${owner}/${name}/commits`,
    params,
    () => done(),
  )) {
    blobs.push(page.blob);
    for (const c of page.data)
      parents.set(
        c.sha,
        c.parents.map((p) => p.sha),
      );
  }
  return { parents, blobs };
}

/**
 * Parents of one commit (used when the merge commit is not in the branch listing).
 * @throws TelebenchError as GithubClient.get
 */
export async function commitParents(
  gh: GithubClient,
  owner: string,
  name: string,
  sha: string,
): Promise<{ parents: string[]; blob: string }> {
  const r = await gh.get<{ parents: { sha: string }[] }>(`/repos/${owner}/${name}/commits/${sha}`);
  return { parents: r.data.parents.map((p) => p.sha), blob: r.blob };
}

/**
 * Files and commits of PR `number`.
 * @throws TelebenchError as GithubClient.get
 */
export async function pullDetails(
  gh: GithubClient,
  owner: string,
  name: string,
  number: number,
  perPage: number,
): Promise<{ files: PullFile[]; commits: PullCommit[]; blobs: string[] }> {
  const files: PullFile[] = [];
  const commits: PullCommit[] = [];
  const blobs: string[] = [];
  for await (const p of gh.paginate<PullFile>(`/repos/${owner}/${name}/pulls/${number}/files`, {
    per_page: perPage,
  })) {
    files.push(...p.data);
    blobs.push(p.blob);
  }
  for await (const p of gh.paginate<PullCommit>(`/repos/${owner}/${name}/pulls/${number}/commits`, {
    per_page: perPage,
  })) {
    commits.push(...p.data);
    blobs.push(p.blob);
  }
  return { files, commits, blobs };
}

/**
 * One issue and (when it has any) its comments.
 * @returns undefined when the issue does not exist (404/410)
 * @throws TelebenchError as GithubClient.get, except `github_not_found`
 */
export async function issueWithComments(
  gh: GithubClient,
  repo: string,
  number: number,
  perPage: number,
): Promise<{ issue: Issue; comments: IssueComment[]; blobs: string[] } | undefined> {
  let issue: Issue;
  const blobs: string[] = [];
  try {
    const r = await gh.get<Issue>(`/repos/${repo}/issues/${number}`);
    issue = r.data;
    blobs.push(r.blob);
  } catch (err) {
    if ((err as { code?: string }).code === 'github_not_found') return undefined;
    throw err;
  }
  const comments: IssueComment[] = [];
  if (issue.comments > 0) {
    for await (const p of gh.paginate<IssueComment>(`/repos/${repo}/issues/${number}/comments`, {
      per_page: perPage,
    })) {
      comments.push(...p.data);
      blobs.push(p.blob);
    }
  }
  return { issue, comments, blobs };
}

/** Cached closing references of one PR (kv namespace `github.closing`), valid for `updated_at`. */
interface ClosingCache {
  updated_at: string;
  refs: string[];
}

/**
 * GitHub's own closing references of merged PRs (GraphQL `closingIssuesReferences`: issues the
 * PR closes by keyword or by a link set in the UI), `owner/name#N` per PR number. Asked in batches
 * of 50 PRs per query; each PR's answer is cached in `kv` by its `updated_at`, so unchanged PRs
 * cost nothing on a re-run (GraphQL has no 304).
 * @throws TelebenchError as GithubClient.graphql
 */
export async function closingReferences(
  gh: GithubClient,
  kv: KeyValue,
  owner: string,
  name: string,
  prs: readonly { number: number; updated_at: string }[],
): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  const todo: { number: number; updated_at: string }[] = [];
  for (const p of prs) {
    const c = kv.get<ClosingCache>('github.closing', `${owner}/${name}#${p.number}`);
    if (c && c.updated_at === p.updated_at) out.set(p.number, c.refs);
    else todo.push(p);
  }
  for (let i = 0; i < todo.length; i += 50) {
    const batch = todo.slice(i, i + 50);
    const fields = batch
      .map(
        (p) =>
          `pr${p.number}: pullRequest(number: ${p.number}) { closingIssuesReferences(first: 20) { nodes { number repository { nameWithOwner } } } }`,
      )
      .join('\n    ');
    const query = `query ($owner: String!, $name: String!) {\n  repository(owner: $owner, name: $name) {\n    ${fields}\n  }\n}`;
    type Answer = {
      repository: Record<
        string,
        {
          closingIssuesReferences: {
            nodes: { number: number; repository: { nameWithOwner: string } }[];
          };
        } | null
      > | null;
    };
    const data = await gh.graphql<Answer>(query, { owner, name });
    for (const p of batch) {
      const node = data.repository?.[`pr${p.number}`];
      const refs = (node?.closingIssuesReferences.nodes ?? []).map(
        (n) => `${n.repository.nameWithOwner}#${n.number}`,
      );
      out.set(p.number, refs);
      kv.set('github.closing', `${owner}/${name}#${p.number}`, {
        updated_at: p.updated_at,
        refs,
      } satisfies ClosingCache);
    }
  }
  return out;
}
