/**
 * Reads what a run produced from the store and turns it into release rows: SWE-Bench 5G from the
 * validated instances (`swe5g.validate`), TeleResilienceBench from the instances stage. Also the
 * construction funnel (counts per stage) and the input hashes for the manifest.
 */
import type { StoreReader } from '../../pipeline/stage.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunManifest } from '../../pipeline/manifest.js';
import { hashJson, sha256 } from '../../pipeline/hash.js';
import { resilienceInstanceSchema } from '../resilience/instance.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { FunnelStep } from '../../datasets/card.js';
import { repositoryLicense, subsetLicense, PROJECT_LICENSES } from '../../datasets/licenses.js';
import type { Swe5gRow, ResilienceRow } from '../../datasets/index.js';
import type { ProblemStatementSource } from '../../datasets/swe-bench-5g/schema.js';
import type { CandidateSource, ValidatedInstance } from '../swe5g/types.js';
import type { SubsetLoadOutput } from '../resilience/types.js';
import type { InstancesOutput } from '../resilience/instances.js';
import type { MineOutput } from '../swe5g/mine/mine.js';

/**
 * Where an instance's problem statement came from: the GitHub issues API for API-mined PRs, the
 * issues file (`swe5g.mining.issues_from`, `--issues-from`) for git-mined ones (the only way a
 * git-mined PR gets issue text), `none` when it has none.
 */
export function problemStatementSource(
  problemStatement: string,
  source: CandidateSource,
): ProblemStatementSource {
  if (problemStatement.trim() === '') return 'none';
  return source === 'api' ? 'issues_api' : 'issues_file';
}

/**
 * Validated instance -> SWE-Bench 5G row (SWE-bench field names plus ours).
 * @param source how its PR was mined (the candidate's `source`: `api` or `git`)
 * @returns null for an incomplete instance (no problem statement): never released
 */
export function swe5gRowOf(v: ValidatedInstance, source: CandidateSource): Swe5gRow | null {
  if (v.incomplete || v.problem_statement.trim() === '') return null;
  return {
    instance_id: v.instance_id,
    repo: v.repo,
    base_commit: v.base_commit,
    patch: v.patch,
    test_patch: v.test_patch,
    problem_statement: v.problem_statement,
    problem_statement_source: problemStatementSource(v.problem_statement, source),
    hints_text: v.hints_text,
    created_at: v.created_at,
    version: v.version,
    environment_setup_commit: v.environment_setup_commit,
    FAIL_TO_PASS: v.FAIL_TO_PASS,
    PASS_TO_PASS: v.PASS_TO_PASS,
    alias: v.alias,
    project: v.repo.split('/')[0]!.toLowerCase(),
    nf: v.nf,
    bug_category: v.bug_category,
    strategy: v.strategy,
    spec_refs: v.spec_refs,
    image_recipe: v.image_recipe,
    image_name: v.images.instance,
    toolchain: v.toolchain,
    license: repositoryLicense(v.repo, v.license),
  };
}

const PUBLISHED_AND_TOP = new Set([
  'sample_id',
  'sub_benchmark',
  'question',
  'choices',
  'correct_answer',
  'incorrect_answer',
  'half_reasoning_trace',
  'correct_index',
  'incorrect_index',
  'gold_index',
  'wrong_index',
  'difficulty',
  'source',
  'license',
  'profile',
  'provenance',
  'role',
]);

const answerText = (v: unknown): unknown => (typeof v === 'number' ? String(v) : v);
const firstDefined = (...vs: unknown[]): unknown => vs.find((v) => v !== undefined);

/**
 * Instance of the construction stage -> TeleResilienceBench row: the published fields, option
 * indices, difficulty, source, licence (from the source table when the instance has none), profile,
 * and every other field of the instance under `provenance`.
 * @param defaultProfile profile named in the configuration, used when the instance has none
 */
