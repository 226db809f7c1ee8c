/**
 * SWE-Bench 5G release rows: SWE-bench's field names first (so SWE-bench tooling reads them:
 * `instance_id, repo, base_commit, patch, test_patch, problem_statement, hints_text, created_at,
 * version, environment_setup_commit, FAIL_TO_PASS, PASS_TO_PASS`), then ours (SWE-Bench 5G paper:
 * network function, bug category, fail-to-pass strategy, specification references, image recipe).
 * Incomplete instances (no problem statement) never enter a release: the schema refuses them.
 */
import { z } from 'zod';
import type { DatasetDefinition, FieldSpec } from '../definition.js';
import { instanceDate, quarterOf } from './dates.js';

const testId = z.string().min(1);

/** A date field: ISO 8601 UTC without fractions (`2024-03-01T10:00:00Z`), or '' when unknown. */
const utcDate = z
  .string()
  .regex(
    /^$|^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/,
    'must be ISO 8601 UTC (2024-03-01T10:00:00Z) or empty',
  )
  .default('');

/**
 * Where a row's problem statement came from: `issues_api` (the linked issues, fetched from the
 * GitHub issues API), `issues_file` (rows of an issues file, `swe5g.mining.issues_from` /
 * `--issues-from`: exported from GitHub or written by hand), `model_written` (written by a model from
 * the buggy code, the failing test's output and the commit's context for a fix without a linked
 * issue, `swe5g.statement`; never from the gold patch's added lines; its rows are in the
 * {@link MODEL_WRITTEN_CONFIG} config), `none` (no statement: never released).
 */
export const PROBLEM_STATEMENT_SOURCES = [
  'issues_api',
  'issues_file',
  'model_written',
  'none',
] as const;

/** The Hub config holding every model-written row, apart from the linked-issue configs. */
export const MODEL_WRITTEN_CONFIG = 'model_written';
export type ProblemStatementSource = (typeof PROBLEM_STATEMENT_SOURCES)[number];

/**
 * The fail-to-pass audit of a row (telebench's `swe5g.audit`): each mutant of the gold patch
 * graded as a prediction, or not applicable with why. `weak`: a must-reject mutant (no-op guard,
 * emptied guard, guard in dead code) resolved; `strict`: an equivalent rewrite did not.
 */
export const f2pAuditRowSchema = z.strictObject({
  mutants: z.array(
    z.strictObject({
      kind: z.string().min(1),
      expectation: z.enum(['reject', 'resolve']),
      status: z.enum(['graded', 'not_applicable']),
      resolved: z.boolean().optional(),
      ok: z.boolean().optional(),
      why: z.string().optional(),
    }),
  ),
  weak: z.boolean(),
  strict: z.boolean(),
});
export type F2pAuditRow = z.output<typeof f2pAuditRowSchema>;

/** Zod schema of one released SWE-Bench 5G row. */
export const swe5gRowSchema = z.strictObject({
  instance_id: z
    .string()
    .regex(/^[\w.-]+__[\w.-]+-\d+$/, 'instance_id must look like owner__repo-N'),
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'repo must be owner/name'),
  base_commit: z.string().regex(/^[0-9a-f]{40}$/, 'base_commit must be a 40-hex commit id'),
  patch: z.string().min(1, 'patch (the gold fix) is empty'),
  test_patch: z.string(),
  problem_statement: z
    .string()
    .min(1, 'problem_statement is empty: incomplete instances are never released'),
  problem_statement_source: z.enum(PROBLEM_STATEMENT_SOURCES),
  // default: rows released before model-written statements (issue 31) have no such column
  problem_statement_model: z.string().min(1).nullable().default(null),
  hints_text: z.string(),
  created_at: z.string().min(1),
  /** Earliest creation of the linked issue(s), UTC ('' in releases made before the field). */
  issue_created_at: utcDate,
  /** When the fix landed on the default branch, UTC ('' in releases made before the field). */
  merged_at: utcDate,
  /** Committer date of base_commit, UTC ('' when unknown or released before the field). */
  base_commit_date: utcDate,
  version: z.string(),
  environment_setup_commit: z.string(),
  FAIL_TO_PASS: z.array(testId).min(1, 'FAIL_TO_PASS is empty'),
  PASS_TO_PASS: z.array(testId),
  alias: z.string(),
  project: z.string().min(1),
  nf: z.string(),
  bug_category: z.enum([
    'nil_pointer',
    'missing_validation',
    'concurrency',
    'logic',
    'resource_leak',
    'other',
  ]),
  strategy: z.enum(['A', 'B', 'shipped']),
  spec_refs: z.array(z.string()),
  image_recipe: z.string(),
  /**
   * The instance image (SWE-bench's field; mini-swe-agent and SWE-agent run the agent in it):
   * `telebench-instance:<recipe hash>`, or `REGISTRY/telebench-instance:<tag>@sha256:<digest>`
   * after `release --push`; '' when validated without images (executor local) or in a release
   * written before the field existed.
   */
  image_name: z.string().default(''),
  toolchain: z.string(),
  license: z.string().min(1),
  /** The fail-to-pass audit; null when the instance was not audited (or released before it). */
  f2p_audit: f2pAuditRowSchema.nullable().default(null),
});
export type Swe5gRow = z.output<typeof swe5gRowSchema>;

