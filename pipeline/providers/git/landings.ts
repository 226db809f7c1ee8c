/**
 * Which pull request each commit of the default branch lands, by the best evidence (issue 21,
 * "Mining over the whole history"). Pure: reads the walked history, the `refs/pull/N/head` refs
 * and the patch-ids that `mirror-source.ts` gathered; runs no git.
 *
 * Evidence, strongest first (`LandingEvidence`):
 * 1. `merge_subject`: a merge commit `Merge pull request #N from ...` (GitHub's merge button).
 * 2. `merged_pr_head`: a merge commit whose second parent is `refs/pull/M/head` (a merge made
 *    outside GitHub); `pr_head`: the commit itself is `refs/pull/M/head` (rebase or fast-forward).
 * 3. `patch_id`: `git patch-id --stable` of the commit equals that of PR M's head commit or of the
 *    PR's whole change (fork point..head): a maintainer rebased or squashed the PR (new hash, same
 *    patch). `subject_patch_id`: the same, and the subject's `(#M)` names that PR.
 * 4. `squash_subject`: `(#N)` with `refs/pull/N/head` whose patch differs, only where issues are
 *    filed in another repository (then `#N` of this repository can only be a PR);
 *    `squash_subject_no_ref`: the same without a ref (free5GC NF repositories).
 * Where issues are filed in the same repository (Open5GS), a `(#N)` subject alone never makes the
 * commit PR N's: `(#N)` names an issue, or (with a ref whose patch differs) a PR the commit refers to.
 * One commit is one candidate; one PR has one landing: the strongest evidence, then the oldest
 * commit. Commits inside a merged PR (reachable from the merge's second parent, not its first) are
 * that PR's own commits, never candidates.
 */

/** One commit of the walked history. Dates are ISO 8601. */
export interface WalkCommit {
  sha: string;
  parents: string[];
  author: string;
  authored_at: string;
  committed_at: string;
  message: string;
  subject: string;
  /** Position in the walk (0 = newest; git's `--date-order`, parents after children). */
  order: number;
}

/** How a landing was matched to its PR (strongest first, see the module comment). */
export type LandingEvidence =
  | 'merge_subject'
  | 'merged_pr_head'
  | 'pr_head'
  | 'subject_patch_id'
  | 'patch_id'
  | 'squash_subject'
  | 'squash_subject_no_ref'
  | 'foreign_forge'
  /** `(#N)` with a ref whose patch differs, issues filed here: never wins, only loses to N's landing. */
  | 'subject_reference';

const STRENGTH: Record<LandingEvidence, number> = {
  merge_subject: 6,
  foreign_forge: 6,
  merged_pr_head: 5,
  pr_head: 5,
  subject_patch_id: 4,
  patch_id: 3,
  squash_subject: 2,
  squash_subject_no_ref: 1,
  subject_reference: 0,
};

/** Why a commit that looks like a landing was not taken. */
export type SkipReason =
  /** `(#N)` names an issue: issues are filed in this repository and no `refs/pull/N/head` exists. */
  | 'issue_number_in_subject'
  /** `(#N)` has a `refs/pull/N/head` but its patch differs, issues filed here: a reference. */
  | 'subject_patch_mismatch'
  /** A later commit naming (or matching) a PR that already landed: a follow-up/backport. */
  | 'follow_up'
  /** An older commit with weaker evidence for a PR whose landing is a later commit. */
  | 'pr_landed_elsewhere'
  /** The PR's head was already in the base's history: the commit is not that PR's landing. */
  | 'pr_head_already_merged'
  /** Also `refs/pull/M/head`, but `(#N)` has its own `refs/pull/N/head`: N's squash, not M's. */
  | 'head_of_later_pr'
  /** The commit's diff needs an object the mirror lacks (detail: commit, path, object). */
  | 'object_missing';

/** A commit not taken as a landing, with the reason. */
export interface SkippedCommit {
  commit: string;
  subject: string;
  reason: SkipReason;
  detail: string;
}

/** What the history says of one PR's landing (the mined record, `GitMergedPR`, adds to it). */
export interface LandingFacts {
  /** GitHub PR number, or the foreign forge's number when `foreign_forge`. */
  number: number;
  base_commit: string;
  /** Second parent (merge) or `refs/pull/N/head`; null when neither is known. */
  pr_head: string | null;
  /** `rebase`: the PR's own head commit is on the branch (rebase or fast-forward merge). */
  merge_style: 'merge' | 'squash' | 'rebase';
  foreign_forge: boolean;
  /** The evidence that matched the commit to PR `number`. */
  evidence: LandingEvidence;
  /** Why this commit is read as the landing of PR `number` (shown in the mining report). */
  landing: string;
  /** PR title when the history carries it (merge: second paragraph; squash: subject without `(#N)`). */
  title: string;
  /** Head branch (`fix/1079-reject-nia0`) from `Merge pull request #N from owner/branch`, else ''. */
  head_ref: string;
  /** Fork owner login from the merge subject, else the author name of the PR's last commit. */
  author: string;
}

