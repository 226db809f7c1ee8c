/**
 * SWE-Bench 5G as a dataset entry (`stages/release/entry.ts`): its rows are the complete validated
 * instances of `swe5g.validate`, mapped by {@link swe5gRowOf}; `telebench verify` and the
 * pre-release check re-run them (`stages/release/verifier.ts`); `--push REGISTRY` puts their
 * instance images in a registry (`stages/release/push.ts`). Registered in `stages/index.ts`.
 */
import { DockerClient } from '../../pipeline/providers/docker/client.js';
import { parseDigestRef } from '../../pipeline/providers/docker/registry.js';
import { PreflightError, TelebenchError } from '../../pipeline/errors.js';
import type { StageOutput, StoreReader } from '../../pipeline/stage.js';
import { swe5gDataset, type Swe5gRow } from '../../datasets/index.js';
import {
  MODEL_WRITTEN_CONFIG,
  type ProblemStatementSource,
} from '../../datasets/swe-bench-5g/schema.js';
import { PROJECT_LICENSES, repositoryLicense } from '../../datasets/licenses.js';
import { defineDatasetEntry, type CollectedRows, type PushOptions } from '../release/entry.js';
import { releaseSettings } from '../release/config.js';
import { swe5gVerifier } from '../release/verifier.js';
import { pushRowImages } from '../release/push.js';
import type { MineOutput } from './mine/mine.js';
import { withCurrentStatement, type StatementOrigin } from './statement/current.js';
import { toUtcIso } from '../../datasets/swe-bench-5g/dates.js';
import { baseCommitDates, candidateDates, NO_DATES, type RowDates } from './row-dates.js';
import { swe5gMine } from './mine/mine.js';
import { swe5gFilter } from './filter/filter.js';
import { validateStage } from './validate/validate.js';
import { auditStage, rejectGraded } from './audit/audit.js';
import { MUTANT_KINDS } from './audit/mutants.js';
import { swe5gConfigSchema, type HasSwe5g } from './config.js';
import { swe5gRefresh } from './refresh.js';
import {
  ROW_FIELDS,
  type CandidateSource,
  type F2pAudit,
  type RowFields,
  type ValidatedInstance,
} from './types.js';

/**
 * Where an instance's problem statement came from: the GitHub issues API for API-mined PRs, the
 * issues file (`swe5g.mining.issues_from`, `--issues-from`) for git-mined ones (the only way a
 * git-mined PR gets issue text), a model (`swe5g.statement`) for a fix without a linked issue,
 * `none` when it has none.
 */
export function problemStatementSource(
  problemStatement: string,
  source: CandidateSource,
  origin: StatementOrigin = { source: 'issue' },
): ProblemStatementSource {
  if (problemStatement.trim() === '' || origin.source === 'none') return 'none';
  if (origin.source === 'model_written') return 'model_written';
  return source === 'api' ? 'issues_api' : 'issues_file';
}

/**
 * Validated instance -> SWE-Bench 5G row (SWE-bench field names plus ours): the one mapping. The
 * row fields the instance carries ({@link ROW_FIELDS}, typed by the row schema) are copied; the
 * other four are derived here.
 * @param v the instance as it stands now (`withCurrentStatement`, statement/current.ts): its own
 *   record may hold the statement it was validated with
 * @param source how its PR was mined (the candidate's `source`: `api` or `git`)
 * @param dates issue, merge and base commit dates (row-dates.ts); '' each when unknown
 * @returns null for an incomplete instance (no problem statement): never released
 */
export function swe5gRowOf(
  v: ValidatedInstance & { statement_origin?: StatementOrigin },
  source: CandidateSource,
  audit: F2pAudit | null = null,
  dates: RowDates = NO_DATES,
): Swe5gRow | null {
  if (v.incomplete || v.problem_statement.trim() === '') return null;
  const shared = Object.fromEntries(ROW_FIELDS.map((k) => [k, v[k]])) as RowFields;
  const origin = v.statement_origin ?? { source: 'issue' };
  return {
    ...shared,
    // UTC, whatever offset an older state recorded (the card says UTC)
    created_at: toUtcIso(v.created_at) || v.created_at,
    ...dates,
    problem_statement_source: problemStatementSource(v.problem_statement, source, origin),
    problem_statement_model: origin.source === 'model_written' ? origin.model : null,
    project: v.repo.split('/')[0]!.toLowerCase(),
    image_name: v.images.instance,
    license: repositoryLicense(v.repo, v.license),
    f2p_audit: audit ? auditOfRow(audit) : null,
  };
}