const fields: FieldSpec[] = [
  {
    name: 'instance_id',
    parquet: 'STRING',
    description: 'SWE-bench id `<owner>__<repo>-<PR>` (e.g. `free5gc__amf-161`).',
  },
  {
    name: 'repo',
    parquet: 'STRING',
    description: 'GitHub repository `owner/name` the fix landed in.',
  },
  {
    name: 'base_commit',
    parquet: 'STRING',
    description: 'First parent of the merge commit: the buggy state the task starts from.',
  },
  {
    name: 'patch',
    parquet: 'STRING',
    description:
      'Gold fix: unified diff of the non-test files from base_commit to the merge commit.',
  },
  {
    name: 'test_patch',
    parquet: 'STRING',
    description:
      'Test files of the PR plus the generated fail-to-pass test, as one unified diff (never shown to a solver).',
  },
  {
    name: 'problem_statement',
    parquet: 'STRING',
    description: 'Title and body of the linked issue(s), as `problem_statement_source` gave them.',
  },
  {
    name: 'hints_text',
    parquet: 'STRING',
    description: 'Issue comments written before the fix merged.',
  },
  {
    name: 'created_at',
    parquet: 'STRING',
    description:
      'Creation time of the PR (ISO 8601 UTC; for PRs mined from git, the date of its first commit).',
  },
  {
    name: 'version',
    parquet: 'STRING',
    description:
      'Toolchain version the repository asks for at base_commit (go.mod `go` line, or a tag).',
  },
  {
    name: 'environment_setup_commit',
    parquet: 'STRING',
    description: 'Commit whose dependencies the environment image was built from.',
  },
  {
    name: 'FAIL_TO_PASS',
    parquet: 'LIST_STRING',
    description:
      'Test ids (`<package-or-file>::<test>`) that fail at base_commit and pass with the gold patch.',
  },
  {
    name: 'PASS_TO_PASS',
    parquet: 'LIST_STRING',
    description: 'Test ids that pass both before and after the gold patch.',
  },
  // after SWE-bench's own fields, which come first
  {
    name: 'issue_created_at',
    parquet: 'STRING',
    description:
      "Creation time of the earliest linked issue (ISO 8601 UTC); with created_at it decides the row's date window.",
  },
  {
    name: 'merged_at',
    parquet: 'STRING',
    description: 'When the fix landed on the default branch (ISO 8601 UTC).',
  },
  {
    name: 'base_commit_date',
    parquet: 'STRING',
    description:
      'Committer date of base_commit (ISO 8601 UTC): the age of the code the task starts from.',
  },
  {
    name: 'problem_statement_source',
    parquet: 'STRING',
    description:
      'Where problem_statement came from: `issues_api` (GitHub issues API), `issues_file` (an issues file given to the pipeline, exported from GitHub or written by hand; the card names it) or `model_written` (written by the model `problem_statement_model` for a fix without a linked issue, from the buggy code, the failing test output and the commit message; only in the `model_written` config).',
  },
  {
    name: 'problem_statement_model',
    parquet: 'STRING',
    description:
      'The model that wrote problem_statement when `problem_statement_source` is `model_written`; null for linked issues.',
  },
  {
    name: 'alias',
    parquet: 'STRING',
    description: "The paper's short id `<repo>_pr<PR>` (e.g. `amf_pr161`).",
  },
  {
    name: 'project',
    parquet: 'STRING',
    description: '5G core project (`free5gc`, `open5gs`, `magma`): the Hub config of the row.',
  },
  {
    name: 'nf',
    parquet: 'STRING',
    description: 'Network function the fix is in (AMF, SMF, UPF, ...; `library` for shared code).',
  },
  {
    name: 'bug_category',
    parquet: 'STRING',
    description: 'nil_pointer, missing_validation, concurrency, logic, resource_leak or other.',
  },
  {
    name: 'strategy',
    parquet: 'STRING',
    description:
      "Where FAIL_TO_PASS came from: `shipped` (the PR's own tests), `A` or `B` (generated test, paper §3).",
  },
  {
    name: 'spec_refs',
    parquet: 'LIST_STRING',
    description: '3GPP specifications the fix relates to (e.g. `TS 29.514`).',
  },
  {
    name: 'image_recipe',
    parquet: 'STRING',
    description: 'Image recipe (`go`, `c-meson`, `python`) that rebuilds the environment.',
  },
  {
    name: 'image_name',
    parquet: 'STRING',
    description:
      'Instance image an agent works in (`/testbed` at `base_commit`, bash, git and patch; docs/images.md): a content-addressed local name, or a registry reference by digest after `release --push`.',
  },
  {
    name: 'toolchain',
    parquet: 'STRING',
    description: 'Toolchain the instance was validated with (e.g. `go1.26.8`).',
  },
  {
    name: 'license',
    parquet: 'STRING',
    description:
      'SPDX licence of the source repository (free5GC Apache-2.0, Open5GS AGPL-3.0, Magma BSD-3-Clause).',
  },
  {
    name: 'f2p_audit',
    parquet: 'JSON_TEXT',
    description:
      'Fail-to-pass audit: mutants of the gold patch graded as predictions (`noop`, `empty_body`, `dead_code` must not resolve; `via_local`, `inverted`, `else_branch` must), each `{kind, expectation, status, resolved, ok}` or `not_applicable` with `why`; `weak` when a must-reject mutant resolved. Null when not audited.',
  },
];