/** A commit read as PR `number`'s landing, before its files and messages are added. */
export interface LandingMatch extends LandingFacts {
  commit: WalkCommit;
}

/** What {@link matchLandings} reads. */
export interface LandingInputs {
  /** Every walked commit, newest first. */
  commits: readonly WalkCommit[];
  /** PR number -> `refs/pull/N/head`. */
  pullHeads: ReadonlyMap<number, string>;
  /** Commit -> patch-id (landing candidates' own diff against their first parent). */
  patchIdOf: ReadonlyMap<string, string>;
  /** Patch-id -> PRs whose head commit or whole change has it. */
  prsByPatchId: ReadonlyMap<string, readonly number[]>;
  /** PR number -> first parent of its head commit (when the mirror has it). */
  headParentOf: ReadonlyMap<number, string>;
  /** Commits inside a merged PR (not candidates). */
  inside: ReadonlySet<string>;
  /** True when `#N` of this repository cannot be an issue (issues are filed elsewhere). */
  issuesElsewhere: boolean;
}

const MERGE_RE = /^Merge pull request #(\d+) from (\S+)/;
const SQUASH_RE = /\(#(\d+)\)\s*$/;
const FOREIGN_RE = /^Merged in (\S+) \(pull request #(\d+)\)/;

/** True for a commit `Merged in branch (pull request #N)` (another forge's internal merge). */
export function isForeignMerge(subject: string): boolean {
  return FOREIGN_RE.test(subject);
}

/**
 * `Merge branch 'main' into feature`: the default branch merged into another branch; its second
 * parent is the old default-branch line (whose tip may be a PR head), never a PR's own commits.
 */
const DEFAULT_INTO_RE = /^Merge (?:remote-tracking )?branch '(?:[\w.-]+\/)?(?:main|master)'/;

/** True for a merge landing whose second parent's commits are the PR's own (GitHub, foreign, PR head). */
export function isPrMerge(c: WalkCommit, headsAt: ReadonlyMap<string, number[]>): boolean {
  return (
    c.parents.length >= 2 &&
    (MERGE_RE.test(c.subject) ||
      FOREIGN_RE.test(c.subject) ||
      (headsAt.has(c.parents[1]!) && !DEFAULT_INTO_RE.test(c.subject)))
  );
}

/** Head commit -> PR numbers whose `refs/pull/N/head` it is (lowest first). */
export function headsAtOf(pullHeads: ReadonlyMap<number, string>): Map<string, number[]> {
  const at = new Map<string, number[]>();
  for (const [n, sha] of [...pullHeads].sort((a, b) => a[0] - b[0]))
    at.set(sha, [...(at.get(sha) ?? []), n]);
  return at;
}

/** The one match (or skip) of one commit by the rules of the module comment. */
function matchCommit(
  c: WalkCommit,
  inp: LandingInputs,
  headsAt: ReadonlyMap<string, number[]>,
  skipped: SkippedCommit[],
): LandingMatch | undefined {
  const parents = c.parents;
  const base = {
    commit: c,
    base_commit: parents[0] ?? c.sha,
    foreign_forge: false,
    head_ref: '',
    author: c.author,
    title: c.subject,
  };
  const merge = MERGE_RE.exec(c.subject);
  if (merge && parents.length >= 2) {
    const n = Number(merge[1]);
    const from = merge[2]!;
    const slash = from.indexOf('/');
    return {
      ...base,
      number: n,
      pr_head: parents[1]!,
      merge_style: 'merge',
      evidence: 'merge_subject',
      landing: `merge commit "Merge pull request #${n}"`,
      title: (c.message.split(/\n\s*\n/)[1] ?? '').trim().split('\n')[0] ?? '',
      head_ref: slash >= 0 ? from.slice(slash + 1) : from,
      author: slash >= 0 ? from.slice(0, slash) : '',
    };
  }
  const foreign = FOREIGN_RE.exec(c.subject);
  if (foreign) {
    const n = Number(foreign[2]);
    return {
      ...base,
      number: n,
      pr_head: parents[1] ?? null,
      merge_style: parents.length >= 2 ? 'merge' : 'squash',
      foreign_forge: true,
      evidence: 'foreign_forge',
      landing: `another forge's internal merge "(pull request #${n})"`,
      head_ref: foreign[1]!,
    };
  }
  if (parents.length >= 2) {
    const m = isPrMerge(c, headsAt) ? headsAt.get(parents[1]!)?.[0] : undefined;
    if (m === undefined) return undefined; // `Merge branch 'main' into x`: not a landing
    return {
      ...base,
      number: m,
      pr_head: parents[1]!,
      merge_style: 'merge',
      evidence: 'merged_pr_head',
      landing: `merge commit whose second parent is refs/pull/${m}/head`,
    };
  }
  if (parents.length !== 1) return undefined;
  const squash = SQUASH_RE.exec(c.subject);
  const n = squash ? Number(squash[1]) : undefined;
  const pid = inp.patchIdOf.get(c.sha);
  const samePatch = pid ? (inp.prsByPatchId.get(pid) ?? []) : [];
  const title = squash ? c.subject.replace(SQUASH_RE, '').trim() : c.subject;
  const headOf = headsAt.get(c.sha)?.[0];
  if (headOf !== undefined) {
    // The commit is PR M's own head. A (#N) with its own ref is N's squash when the patches agree
    // (or, issues filed elsewhere, when N can only be a PR): M was opened later on top of it.
    const nIsPr = n !== undefined && n !== headOf && inp.pullHeads.has(n);
    if (nIsPr && (inp.issuesElsewhere || samePatch.includes(n))) {
      skipped.push({
        commit: c.sha,
        subject: c.subject,
        reason: 'head_of_later_pr',
        detail: `also refs/pull/${headOf}/head, but (#${n}) has its own refs/pull/${n}/head: PR ${n}'s squash`,
      });
      return {
        ...base,
        number: n,
        pr_head: inp.pullHeads.get(n)!,
        merge_style: 'squash',
        evidence: samePatch.includes(n) ? 'subject_patch_id' : 'squash_subject',
        landing: `squash subject "(#${n})" with refs/pull/${n}/head${samePatch.includes(n) ? ' of the same patch-id' : ''}`,
        title,
      };
    }
    return {
      ...base,
      number: headOf,
      pr_head: c.sha,
      merge_style: 'rebase',
      evidence: 'pr_head',
      landing: `the commit is refs/pull/${headOf}/head (rebase or fast-forward merge)${squash ? `; "(#${squash[1]})" in its subject is read as a reference, not the PR` : ''}`,
    };
  }
  if (samePatch.length > 0) {
    const chosen = n !== undefined && samePatch.includes(n) ? n : pickByPatch(c, samePatch, inp);
    const others = samePatch.filter((x) => x !== chosen);
    const head = inp.pullHeads.get(chosen)!;
    const byName = chosen === n;
    return {
      ...base,
      number: chosen,
      pr_head: head,
      merge_style: 'squash',
      evidence: byName ? 'subject_patch_id' : 'patch_id',
      landing: `${byName ? `squash subject "(#${n})" and ` : ''}git patch-id --stable equal to refs/pull/${chosen}/head's (maintainer rebase or squash)${squash && !byName ? `; "(#${squash[1]})" in its subject is read as a reference` : ''}${others.length > 0 ? `; PRs ${others.join(', ')} have the same patch` : ''}`,
      title,
    };
  }
  if (n === undefined) return undefined;
  if (inp.pullHeads.has(n)) {
    if (!inp.issuesElsewhere)
      return {
        ...base,
        number: n,
        pr_head: inp.pullHeads.get(n)!,
        merge_style: 'squash',
        evidence: 'subject_reference',
        landing: `(#${n}) has refs/pull/${n}/head, but its patch-id differs from the commit's: read as a reference (issues are filed in this repository)`,
        title,
      };
    return {
      ...base,
      number: n,
      pr_head: inp.pullHeads.get(n)!,
      merge_style: 'squash',
      evidence: 'squash_subject',
      landing: `squash subject "(#${n})" with refs/pull/${n}/head (issues are filed in another repository)`,
      title,
    };
  }
  if (!inp.issuesElsewhere) {
    skipped.push({
      commit: c.sha,
      subject: c.subject,
      reason: 'issue_number_in_subject',
      detail: `(#${n}) names an issue: issues are filed in this repository and the mirror has no refs/pull/${n}/head`,
    });
    return undefined;
  }
  return {
    ...base,
    number: n,
    pr_head: null,
    merge_style: 'squash',
    evidence: 'squash_subject_no_ref',
    landing: `squash subject "(#${n})" read as the PR: issues are filed in another repository; no refs/pull/${n}/head in the mirror`,
    title,
  };
}

/**
 * Several PRs with the commit's patch: the PR whose head has the commit's parent, else the
 * highest-numbered (the latest opened: a PR re-opened from the same branch).
 */
function pickByPatch(c: WalkCommit, prs: readonly number[], inp: LandingInputs): number {
  const sameParent = prs.filter((p) => inp.headParentOf.get(p) === c.parents[0]);
  return Math.max(...(sameParent.length > 0 ? sameParent : prs));
}

/**
 * Matches every walked commit that is not inside a merged PR.
 * @returns the landings (one per PR number and forge, newest first) and the commits not taken,
 *   each with its reason
 */
export function matchLandings(inp: LandingInputs): {
  landings: LandingMatch[];
  skipped: SkippedCommit[];
} {
  const headsAt = headsAtOf(inp.pullHeads);
  const skipped: SkippedCommit[] = [];
  const found: LandingMatch[] = [];
  for (const c of inp.commits) {
    if (inp.inside.has(c.sha)) continue;
    const m = matchCommit(c, inp, headsAt, skipped);
    if (m) found.push(m);
  }
  // A squash whose PR head is already in its base's history re-lands a merged PR: like a
  // `(#N)` reference, it never wins, it only loses to the PR's real landing.
  const bySha = new Map(inp.commits.map((c) => [c.sha, c]));
  const relands = (m: LandingMatch): boolean =>
    m.merge_style === 'squash' &&
    !m.foreign_forge &&
    m.pr_head !== null &&
    bySha.has(m.pr_head) &&
    ancestors(bySha, m.base_commit).has(m.pr_head);
  const eligible = new Set(found.filter((m) => m.evidence !== 'subject_reference' && !relands(m)));
  const best = new Map<string, LandingMatch>();
  const key = (m: LandingMatch): string => `${m.foreign_forge ? 'foreign' : 'github'}#${m.number}`;
  for (const m of eligible) {
    const b = best.get(key(m));
    const stronger =
      !b ||
      STRENGTH[m.evidence] > STRENGTH[b.evidence] ||
      (STRENGTH[m.evidence] === STRENGTH[b.evidence] && m.commit.order > b.commit.order);
    if (stronger) best.set(key(m), m);
  }
  const skip = (m: LandingMatch, reason: SkipReason, detail: string): void => {
    skipped.push({ commit: m.commit.sha, subject: m.commit.subject, reason, detail });
  };
  for (const m of found) {
    const w = best.get(key(m));
    if (w === m) continue;
    if (w)
      skip(
        m,
        m.commit.order < w.commit.order ? 'follow_up' : 'pr_landed_elsewhere',
        `PR ${m.number} already landed as ${w.commit.sha.slice(0, 12)} (${w.evidence})`,
      );
    else if (m.evidence === 'subject_reference') skip(m, 'subject_patch_mismatch', m.landing);
    else
      skip(
        m,
        'pr_head_already_merged',
        `refs/pull/${m.number}/head is already in the history of ${m.base_commit.slice(0, 12)}`,
      );
  }
  const kept = new Set(best.values());
  return { landings: found.filter((m) => kept.has(m)), skipped };
}

/** Commits reachable from `from` (itself included) within the walk. */
function ancestors(bySha: ReadonlyMap<string, WalkCommit>, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (seen.has(s)) continue;
    const c = bySha.get(s);
    if (!c) continue;
    seen.add(s);
    stack.push(...c.parents);
  }
  return seen;
}

/**
 * Commits inside each merged PR: reachable from a PR merge's second parent and not from its
 * first (in-memory over the walked parents; commits outside the walk end the search).
 */
export function insidePrMerges(
  commits: readonly WalkCommit[],
  headsAt: ReadonlyMap<string, number[]>,
): Map<string, string> {
  const bySha = new Map(commits.map((c) => [c.sha, c]));
  const inside = new Map<string, string>();
  const reach = (from: string, stop?: ReadonlySet<string>): Set<string> => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (seen.has(s) || stop?.has(s)) continue;
      const c = bySha.get(s);
      if (!c) continue;
      seen.add(s);
      stack.push(...c.parents);
    }
    return seen;
  };
  for (const c of commits) {
    if (!isPrMerge(c, headsAt)) continue;
    const left = reach(c.parents[0]!);
    for (const s of reach(c.parents[1]!, left)) if (!inside.has(s)) inside.set(s, c.sha);
  }
  return inside;
}
