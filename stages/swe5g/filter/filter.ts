/**
 * `swe5g.filter`: one item per linked PR (key = instance_id). Keeps a {@link Candidate} or rejects
 * with a reason code (SkipItem), so `telebench status` shows the funnel by reason.
 *
 * Rules, in order (the first that fails is the reason):
 * 0. `not_selected`       `swe5g.instances` is set and does not list the PR (nor, with
 *                         `swe5g.selection: add`, did an earlier run of the state select it).
 * 1. `foreign_forge_pr`   `Merged in ... (pull request #N)`: another forge's PR, not a GitHub PR.
 * 2. `not_merged`         no merge_commit/base_commit.
 * 3. `bot_author`         the PR author is a bot (`[bot]`, type Bot, `filter.bot_authors`).
 * 4. `no_linked_issue`    no issue linked with confidence >= `filter.min_link_confidence`
 *                         (API source; git-only PRs are kept as incomplete when
 *                         `filter.keep_git_without_issue`).
 * 5. `issue_open`         `filter.require_closed_issue` and every linked issue is still open
 *                         (the paper mines closed issues; some stay open after their fix).
 * 6. `docs_or_ci_only`    only documentation / CI / dependency files changed.
 * 7. `no_source_change`   no non-test source file changed (paper: "source-modifying PRs").
 * 8. `too_many_files`     more than `filter.max_files` changed files.
 * 9. `too_many_lines`     more than `filter.max_changed_lines` changed lines.
 * 10. `unclear_issue`     paper: "clear descriptions": the issue bodies have fewer than
 *                         `filter.min_issue_body_words` words (only when the issue text is known).
 * SWE-Bench 5G paper, section "Pipeline", step (2).
 */
import { defineStage } from '../../../pipeline/stage.js';
import { inRunOrder } from '../run-order.js';
import { SkipItem } from '../../../pipeline/errors.js';
import { swe5gSettings, type FilterSettings, type HasSwe5g } from '../config.js';
import type { Candidate, LinkedPR } from '../types.js';
import { fileKind } from './files.js';
import { swe5gLink } from '../link/link.js';

/** Reason codes of the filter, in rule order. */
export const FILTER_REASONS = [
  'not_selected',
  'foreign_forge_pr',
  'not_merged',
  'bot_author',
  'no_linked_issue',
  'issue_open',
  'docs_or_ci_only',
  'no_source_change',
  'too_many_files',
  'too_many_lines',
  'unclear_issue',
] as const;
export type FilterReason = (typeof FILTER_REASONS)[number];

/** Outcome of {@link judge}: a kept candidate or a reason with a sentence. */
export type Verdict =
  { keep: true; candidate: Candidate } | { keep: false; reason: FilterReason; detail: string };

const words = (s: string): number => s.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;

/**
 * Applies the filter rules (listed in order with their reason codes in the module comment) to one
 * linked PR. Pure. Source: SWE-Bench 5G paper, automated pipeline, stage (2): "filter by quality
 * criteria including clear descriptions and source-modifying PRs" (rules `no_source_change` and
 * `unclear_issue`); `not_merged`, `no_linked_issue` and `issue_open` follow stage (1): "closed
 * issues with linked merged pull requests".
 * @param pr   the output of swe5g.link
 * @param rules the `swe5g.filter` settings
 * @throws SyntaxError when a `bot_authors` pattern is not a valid regular expression
 */
export function judge(pr: LinkedPR, rules: FilterSettings): Verdict {
  const no = (reason: FilterReason, detail: string): Verdict => ({ keep: false, reason, detail });
  if (pr.foreign_forge)
    return no(
      'foreign_forge_pr',
      `${pr.merge_commit.slice(0, 12)} is another forge's internal merge (pull request #${pr.pr_number} there), not a GitHub PR`,
    );
  if (!pr.merge_commit || !pr.base_commit)
    return no('not_merged', `PR #${pr.pr_number} has no merge commit with a parent`);
  const bots = rules.bot_authors.map((p) => new RegExp(p, 'i'));
  if (pr.author_is_bot || bots.some((b) => b.test(pr.author)))
    return no('bot_author', `PR #${pr.pr_number} is by the bot "${pr.author}"`);
  const issues = pr.issues;
  const linkedRefs = new Set(
    pr.links.filter((l) => l.confidence >= rules.min_link_confidence).map((l) => l.issue),
  );
  if (
    issues.length === 0 &&
    (pr.source === 'api' || linkedRefs.size === 0) &&
    !(pr.source === 'git' && rules.keep_git_without_issue)
  )
    return no(
      'no_linked_issue',
      `PR #${pr.pr_number}: no issue linked (evidence: ${pr.links.length === 0 ? 'none' : pr.links.map((l) => `${l.issue} ${l.kind}`).join(', ')})`,
    );
  if (rules.require_closed_issue && issues.length > 0 && issues.every((i) => i.state === 'open'))
    return no(
      'issue_open',
      `every linked issue is open: ${issues.map((i) => `${i.repo}#${i.number}`).join(', ')}`,
    );
  const kinds = pr.changed_files.map((f) => fileKind(f.path, pr.language));
  if (kinds.length > 0 && kinds.every((k) => k === 'docs' || k === 'ci' || k === 'deps'))
    return no(
      'docs_or_ci_only',
      `only documentation/CI/dependency files changed (${pr.changed_files.length})`,
    );
  if (!kinds.includes('source'))
    return no(
      'no_source_change',
      `no non-test source file changed (${pr.changed_files
        .map((f) => f.path)
        .slice(0, 5)
        .join(', ')})`,
    );
  if (pr.changed_files.length > rules.max_files)
    return no(
      'too_many_files',
      `${pr.changed_files.length} files changed (max_files ${rules.max_files})`,
    );
  const lines = pr.changed_files.reduce((n, f) => n + f.additions + f.deletions, 0);
  if (lines > rules.max_changed_lines)
    return no(
      'too_many_lines',
      `${lines} lines changed (max_changed_lines ${rules.max_changed_lines})`,
    );
  const withText = issues.filter((i) => i.title !== '' || i.body !== '');
  if (withText.length > 0) {
    const n = withText.reduce((m, i) => Math.max(m, words(i.body)), 0);
    if (n < rules.min_issue_body_words)
      return no(
        'unclear_issue',
        `the linked issue body has ${n} words (min_issue_body_words ${rules.min_issue_body_words})`,
      );
  }
  return { keep: true, candidate: toCandidate(pr, rules) };
}

