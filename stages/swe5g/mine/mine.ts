/**
 * `swe5g.mine`: one item per registry entry (key = registry id, e.g. `free5gc/amf`); lists the
 * entry's merged pull requests with their three commits (issue 3, "Commit terms"), changed files,
 * commit messages and times, from the GitHub REST API or from a local git mirror.
 *
 * SWE-Bench 5G paper, section "Pipeline", step (1): "mine closed issues with linked merged pull
 * requests ... via the GitHub API". Linking is the next stage (`swe5g.link`), filtering the one
 * after (`swe5g.filter`).
 */
import { execFileSync } from 'node:child_process';
import pLimit from 'p-limit';
import { defineStage } from '../../../pipeline/stage.js';
import { SkipItem } from '../../../pipeline/errors.js';
import type { RunContext, WorkItem } from '../../../pipeline/stage.js';
import { inRunOrder } from '../run-order.js';
import {
  listClosedPulls,
  branchParents,
  commitParents,
  pullDetails,
  closingReferences,
  type PullSimple,
} from '../../../pipeline/providers/github/pulls.js';
import {
  mineMirror,
  type GitMergedPR,
  type MirrorMining,
  type MiningStats,
  type SkippedCommit,
} from '../../../pipeline/providers/git/mirror-source.js';
import type { DiffCache, DiffFacts } from '../../../pipeline/providers/git/patch-ids.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import { githubRepoOf, registryWarnings, type RegistryEntry } from '../registry.js';
import { aliasOf, instanceIdOf, type CandidateSource, type MinedPR } from '../types.js';
import {
  cloneMirrors,
  configuredMirrorsDir,
  githubClient,
  gitUrlBase,
  mirrorHint,
  mirrorOf,
  probeApi,
  selectedEntries,
  mirrorsDir,
  type CloneFailure,
} from './source.js';
import { PreflightError, TelebenchError } from '../../../pipeline/errors.js';
import { recordClosedUnmerged } from '../link/history.js';

/** Input of one mining item. */
export interface MineInput {
  entry: RegistryEntry;
  /** Paths of the other entries in the same GitHub repository (monorepo folders). */
  sibling_paths: string[];
  source: 'api' | 'git' | 'auto';
  since: string | null;
  max_prs: number;
  generation: number;
  /**
   * Git source: the mirror's default-branch tip when planned ({@link mirrorTip}), so a mirror that
   * moved forward is mined again and one that did not is not (issue 32: a refresh with nothing new
   * keeps its window, and the next one, the same `since`, found a cached mining and never saw what
   * landed meanwhile); null for the API source or without a mirror.
   */
  tip: string | null;
}

/**
 * The commit `refs/heads/<branch>` of a bare mirror names, or null when the ref is missing or the
 * folder is not a git directory. Local and read-only (a plan may call it).
 */
