/**
 * `release`: assembles one dataset's release folder from what the store holds — shared by the
 * `telebench release` command and the `release.*` stages of the `all` pipeline.
 */
import type { StoreReader } from '../../pipeline/stage.js';
import { hashJson } from '../../pipeline/hash.js';
import { gitSha } from '../../pipeline/manifest.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { DatasetDefinition } from '../../datasets/definition.js';
import type { VerifySummary } from '../../datasets/card.js';
import { MAIN_SUBSETS, type Swe5gRow } from '../../datasets/index.js';
import type { CandidateSource, ValidatedInstance } from '../swe5g/types.js';
import {
  planRelease,
  writeRelease,
  listReleases,
  readManifest,
  readReleaseRows,
  releaseDir,
  type ReleaseInput,
  type WriteOutcome,
  type ReleasePlan,
} from './assemble.js';
import {
  swe5gRowOf,
  resilienceRowOf,
  funnelOf,
  inputHashOf,
  licenseEvidence,
  sampleOf,
  sourceOutputs,
  resilienceInstancesOf,
} from './collect.js';
import { releaseSettings } from './config.js';
import { swe5gFilter } from '../swe5g/filter/filter.js';

/** What the release code needs from the composition root (stages/index.ts), without importing it. */
export interface ReleaseWiring {
  /** Stage names of a dataset's branch, in pipeline order (for the funnel). */
  branchStages(datasetId: string): readonly string[];
  /** Registered version of a stage, undefined when the stage is not registered. */
  stageVersion(name: string): number | undefined;
}

/** Re-runs released SWE-Bench 5G rows; see `verify.ts`. */
export type Verifier = (
  rows: readonly Swe5gRow[],
) => Promise<{ summary: VerifySummary; reproduced: ReadonlySet<string> }>;

/** The parts of a stage context a release needs (the CLI builds one from the state directory). */
export interface ReleaseContextLike {
  store: StoreReader;
  config: unknown;
  stateDir: string;
  log(message: string): void;
}

/** Rows a run produced for a dataset, plus counts of what was left out and why. */
export interface CollectedRows {
  rows: unknown[];
  source: string;
  leftOut: Record<string, number>;
  profile: string | null;
  settings: Record<string, unknown>;
  /** Provenance lines for the card (generator settings). */
  notes?: string[];
  /** Snapshot limitations for the card. */
  limitations?: string[];
  /** Models behind the rows: generator (made them) and targets (configured to be evaluated). */
  models: { generator: string[]; targets: string[] };
}

/** Suffix of the server version the scripted test server (test/servers/llm-server.ts) reports. */
export const SCRIPTED_MARK = 'telebench-scripted';

/**
 * Collects the rows of `dataset` from its source stage.
 * @throws TelebenchError `release_source_missing` when the source stage is not registered;
 *   `release_scripted_output` (tier config) when TeleResilienceBench rows come from the scripted
 *   test server and `release.allow_scripted_output` is not set
 */