export function resilienceRowOf(
  instance: Record<string, unknown>,
  defaultProfile: string,
): ResilienceRow {
  const sampleId = String(instance.sample_id ?? '');
  const subset = String(instance.sub_benchmark ?? sampleId.split(':')[1] ?? '');
  const source = String(instance.source ?? sampleId.split(':')[0] ?? 'unknown');
  const extra = Object.fromEntries(
    Object.entries(instance).filter(([k]) => !PUBLISHED_AND_TOP.has(k)),
  );
  const prov =
    instance.provenance && typeof instance.provenance === 'object'
      ? (instance.provenance as Record<string, unknown>)
      : {};
  return {
    sample_id: sampleId,
    sub_benchmark: subset,
    question: instance.question as string,
    choices: (instance.choices as string[] | undefined) ?? null,
    correct_answer: answerText(instance.correct_answer) as string,
    incorrect_answer: answerText(instance.incorrect_answer) as string,
    half_reasoning_trace: instance.half_reasoning_trace as string,
    role:
      (instance.role as ResilienceRow['role'] | undefined) ??
      (subset === 'telemath' ? 'auxiliary' : 'main'),
    correct_index:
      (firstDefined(instance.correct_index, instance.gold_index) as number | undefined) ?? null,
    incorrect_index:
      (firstDefined(instance.incorrect_index, instance.wrong_index) as number | undefined) ?? null,
    difficulty:
      instance.difficulty === undefined || instance.difficulty === null
        ? null
        : String(instance.difficulty),
    source,
    license:
      typeof instance.license === 'string' ? instance.license : subsetLicense(source, subset).spdx,
    profile:
      typeof instance.profile === 'string'
        ? instance.profile
        : typeof (instance.generator as { profile?: unknown } | undefined)?.profile === 'string'
          ? String((instance.generator as { profile: string }).profile)
          : defaultProfile,
    provenance: { ...prov, ...extra },
  };
}

/**
 * The instances of the TeleResilienceBench construction: the JSON Lines file that
 * `resilience.instances` wrote (its output names it and its sha256), each line checked with the
 * construction's schema; an output that is itself an instance is taken as it is.
 * @throws TelebenchError `release_source_changed` when the file no longer matches its recorded
 *   sha256, `release_rows_invalid` naming file and line for a bad line
 */
export function resilienceInstancesOf(
  outputs: readonly { key: string; output: unknown }[],
): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const o of outputs) {
    const out = o.output as { files?: { instances?: { path: string; sha256: string } } } | null;
    const file = out?.files?.instances;
    if (!file) {
      if (out && typeof out === 'object' && 'sample_id' in out)
        rows.push(out as Record<string, unknown>);
      continue;
    }
    const text = readFileSync(file.path, 'utf8');
    if (sha256(text) !== file.sha256) {
      throw new TelebenchError(
        'release_source_changed',
        `${file.path} changed since resilience.instances wrote it (sha256 differs); run the resilience pipeline again`,
        {
          tier: 'config',
          context: { file: file.path },
        },
      );
    }
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch (err) {
        throw new TelebenchError('release_rows_invalid', `${file.path} line ${i + 1} is not JSON`, {
          tier: 'config',
          cause: err,
        });
      }
      const r = resilienceInstanceSchema.safeParse(parsed);
      if (!r.success) {
        const issue = r.error.issues[0]!;
        throw new TelebenchError(
          'release_rows_invalid',
          `${file.path} line ${i + 1}: ${issue.path.join('.')}: ${issue.message}`,
          {
            tier: 'config',
            context: { file: file.path, line: i + 1 },
          },
        );
      }
      rows.push(r.data as Record<string, unknown>);
    });
  }
  return rows;
}

/**
 * Rows of one done item of the stages whose item is not one row: a subset (`resilience.load`: its
 * rows kept, and those rejected by reason), the instances file (`resilience.instances`), a
 * repository (`swe5g.mine`: its merged PRs).
 */
const ROWS_OF: Record<
  string,
  (output: unknown) => { rows: number; rejected: Record<string, number> }
> = {
  'resilience.load': (o) => {
    const l = o as SubsetLoadOutput;
    const rejected: Record<string, number> = {};
    for (const r of l.rejected ?? []) rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
    return { rows: l.items?.length ?? 0, rejected };
  },
  'resilience.instances': (o) => ({
    rows: (o as InstancesOutput).summary?.totals.instances ?? 0,
    rejected: {},
  }),
  'swe5g.mine': (o) => ({ rows: (o as MineOutput).prs?.length ?? 0, rejected: {} }),
};

/**
 * Funnel counts of `stages` from the store, in rows (all items, any state): one item is one row
 * except for the stages of {@link ROWS_OF}, whose done items count their rows (and rejected rows
 * as skipped, by reason); a failed item of those counts once (its rows are unknown).
 */
export function funnelOf(store: StoreReader, stages: readonly string[]): FunnelStep[] {
  const out: FunnelStep[] = [];
  for (const stage of stages) {
    const f: FunnelStep = { stage, done: 0, skipped: 0, failed: 0, reasons: {} };
    const rowsOf = ROWS_OF[stage];
    let any = false;
    for (const it of store.items(stage)) {
      any = true;
      if (it.state === 'done' && rowsOf) {
        const r = rowsOf(it.output);
        f.done += r.rows;
        for (const [reason, n] of Object.entries(r.rejected)) {
          f.skipped += n;
          f.reasons[reason] = (f.reasons[reason] ?? 0) + n;
        }
      } else if (it.state === 'done') f.done++;
      else if (it.state === 'skipped') {
        f.skipped++;
        const r = it.skipReason ?? 'unknown';
        f.reasons[r] = (f.reasons[r] ?? 0) + 1;
      } else if (it.state === 'failed') f.failed++;
    }
    if (any) out.push(f);
  }
  return out;
}

