/**
 * A free5GC-shaped corpus for {@link startGithubServer}: a central issues repository
 * (`free5gc/free5gc`) and NF repositories (`free5gc/amf`, `free5gc/smf`) whose PRs cover the cases of
 * issue 3: merge and squash merges, cross-repository links (`free5gc/free5gc#641`, full issue URLs),
 * a PR that fixes two issues, an issue with two PRs (one merged), bot, documentation-only and
 * oversized PRs, an issue still open after its fix merged, a link only in a commit message, a weak
 * branch-name link, a PR without any link.
 * Objects are typed by `@octokit/openapi-types`; nested repository objects carry only the fields
 * the provider reads.
 */
import { createHash } from 'node:crypto';
import type {
  DiffEntry,
  GhCommit,
  GhIssue,
  GhIssueComment,
  GithubCorpus,
  PullSimple,
  RepoData,
} from './github-server.js';
import type { components } from '@octokit/openapi-types';

type User = components['schemas']['simple-user'];
type Repository = components['schemas']['repository'];

/** Deterministic fake sha of a label. */
export const sha = (label: string): string => createHash('sha1').update(label).digest('hex');

/** A GitHub user (type `Bot` for logins ending in `[bot]`). */
export function user(login: string): User {
  return {
    login,
    id: login.length,
    node_id: `U_${login}`,
    avatar_url: '',
    gravatar_id: null,
    url: `https://api.github.com/users/${login}`,
    html_url: `https://github.com/${login}`,
    followers_url: '',
    following_url: '',
    gists_url: '',
    starred_url: '',
    subscriptions_url: '',
    organizations_url: '',
    repos_url: '',
    events_url: '',
    received_events_url: '',
    type: login.endsWith('[bot]') ? 'Bot' : 'User',
    site_admin: false,
  };
}

/** Only the repository fields the provider reads; the rest of the schema is not served. */
const repoStub = (full: string): Repository => ({ full_name: full }) as unknown as Repository;

export interface PullSpec {
  number: number;
  title: string;
  body: string;
  login: string;
  branch: string;
  merged: boolean;
  /** merge: two parents; squash: one parent. */
  style?: 'merge' | 'squash';
  files: [path: string, additions: number, deletions: number][];
  commits?: string[];
  day: number;
}

/** Issue in the central issues repository. */
export interface IssueSpec {
  repo: string;
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  labels?: string[];
  comments?: { login: string; body: string; day: number }[];
  day: number;
}

const at = (day: number): string =>
  new Date(Date.UTC(2025, 0, 1 + day, 12)).toISOString().replace('.000', '');

function pull(repo: string, s: PullSpec, mergeSha: string | null, headSha: string): PullSimple {
  const api = `https://api.github.com/repos/${repo}/pulls/${s.number}`;
  return {
    url: api,
    id: s.number,
    node_id: `PR_${s.number}`,
    html_url: `https://github.com/${repo}/pull/${s.number}`,
    diff_url: '',
    patch_url: '',
    issue_url: '',
    commits_url: '',
    review_comments_url: '',
    review_comment_url: '',
    comments_url: '',
    statuses_url: '',
    number: s.number,
    state: 'closed',
    locked: false,
    title: s.title,
    user: user(s.login),
    body: s.body,
    labels: [],
    milestone: null,
    created_at: at(s.day),
    updated_at: at(s.day + 1),
    closed_at: at(s.day + 1),
    merged_at: s.merged ? at(s.day + 1) : null,
    merge_commit_sha: mergeSha,
    assignee: null,
    head: {
      label: `${s.login}:${s.branch}`,
      ref: s.branch,
      repo: repoStub(repo),
      sha: headSha,
      user: user(s.login),
    },
    base: {
      label: 'free5gc:main',
      ref: 'main',
      repo: repoStub(repo),
      sha: sha(`${repo} base ${s.number}`),
      user: user('free5gc'),
    },
    _links: {
      comments: { href: '' },
      commits: { href: '' },
      statuses: { href: '' },
      html: { href: '' },
      issue: { href: '' },
      review_comments: { href: '' },
      review_comment: { href: '' },
      self: { href: api },
    },
    author_association: 'CONTRIBUTOR',
    auto_merge: null,
  };
}

function diffEntry(path: string, additions: number, deletions: number): DiffEntry {
  return {
    sha: sha(path),
    filename: path,
    status: 'modified',
    additions,
    deletions,
    changes: additions + deletions,
    blob_url: '',
    raw_url: '',
    contents_url: '',
  };
}

function commit(repo: string, message: string, i: number, day: number): GhCommit {
  const id = sha(`${repo} ${message} ${i}`);
  return {
    url: '',
    sha: id,
    node_id: `C_${id}`,
    html_url: '',
    comments_url: '',
    commit: {
      url: '',
      author: { name: 'dev', email: 'dev@example.org', date: at(day) },
      committer: { name: 'dev', email: 'dev@example.org', date: at(day) },
      message,
      comment_count: 0,
      tree: { sha: sha(`tree ${id}`), url: '' },
    },
    author: null,
    committer: null,
    parents: [],
  };
}