export function collectRows(ctx: ReleaseContextLike, dataset: DatasetDefinition): CollectedRows {
  const cfg = releaseSettings(ctx.config);
  const source = cfg.sources[dataset.id as keyof typeof cfg.sources];
  const whole = (ctx.config ?? {}) as Record<string, unknown>;
  if (dataset.id === 'swe-bench-5g') {
    const rows: Swe5gRow[] = [];
    let incomplete = 0;
    const mined = minedBy(ctx.store);
    for (const o of sourceOutputs(ctx.store, source, dataset.id)) {
      // the source stage is named in the configuration (release.sources): its outputs are the
      // validated instances, and every row is checked against the row schema (validateRows)
      const v = o.output as ValidatedInstance;
      const r = swe5gRowOf(v, mined.get(v.instance_id) ?? 'git');
      if (r) rows.push(r);
      else incomplete++;
    }
    const swe5g = (whole.swe5g ?? {}) as Record<string, unknown>;
    return {
      rows,
      source,
      leftOut: { incomplete_left_out: incomplete },
      profile: null,
      settings: { testgen: swe5g.testgen ?? null, environments: swe5g.environments ?? null },
      notes: problemStatementNotes(rows, whole),
      models: swe5gModels(whole),
    };
  }
  const resilience = (whole.resilience ?? {}) as Record<string, unknown>;
  const generator = (resilience.generator ?? {}) as Record<string, unknown>;
  const profile = typeof generator.profile === 'string' ? generator.profile : 'default';
  const rows = resilienceInstancesOf(sourceOutputs(ctx.store, source, dataset.id)).map((i) =>
    resilienceRowOf(i, profile),
  );
  // generator settings as the rows recorded them (model, provider, server version, options)
  const generators = new Map<string, number>();
  for (const r of rows) {
    const g = (r.provenance.generator ?? {}) as Record<string, unknown>;
    const text =
      `generator \`${String(g.model ?? 'unknown')}\` via ${String(g.provider ?? 'unknown')} ${g.server_version ? `(server ${String(g.server_version)})` : ''} options ${JSON.stringify(g.options ?? {})}`.replace(
        / +/g,
        ' ',
      );
    generators.set(text, (generators.get(text) ?? 0) + 1);
  }
  const notes = [...generators].map(([t, n]) => `${t}: ${n} rows`);
  // The scripted test server's answers are synthetic stand-ins: never released by accident.
  const scripted = rows.filter((r) =>
    String(
      (r.provenance.generator as Record<string, unknown> | undefined)?.server_version ?? '',
    ).includes(SCRIPTED_MARK),
  ).length;
  if (scripted > 0 && !cfg.allow_scripted_output) {
    throw new TelebenchError(
      'release_scripted_output',
      `${scripted} of ${rows.length} ${dataset.id} rows were generated by the scripted test server (server version *${SCRIPTED_MARK}): its answers are synthetic stand-ins, never to be released. Generate them with a real model (resilience.generator.llm) and run again, or set release.allow_scripted_output: true to release them for a pipeline test`,
      { tier: 'config', context: { dataset: dataset.id, rows: scripted } },
    );
  }
  if (scripted > 0)
    notes.push(
      `${scripted} rows come from the scripted test server (release.allow_scripted_output: true): synthetic answers, for pipeline tests only`,
    );
  const present = new Set(rows.map((r) => r.sub_benchmark));
  const missing = [...MAIN_SUBSETS, 'telemath'].filter((s) => !present.has(s));
  const limitations = missing.length
    ? [
        `Subsets of the published benchmark not in this snapshot (their source was not loaded or gave no instance): ${missing.join(', ')}.`,
      ]
    : [];
  const targets = (
    (whole.resilience_eval as { targets?: { model?: unknown }[] } | undefined)?.targets ?? []
  ).map((t) => String(t.model));
  const made = [
    ...new Set(
      rows.map((r) =>
        String((r.provenance.generator as { model?: unknown } | undefined)?.model ?? 'unknown'),
      ),
    ),
  ].sort();
  return {
    rows,
    source,
    leftOut: {},
    profile,
    settings: { resilience },
    notes,
    limitations,
    models: { generator: made, targets },
  };
}

/**
 * How each instance's PR was mined (`api` or `git`), from the candidates of `swe5g.filter`
 * (the validated instance does not carry it); an instance missing there counts as `git`.
 */