/** The SWE-Bench 5G dataset definition (configs per project, split `test`). */
export const swe5gDataset: DatasetDefinition<Swe5gRow> = {
  id: 'swe-bench-5g',
  aliases: ['swe5g', 'swebench5g'],
  prettyName: 'SWE-Bench 5G',
  rowSchema: swe5gRowSchema,
  fields,
  key: (r) => r.instance_id,
  // model-written statements apart, so `all` (the default) holds linked issues only
  config: (r) =>
    r.problem_statement_source === 'model_written' ? MODEL_WRITTEN_CONFIG : r.project,
  license: (r) => r.license,
  aggregateConfigs: (configs) => {
    const issues = configs.filter((c) => c !== MODEL_WRITTEN_CONFIG);
    return [
      { name: 'all', members: issues },
      ...(configs.includes(MODEL_WRITTEN_CONFIG) && issues.length > 0
        ? [{ name: 'all_with_model_written', members: [...configs] }]
        : []),
    ];
  },
  split: 'test',
  windows: {
    dateOf: instanceDate,
    windowOf: quarterOf,
    text: [
      "Each row's **instance date** is the earliest public trace of its task: the earliest of",
      '`issue_created_at` (the linked issue) and `created_at` (the PR). A model whose training data',
      'ends before that date cannot have seen the issue or the fix. Each window is the UTC calendar',
      'quarter of the instance date and one more config of this dataset (`windows/<window>/test.parquet`,',
      'the same rows as in the project configs). To score a model only on what came after its cutoff,',
      'load the windows after it, or grade with `telebench evaluate --after CUTOFF` (a day: instances',
      'from the next day on; the report says the window and how many instances it kept).',
    ].join(' '),
  },
  taskCategories: ['text-generation'],
  tags: [
    'code',
    'software-engineering',
    'swe-bench',
    'telecommunications',
    '5g',
    '5g-core',
    '3gpp',
  ],
  summary: [
    'SWE-Bench 5G is a set of SWE-bench-style task instances mined from open-source 5G core',
    'networks (free5GC, Open5GS, Magma): each instance is a real merged fix, a problem statement (the',
    'linked issue, from the GitHub issues API or an issues file: see `problem_statement_source`), the',
    'repository at the buggy commit, and tests that fail before and pass after the fix. A solver gets',
    'the problem statement and the repository; it is graded by FAIL_TO_PASS and PASS_TO_PASS.',
    'Rebuilt with telebench after the SWE-Bench 5G paper (210 instances from 33 repositories).',
  ].join(' '),
  limitations: [
    'Only merged pull requests with a linked issue get an issue as their problem statement; fixes without one are missing, or, when the snapshot has a `model_written` config, have a statement a model wrote (a paraphrase of the symptom, not a user report).',
    'Generated fail-to-pass tests (strategy A or B) test the behaviour of the gold patch; another correct fix with different behaviour can fail them.',
    'Magma is mostly inactive since 2023; its instances use older toolchains.',
    "Licences differ per project (Open5GS rows are AGPL-3.0): check each row's `license` before reuse.",
  ],
  citation:
    'SWE-Bench 5G: a benchmark of real bug fixes in open-source 5G core networks (see the paper in the project sources).',
};