/** The audit as a row holds it: each mutant's verdict, without blobs and logs. */
function auditOfRow(a: F2pAudit): NonNullable<Swe5gRow['f2p_audit']> {
  return {
    mutants: a.mutants.map((m) => ({
      kind: m.kind,
      expectation: m.expectation,
      status: m.status,
      ...(m.resolved !== undefined ? { resolved: m.resolved } : {}),
      ...(m.ok !== undefined ? { ok: m.ok } : {}),
      ...(m.why ? { why: m.why } : {}),
    })),
    weak: a.weak,
    strict: a.strict,
  };
}

/** The `swe5g.audit` records by instance_id (empty when the stage is not registered or not run). */
function audits(store: StoreReader): Map<string, F2pAudit> {
  const out = new Map<string, F2pAudit>();
  try {
    for (const o of store.outputs(auditStage)) out.set(o.key, o.output.f2p_audit);
  } catch {
    // swe5g.audit not registered (a release command on a state from elsewhere): none
  }
  return out;
}

/**
 * Card lines of the fail-to-pass audit: how many rows were audited, the instances left out
 * because their test accepted a must-reject mutant (or released anyway with `release_weak`), and
 * those released without an audit record (`release_unaudited`) or left out for it.
 */
function auditNotes(
  rows: readonly Swe5gRow[],
  weak: readonly { id: string; kinds: string[] }[],
  settings: { enabled: boolean; release_weak: boolean; release_unaudited: boolean },
  unaudited: readonly string[],
): string[] {
  const releaseWeak = settings.release_weak;
  const audited = rows.filter((r) => r.f2p_audit);
  // a row whose gold patch gave no must-reject mutant (no guard to empty or bypass) was audited
  // in name only: nothing shows its test rejects a no-op
  const proven = audited.filter((r) => rejectGraded(r.f2p_audit!));
  const out = [
    `fail-to-pass audit (swe5g.audit, field \`f2p_audit\`): ${proven.length} of ${rows.length} rows audited against must-reject mutants (no-op, emptied guard, dead code)${audited.length > proven.length ? `; ${audited.length - proven.length} more had none that applies (no guard in the gold patch to empty or bypass)` : ''}; ${audited.filter((r) => r.f2p_audit!.strict).length} rows' tests reject an equivalent rewrite of the gold`,
  ];
  if (weak.length > 0)
    out.push(
      `${releaseWeak ? 'released although their test accepts' : 'left out because their test accepts'} a patch that does not fix the bug (swe5g.audit.release_weak: ${releaseWeak}): ${weak.map((w) => `${w.id} (${w.kinds.join(', ')} resolved)`).join('; ')}`,
    );
  const released = rows.filter((r) => !r.f2p_audit).map((r) => r.instance_id);
  if (released.length > 0)
    out.push(
      `released without an audit record (${settings.enabled ? 'swe5g.audit.release_unaudited: true' : 'the audit is off: swe5g.audit.enabled: false'}): ${released.join(', ')}`,
    );
  if (unaudited.length > 0)
    out.push(
      `left out because the audit has no record of them (failed or not run; swe5g.audit.release_unaudited: false): ${unaudited.join(', ')}`,
    );
  return out;
}

/**
 * How each instance's PR was mined (`api` or `git`) and its issue and merge dates, from the
 * candidates of `swe5g.filter` (the validated instance carries neither); an instance missing there
 * counts as `git` without dates.
 */
function candidatesOf(
  store: StoreReader,
): Map<string, { source: CandidateSource } & Omit<RowDates, 'base_commit_date'>> {
  const out = new Map<string, { source: CandidateSource } & Omit<RowDates, 'base_commit_date'>>();
  try {
    for (const o of store.outputs(swe5gFilter))
      out.set(o.key, { source: o.output.source, ...candidateDates(o.output) });
  } catch {
    // swe5g.filter not registered (a release command on a state from elsewhere): all `git`
  }
  return out;
}