export function mirrorTip(gitDir: string, branch: string): string | null {
  try {
    return (
      execFileSync(
        'git',
        ['--git-dir', gitDir, 'rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        },
      ).trim() || null
    );
  } catch {
    return null;
  }
}

/** A closed-but-unmerged PR, kept to note other PRs that reference the same issue. */
export interface UnmergedPR {
  number: number;
  title: string;
  body: string;
  head_ref: string;
}

/** Output of one mining item. */
export interface MineOutput {
  registry_id: string;
  repo: string;
  source: CandidateSource;
  /** Git directory used (git source). */
  mirror: string | null;
  prs: MinedPR[];
  closed_unmerged: UnmergedPR[];
  /** HTTP requests of this item (api source): total and answered 304. */
  requests: { total: number; not_modified: number };
  /** Why GitHub's closing references (GraphQL) are missing, or null. */
  closing_references_error: string | null;
  /**
   * Git source: commits of the first-parent line that looked like a PR landing but were not taken,
   * each with its reason (`issue_number_in_subject`, `follow_up`, ...). [] for the API source.
   */
  skipped_commits?: SkippedCommit[];
  /** Git source: number of `refs/pull/N/head` in the mirror (0: not made by `git clone --mirror`). */
  pull_refs?: number;
  /** Git source: highest `refs/pull/N/head` number (the link stage reads a larger bare `#N` elsewhere). */
  max_pr_number?: number;
  /** What a user should know about this item's input (e.g. a mirror without `refs/pull/*`). */
  warnings?: string[];
  /**
   * Git source: counts of the one walk of the repository's history (shared by every registry
   * folder of the repository: commits scanned, landings by evidence, object_missing, ...).
   */
  walk?: MiningStats;
  /** Git source: the other registry folders this walk served (Magma's components), [] for one. */
  walk_shared_with?: string[];
}

const BOT_LOGIN = /\[bot\]$|^dependabot|^renovate|^github-actions/i;
/** Branches bots push (`dependabot/go_modules/...`). */
const BOT_BRANCH = /^(dependabot|renovate)\//i;

/**
 * True when `paths` belong to `entry` rather than to a sibling folder of the same repository: the
 * entry whose `path` holds the most changed lines wins; entries without `path` own everything.
 */
export function ownsChange(
  entry: RegistryEntry,
  siblingPaths: readonly string[],
  files: readonly { path: string; additions: number; deletions: number }[],
): boolean {
  if (!entry.path) return true;
  const under = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);
  const lines = (dir: string): number =>
    files.filter((f) => under(f.path, dir)).reduce((n, f) => n + f.additions + f.deletions + 1, 0);
  const mine = lines(entry.path);
  if (mine === 0) return false;
  return siblingPaths.every((p) => lines(p) < mine || (lines(p) === mine && entry.path! < p));
}

/** Where mirrors were looked for, and which clones failed (URL and git's message). */
function describeMirrors(ctx: Parameters<typeof mirrorsDir>[0], failures: CloneFailure[]): string {
  const conf = configuredMirrorsDir(ctx);
  if (conf) return `none found under ${conf} (swe5g.mining.mirrors_dir / $TELEBENCH_MIRRORS_DIR)`;
  return `no mirrors_dir is configured and cloning into ${mirrorsDir(ctx)} failed: ${groupFailures(failures)}`;
}

/**
 * Clone failures grouped by git's message with the URL and mirror path taken out, so 22
 * repositories behind one DNS failure read as one cause: `<url> unreachable: <cause>` for one,
 * `22 repositories unreachable (<first five URLs>, and 17 more): <cause>` for several.
 */
export function groupFailures(failures: readonly CloneFailure[]): string {
  const groups = new Map<string, string[]>();
  for (const f of failures) {
    const cause = f.message
      .split('\n')[0]!
      .split(f.url)
      .join('<url>')
      .replace(/^could not mirror <url> into \S+: /, '');
    groups.set(cause, [...(groups.get(cause) ?? []), f.url]);
  }
  return [...groups]
    .map(([cause, urls]) =>
      urls.length === 1
        ? `${urls[0]} unreachable: ${cause}`
        : `${urls.length} repositories unreachable (${urls.slice(0, 5).join(', ')}${urls.length > 5 ? `, and ${urls.length - 5} more` : ''}): ${cause}`,
    )
    .join('; ');
}

function logPartial(ctx: Parameters<typeof mirrorsDir>[0], failures: CloneFailure[]): void {
  for (const f of failures)
    ctx.log(`warning: could not clone ${f.url}; ${f.repo} is skipped this run: ${f.message}`);
}

