/**
 * Issue references in PR titles, bodies, commit messages and branch names, each recorded as
 * {@link LinkEvidence} with a confidence (issue 3, "Linking"):
 * - closing keywords (close/closes/closed, fix/fixes/fixed, resolve/resolves/resolved; GitHub docs
 *   "Linking a pull request to an issue using a keyword") before `#N`, `owner/repo#N` or a full
 *   issue URL: 0.9;
 * - the same references without a keyword (mentions): 0.5;
 * - a number in the head branch name (`fix/1079-reject-nia0`, `issue-12`): 0.3 (weak), pointing to
 *   the repository where issues are filed, only in an issue-like position (issue 16, "False
 *   links"); the link stage keeps it only when that issue exists there.
 *
 * A bare `#N` follows GitHub's rule (the PR's own repository) unless the issues are filed in
 * another repository (free5GC files them centrally in `free5gc/free5gc`): then it is read there,
 * with both candidates recorded when `#N` could also be in the PR's repository.
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
 * How a bare `#N` is read when the issues are filed in another repository than the PR's.
 * `ownMax`: the highest PR/issue number known in the PR's repository (a larger `#N` cannot be
 * there); `ownPrs`: PR numbers of the PR's repository (a bare reference to one of them is that PR,
 * GitHub's reading, and is dropped by {@link refsInText}'s caller).
 */
export interface BareRefContext {
  issuesRepo: string;
  ownMax: number;
  ownPrs: ReadonlySet<number>;
}

/**
 * Finds issue references in `text`.
 * @param text     PR title, body or a commit message
 * @param where    label stored with the evidence (`pr_body`, `commit:<sha>`)
 * @param ownRepo  `owner/name` a bare `#N` resolves to (GitHub's rule: the PR's repository)
 * @param bare     when the issues are filed in another repository: a bare `#N` that is not a known
 *   PR of `ownRepo` is read in `bare.issuesRepo`; above `bare.ownMax` it cannot be in `ownRepo`
 *   (`note` says so), else both candidates are recorded (`candidates`, `note`)
 * @returns evidence, one per distinct issue (the strongest kind wins), in order of appearance
 */