/**
 * The Candidate record of a kept PR: problem_statement = title + blank line + body of each issue
 * with text (closed issues first); hints_text = the issue comments made before the merge.
 */
export function toCandidate(pr: LinkedPR, rules: FilterSettings): Candidate {
  const issues = [...pr.issues].sort(
    (a, b) => Number(b.state === 'closed') - Number(a.state === 'closed') || a.number - b.number,
  );
  const usable =
    rules.require_closed_issue && issues.some((i) => i.state === 'closed')
      ? issues.filter((i) => i.state === 'closed')
      : issues;
  const problem_statement = usable
    .filter((i) => i.title !== '' || i.body !== '')
    .map((i) => `${i.title}\n\n${i.body}`.trim())
    .join('\n\n');
  const hints_text = pr.issue_comments
    .filter((c) => !pr.merged_at || c.created_at < pr.merged_at)
    .map((c) => c.body.trim())
    .filter(Boolean)
    .join('\n\n');
  return {
    instance_id: pr.instance_id,
    alias: pr.alias,
    repo: pr.repo,
    registry_id: pr.registry_id,
    language: pr.language,
    nf: pr.nf,
    license: pr.license,
    pr_number: pr.pr_number,
    merge_commit: pr.merge_commit,
    base_commit: pr.base_commit,
    pr_head: pr.pr_head,
    issues,
    pr_title: pr.pr_title,
    pr_body: pr.pr_body,
    changed_files: pr.changed_files,
    created_at: pr.created_at,
    merged_at: pr.merged_at,
    problem_statement,
    hints_text,
    source: pr.source,
    incomplete: problem_statement === '',
    links: pr.links,
  };
}

/** Input of one filter item: the linked PR and the rules (so changed thresholds re-judge). */
export interface FilterInput {
  pr: LinkedPR;
  rules: FilterSettings;
  /**
   * Whether the PR is selected: `swe5g.instances` is unset or lists it, or (`swe5g.selection:
   * add`) an earlier run of this state selected it; with `selection: new` (a refresh), what an
   * earlier run decided for it, and true for a PR no earlier run filtered.
   */
  selected: boolean;
}

/** Whether a stored filter item was selected when it ran (inputs of both shapes: flag or list). */
function selectedBefore(input: unknown, key: string): boolean {
  const i = input as { selected?: boolean; instances?: string[] | null } | null;
  if (!i) return false;
  if (typeof i.selected === 'boolean') return i.selected;
  return i.instances === null || (Array.isArray(i.instances) && i.instances.includes(key));
}

export const swe5gFilter = defineStage<FilterInput, Candidate, HasSwe5g>({
  name: 'swe5g.filter',
  // 2: the input carries `selected` (the selection grows by default) instead of the whole list
  version: 2,
  needs: ['swe5g.link'],
  description:
    "Keeps PRs that meet the paper's criteria (clear issue, source-modifying) and the usual ones; every rejection has a reason code.",
  concurrency: () => 8,
  *plan(ctx) {
    const s = swe5gSettings(ctx.config);
    const listed = s.instances ? new Set(s.instances) : null;
    // what earlier runs of this state decided, by key (read for `add` with a list, and for `new`)
    const before = new Map<string, boolean>();
    if ((listed && s.selection === 'add') || s.selection === 'new')
      for (const r of ctx.store.items('swe5g.filter'))
        before.set(r.key, selectedBefore(r.input, r.key));
    const selectedOf = (key: string): boolean =>
      s.selection === 'new'
        ? (listed?.has(key) ?? false) || (before.get(key) ?? true)
        : listed === null || listed.has(key) || before.get(key) === true;
    yield* inRunOrder(
      ctx,
      [...ctx.store.outputs(swe5gLink)].map((o) => ({
        key: o.key,
        input: { pr: o.output, rules: s.filter, selected: selectedOf(o.key) },
      })),
    );
  },
  async run(item, ctx) {
    if (!item.input.selected)
      throw new SkipItem(
        'not_selected',
        `${item.key} is not in swe5g.instances (nor selected by an earlier run of this state${swe5gSettings(ctx.config).selection === 'new' ? ', which filtered it without selecting it' : ''})`,
      );
    const v = judge(item.input.pr, item.input.rules);
    if (!v.keep) throw new SkipItem(v.reason, v.detail, { pr_number: item.input.pr.pr_number });
    return v.candidate;
  },
});
