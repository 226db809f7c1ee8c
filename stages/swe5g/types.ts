/**
 * Shared record shapes of the SWE-Bench 5G branch; the released row is `Swe5gRow` (datasets/swe-bench-5g/schema.ts).
 * Every swe5g stage imports its input/output types from here, so one change is seen by all.
 *
 * Commit terms, fixed for every stage (issue 3, "Commit terms"):
 * - `merge_commit`: the commit that landed on the default branch (a merge commit, or the
 *   squash/rebase commit).
 * - `base_commit`: the first parent of `merge_commit`.
 * - `pr_head`: the PR's head commit (`refs/pull/N/head`), `null` when unknown.
 * - `instance_id`: SWE-bench form `<owner>__<repo>-<PR>` (`free5gc__amf-161`); `alias` is the paper's
 *   short form `<repo>_pr<PR>` (`amf_pr161`) (SWE-Bench 5G paper, Table of instances).
 */
import type { Swe5gRow } from '../../datasets/index.js';

/** Languages the image recipes know. */
export type RepoLanguage = 'go' | 'c' | 'python';

/** Where a candidate came from: the GitHub REST API, or a local git mirror (history only). */
export type CandidateSource = 'api' | 'git';

/** One issue linked to a PR. `created_at` is ISO 8601 UTC. */
export interface LinkedIssue {
  /** `owner/name` of the repository holding the issue (may differ from the PR's repository). */
  repo: string;
  number: number;
  title: string;
  body: string;
  labels: string[];
  state: 'open' | 'closed';
  created_at: string;
}

/** Kinds of evidence that a PR fixes an issue, strongest first. */
export type LinkEvidenceKind =
  | 'closing_reference' // GitHub's closingIssuesReferences / timeline `closed` by the PR
  | 'closing_keyword' // "fixes #12", "closes free5gc/free5gc#641", full issue URL after a keyword
  | 'mention' // bare "#12" / "owner/repo#12" / URL without a closing keyword
  | 'branch_name'; // head branch `fix/1079-...` (weak)

/** One piece of evidence for a link: where it was found and how much it is trusted (0..1). */
export interface LinkEvidence {
  kind: LinkEvidenceKind;
  /** Where: `pr_title`, `pr_body`, `commit:<sha>`, `branch:<name>`, `timeline`, `graphql`. */
  where: string;
  /** The matched text, e.g. `Fixes free5gc/free5gc#641`. */
  text: string;
  /** `owner/name#number` of the issue this evidence points to. */
  issue: string;
  confidence: number;
  /**
   * How the reference was read when that is not obvious: a bare `#N` read in `issues_repo`, a
   * branch-name number's position (issue 16: `issues_repo` changes how `#N` is read).
   */
  note?: string;
  /** Every repository the reference could point to when it is ambiguous (`issue` first). */
  candidates?: string[];
}

/** A changed file of the PR, with line counts. */
export interface ChangedFile {
  path: string;
  additions: number;
  deletions: number;
}

/** An issue comment written before the fix merged (source of `hints_text`). */
export interface IssueComment {
  issue: string;
  author: string;
  created_at: string;
  body: string;
}

/**
 * Fields a mined PR keeps through linking and filtering: its identity in the registry (instance_id,
 * alias, repo, registry_id, language, NF, license) and its commits. {@link MinedPR} and
 * {@link Candidate} extend it.
 */
export interface PRIdentity {
  instance_id: string;
  alias: string;
  repo: string;
  registry_id: string;
  language: RepoLanguage;
  nf: string;
  license: string;
  pr_number: number;
  merge_commit: string;
  base_commit: string;
  pr_head: string | null;
}

/**
 * Output of `swe5g.mine` (key = instance_id): one merged PR, before linking and filtering.
 * Fields the source cannot know are empty (`''`, `[]`, `null`), never invented.
 */