export const swe5gMine = defineStage<MineInput, MineOutput, HasSwe5g>({
  name: 'swe5g.mine',
  // 3: whole-history walk, patch-id matching, object_missing (issue 21); 4: a merge of main into
  // a branch is never a PR's merge; closed-unmerged PRs landed by a hand rebase (API + mirror);
  // 5: git dates in UTC (`Z`), as the API's and the card's; 6: a `since` window keeps every commit
  // of a PR merged in it (mirror-source.ts `landedBefore`), whatever the commits' own dates
  version: 6,
  needs: [],
  description:
    'Lists merged PRs of each registry repository (GitHub REST, or a local git mirror) with base_commit, merge_commit and pr_head.',
  concurrency: (cfg) => swe5gSettings(cfg).mining.concurrency,

  async preflight(ctx) {
    const s = swe5gSettings(ctx.config);
    const entries = selectedEntries(ctx);
    for (const w of registryWarnings(entries)) ctx.log(`registry warning: ${w}`);
    if (s.source === 'git' || s.source === 'auto') {
      if (s.source === 'auto') {
        const probe = await probeApi(ctx);
        if (probe.usable) return;
      }
      // No mirrors folder configured: clone (or update) the registry's repositories into
      // <state>/mirrors from swe5g.environments.git_url_base.
      const failures = await cloneMirrors(ctx, entries);
      const withMirror = entries.filter((e) => mirrorOf(ctx, e) !== undefined);
      const where = describeMirrors(ctx, failures);
      const hint = mirrorHint(
        entries.filter((e) => mirrorOf(ctx, e) === undefined).map(githubRepoOf),
        gitUrlBase(ctx),
      );
      // entries share a repository (Magma's components are one repo with a path each)
      const repos = new Set(entries.map((e) => `${e.owner}/${e.name}`)).size;
      const selected = `${entries.length} selected registry entries${repos !== entries.length ? ` (${repos} git repositories)` : ''}`;
      if (s.source === 'git') {
        if (withMirror.length === 0)
          throw new PreflightError(
            'git mirrors',
            `swe5g.source is "git" but no mirror of the ${selected} is available: ${where}`,
            hint,
          );
        logPartial(ctx, failures);
        return;
      }
      const probe = await probeApi(ctx);
      if (withMirror.length === 0)
        throw new PreflightError(
          'github',
          `swe5g.source is "auto": the GitHub API is not usable (${probe.why}) and no git mirror of the ${selected} is available: ${where}`,
          `set GITHUB_TOKEN (or GITHUB_TOKENS) and make api.github.com reachable, or ${hint}`,
        );
      logPartial(ctx, failures);
      ctx.log(
        `GitHub API not usable (${probe.why}); mining ${withMirror.length}/${entries.length} repositories from git mirrors: ${withMirror.map((e) => e.id).join(', ')}`,
      );
      return;
    }
    const probe = await probeApi(ctx);
    if (!probe.usable)
      throw new PreflightError(
        'github',
        `swe5g.source is "api" but ${probe.why}`,
        'set GITHUB_TOKEN (or several tokens in GITHUB_TOKENS) and make the API reachable; or set swe5g.mining.github.allow_unauthenticated: true (60 requests/hour); or use swe5g.source: git with swe5g.mining.mirrors_dir',
      );
  },

  *plan(ctx) {
    const s = swe5gSettings(ctx.config);
    const entries = selectedEntries(ctx);
    const items: WorkItem<MineInput>[] = [];
    for (const entry of entries) {
      const sibling_paths = entries
        .filter((o) => o !== entry && githubRepoOf(o) === githubRepoOf(entry) && o.path)
        .map((o) => o.path!);
      const tipOf = (): string | null => {
        if (s.source === 'api') return null;
        const mirror = mirrorOf(ctx, entry);
        return mirror ? mirrorTip(mirror, entry.default_branch) : null;
      };
      items.push({
        key: entry.id,
        input: {
          entry,
          sibling_paths,
          source: s.source,
          since: s.mining.since ?? null,
          max_prs: s.mining.max_prs_per_repo,
          generation: s.mining.generation,
          tip: tipOf(),
        },
      });
    }
    yield* inRunOrder(ctx, items);
  },

  async run(item, ctx) {
    const { entry, source } = item.input;
    const mirror = mirrorOf(ctx, entry);
    let use: CandidateSource;
    if (source === 'api') use = 'api';
    else if (source === 'git') {
      if (!mirror)
        throw new SkipItem(
          'no_mirror',
          `no git mirror of ${githubRepoOf(entry)} under ${mirrorsDir(ctx)}`,
        );
      use = 'git';
    } else if ((await probeApi(ctx)).usable) use = 'api';
    else if (mirror) use = 'git';
    else
      throw new SkipItem(
        'no_source',
        `GitHub API not usable and no git mirror of ${githubRepoOf(entry)} under ${mirrorsDir(ctx)}`,
      );
    const out =
      use === 'api' ? await mineApi(item.input, ctx) : await mineGit(item.input, mirror!, ctx);
    for (const w of out.warnings ?? []) ctx.log(`swe5g.mine ${entry.id}: warning: ${w}`);
    // the link stage reads them over every window mined, not only this one (issue 32)
    recordClosedUnmerged(ctx.kv, entry.id, out.closed_unmerged);
    ctx.artifact(
      'mine-summary.json',
      JSON.stringify({
        prs: out.prs.length,
        unmerged: out.closed_unmerged.length,
        requests: out.requests,
        skipped_commits: out.skipped_commits?.length ?? 0,
        pull_refs: out.pull_refs ?? null,
        walk: out.walk ?? null,
      }),
      'application/json',
    );
    return out;
  },
});

