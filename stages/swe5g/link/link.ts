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
import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { defineStage, type WorkItem } from '../../../pipeline/stage.js';
import { inRunOrder } from '../run-order.js';
import { issueWithComments } from '../../../pipeline/providers/github/pulls.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import type { IssueComment, LinkedIssue, LinkedPR } from '../types.js';
import { issueConfidence } from './refs.js';
import { loadIssuesData } from './issues-file.js';
import { resolveCandidates } from './candidates.js';
import { githubClient } from '../mine/source.js';
import { selectedEntries } from '../mine/source.js';
import { swe5gMine, type UnmergedPR } from '../mine/mine.js';
import { CLOSED_UNMERGED_KV, linkedBefore } from './history.js';
import { linkInputsOf, type LinkInput } from './inputs.js';

export { evidenceOf, linkInputsOf, type LinkInput } from './inputs.js';

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
    const issuesData = issuesFile
      ? ctx.memo(`swe5g.issues_from:${issuesFile}`, () => loadIssuesData(issuesFile))
      : undefined;
    const issuesRepoOf = new Map(selectedEntries(ctx).map((e) => [e.id, e.issues_repo]));
    // issue 32: evidence and other_prs read the whole history the state mined, not the window
    const earlier = linkedBefore(ctx.store);
    const items: WorkItem<LinkInput>[] = [];
    for (const { output } of ctx.store.outputs(swe5gMine)) {
      const inputs = linkInputsOf(output, {
        issuesRepo: issuesRepoOf.get(output.registry_id) ?? output.repo,
        earlier: earlier.get(output.registry_id),
        closed: ctx.kv.get<UnmergedPR[]>(CLOSED_UNMERGED_KV, output.registry_id),
        issuesData,
        minConfidence: s.filter.min_link_confidence,
        generation: s.mining.generation,
      });
      for (const input of inputs) items.push({ key: input.pr.instance_id, input });
    }
    yield* inRunOrder(ctx, items);
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
