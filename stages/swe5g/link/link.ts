/**
 * `swe5g.link`: one item per mined PR (key = instance_id). Collects every piece of evidence that
 * the PR fixes an issue (closing keywords and mentions in the PR title, body and every commit
 * message, incl. `owner/repo#N` and issue URLs; issue numbers in the branch name as weak
 * evidence), then fetches the issues (API source) or looks them up in `--issues-from` (git source),
 * with the comments made before the merge (for `hints_text`).
 *
 * Issue 3, "Linking". References to the PR itself and to other PRs of the repository are not
 * issues and are dropped; so are references the API answers as pull requests or 404.
 */
import { resolve, dirname, join } from 'node:path';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { sha256 } from '../../../pipeline/hash.js';
import { defineStage } from '../../../pipeline/stage.js';
import { issueWithComments } from '../../../pipeline/providers/github/pulls.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import type { IssueComment, LinkEvidence, LinkedIssue, LinkedPR, MinedPR } from '../types.js';
import {
  refsInText,
  refsInBranch,
  mergeEvidence,
  issueConfidence,
  LINK_CONFIDENCE,
} from './refs.js';
import { loadIssuesData } from './issues-file.js';
import { resolveCandidates } from './candidates.js';
import { githubClient } from '../mine/source.js';
import { selectedEntries } from '../mine/source.js';
import { swe5gMine } from '../mine/mine.js';

/** Input of one link item: the PR and the evidence found in its texts (computed in plan). */
export interface LinkInput {
  pr: MinedPR;
  issues_repo: string;
  evidence: LinkEvidence[];
  /** Other PRs (merged or closed) of the repository referencing one of this PR's issues. */
  other_prs: number[];
  min_link_confidence: number;
  /** sha256 of the `--issues-from` file (git source), so a new file re-links. */
  issues_from_digest: string | null;
  /** `swe5g.mining.generation`: a new generation checks the issues again (304 when unchanged). */
  generation: number;
}

/**
 * Evidence in a PR's title, body, commit messages and branch, without references to PRs of the
 * same repository (`prNumbers`, incl. the PR itself). When `issuesRepo` is not the PR's
 * repository, a bare `#N` is read in `issuesRepo` (see `refsInText`); `ownMax` is the highest
 * PR/issue number known in the PR's repository (default: the largest of `prNumbers`).
 */
export function evidenceOf(
  pr: Pick<
    MinedPR,
    'repo' | 'pr_title' | 'pr_body' | 'commit_messages' | 'head_ref' | 'merge_commit'
  > & { closing_refs?: string[] },
  issuesRepo: string,
  prNumbers: ReadonlySet<number>,
  ownMax?: number,
): LinkEvidence[] {
  const bare = {
    issuesRepo,
    ownMax: Math.max(ownMax ?? 0, 0, ...prNumbers),
    ownPrs: prNumbers,
  };
  const lists = [
    refsInText(pr.pr_title, 'pr_title', pr.repo, bare),
    refsInText(pr.pr_body, 'pr_body', pr.repo, bare),
    ...pr.commit_messages.map((m, i) => refsInText(m, `commit[${i}]`, pr.repo, bare)),
    refsInBranch(pr.head_ref, issuesRepo),
    (pr.closing_refs ?? []).map((issue) => ({
      kind: 'closing_reference' as const,
      where: 'graphql:closingIssuesReferences',
      text: issue,
      issue,
      confidence: LINK_CONFIDENCE.closing_reference,
    })),
  ];
  return mergeEvidence(lists).filter((e) => {
    const [repo, n] = e.issue.split('#');
    return !(repo === pr.repo && prNumbers.has(Number(n)));
  });
}

/**
 * Environment variable set by `telebench mine --issues-from FILE` (absolute path); it overrides
 * `swe5g.mining.issues_from`.
 */
export const ISSUES_FROM_ENV = 'TELEBENCH_ISSUES_FROM';

/**
 * Where a state keeps the issues file it was given with `telebench mine --issues-from FILE`
 * (a copy, so later `telebench run swe5g` commands in that state use it without the flag, and a
 * moved or edited original changes nothing until it is given again).
 */
export function keptIssuesFile(stateDir: string): string {
  return join(stateDir, 'inputs', 'issues-from.jsonl');
}