function base(entry: RegistryEntry, n: number) {
  const repo = githubRepoOf(entry);
  return {
    instance_id: instanceIdOf(repo, n),
    alias: aliasOf(repo, n),
    repo,
    registry_id: entry.id,
    language: entry.language,
    nf: entry.nf,
    license: entry.license,
    pr_number: n,
  };
}

/** Key-value namespace of the diff facts (patch-id, changed files) by commit: objects never change. */
const DIFF_CACHE_NS = 'swe5g.git-diff';

/** The run's key-value store as a {@link DiffCache}. */
function diffCache(ctx: RunContext<HasSwe5g>): DiffCache {
  return {
    get: (k) => ctx.kv.get<DiffFacts>(DIFF_CACHE_NS, k),
    set: (k, v) => ctx.kv.set(DIFF_CACHE_NS, k, v),
  };
}

/**
 * The one walk of a repository's history in this run (issue 21: Magma's 12 registry folders are
 * one repository; each folder is a path filter over the same walk). Keyed by mirror, branch and
 * the options that change the matching.
 */
function sharedWalk(
  input: MineInput,
  gitDir: string,
  ctx: RunContext<HasSwe5g>,
): Promise<MirrorMining> {
  const { entry } = input;
  const issuesElsewhere = entry.issues_repo !== githubRepoOf(entry);
  const key = `swe5g.mirror-walk:${gitDir}:${entry.default_branch}:${issuesElsewhere}:${input.since ?? ''}`;
  return ctx.memo(key, () =>
    mineMirror(gitDir, {
      branch: entry.default_branch,
      issuesElsewhere,
      ...(input.since ? { since: new Date(input.since) } : {}),
      cache: diffCache(ctx),
    }),
  );
}

/** Git source: see pipeline/providers/git/mirror-source.ts. */
async function mineGit(
  input: MineInput,
  gitDir: string,
  ctx: RunContext<HasSwe5g>,
): Promise<MineOutput> {
  const { entry } = input;
  const repo = githubRepoOf(entry);
  const mined = await sharedWalk(input, gitDir, ctx);
  const prs: MinedPR[] = [];
  const seen = new Set<string>();
  const warnings: string[] = [];
  if (mined.pull_refs === 0)
    warnings.push(
      `the mirror ${gitDir} has no refs/pull/*: squash, rebase and manual merges cannot be told from direct pushes${entry.issues_repo === repo ? ' and "(#N)" subjects are read as issues' : ''}; make it with "git clone --mirror https://github.com/${repo}.git" (a plain --bare clone drops refs/pull/*) or fetch "+refs/pull/*:refs/pull/*"`,
    );
  let github = 0;
  for (const f of mined.prs) {
    if (!ownsChange(entry, input.sibling_paths, f.changed_files)) continue;
    if (!f.foreign_forge && input.max_prs > 0 && github >= input.max_prs) continue;
    const b = base(entry, f.number);
    if (f.foreign_forge) {
      // Another forge's PR number: never a GitHub instance id.
      b.instance_id = `${b.instance_id.replace(/-\d+$/, '')}-foreign${f.number}-${f.merge_commit.slice(0, 7)}`;
      b.alias = `${b.alias.replace(/_pr\d+$/, '')}_foreign${f.number}`;
    } else github++;
    if (seen.has(b.instance_id)) continue; // mineMirror already keeps one commit per PR number
    seen.add(b.instance_id);
    prs.push(fromGit(b, f));
  }
  // a folder reports the commits not taken that touch it (all of them for a whole repository)
  const skipped = mined.skipped.filter((c) => {
    const files = mined.files_of.get(c.commit);
    return !files || ownsChange(entry, input.sibling_paths, files);
  });
  const shared = selectedEntriesOfRepo(ctx, entry);
  return {
    registry_id: entry.id,
    repo,
    source: 'git',
    mirror: gitDir,
    prs,
    closed_unmerged: [],
    requests: { total: 0, not_modified: 0 },
    closing_references_error: null,
    skipped_commits: skipped,
    pull_refs: mined.pull_refs,
    max_pr_number: mined.max_pull_number,
    warnings,
    walk: mined.stats,
    walk_shared_with: shared,
  };
}

