/**
 * The `swe5g` configuration section (SWE-Bench 5G branch). The mining helper owns the top-level
 * keys, `mining` and `filter`; other swe5g stages add their own sub-objects (`environments`,
 * `testgen`, ...) here.
 */
import { problemStatementsDefaults, problemStatementsSchema } from './statement/config.js';
import { z } from 'zod';
import { environmentsSchema, environmentsDefaults } from './environments-config.js';
import { testgenSchema, testgenDefaults } from './testgen/config.js';
import { evaluationSchema, evaluationDefaults } from './evaluate/config.js';
import { auditSchema, auditDefaults } from './audit/config.js';

/** Settings of the GitHub REST provider (pipeline/providers/github). */
export const githubSettingsSchema = z.strictObject({
  /** REST base URL; tests point it at their local server. */
  base_url: z.url().default('https://api.github.com'),
  /** Items per page (GitHub allows at most 100). */
  per_page: z.number().int().min(1).max(100).default(100),
  /** Per-request timeout in milliseconds. */
  request_timeout_ms: z.number().int().min(100).default(30_000),
  /** Retries of a 5xx / dropped connection before the item fails. */
  max_retries: z.number().int().min(0).max(20).default(4),
  /** Longest single rate-limit wait accepted (seconds); the provider waits as long as needed up to this. */
  max_wait_seconds: z
    .number()
    .int()
    .min(1)
    .default(6 * 3600),
  /** Base of the 5xx retry backoff in ms (retry n waits n² × this). */
  retry_base_ms: z.number().int().min(1).default(1000),
  /**
   * Without GITHUB_TOKEN/GITHUB_TOKENS the API allows 60 requests/hour. False (default) stops the
   * `api` source at preflight and makes `auto` use the mirrors; true mines unauthenticated.
   */
  allow_unauthenticated: z.boolean().default(false),
  /**
   * Ask GraphQL for GitHub's own closing references (`closingIssuesReferences`: keyword or a link
   * set in the UI), 50 PRs per query, cached by each PR's `updated_at`.
   */
  closing_references: z.boolean().default(true),
  /** Preflight probe timeout (ms) for `GET /rate_limit`. */
  preflight_timeout_ms: z.number().int().min(100).default(5_000),
});
export type GithubSettings = z.output<typeof githubSettingsSchema>;

export const miningSchema = z.strictObject({
  /**
   * Folder of local bare clones (the git mirror source). Layouts found: `<owner>+<name>/repo`
   * and `<owner>/<name>.git`. Relative to the config file. A missing folder means "no mirrors".
   */
  mirrors_dir: z.string().optional(),
  /** Only PRs merged at or after this ISO date (both sources). */
  since: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  /** At most this many merged PRs per repository, newest first (0: all). */
  max_prs_per_repo: z.number().int().min(0).default(0),
  /**
   * JSON Lines of GitHub REST issue objects (`--issues-from FILE`) that complete git-only
   * candidates with the issue text. Relative to the config file.
   */
  issues_from: z.string().optional(),
  /**
   * Bump to mine again (a finished mining item is not redone otherwise); with stored ETags an
   * unchanged repository then costs only 304 answers, which GitHub does not count.
   */
  generation: z.number().int().min(1).default(1),
  /** Repositories mined at once. */
  concurrency: z.number().int().min(1).max(16).default(2),
  github: githubSettingsSchema.default(githubSettingsSchema.parse({})),
});
export type MiningSettings = z.output<typeof miningSchema>;

/**
 * Filter criteria. Paper rule (SWE-Bench 5G, section "Pipeline", step 2): keep PRs whose issue has
 * a clear description and which modify non-test source files. The usual rules of SWE-bench-style
 * mining are added: merged, not from a bot, not documentation/CI-only, size limits.
 */
export const filterSchema = z.strictObject({
  /** The paper mines closed issues; some issues stay open after their fix merged. */
  require_closed_issue: z.boolean().default(true),
  /** "Clear description": at least this many words in the issue body (title not counted). */
  min_issue_body_words: z.number().int().min(0).default(15),
  /** Issues linked with less confidence than this are ignored (branch name 0.3, mention 0.5, keyword 0.9). */
  min_link_confidence: z.number().min(0).max(1).default(0.3),
  /** At most this many changed files. */
  max_files: z.number().int().min(1).default(15),
  /** At most this many changed lines (additions + deletions). */
  max_changed_lines: z.number().int().min(1).default(600),
  /** Author logins (regular expressions, case-insensitive) treated as bots besides `[bot]`. */
  bot_authors: z.array(z.string()).default(['^dependabot', '^renovate', '^github-actions', 'bot$']),
  /**
   * Git-only PRs without any issue reference are kept as `incomplete` candidates (they may be
   * validated but never evaluated or released). False rejects them with `no_linked_issue`.
   */
  keep_git_without_issue: z.boolean().default(true),
});
export type FilterSettings = z.output<typeof filterSchema>;

export const swe5gConfigSchema = z.strictObject({
  /** Repository registry, relative to the config file. */
  registry: z.string().default('repos.yaml'),
  /** Restrict mining to these registry ids (`free5gc/amf`). */
  repos: z.array(z.string()).optional(),
  /**
   * Restrict the branch to these instance ids (`free5gc__amf-161`): the filter rejects every other
   * PR with `not_selected`. For reproducing given instances and for small runs.
   */
  instances: z
    .array(
      z
        .string()
        .regex(/^[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-\w+$/, 'an instance id like free5gc__amf-161'),
    )
    .optional(),
  /**
   * How `instances` meets what the state already selected: `add` (default) keeps every PR an
   * earlier run of this state selected and adds the listed ones, so a state grows batch by batch
   * and releases all of them; `replace` selects exactly the list (narrowing: the PRs it no longer
   * names become `not_selected`, their instances are kept for reference as orphaned); `new` (what
   * `telebench refresh` runs with) keeps the judgement of every PR an earlier run of this state
   * filtered, selected or not, and selects every PR it has not filtered yet (plus the listed ones):
   * a refresh takes all that is new and revisits nothing a release already judged.
   */
  selection: z.enum(['add', 'replace', 'new']).default('add'),
  /**
   * Where candidates come from: `api` (GitHub REST; needs the network, a token is advised),
   * `git` (local mirrors only), `auto` (API when reachable, else the mirrors).
   */
  source: z.enum(['api', 'git', 'auto']).default('auto'),
  mining: miningSchema.default(miningSchema.parse({})),
  filter: filterSchema.default(filterSchema.parse({})),
  environments: environmentsSchema.default(environmentsDefaults),
  testgen: testgenSchema.default(testgenDefaults),
  /** The fail-to-pass audit after validation (`swe5g.audit`, stages/swe5g/audit). */
  audit: auditSchema.default(auditDefaults),
  /** Model-written problem statements for fixes without a linked issue (`swe5g.statement`). */
  problem_statements: problemStatementsSchema.default(problemStatementsDefaults),
  /** The coding-agent evaluation (`telebench run swe5g-eval`, stages/swe5g/evaluate). */
  evaluation: evaluationSchema.default(evaluationDefaults),
});
export type Swe5gConfig = z.output<typeof swe5gConfigSchema>;

/** Anything that may carry the swe5g section (the whole AppConfig). */
export interface HasSwe5g {
  swe5g?: Swe5gConfig;
}

/** The swe5g section with defaults applied when absent. */
export function swe5gSettings(cfg: HasSwe5g): Swe5gConfig {
  return cfg.swe5g ?? swe5gConfigSchema.parse({});
}