export function refsInText(
  text: string,
  where: string,
  ownRepo: string,
  bare?: BareRefContext,
): LinkEvidence[] {
  // "(pull request #N)" names a pull request (Bitbucket internal merges), never an issue.
  text = text.replace(/\bpull request #\d+/gi, '');
  const byIssue = new Map<string, LinkEvidence>();
  const keyed = new RegExp(`\\b${KEYWORD}\\s*:?\\s+${REF}`, 'gi');
  const bareRe = new RegExp(`(?:^|[^\\w/])${REF}`, 'gi');
  const add = (m: RegExpExecArray, kind: 'closing_keyword' | 'mention'): void => {
    const [, uo, un, un2, ro, rn, rnum] = m;
    let repo = uo ? `${uo}/${un}` : ro ? `${ro}/${rn}` : ownRepo;
    const num = Number(un2 ?? rnum);
    if (!Number.isFinite(num) || num <= 0) return;
    const extra: Pick<LinkEvidence, 'candidates' | 'note'> = {};
    if (!uo && !ro && bare && bare.issuesRepo !== ownRepo && !bare.ownPrs.has(num)) {
      repo = bare.issuesRepo;
      if (num > bare.ownMax)
        extra.note = `bare #${num} read in ${bare.issuesRepo} (issues_repo): ${ownRepo} has no #${num} (its highest known number is ${bare.ownMax})`;
      else {
        extra.note = `bare #${num} read in ${bare.issuesRepo} (issues_repo); it could also be ${ownRepo}#${num}`;
        extra.candidates = [`${bare.issuesRepo}#${num}`, `${ownRepo}#${num}`];
      }
    }
    const issue = `${repo}#${num}`;
    const prev = byIssue.get(issue);
    if (prev && prev.confidence >= LINK_CONFIDENCE[kind]) return;
    byIssue.set(issue, {
      kind,
      where,
      text: m[0].trim(),
      issue,
      confidence: LINK_CONFIDENCE[kind],
      ...extra,
    });
  };
  for (let m = keyed.exec(text); m; m = keyed.exec(text)) add(m, 'closing_keyword');
  for (let m = bareRe.exec(text); m; m = bareRe.exec(text)) add(m, 'mention');
  return [...byIssue.values()];
}

/** HTTP status codes, read as such in branch names that speak of HTTP (`fix/204-c-status-reply`). */
const HTTP_WORDS = /http|status|response|reply|code|rest|sbi/i;
/** Words after which a trailing number is not an issue (`patch-2`: GitHub's web edits, `pr-83`). */
const NOT_ISSUE_BEFORE =
  /^(patch|pr|pull|v|rc|release|part|step|phase|round|try|take|test|draft|backport|r)$/i;

/**
 * Issue number in a branch name, as weak evidence pointing to `issuesRepo`, only in an issue-like
 * position (issue 16, "False links"):
 * - after `issue`/`issues`/`gh`/`#` anywhere (`issue-1079`, `fix/issue587`, `refactor/x-#734`);
 * - the first token of the last path segment (`fix/1079-reject-nia0`, `fix/904`, `7-leak`);
 * - the last token of the last path segment after a word (`fix/nil-sqn-1037`), except after
 *   `patch`, `pr`, `v`, `rc`, ... (`patch-2`, `pr-83`).
 * Never: a number in the middle (`fix/correct-http-204-response`, `fix/smf-500-malformed`), with a
 * leading zero (`0103`), a year (1990-2100), a version (`v1.2`), another tracker's key
 * (`FR5GC-1250`), an HTTP status code in a branch that speaks of HTTP (`fix/204-c-status-reply`).
 * The link stage keeps the evidence only when the issue exists in `issuesRepo`.
 * @returns at most one evidence
 */
export function refsInBranch(branch: string, issuesRepo: string): LinkEvidence[] {
  if (!branch) return [];
  const segments = branch.split('/');
  const last = segments[segments.length - 1]!;
  let num: string | undefined;
  let position = '';
  const explicit = /(?:^|[/_-])(?:issues?|gh)[-_]?(\d{1,6})(?=$|[-_/])|#(\d{1,6})(?=$|[-_/])/i.exec(
    branch,
  );
  if (explicit) {
    num = explicit[1] ?? explicit[2];
    position = 'after "issue"/"#"';
  } else {
    // Skip a segment that is another tracker's key (`FR5GC-1250-dont-quit`).
    const tokens = /^[A-Z][A-Z0-9]+-\d/.test(last) ? [] : last.split(/[-_]/);
    if (tokens.length > 0 && /^\d{1,6}$/.test(tokens[0]!)) {
      num = tokens[0];
      position = 'first token of the last segment';
    } else if (
      tokens.length >= 2 &&
      /^\d{1,6}$/.test(tokens[tokens.length - 1]!) &&
      /^[A-Za-z][A-Za-z0-9]*$/.test(tokens[tokens.length - 2]!) &&
      !NOT_ISSUE_BEFORE.test(tokens[tokens.length - 2]!)
    ) {
      num = tokens[tokens.length - 1];
      position = 'last token of the last segment';
    }
  }
  if (num === undefined || /^0/.test(num)) return [];
  const n = Number(num);
  if (n <= 0 || (n >= 1990 && n <= 2100)) return [];
  if (n >= 100 && n <= 599 && HTTP_WORDS.test(branch)) return [];
  return [
    {
      kind: 'branch_name',
      where: `branch:${branch}`,
      text: branch,
      issue: `${issuesRepo}#${n}`,
      confidence: LINK_CONFIDENCE.branch_name,
      note: `number in an issue-like position (${position}); kept only if ${issuesRepo}#${n} exists`,
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