/** Ids of the other selected registry entries of `entry`'s repository. */
function selectedEntriesOfRepo(ctx: RunContext<HasSwe5g>, entry: RegistryEntry): string[] {
  return selectedEntries(ctx)
    .filter((o) => o.id !== entry.id && githubRepoOf(o) === githubRepoOf(entry))
    .map((o) => o.id);
}

function fromGit(b: ReturnType<typeof base>, f: GitMergedPR): MinedPR {
  return {
    ...b,
    merge_commit: f.merge_commit,
    base_commit: f.base_commit,
    pr_head: f.pr_head,
    merge_style: f.merge_style,
    landing: f.landing,
    landing_evidence: f.evidence,
    pr_title: f.title,
    pr_body: '',
    head_ref: f.head_ref,
    author: f.author,
    author_is_bot: BOT_LOGIN.test(f.author) || BOT_BRANCH.test(f.head_ref),
    commit_messages: f.commit_messages,
    changed_files: f.changed_files,
    created_at: f.first_commit_at,
    merged_at: f.merged_at,
    updated_at: f.merged_at,
    source: 'git',
    foreign_forge: f.foreign_forge,
    raw_blobs: [],
    closing_refs: [],
  };
}

/** API source: see pipeline/providers/github/pulls.ts for the request budget. */
async function mineApi(input: MineInput, ctx: RunContext<HasSwe5g>): Promise<MineOutput> {
  const { entry } = input;
  const s = swe5gSettings(ctx.config);
  const gh = githubClient(ctx);
  const before = { ...gh.stats };
  const perPage = s.mining.github.per_page;
  let closingError: string | null = null;
  const since = input.since ? new Date(input.since) : undefined;
  const listed = await listClosedPulls(gh, entry.owner, entry.name, {
    base: entry.default_branch,
    ...(since ? { since } : {}),
    perPage,
    maxMerged: input.max_prs,
  });
  const need = new Set(
    listed.merged.map((p) => p.merge_commit_sha).filter((x): x is string => !!x),
  );
  const oldest = listed.merged.reduce<string | undefined>(
    (m, p) => (!m || (p.merged_at ?? m) < m ? (p.merged_at ?? m) : m),
    undefined,
  );
  const { parents, blobs: branchBlobs } = await branchParents(gh, entry.owner, entry.name, {
    branch: entry.default_branch,
    // Commits older than the oldest merge are not needed; a day of slack for clock skew.
    ...(oldest ? { since: new Date(Date.parse(oldest) - 86_400_000) } : {}),
    perPage,
    need,
  });
  let closing = new Map<number, string[]>();
  if (s.mining.github.closing_references) {
    try {
      closing = await closingReferences(
        gh,
        ctx.kv,
        entry.owner,
        entry.name,
        listed.merged.map((p) => ({ number: p.number, updated_at: p.updated_at })),
      );
    } catch (err) {
      // GraphQL is an extra source of evidence (e.g. absent on an old GitHub Enterprise): mining
      // goes on with the REST evidence, and the failure is recorded in the run log and output.
      if (!(err instanceof TelebenchError) || err.code !== 'github_graphql_failed') throw err;
      closingError = err.message;
      ctx.log(`swe5g.mine ${entry.id}: closing references unavailable: ${err.message}`, {
        code: err.code,
      });
    }
  }
  const limit = pLimit(4);
  const prs = await Promise.all(
    listed.merged.map((p) =>
      limit(async (): Promise<MinedPR | undefined> => {
        const sha = p.merge_commit_sha;
        if (!sha) return undefined;
        let ps = parents.get(sha);
        const raw = [...listed.blobs];
        if (!ps) {
          const c = await commitParents(gh, entry.owner, entry.name, sha);
          ps = c.parents;
          raw.push(c.blob);
        } else raw.push(...branchBlobs);
        const d = await pullDetails(gh, entry.owner, entry.name, p.number, perPage);
        raw.push(...d.blobs);
        const changed_files = d.files.map((f) => ({
          path: f.filename,
          additions: f.additions,
          deletions: f.deletions,
        }));
        if (!ownsChange(entry, input.sibling_paths, changed_files)) return undefined;
        return fromApi(
          base(entry, p.number),
          p,
          sha,
          ps,
          changed_files,
          d.commits.map((c) => c.commit.message),
          raw,
          closing.get(p.number) ?? [],
        );
      }),
    ),
  );
  const gitDir = mirrorOf(ctx, entry);
  const rebased =
    gitDir && listed.unmerged.length > 0
      ? rebasedLandings(input, listed.unmerged, await sharedWalk(input, gitDir, ctx))
      : [];
  const landed = new Set(rebased.map((r) => r.pr_number));
  return {
    registry_id: entry.id,
    repo: githubRepoOf(entry),
    source: 'api',
    mirror: rebased.length > 0 ? gitDir! : null,
    prs: [...prs.filter((x): x is MinedPR => x !== undefined), ...rebased],
    closed_unmerged: listed.unmerged
      .filter((p) => !landed.has(p.number))
      .map((p) => ({
        number: p.number,
        title: p.title,
        body: p.body ?? '',
        head_ref: p.head.ref,
      })),
    requests: {
      total: gh.stats.requests - before.requests,
      not_modified: gh.stats.notModified - before.notModified,
    },
    closing_references_error: closingError,
  };
}