/** Card lines: how many problem statements came from the issues API and from which issues file. */
function problemStatementNotes(
  rows: readonly Swe5gRow[],
  whole: Record<string, unknown>,
): string[] {
  const n = (s: string) => rows.filter((r) => r.problem_statement_source === s).length;
  const file = (whole.swe5g as { mining?: { issues_from?: string } } | undefined)?.mining
    ?.issues_from;
  const out = [
    `problem statements: ${n('issues_api')} rows from the GitHub issues API, ${n('issues_file')} rows from an issues file, ${n('model_written')} rows written by a model (field \`problem_statement_source\`)`,
  ];
  if (n('model_written') > 0) {
    const models = [...new Set(rows.map((r) => r.problem_statement_model).filter(Boolean))];
    out.push(
      `model-written problem statements (config \`${MODEL_WRITTEN_CONFIG}\`, apart from the linked issues of \`all\`): ${n('model_written')} rows by ${models.join(', ')}, for fixes without a linked issue, written from the buggy functions, the failing test's output at the parent and the commit message, never from the gold patch (a leak check refused statements quoting its added lines; swe5g.statement)`,
    );
  }
  if (n('issues_file') > 0)
    out.push(
      `issues file: ${file ? `\`${file}\` (swe5g.mining.issues_from)` : 'given with --issues-from or $TELEBENCH_ISSUES_FROM'}; its rows are what the pipeline was given (exported from GitHub or written by hand), not issues fetched from GitHub`,
    );
  return out;
}

/** The models of a SWE-Bench 5G run: testgen's (generator), the evaluation's (targets). */
function swe5gModels(whole: Record<string, unknown>): { generator: string[]; targets: string[] } {
  const s = (whole.swe5g ?? {}) as {
    testgen?: { llm?: { model?: string } };
    evaluation?: { models?: { name: string }[] };
  };
  return {
    generator: s.testgen?.llm?.model ? [s.testgen.llm.model] : [],
    targets: (s.evaluation?.models ?? []).map((m) => m.name),
  };
}

/** What a user does to release an instance left out for each reason (`telebench refresh` says it). */
const LEFT_OUT_HINTS: Record<string, string> = {
  incomplete_left_out:
    'no problem statement (no linked issue with a text): add the issue to the issues file (swe5g.mining.issues_from, one GitHub issue object per line) or turn on model-written statements (swe5g.problem_statements.model_written.enabled with its llm), then refresh again',
  weak_f2p_test:
    'the fail-to-pass audit found a mutant the test does not catch: set swe5g.audit.release_weak: true to release them anyway (the card says so)',
  not_audited:
    'no fail-to-pass audit record (the audit failed or has not reached it: `telebench status` names the item): run `telebench run swe5g` again (with --retry-failed for a failed audit), or set swe5g.audit.release_unaudited: true to release them anyway (the card says so)',
};

/**
 * Rows of the validated instances: complete ones mapped by {@link swe5gRowOf}; left out and
 * counted by reason: `incomplete_left_out` (no problem statement), `weak_f2p_test` (the audit
 * found a must-reject mutant resolved; `swe5g.audit.release_weak` releases them) and
 * `not_audited` (the audit is enabled and has no record of it; `release_unaudited` releases
 * them). The outputs are those of the configured source stage (`release.sources`), read untyped:
 * every row is checked against the row schema afterwards.
 */
function collectSwe5g(
  outputs: readonly StageOutput<unknown, unknown>[],
  ctx: { store: StoreReader; config: unknown; stateDir: string },
): CollectedRows<Swe5gRow> {
  const whole = (ctx.config ?? {}) as Record<string, unknown>;
  const rows: Swe5gRow[] = [];
  const leftOut = new Map<string, string[]>();
  const leave = (reason: string, id: string) =>
    leftOut.set(reason, [...(leftOut.get(reason) ?? []), id]);
  const mined = candidatesOf(ctx.store);
  const audited = audits(ctx.store);
  const validated = outputs.map((o) => o.output as ValidatedInstance);
  const baseDates = baseCommitDates(ctx.stateDir, validated);
  const settings = swe5gConfigSchema.parse(whole.swe5g ?? {}).audit;
  const weak: { id: string; kinds: string[] }[] = [];
  const current = withCurrentStatement(ctx.store);
  for (const o of validated) {
    const v = current(o);
    const a = audited.get(v.instance_id) ?? null;
    const c = mined.get(v.instance_id);
    const r = swe5gRowOf(v, c?.source ?? 'git', a, {
      issue_created_at: c?.issue_created_at ?? '',
      merged_at: c?.merged_at ?? '',
      base_commit_date: baseDates.get(v.base_commit) ?? '',
    });
    if (!r) leave('incomplete_left_out', v.instance_id);
    else if (a?.weak) {
      weak.push({
        id: v.instance_id,
        kinds: a.failed_kinds.filter((k) => MUTANT_KINDS[k] === 'reject'),
      });
      if (settings.release_weak) rows.push(r);
      else leave('weak_f2p_test', v.instance_id);
    } else if (!a && settings.enabled && !settings.release_unaudited)
      leave('not_audited', v.instance_id);
    else rows.push(r);
  }
  const swe5g = (whole.swe5g ?? {}) as Record<string, unknown>;
  const keys = Object.fromEntries(leftOut);
  return {
    rows,
    // incomplete_left_out is always reported (0 included), the others when they happened
    leftOut: {
      incomplete_left_out: 0,
      ...Object.fromEntries([...leftOut].map(([k, ids]) => [k, ids.length])),
    },
    leftOutKeys: { incomplete_left_out: [], ...keys },
    leftOutHints: LEFT_OUT_HINTS,
    profile: null,
    settings: {
      testgen: swe5g.testgen ?? null,
      environments: swe5g.environments ?? null,
      audit: swe5g.audit ?? null,
    },
    notes: [
      ...problemStatementNotes(rows, whole),
      ...auditNotes(rows, weak, settings, leftOut.get('not_audited') ?? []),
    ],
    models: swe5gModels(whole),
  };
}

/**
 * Before a SWE-Bench 5G release that will re-run its instances in Docker: the engine must answer.
 * @throws PreflightError naming Docker and what to do (start it, or turn verification off)
 */
async function verifyPreflight(config: unknown): Promise<void> {
  if (!releaseSettings(config).verify_before_release) return;
  const swe5g = swe5gConfigSchema.parse((config as HasSwe5g | null)?.swe5g ?? {});
  if (swe5g.environments.executor === 'local') return;
  try {
    await new DockerClient().ping();
  } catch (err) {
    throw new PreflightError(
      'docker',
      `the SWE-Bench 5G release re-runs every instance in Docker first, and the engine does not answer: ${(err as Error).message}`,
      'start the Docker engine (see machines notes: dockerd), or set release.verify_before_release: false (the card then says the snapshot was not re-run)',
      err,
    );
  }
}

/**
 * The image push of `--push REGISTRY` (Docker engine checked first).
 * @throws PreflightError when the engine does not answer; then what {@link pushRowImages} throws
 */
async function pushImages(rows: Swe5gRow[], o: PushOptions): Promise<Swe5gRow[]> {
  const docker = new DockerClient();
  await docker.ping();
  return pushRowImages(rows, o.registry, docker, o.flag, o.log, o.record);
}

/**
 * `publish --push REGISTRY`: every row must already name its image by digest in REGISTRY (a
 * release made with `release --push REGISTRY`); the images are pushed again so the registry
 * surely holds them, and must push as the digests the rows name.
 * @throws TelebenchError `publish_images_local` (tier config) naming the rows that carry another
 *   name; then what {@link pushRowImages} throws
 */
async function republishImages(rows: Swe5gRow[], o: PushOptions): Promise<void> {
  const other = rows.filter((r) => parseDigestRef(r.image_name)?.registry !== o.registry);
  if (other.length > 0) {
    throw new TelebenchError(
      'publish_images_local',
      `${o.flag} ${o.registry}: ${other.length} row(s) do not name an image in ${o.registry} (e.g. ${other[0]!.instance_id}: '${other[0]!.image_name}'); release a new version with --push ${o.registry}, then publish it`,
      { tier: 'config', context: { registry: o.registry, rows: other.map((r) => r.instance_id) } },
    );
  }
  await pushImages(rows, o);
}

/** Rows of a done `swe5g.mine` item: its merged PRs. */
const minedRows = (o: unknown) => ({ rows: (o as MineOutput).prs?.length ?? 0, rejected: {} });

/** SWE-Bench 5G: rows from `swe5g.validate`, re-run before release, images pushed on request. */
export const swe5gEntry = defineDatasetEntry<Swe5gRow>({
  definition: swe5gDataset,
  releaseStage: 'release.swe5g',
  pipeline: 'swe5g',
  source: validateStage.name,
  // model-written statements and audits are read by collect
  alsoNeeds: ['swe5g.statement', 'swe5g.audit'],
  collect: collectSwe5g,
  licenseEvidence(spdx) {
    const projects = Object.entries(PROJECT_LICENSES)
      .filter(([, l]) => l === spdx)
      .map(([p]) => p);
    return projects.length
      ? `LICENSE of the ${projects.join(', ')} repositories (registry config/repos.yaml)`
      : 'licence of the source repository as the registry names it';
  },
  // the statements and classifications as they are now, and the audits: collect reads them too
  rowInputs: (store) => {
    const current = withCurrentStatement(store);
    const rows: unknown[] = [];
    try {
      for (const o of store.outputs(validateStage)) {
        const v = current(o.output);
        rows.push([
          o.key,
          v.problem_statement,
          v.hints_text,
          v.statement_origin,
          v.bug_category,
          v.spec_refs,
          v.nf,
        ]);
      }
    } catch {
      // swe5g.validate not registered
    }
    return { rows, audits: [...audits(store)] };
  },
  funnelRows: { [swe5gMine.name]: minedRows },
  verify: {
    verifier: swe5gVerifier,
    preflight: verifyPreflight,
    unverifiedLimitation:
      'The gold patches of this snapshot were not re-run before release (`telebench verify` was not part of it).',
  },
  images: { push: pushImages, republish: republishImages },
  refresh: swe5gRefresh,
});