export interface MinedPR extends PRIdentity {
  /**
   * How the PR landed: merge commit, squash commit (single parent), or `rebase` (git source: the
   * PR's own head commit is on the branch, rebase or fast-forward merge).
   */
  merge_style: 'merge' | 'squash' | 'rebase';
  /**
   * Git source: why this commit is read as the PR's landing (`the commit is refs/pull/22/head
   * (rebase or fast-forward merge)`, `squash subject "(#21)" read as the PR: issues are filed in
   * another repository ...`). Absent for the API source (GitHub says which PR merged).
   */
  landing?: string;
  /**
   * Git source: the evidence kind that matched the commit to the PR (`merge_subject`, `pr_head`,
   * `patch_id`, `subject_patch_id`, `squash_subject`, ...; see pipeline/providers/git/landings.ts).
   */
  landing_evidence?: string;
  pr_title: string;
  pr_body: string;
  /** Head branch name (`fix/1079-nil-amf`), '' when unknown. */
  head_ref: string;
  /** Login of the PR author ('' when unknown; git source uses the commit author name). */
  author: string;
  author_is_bot: boolean;
  /** Messages of the PR's commits (the squash commit's message for squash merges). */
  commit_messages: string[];
  changed_files: ChangedFile[];
  created_at: string;
  merged_at: string;
  /** PR `updated_at` (API) or merge commit date (git): what incremental runs compare. */
  updated_at: string;
  source: CandidateSource;
  /**
   * True when the history shows the commit came from another forge's internal PR
   * (`Merged in branch (pull request #N)`, Bitbucket): N is not a GitHub PR number.
   */
  foreign_forge: boolean;
  /** Blob digests of the raw API responses this record was built from (rebuild without calling). */
  raw_blobs: string[];
  /**
   * GitHub's closing references of the PR (GraphQL `closingIssuesReferences`), `owner/name#N`;
   * [] for the git source or when the API did not answer them.
   */
  closing_refs: string[];
}

/** Output of `swe5g.link` (or of mine when linking is inline): the PR with its issues. */
export interface LinkedPR extends MinedPR {
  issues: LinkedIssue[];
  links: LinkEvidence[];
  /**
   * Branch-name evidence that was not kept (issue 16, "False links"): its issue was neither found in
   * the issues repository (API / `--issues-from`) nor named by other evidence; `note` says why.
   */
  unconfirmed_links?: LinkEvidence[];
  /** Other PRs that reference the same issue(s) (kept: this merged one; noted: the rest). */
  other_prs: number[];
  /** Issue comments made before `merged_at`. */
  issue_comments: IssueComment[];
}

/**
 * Candidate — output of `swe5g.filter` for kept items (key = instance_id). The input of
 * `swe5g.resolve`. A test may build one by hand for a repository it created.
 */
export interface Candidate extends PRIdentity {
  issues: LinkedIssue[];
  pr_title: string;
  pr_body: string;
  changed_files: ChangedFile[];
  created_at: string;
  merged_at: string;
  /** Issue title + "\n\n" + body of the linked issue(s); '' when unknown. */
  problem_statement: string;
  /** Issue comments made before the fix, joined; '' when none. */
  hints_text: string;
  source: CandidateSource;
  /** True when problem_statement is empty: may be validated, never evaluated or released. */
  incomplete: boolean;
  links: LinkEvidence[];
}

/** Resolved — output of `swe5g.resolve` (key = instance_id). */
export interface Resolved extends Candidate {
  /** Unified diff base_commit..merge_commit of non-test files. */
  patch: string;
  /** Unified diff of the PR's test files. */
  test_patch: string;
  environment_setup_commit: string;
  /** go.mod `go` line (e.g. '1.21') or a tag. */
  version: string;
  /** Directories the fix touches. */
  test_dirs: string[];
  /**
   * Files of `base_commit` whose blobs the mirror lacks, all documents no test reads (issue 21):
   * the source export goes on without them, and they are listed here (the instance's provenance).
   * Absent when the mirror is complete.
   */
  absent_files?: { path: string; object: string }[];
}

/** Bug categories of the SWE-Bench 5G paper (the row schema's enum). */
export type BugCategory = Swe5gRow['bug_category'];

/** Fail-to-pass strategy: generated (A, B) or the PR's own tests (the row schema's enum). */
export type F2pStrategy = Swe5gRow['strategy'];

/** TestGen — output of `swe5g.testgen` (key = instance_id). */
export interface TestGen {
  instance_id: string;
  strategy: F2pStrategy;
  strategy_reason: string;
  f2p_test_patch: string;
  FAIL_TO_PASS: string[];
  bug_category: BugCategory;
  nf: string;
  spec_refs: string[];
  /**
   * Strategy B only: `control` when every site's check requires the protected uses to be
   * unreachable for the bad value (testgen/control.ts), `text` when one counts the fix's text.
   */
  f2p_strength?: 'control' | 'text';
  /**
   * Strategy B records of Python only: the Strategy A test testgen could not decide on its host
   * because the fixed module does not import there. Validation decides it in the instance image
   * (validate/deferred-a.ts); absent when no A test met that failure.
   */
  deferred_a?: DeferredStrategyA;
}