/**
 * API source with a local mirror: PRs GitHub lists as closed without a merge whose head's
 * `git patch-id --stable` equals a commit of the default branch (a maintainer rebased or squashed
 * them by hand and pushed: GitHub cannot tell). The commit is the landing (`landing_evidence`
 * `patch_id` / `subject_patch_id`), the PR's own fields come from the API. Merged PRs keep
 * GitHub's `merge_commit_sha`.
 */
function rebasedLandings(
  input: MineInput,
  unmerged: readonly PullSimple[],
  walk: MirrorMining,
): MinedPR[] {
  const byNumber = new Map(
    walk.prs
      .filter(
        (f) => !f.foreign_forge && (f.evidence === 'patch_id' || f.evidence === 'subject_patch_id'),
      )
      .map((f) => [f.number, f]),
  );
  const out: MinedPR[] = [];
  for (const u of unmerged) {
    const f = byNumber.get(u.number);
    if (!f || f.pr_head !== u.head.sha) continue;
    if (!ownsChange(input.entry, input.sibling_paths, f.changed_files)) continue;
    const login = u.user?.login ?? '';
    out.push({
      ...fromGit(base(input.entry, u.number), f),
      landing: `GitHub closed the PR without a merge; ${f.landing}`,
      pr_title: u.title,
      pr_body: u.body ?? '',
      head_ref: u.head.ref,
      author: login,
      author_is_bot: u.user?.type === 'Bot' || BOT_LOGIN.test(login),
      created_at: u.created_at,
      updated_at: u.updated_at,
      source: 'api',
    });
  }
  return out;
}

function fromApi(
  b: ReturnType<typeof base>,
  p: PullSimple,
  merge: string,
  parents: string[],
  changed_files: MinedPR['changed_files'],
  commit_messages: string[],
  raw: string[],
  closing_refs: string[],
): MinedPR {
  const login = p.user?.login ?? '';
  return {
    ...b,
    merge_commit: merge,
    base_commit: parents[0] ?? '',
    pr_head: p.head.sha,
    merge_style: parents.length >= 2 ? 'merge' : 'squash',
    pr_title: p.title,
    pr_body: p.body ?? '',
    head_ref: p.head.ref,
    author: login,
    author_is_bot: p.user?.type === 'Bot' || BOT_LOGIN.test(login),
    commit_messages,
    changed_files,
    created_at: p.created_at,
    merged_at: p.merged_at ?? '',
    updated_at: p.updated_at,
    source: 'api',
    foreign_forge: false,
    raw_blobs: [...new Set(raw)],
    closing_refs,
  };
}
