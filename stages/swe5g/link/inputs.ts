/**
 * The inputs of `swe5g.link` items, computed in its plan: each PR's evidence (references in its
 * title, body, commits and branch, without those naming PRs of the repository) and the other PRs
 * referencing the same issues. Both read the repository's whole mined history (history.ts), so a
 * PR's input is the same in a whole-history run and in a refresh whose window starts at its
 * `merged_at` (issue 32).
 */
import type { LinkEvidence, MinedPR } from '../types.js';
import type { MineOutput, UnmergedPR } from '../mine/mine.js';
import type { IssuesData } from './issues-file.js';
import { refsInText, refsInBranch, mergeEvidence, LINK_CONFIDENCE } from './refs.js';
import { historyClosed, historyPrs, issuesRowsDigest } from './history.js';

/** Input of one link item: the PR and the evidence found in its texts (computed in plan). */
export interface LinkInput {
  pr: MinedPR;
  issues_repo: string;
  evidence: LinkEvidence[];
  /**
   * Other PRs (merged or closed) of the repository referencing one of this PR's issues, over the
   * whole history the state mined ({@link linkInputsOf}), not the current window.
   */
  other_prs: number[];
  min_link_confidence: number;
  /**
   * Git source with an issues file: the digest of the file's rows this PR's evidence names
   * ({@link issuesRowsDigest}), so a new file re-links the PRs whose issues it changes and no other;
   * null for the API source or without a file.
   */
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

/** What {@link linkInputsOf} reads besides the mining output. */
export interface LinkPlanContext {
  /** Where a bare `#N` of the entry's PRs is read (`RegistryEntry.issues_repo`). */
  issuesRepo: string;
  /** The entry's PRs earlier runs of the state linked (history.ts `linkedBefore`). */
  earlier: ReadonlyMap<string, MinedPR> | undefined;
  /** The entry's closed-unmerged PRs recorded by earlier minings (history.ts). */
  closed: readonly UnmergedPR[] | undefined;
  /** The issues file's rows (git source), or undefined without one. */
  issuesData: IssuesData | undefined;
  /** `swe5g.filter.min_link_confidence`: weaker evidence does not count for `other_prs`. */
  minConfidence: number;
  /** `swe5g.mining.generation`. */
  generation: number;
}

/**
 * The link inputs of the entry's whole history the state holds: the PRs of one `swe5g.mine`
 * output (in its order), then the ones earlier runs of the state linked that this output lacks
 * (a refresh mines only its window: the earlier windows' PRs stay planned with the input they were
 * linked with, so they stay done in every later stage instead of being orphaned, and `evaluate`
 * from the state, a release and the solver runs see them). Evidence and `other_prs` are computed
 * over that history (plus every closed-unmerged PR recorded), so they do not depend on the
 * mining window; git-only PRs take title and body from the issues file's PR rows when it has
 * them. Pure.
 */
export function linkInputsOf(output: MineOutput, c: LinkPlanContext): LinkInput[] {
  const override = (pr: MinedPR): MinedPR => {
    const row =
      pr.source === 'git' && !pr.foreign_forge
        ? c.issuesData?.pulls.get(`${pr.repo}#${pr.pr_number}`)
        : undefined;
    return row ? { ...pr, pr_title: row.title || pr.pr_title, pr_body: row.body } : pr;
  };
  const prs = output.prs.map(override);
  const history = historyPrs(
    prs,
    c.earlier && new Map([...c.earlier].map(([k, p]) => [k, override(p)])),
  );
  const closed = historyClosed(output.closed_unmerged, c.closed);
  const numbers = new Set([
    ...history.filter((p) => !p.foreign_forge).map((p) => p.pr_number),
    ...closed.map((p) => p.number),
  ]);
  const ownMax = output.max_pr_number ?? 0;
  const evidence = new Map<string, LinkEvidence[]>();
  const byIssue = new Map<string, Set<number>>();
  const note = (num: number, ev: LinkEvidence[]): void => {
    for (const e of ev) {
      if (e.confidence < c.minConfidence) continue;
      const set = byIssue.get(e.issue) ?? new Set<number>();
      set.add(num);
      byIssue.set(e.issue, set);
    }
  };
  for (const pr of history) {
    const ev = evidenceOf(pr, c.issuesRepo, numbers, ownMax);
    evidence.set(pr.instance_id, ev);
    if (!pr.foreign_forge) note(pr.pr_number, ev);
  }
  for (const u of closed) {
    const text = { pr_title: u.title, pr_body: u.body, head_ref: u.head_ref };
    const pr = { ...text, repo: output.repo, commit_messages: [], merge_commit: '' };
    note(u.number, evidenceOf(pr, c.issuesRepo, numbers, ownMax));
  }
  return history.map((pr) => {
    const ev = evidence.get(pr.instance_id) ?? [];
    const others = new Set<number>();
    for (const e of ev)
      for (const o of byIssue.get(e.issue) ?? []) if (o !== pr.pr_number) others.add(o);
    return {
      pr,
      issues_repo: c.issuesRepo,
      evidence: ev,
      other_prs: [...others].sort((a, b) => a - b),
      min_link_confidence: c.minConfidence,
      issues_from_digest:
        pr.source === 'git' && c.issuesData ? issuesRowsDigest(ev, c.issuesData.issues) : null,
      generation: c.generation,
    };
  });
}