/** Hash of the (key, input hash) pairs of a stage's done items: what the rows were made from. */
export function inputHashOf(store: StoreReader, stage: string): string {
  const pairs: [string, string][] = [];
  for (const it of store.items(stage)) if (it.state === 'done') pairs.push([it.key, it.inputHash]);
  return hashJson(pairs);
}

/** Sentence naming where a licence comes from, for the card's licence table. */
export function licenseEvidence(datasetId: string, spdx: string): string {
  if (datasetId === 'swe-bench-5g') {
    const projects = Object.entries(PROJECT_LICENSES)
      .filter(([, l]) => l === spdx)
      .map(([p]) => p);
    return projects.length
      ? `LICENSE of the ${projects.join(', ')} repositories (registry config/repos.yaml)`
      : 'licence of the source repository as the registry names it';
  }
  if (spdx === 'MIT')
    return 'source cards and LICENSE files: GSMA/ot-lite card (license: mit), ORAN-Bench-13K and srsRANBench LICENSE';
  if (spdx === 'unknown') return 'no licence on record for the source: check before reuse';
  return 'licence declared by the source';
}

/**
 * Done outputs of a source stage, or a clear error when the stage is not registered.
 * @throws TelebenchError `release_source_missing` (tier config) naming the stage and the config key
 */
export function sourceOutputs(
  store: StoreReader,
  stage: string,
  datasetId: string,
): { key: string; output: unknown }[] {
  try {
    return [...store.outputsNamed(stage)];
  } catch (err) {
    throw new TelebenchError(
      'release_source_missing',
      `the rows of ${datasetId} come from stage "${stage}", which is not registered (set release.sources.${datasetId} in the configuration)`,
      { tier: 'config', cause: err, context: { stage, dataset: datasetId } },
    );
  }
}

/** The `--limit` of the latest runs that built a release's rows (a sample), from their manifests. */
export interface SampleInfo {
  /** The `--limit N` values of those runs, ascending. */
  limits: number[];
  /** Those runs (`<state>/runs/<id>`), oldest first. */
  runs: string[];
}

/** `--limit N` / `--limit=N` in a run's argv, else null. Pure. */
function limitOf(argv: readonly string[]): number | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = a === '--limit' ? argv[i + 1] : a.startsWith('--limit=') ? a.slice(8) : undefined;
    if (v !== undefined && /^\d+$/.test(v)) return Number(v);
  }
  return null;
}

/**
 * Whether the rows are a sample: for each stage of `stages`, the latest run that ran it (its
 * manifest `<state>/runs/<id>/manifest.json` lists the stage); when any of those runs had
 * `--limit`, that stage stopped after at most N items, so the rows are a sample of what the
 * configuration describes.
 * @returns null when no such run had a limit (or no run manifest is there)
 */
export function sampleOf(stateDir: string, stages: readonly string[]): SampleInfo | null {
  const dir = join(stateDir, 'runs');
  if (!existsSync(dir)) return null;
  const runs: { id: string; at: string; stages: string[]; limit: number | null }[] = [];
  for (const id of readdirSync(dir)) {
    const f = join(dir, id, 'manifest.json');
    if (!existsSync(f)) continue;
    try {
      const m = JSON.parse(readFileSync(f, 'utf8')) as Partial<RunManifest>;
      runs.push({
        id,
        at: String(m.startedAt ?? ''),
        stages: Object.keys(m.stageVersions ?? {}),
        limit: limitOf(m.argv ?? []),
      });
    } catch {
      continue; // a manifest cut by a kill: that run's limit is unknown, the others still count
    }
  }
  runs.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id));
  const latest = new Map<string, (typeof runs)[number]>();
  for (const r of runs) for (const s of r.stages) if (stages.includes(s)) latest.set(s, r);
  const limited = [...new Set(latest.values())].filter((r) => r.limit !== null);
  if (limited.length === 0) return null;
  limited.sort((a, b) => a.at.localeCompare(b.at));
  return {
    limits: [...new Set(limited.map((r) => r.limit!))].sort((a, b) => a - b),
    runs: limited.map((r) => r.id),
  };
}