function issue(s: IssueSpec): GhIssue {
  return {
    id: s.number,
    node_id: `I_${s.number}`,
    url: `https://api.github.com/repos/${s.repo}/issues/${s.number}`,
    repository_url: `https://api.github.com/repos/${s.repo}`,
    labels_url: '',
    comments_url: '',
    events_url: '',
    html_url: `https://github.com/${s.repo}/issues/${s.number}`,
    number: s.number,
    state: s.state,
    title: s.title,
    body: s.body,
    user: user('reporter'),
    labels: (s.labels ?? []).map((name, i) => ({ id: i, name })),
    assignee: null,
    milestone: null,
    locked: false,
    comments: s.comments?.length ?? 0,
    closed_at: s.state === 'closed' ? at(s.day + 5) : null,
    created_at: at(s.day),
    updated_at: at(s.day + 5),
    author_association: 'NONE',
  };
}

function comment(
  repo: string,
  n: number,
  c: { login: string; body: string; day: number },
  i: number,
): GhIssueComment {
  return {
    id: n * 100 + i,
    node_id: `IC_${n}_${i}`,
    url: '',
    html_url: `https://github.com/${repo}/issues/${n}#issuecomment-${i}`,
    body: c.body,
    user: user(c.login),
    created_at: at(c.day),
    updated_at: at(c.day),
    issue_url: '',
    author_association: 'NONE',
  };
}

/** Builds one NF repository: PRs, files, commits, and the default-branch history with merges. */
export function nfRepo(repo: string, specs: PullSpec[]): RepoData {
  const data: RepoData = {
    pulls: [],
    files: {},
    prCommits: {},
    branch: [],
    issues: [],
    comments: {},
  };
  let tip = sha(`${repo} root`);
  const branch: RepoData['branch'] = [{ sha: tip, parents: [], date: at(0) }];
  for (const s of [...specs].sort((a, b) => a.day - b.day)) {
    const msgs = s.commits ?? [s.title];
    const commits = msgs.map((m, i) => commit(repo, m, i, s.day));
    const head = commits[commits.length - 1]!.sha;
    let merge: string | null = null;
    if (s.merged) {
      merge = sha(`${repo} merge ${s.number}`);
      const parents = (s.style ?? 'merge') === 'merge' ? [tip, head] : [tip];
      branch.push({ sha: merge, parents, date: at(s.day + 1) });
      tip = merge;
    }
    data.pulls.push(pull(repo, s, merge, head));
    data.files[s.number] = s.files.map(([p, a, d]) => diffEntry(p, a, d));
    data.prCommits[s.number] = commits;
  }
  data.branch = branch.reverse();
  return data;
}

/** Builds the central issues repository. */
export function issuesRepo(repo: string, specs: IssueSpec[]): RepoData {
  const data: RepoData = {
    pulls: [],
    files: {},
    prCommits: {},
    branch: [],
    issues: [],
    comments: {},
  };
  for (const s of specs) {
    data.issues.push(issue({ ...s, repo }));
    if (s.comments)
      data.comments[s.number] = s.comments.map((c, i) => comment(repo, s.number, c, i));
  }
  return data;
}

const LONG =
  'When the gNB sends an NGSetupRequest without a GlobalRANNodeID the AMF dereferences a nil GNbId and panics; expected: the AMF rejects the setup with a cause instead of crashing (TS 38.413 clause 8.7.1).';