/**
 * Keeps `file` as the state's issues file ({@link keptIssuesFile}); written to a temporary name
 * and renamed, so a kill leaves the previous copy or the new one, never half a file.
 * @returns the kept copy's path
 */
export function keepIssuesFile(stateDir: string, file: string): string {
  const dest = keptIssuesFile(stateDir);
  mkdirSync(dirname(dest), { recursive: true });
  copyFileSync(file, `${dest}.tmp`);
  renameSync(`${dest}.tmp`, dest);
  return dest;
}

/**
 * Absolute path of the issues file: `TELEBENCH_ISSUES_FROM` (this command's `--issues-from`), else
 * the config key `swe5g.mining.issues_from`, else the copy the state keeps from an earlier
 * `telebench mine --issues-from` ({@link keptIssuesFile}), else undefined.
 */
export function issuesFromFile(
  configFile: string,
  configured: string | undefined,
  stateDir?: string,
): string | undefined {
  const env = process.env[ISSUES_FROM_ENV];
  if (env && env.trim() !== '') return resolve(env.trim());
  if (configured) return resolve(dirname(configFile), configured);
  if (stateDir && existsSync(keptIssuesFile(stateDir))) return keptIssuesFile(stateDir);
  return undefined;
}

export const swe5gLink = defineStage<LinkInput, LinkedPR, HasSwe5g>({
  name: 'swe5g.link',
  // 3: a bare #N with several candidate repositories takes the one the issue data holds
  version: 3,
  needs: ['swe5g.mine'],
  description:
    'Links each mined PR to the issues it fixes, with evidence and confidence; fetches issue text and prior comments.',
  concurrency: () => 4,

  *plan(ctx) {
    const s = swe5gSettings(ctx.config);
    const issuesFile = issuesFromFile(ctx.configFile, s.mining.issues_from, ctx.stateDir);
    const issuesDigest =
      issuesFile && existsSync(issuesFile) ? sha256(readFileSync(issuesFile)) : null;
    const issuesData = issuesFile
      ? ctx.memo(`swe5g.issues_from:${issuesFile}`, () => loadIssuesData(issuesFile))
      : undefined;
    const issuesRepoOf = new Map(selectedEntries(ctx).map((e) => [e.id, e.issues_repo]));
    let n = 0;
    for (const { output } of ctx.store.outputs(swe5gMine)) {
      const issuesRepo = issuesRepoOf.get(output.registry_id) ?? output.repo;
      const numbers = new Set([
        ...output.prs.filter((p) => !p.foreign_forge).map((p) => p.pr_number),
        ...output.closed_unmerged.map((p) => p.number),
      ]);
      const ownMax = output.max_pr_number ?? 0;
      const evidence = new Map<string, LinkEvidence[]>();
      const byIssue = new Map<string, Set<number>>();
      const note = (num: number, ev: LinkEvidence[]): void => {
        for (const e of ev) {
          if (e.confidence < s.filter.min_link_confidence) continue;
          const set = byIssue.get(e.issue) ?? new Set<number>();
          set.add(num);
          byIssue.set(e.issue, set);
        }
      };
      // Git-only PRs: title and body from PR rows of the issues file, when it has them.
      const prs = output.prs.map((pr) => {
        const row =
          pr.source === 'git' && !pr.foreign_forge
            ? issuesData?.pulls.get(`${pr.repo}#${pr.pr_number}`)
            : undefined;
        return row ? { ...pr, pr_title: row.title || pr.pr_title, pr_body: row.body } : pr;
      });
      for (const pr of prs) {
        const ev = evidenceOf(pr, issuesRepo, numbers, ownMax);
        evidence.set(pr.instance_id, ev);
        if (!pr.foreign_forge) note(pr.pr_number, ev);
      }
      for (const u of output.closed_unmerged) {
        note(
          u.number,
          evidenceOf(
            {
              repo: output.repo,
              pr_title: u.title,
              pr_body: u.body,
              commit_messages: [],
              head_ref: u.head_ref,
              merge_commit: '',
            },
            issuesRepo,
            numbers,
            ownMax,
          ),
        );
      }
      for (const pr of prs) {
        if (ctx.limit !== undefined && n >= ctx.limit) return;
        n++;
        const ev = evidence.get(pr.instance_id) ?? [];
        const others = new Set<number>();
        for (const e of ev)
          for (const o of byIssue.get(e.issue) ?? []) if (o !== pr.pr_number) others.add(o);
        yield {
          key: pr.instance_id,
          input: {
            pr,
            issues_repo: issuesRepo,
            evidence: ev,
            other_prs: [...others].sort((a, b) => a - b),
            min_link_confidence: s.filter.min_link_confidence,
            issues_from_digest: pr.source === 'git' ? issuesDigest : null,
            generation: s.mining.generation,
          },
        };
      }
    }
  },

  async run(item, ctx) {
    const { pr } = item.input;
    const s = swe5gSettings(ctx.config);
    const gh = pr.source === 'api' ? githubClient(ctx) : undefined;
    const fetchIssue = (key: string) => {
      const [repo, num] = key.split('#');
      // One fetch per issue and run, however many PRs reference it.
      return ctx.memo(`swe5g.issue:${key}`, () =>
        issueWithComments(gh!, repo!, Number(num), s.mining.github.per_page),
      );
    };
    const file = issuesFromFile(ctx.configFile, s.mining.issues_from, ctx.stateDir);
    const known =
      pr.source === 'api' || !file
        ? new Map<string, LinkedIssue>()
        : ctx.memo(`swe5g.issues_from:${file}`, () => loadIssuesData(file)).issues;
    // a bare #N with several candidate repositories: the one the issue data holds
    const evidence =
      pr.source === 'api'
        ? await resolveCandidates(
            item.input.evidence,
            async (k) => {
              const r = await fetchIssue(k);
              return !!r && !r.issue.pull_request;
            },
            'the GitHub API',
          )
        : file
          ? await resolveCandidates(
              item.input.evidence,
              (k) => Promise.resolve(known.has(k)),
              'the issues file',
            )
          : item.input.evidence;
    const wanted = [...issueConfidence(evidence)]
      .filter(([, c]) => c >= item.input.min_link_confidence)
      .map(([k]) => k);
    const issues: LinkedIssue[] = [];
    const comments: IssueComment[] = [];
    if (pr.source === 'api') {
      for (const key of wanted) {
        const [repo] = key.split('#');
        const r = await fetchIssue(key);
        if (!r) continue; // 404: not an issue (recorded: the evidence stays, the issue does not)
        if (r.issue.pull_request) continue; // a pull request, not an issue
        issues.push({
          repo: repo!,
          number: r.issue.number,
          title: r.issue.title,
          body: r.issue.body ?? '',
          labels: r.issue.labels
            .map((l) => (typeof l === 'string' ? l : (l.name ?? '')))
            .filter(Boolean),
          state: r.issue.state === 'closed' ? 'closed' : 'open',
          created_at: r.issue.created_at,
        });
        for (const c of r.comments) {
          if (pr.merged_at && c.created_at >= pr.merged_at) continue;
          comments.push({
            issue: key,
            author: c.user?.login ?? '',
            created_at: c.created_at,
            body: c.body ?? '',
          });
        }
      }
    } else {
      for (const key of wanted) {
        const found = known.get(key);
        if (found) {
          issues.push(found);
        }
      }
    }
    // A branch-name number counts only when its issue exists (fetched, or in the issues file) or
    // other evidence names the same issue (issue 16, "False links").
    const confirmed = new Set([
      ...issues.map((i) => `${i.repo}#${i.number}`),
      ...evidence.filter((e) => e.kind !== 'branch_name').map((e) => e.issue),
    ]);
    const why =
      pr.source === 'api'
        ? 'GitHub has no such issue (404 or a pull request)'
        : issuesFromFile(ctx.configFile, s.mining.issues_from, ctx.stateDir)
          ? 'not in the issues file'
          : 'no issue data to confirm it (git source without --issues-from)';
    const links = evidence.filter((e) => e.kind !== 'branch_name' || confirmed.has(e.issue));
    const unconfirmed = evidence
      .filter((e) => e.kind === 'branch_name' && !confirmed.has(e.issue))
      .map((e) => ({ ...e, note: `${e.note ? `${e.note}; ` : ''}not kept: ${why}` }));
    return {
      ...pr,
      issues,
      links,
      ...(unconfirmed.length > 0 ? { unconfirmed_links: unconfirmed } : {}),
      other_prs: item.input.other_prs,
      issue_comments: comments,
    };
  },
});