/**
 * A Python Strategy A test (testgen/py-direct-call.ts) whose host flip check stopped at the import
 * of the fixed module (`pythonImportFailure`: on testgen's host, Magma's setup.py dependencies and
 * generated protos are absent, the instance image has them): an environmental failure that says
 * nothing of the test. testgen keeps it beside its Strategy B fallback; `swe5g.validate` runs it
 * in the instance image, at base_commit and with the gold patch, before its three steps, and uses
 * it as the instance's fail-to-pass test when it fails at the parent and passes at the fix
 * (docs/strategy-a-python.md, "Where A is decided"). Only the first such function is kept.
 */
export interface DeferredStrategyA {
  /** The test patch (`<tests dir>/test_f2p_call.py`), applied at step time as `f2p_test_patch` is. */
  f2p_test_patch: string;
  /** Its test ids, repository-relative (`tests/test_f2p_call.py::test_f2p_call_<function>`). */
  FAIL_TO_PASS: string[];
  /** The fixed function the test calls (`Class.method` or `function`). */
  function: string;
  /** The crash-triggering inputs it is called with (`mac=None`, `req without key "k"`). */
  inputs: string;
  /** What did not import on testgen's host (`No module named 'grpc'`). */
  host_import_failure: string;
}

/**
 * The fields a validated instance carries as its released row does, under the row's names. Their
 * types are the row schema's (`datasets/swe-bench-5g/schema.ts`, `Swe5gRow`), never copied here;
 * the row's other eight (the three dates among them) are derived when it is released (`stages/swe5g/dataset.ts`, `swe5gRowOf`).
 */
export type RowFields = Omit<
  Swe5gRow,
  | 'problem_statement_source'
  | 'problem_statement_model'
  | 'project'
  | 'image_name'
  | 'license'
  | 'f2p_audit'
  | 'issue_created_at'
  | 'merged_at'
  | 'base_commit_date'
>;

/** The keys of {@link RowFields}: what `swe5gRowOf` copies from the instance to the row. */
export const ROW_FIELDS = [
  'instance_id',
  'repo',
  'base_commit',
  'patch',
  'test_patch',
  'problem_statement',
  'hints_text',
  'created_at',
  'version',
  'environment_setup_commit',
  'FAIL_TO_PASS',
  'PASS_TO_PASS',
  'alias',
  'nf',
  'bug_category',
  'strategy',
  'spec_refs',
  'image_recipe',
  'toolchain',
] as const satisfies readonly (keyof RowFields)[];
// compile-time check: ROW_FIELDS names every key of RowFields (a new row field fails here)
const rowFieldsComplete: Exclude<keyof RowFields, (typeof ROW_FIELDS)[number]> extends never
  ? true
  : never = true;
void rowFieldsComplete;

/**
 * Validated instance — output of `swe5g.validate` (key = instance_id): the row fields (an
 * incomplete instance may have an empty problem_statement; it is never released) plus what
 * validation records about it.
 */
export interface ValidatedInstance extends RowFields {
  /** Licence the registry names for the repository (the row's is this or the project's). */
  license: string;
  images: { base: string; env: string; instance: string };
  executor: 'docker' | 'local' | 'swarm';
  step_logs: {
    /** Step 1: the parent with the test patches (SWE-bench's "before"; also decides step 2). */
    parent_p2p?: string;
    /** Re-runs of step 1 while tests fail before and not after the fix (`parent_reruns`). */
    [rerun: `parent_p2p_${number}`]: string | undefined;
    /** Records validated before stage version 6: step 2 as its own run. */
    parent_f2p?: string;
    /** The parent without the test patches, run only when step 1 does not build. */
    parent_bare?: string;
    /** testgen's deferred Python Strategy A test alone, at the parent and with the gold patch. */
    deferred_a_parent?: string;
    deferred_a_fix?: string;
    fix_1?: string;
    fix_2?: string;
    fix_3?: string;
    /** Later fresh containers of a step (`fix_1_run2`: runners other than Go, issue 21). */
    [run: `${string}_run${number}`]: string | undefined;
  };
  dropped_flaky: string[];
  incomplete: boolean;
}

