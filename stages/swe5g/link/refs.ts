/**
 * Issue references in PR titles, bodies, commit messages and branch names, each recorded as
 * {@link LinkEvidence} with a confidence (issue 3, "Linking"):
 * - closing keywords (close/closes/closed, fix/fixes/fixed, resolve/resolves/resolved; GitHub docs
 *   "Linking a pull request to an issue using a keyword") before `#N`, `owner/repo#N` or a full
 *   issue URL: 0.9;
 * - the same references without a keyword (mentions): 0.5;
 * - a number in the head branch name (`fix/1079-reject-nia0`, `issue-12`): 0.3 (weak), pointing to
 *   the repository where issues are filed.
 */
import type { LinkEvidence } from '../types.js';

/** Confidence per evidence kind. */
export const LINK_CONFIDENCE = {
  closing_reference: 1.0,
  closing_keyword: 0.9,
  mention: 0.5,
  branch_name: 0.3,
} as const;

const KEYWORD = '(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)';
const REF =
  '(?:https?://github\\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/issues/(\\d+)|(?:([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+))?#(\\d+))';

/**
 * Finds issue references in `text`.
 * @param text     PR title, body or a commit message
 * @param where    label stored with the evidence (`pr_body`, `commit:<sha>`)
 * @param ownRepo  `owner/name` a bare `#N` resolves to (GitHub's rule: the PR's repository)
 * @returns evidence, one per distinct issue (the strongest kind wins), in order of appearance
 */
export function refsInText(text: string, where: string, ownRepo: string): LinkEvidence[] {
  // "(pull request #N)" names a pull request (Bitbucket internal merges), never an issue.
  text = text.replace(/\bpull request #\d+/gi, '');
  const byIssue = new Map<string, LinkEvidence>();
  const keyed = new RegExp(`\\b${KEYWORD}\\s*:?\\s+${REF}`, 'gi');
  const bare = new RegExp(`(?:^|[^\\w/])${REF}`, 'gi');
  const add = (m: RegExpExecArray, kind: 'closing_keyword' | 'mention'): void => {
    const [, uo, un, un2, ro, rn, rnum] = m;
    const repo = uo ? `${uo}/${un}` : ro ? `${ro}/${rn}` : ownRepo;
    const num = Number(un2 ?? rnum);
    if (!Number.isFinite(num) || num <= 0) return;
    const issue = `${repo}#${num}`;
    const prev = byIssue.get(issue);
    if (prev && prev.confidence >= LINK_CONFIDENCE[kind]) return;
    byIssue.set(issue, {
      kind,
      where,
      text: m[0].trim(),
      issue,
      confidence: LINK_CONFIDENCE[kind],
    });
  };
  for (let m = keyed.exec(text); m; m = keyed.exec(text)) add(m, 'closing_keyword');
  for (let m = bare.exec(text); m; m = bare.exec(text)) add(m, 'mention');
  return [...byIssue.values()];
}

/**
 * Issue number in a branch name (`fix/1079-reject-nia0`, `issue-12`, `bugfix/#88`), as weak
 * evidence pointing to `issuesRepo`. Numbers that look like versions or years (`v1.2`, `2024`) and
 * other trackers' keys (`FR5GC-1250`) are ignored.
 * @returns at most one evidence
 */
export function refsInBranch(branch: string, issuesRepo: string): LinkEvidence[] {
  if (!branch) return [];
  const re = /(?:^|[/_-])(?:issues?[-_]?|#)?(\d{1,6})(?=$|[-_/])/gi;
  let m: RegExpExecArray | null;
  // Skip tracker keys of other systems (`FR5GC-1250`, `JIRA-12`): uppercase key, dash, number.
  do m = re.exec(branch);
  while (m && /[A-Z][A-Z0-9]+-$/.test(branch.slice(0, m.index + 1)));
  if (!m) return [];
  const num = Number(m[1]);
  if (num <= 0 || (num >= 1990 && num <= 2100)) return [];
  if (/v\d/i.test(branch.slice(Math.max(0, m.index - 1), m.index + 2))) return [];
  return [
    {
      kind: 'branch_name',
      where: `branch:${branch}`,
      text: branch,
      issue: `${issuesRepo}#${num}`,
      confidence: LINK_CONFIDENCE.branch_name,
    },
  ];
}

/**
 * Merges evidence lists: one entry per (issue, where), keeping every source of evidence so the
 * record shows all of it; sorted by confidence, strongest first.
 */
export function mergeEvidence(lists: readonly LinkEvidence[][]): LinkEvidence[] {
  const seen = new Set<string>();
  const out: LinkEvidence[] = [];
  for (const list of lists)
    for (const e of list) {
      const k = `${e.issue} ${e.where} ${e.kind}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(e);
    }
  return out.sort((a, b) => b.confidence - a.confidence);
}

/** Best confidence per issue (`owner/name#N` -> confidence). */
export function issueConfidence(evidence: readonly LinkEvidence[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of evidence) m.set(e.issue, Math.max(m.get(e.issue) ?? 0, e.confidence));
  return m;
}