function minedBy(store: StoreReader): Map<string, CandidateSource> {
  const out = new Map<string, CandidateSource>();
  try {
    for (const o of store.outputs(swe5gFilter)) out.set(o.key, o.output.source);
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
    `problem statements: ${n('issues_api')} rows from the GitHub issues API, ${n('issues_file')} rows from an issues file (field \`problem_statement_source\`)`,
  ];
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

/** The latest written release other than `version`, with its rows. */
function previousOf(stateDir: string, dataset: DatasetDefinition, version: string) {
  const existing = readManifest(releaseDir(stateDir, dataset.id, version));
  const prevVersion = existing
    ? existing.previous_version
    : (listReleases(stateDir, dataset.id)
        .filter((m) => m.version !== version)
        .at(-1)?.version ?? null);
  if (!prevVersion) return null;
  return {
    version: prevVersion,
    rows: readReleaseRows(releaseDir(stateDir, dataset.id, prevVersion)),
  };
}

/**
 * Builds and writes a release of `dataset`.
 * @param version a version, or `auto` for `0.0.0-local.<12 hex of the content>`
 * @param verifier re-runs SWE-Bench 5G rows first (dropped instances are listed in the card); null to skip
 * @param pushImages SWE-Bench 5G: puts the instance images in a registry and names them by digest
 * @returns the write outcome (`written` or `unchanged`) and the plan
 * @throws TelebenchError `release_version_exists` when the version exists with different content,
 *   `release_rows_invalid` when a row fails the schema, `release_no_rows` when nothing is left
 */
export async function releaseDataset(args: {
  ctx: ReleaseContextLike;
  wiring: ReleaseWiring;
  dataset: DatasetDefinition;
  version: string;
  verifier: Verifier | null;
  /**
   * SWE-Bench 5G, `release --push REGISTRY`: pushes the rows' instance images and returns the rows
   * naming them by digest (`push.ts` `pushRowImages`); after the verifier, before the plan.
   */
  pushImages?: ((rows: Swe5gRow[]) => Promise<Swe5gRow[]>) | null;
  now?: Date;
}): Promise<WriteOutcome & { plan: ReleasePlan }> {
  const { ctx, wiring, dataset } = args;
  const collected = collectRows(ctx, dataset);
  let rows = collected.rows;
  const snapshotLimitations: string[] = [...(collected.limitations ?? [])];
  let verify: VerifySummary | null = null;
  if (args.verifier && dataset.id === 'swe-bench-5g' && rows.length > 0) {
    const result = await args.verifier(rows as Swe5gRow[]);
    verify = result.summary;
    rows = rows.filter((r) => result.reproduced.has((r as Swe5gRow).instance_id));
  }
  if (args.pushImages && dataset.id === 'swe-bench-5g' && rows.length > 0)
    rows = await args.pushImages(rows as Swe5gRow[]);
  if (rows.length === 0) {
    throw new TelebenchError(
      'release_no_rows',
      `nothing to release for ${dataset.id}: stage "${collected.source}" holds no releasable rows${collected.leftOut.incomplete_left_out ? ` (${collected.leftOut.incomplete_left_out} incomplete left out)` : ''}`,
      { tier: 'config', context: { dataset: dataset.id, source: collected.source } },
    );
  }
  const branch = wiring.branchStages(dataset.id);
  const stageVersions: Record<string, number> = {};
  const inputHashes: Record<string, string> = {};
  for (const s of branch) {
    const v = wiring.stageVersion(s);
    if (v === undefined) continue;
    stageVersions[s] = v;
    inputHashes[s] = inputHashOf(ctx.store, s);
  }
  const notes: string[] = [`rows from stage \`${collected.source}\``, ...(collected.notes ?? [])];
  for (const [k, n] of Object.entries(collected.leftOut))
    if (n > 0) notes.push(`${k.replace(/_/g, ' ')}: ${n}`);
  const base: Omit<ReleaseInput, 'version' | 'previous'> = {
    dataset,
    rows,
    createdAt: (args.now ?? new Date()).toISOString(),
    provenance: {
      gitSha: gitSha(),
      configHash: hashJson(ctx.config ?? null),
      stageVersions,
      inputHashes,
      settings: collected.settings,
      profile: collected.profile,
      provenanceNotes: notes,
      sample: sampleOf(ctx.stateDir, branch),
      models: collected.models,
    },
    funnel: funnelOf(ctx.store, branch),
    licenseEvidence: (spdx) => licenseEvidence(dataset.id, spdx),
    verify,
    snapshotLimitations,
    extraCounts: collected.leftOut,
  };
  let version = args.version;
  if (version === 'auto') {
    const probe = planRelease({ ...base, version: 'local', previous: null });
    version = `0.0.0-local.${probe.manifest.content_digest.slice(0, 12)}`;
  }
  const plan = planRelease({
    ...base,
    version,
    previous: previousOf(ctx.stateDir, dataset, version),
  });
  const outcome = writeRelease(ctx.stateDir, plan);
  ctx.log(
    `${dataset.id} ${version}: ${outcome.status} at ${outcome.dir} (${plan.rows.length} rows)`,
  );
  return { ...outcome, plan };
}