/** The default corpus. Expected filter outcome per PR in {@link EXPECTED}. */
export function free5gcCorpus(): GithubCorpus {
  const amf = nfRepo('free5gc/amf', [
    {
      number: 161,
      title: 'fix: nil pointer check',
      body: 'Fixes free5gc/free5gc#641',
      login: 'InertGas01',
      branch: 'main',
      merged: true,
      files: [['internal/ngap/handler.go', 1, 1]],
      commits: ['fix: nil pointer check'],
      day: 1,
    },
    {
      number: 162,
      title: 'fix: registration accept handling',
      body: 'This fixes https://github.com/free5gc/free5gc/issues/700 and closes free5gc/free5gc#701',
      login: 'dev1',
      branch: 'fix-reg',
      merged: true,
      style: 'squash',
      files: [
        ['internal/gmm/handler.go', 12, 3],
        ['internal/gmm/handler_test.go', 30, 0],
      ],
      day: 2,
    },
    {
      number: 163,
      title: 'attempt: fix timer',
      body: 'Fix free5gc/free5gc#720',
      login: 'dev2',
      branch: 'timer',
      merged: false,
      files: [['internal/context/timer.go', 2, 2]],
      day: 3,
    },
    {
      number: 164,
      title: 'fix: T3550 timer restart',
      body: 'Resolves free5gc/free5gc#720',
      login: 'dev3',
      branch: 'timer2',
      merged: true,
      files: [['internal/context/timer.go', 5, 1]],
      day: 4,
    },
    {
      number: 165,
      title: 'Bump golang.org/x/net',
      body: 'Bumps golang.org/x/net. Fixes free5gc/free5gc#641',
      login: 'dependabot[bot]',
      branch: 'dependabot/go_modules/golang.org/x/net-0.38.0',
      merged: true,
      files: [
        ['go.mod', 1, 1],
        ['go.sum', 2, 2],
      ],
      day: 5,
    },
    {
      number: 166,
      title: 'docs: README',
      body: 'Closes free5gc/free5gc#700',
      login: 'dev4',
      branch: 'docs',
      merged: true,
      files: [['README.md', 10, 2]],
      day: 6,
    },
    {
      number: 167,
      title: 'refactor: everything',
      body: 'Fixes free5gc/free5gc#641',
      login: 'dev5',
      branch: 'big',
      merged: true,
      files: Array.from(
        { length: 30 },
        (_, i) => [`internal/pkg${i}/x.go`, 10, 10] as [string, number, number],
      ),
      day: 7,
    },
    {
      number: 168,
      title: 'fix: handover guard',
      body: 'Fixes free5gc/free5gc#730',
      login: 'dev6',
      branch: 'ho',
      merged: true,
      files: [['internal/ngap/handover.go', 4, 0]],
      day: 8,
    },
    {
      number: 169,
      title: 'chore: tidy logs',
      body: 'Cleans up some log lines.',
      login: 'dev7',
      branch: 'logs',
      merged: true,
      files: [['internal/logger/logger.go', 3, 3]],
      day: 9,
    },
    {
      number: 170,
      title: 'fix: reject NIA0',
      body: '',
      login: 'wiwi878',
      branch: 'fix/740-reject-nia0',
      merged: true,
      files: [['internal/gmm/sm.go', 6, 1]],
      day: 10,
    },
    {
      number: 171,
      title: 'fix: release UE context on N2 failure',
      body: 'Releases the context.',
      login: 'dev9',
      branch: 'ctx-release',
      merged: true,
      files: [['internal/context/amf_ue.go', 8, 2]],
      day: 11,
    },
  ]);
  // linked only through the UI (GitHub's closing reference), no keyword anywhere
  amf.closing = { 171: ['free5gc/free5gc#750'], 161: ['free5gc/free5gc#641'] };
  const smf = nfRepo('free5gc/smf', [
    {
      number: 50,
      title: 'nil check in PFCP handler',
      body: '',
      login: 'dev8',
      branch: 'pfcp-nil',
      merged: true,
      files: [['internal/pfcp/handler/handler.go', 3, 0]],
      commits: ['smf: nil check\n\nFixes free5gc/free5gc#800'],
      day: 3,
    },
  ]);
  const issues = issuesRepo('free5gc/free5gc', [
    {
      repo: '',
      number: 641,
      title: 'AMF panics on NGSetupRequest without GlobalRANNodeID',
      body: LONG,
      state: 'closed',
      labels: ['bug'],
      comments: [
        { login: 'maint', body: 'Can you share the pcap?', day: 0 },
        { login: 'maint', body: 'after the fix: thanks', day: 30 },
      ],
      day: 0,
    },
    {
      repo: '',
      number: 700,
      title: 'Registration accept misses allowed NSSAI',
      body: LONG,
      state: 'closed',
      day: 0,
    },
    {
      repo: '',
      number: 701,
      title: 'Registration accept wrong T3512',
      body: LONG,
      state: 'closed',
      day: 0,
    },
    { repo: '', number: 720, title: 'T3550 not restarted', body: LONG, state: 'closed', day: 0 },
    { repo: '', number: 730, title: 'Handover without target', body: LONG, state: 'open', day: 0 },
    { repo: '', number: 740, title: 'NIA0 accepted', body: 'it breaks', state: 'closed', day: 0 },
    {
      repo: '',
      number: 750,
      title: 'UE context not released after N2 failure',
      body: LONG,
      state: 'closed',
      day: 0,
    },
    {
      repo: '',
      number: 800,
      title: 'SMF crashes on PFCP report',
      body: LONG,
      state: 'closed',
      day: 0,
    },
  ]);
  return { 'free5gc/amf': amf, 'free5gc/smf': smf, 'free5gc/free5gc': issues };
}

/** Expected outcome of swe5g.filter per instance_id on {@link free5gcCorpus} (defaults). */
export const EXPECTED: Record<string, string> = {
  'free5gc__amf-161': 'kept',
  'free5gc__amf-162': 'kept',
  'free5gc__amf-164': 'kept',
  'free5gc__amf-165': 'bot_author',
  'free5gc__amf-166': 'docs_or_ci_only',
  'free5gc__amf-167': 'too_many_files',
  'free5gc__amf-168': 'issue_open',
  'free5gc__amf-169': 'no_linked_issue',
  'free5gc__amf-170': 'unclear_issue',
  'free5gc__amf-171': 'kept',
  'free5gc__smf-50': 'kept',
};