/**
 * Kinds of mutant of a gold patch the fail-to-pass audit grades (`swe5g.audit`,
 * stages/swe5g/audit/mutants.ts): `noop`, `empty_body`, `dead_code`, `dead_code_preproc` (C
 * `#if 0`) must not resolve; `via_local`, `inverted`, `else_branch` (equivalent rewrites of the
 * gold) must resolve.
 */
export type MutantKind =
  | 'noop'
  | 'empty_body'
  | 'dead_code'
  | 'dead_code_preproc'
  | 'via_local'
  | 'inverted'
  | 'else_branch';

/** What a sound fail-to-pass test does with a mutant: `reject` it or `resolve` it. */
export type MutantExpectation = 'reject' | 'resolve';

/** One audited mutant: graded through the evaluation's grading path, or not applicable. */
export interface AuditedMutant {
  kind: MutantKind;
  expectation: MutantExpectation;
  status: 'graded' | 'not_applicable';
  /** not_applicable: why the kind fits no guard of the gold patch. */
  why?: string;
  /** graded: the grade's verdict (every graded test passed). */
  resolved?: boolean;
  /** graded: the verdict is what a sound test gives (`resolved` iff expectation `resolve`). */
  ok?: boolean;
  /** graded: which tests ran (`FAIL_TO_PASS` only for a must-reject mutant, `all` otherwise). */
  tests?: 'FAIL_TO_PASS' | 'all';
  /** graded: the patch applied (a mutant that does not apply is a bug of the audit). */
  patch_applied?: boolean;
  /** graded: per-test statuses of FAIL_TO_PASS. */
  FAIL_TO_PASS?: Record<string, string>;
  /** graded: packages that did not compile. */
  build_failures?: string[];
  /** Digest of the mutant's patch blob and of the run log (blobs of the audit item). */
  patch_blob?: string;
  log?: string;
}

/**
 * The fail-to-pass audit of one validated instance (`swe5g.audit`): each mutant of its gold patch
 * graded as a prediction. `weak`: a must-reject mutant resolved (the test accepts a patch that
 * does not fix the bug; not released unless `swe5g.audit.release_weak`); `strict`: an equivalent
 * rewrite did not resolve (the test rejects a correct fix written differently; recorded).
 */
export interface F2pAudit {
  mutants: AuditedMutant[];
  weak: boolean;
  strict: boolean;
  /** Kinds whose verdict was not the expected one (`noop`, ...). */
  failed_kinds: MutantKind[];
  /** The Strategy B fix sites the mutants were built from (`file:line function operand`). */
  sites: string[];
}

/**
 * Rejection reason codes of `swe5g.validate` (SkipItem reasons). A step that does not build
 * because a dependency could not be obtained is none of them: it fails `dependency_unavailable`
 * (tier infra, retried; harness/build-log.ts).
 */
export const VALIDATE_REJECT_REASONS = [
  'p2p_fails_at_parent',
  'f2p_does_not_fail_at_parent',
  'f2p_fails_after_fix',
  'p2p_fails_after_fix',
  'flaky',
  'build_failed_at_parent',
  'timeout',
  'ambiguous_log',
  'toolchain_mismatch',
  'patch_does_not_apply',
] as const;

/**
 * `free5gc/amf`, 161 -> `free5gc__amf-161` (SWE-bench instance_id form).
 * @param repo `owner/name`
 * @throws Error when `repo` is not `owner/name`
 */
export function instanceIdOf(repo: string, pr: number): string {
  const [owner, name, ...rest] = repo.split('/');
  if (!owner || !name || rest.length > 0) throw new Error(`repository "${repo}" is not owner/name`);
  return `${owner}__${name}-${pr}`;
}

/**
 * `free5gc/amf`, 161 -> `amf_pr161` (the SWE-Bench 5G paper's short alias). For a registry entry
 * with a `path` (`magma/magma:lte/gateway/go`) the alias uses the repository name only.
 */
export function aliasOf(repo: string, pr: number): string {
  const name = repo.split('/')[1] ?? repo;
  return `${name}_pr${pr}`;
}
