/**
 * The local release stages that end the `all` pipeline, one per registered dataset (its entry's
 * `releaseStage`: `release.swe5g` needs `swe5g.validate`, `release.resilience` the
 * TeleResilienceBench instances stage). One stage per dataset rather than one `release.local`,
 * because the runner blocks a stage whose need stopped at preflight: with one stage needing every
 * branch, a branch stopped at preflight (no model server, no Docker) would block the release of
 * the others. Each writes `<state>/releases/<dataset>/0.0.0-local.<hash>/`
 * (version `release.local.version`, default `auto`); no upload.
 */
import { defineStage, type Stage } from '../../pipeline/stage.js';
import { SkipItem, TelebenchError } from '../../pipeline/errors.js';
import { hashJson } from '../../pipeline/hash.js';
import { releaseSettings } from './config.js';
import { releaseDataset, sourceStageOf, type ReleaseWiring } from './release.js';
import type { AnyDatasetEntry } from './entry.js';
import { funnelOf } from './collect.js';

/** Output of a release stage item. */
export interface LocalReleaseOutput {
  dataset: string;
  version: string;
  status: 'written' | 'unchanged';
  dir: string;
  rows: number;
  content_digest: string;
}

/** Input of a release stage item: what its rows and funnel were made from (hashes). */
export interface ReleaseItemInput {
  dataset: string;
  version: string;
  source: string;
  rows: string;
  /** Hash of what else the rows are made from (`DatasetEntry.rowInputs`), when the entry says. */
  row_inputs?: string;
  funnel: string;
}

/**
 * Makes the local release stage of one dataset: it needs the entry's source stage when that stage
 * is registered (checked whenever the runner reads `needs`, so stages registered later are seen).
 * Building the stage throws nothing. Its `preflight` rethrows what the entry's verify preflight
 * throws (PreflightError when Docker does not answer). Its `run` turns `release_no_rows` and
 * `release_scripted_output` into skips and rethrows the rest of {@link releaseDataset}'s errors:
 * @throws TelebenchError (from `run`) `release_version_exists`, `release_rows_invalid`,
 *   `release_folder_incomplete`, `release_manifest_unreadable`, and the verifier's errors
 */
export function makeLocalReleaseStage(
  entry: AnyDatasetEntry,
  wiring: ReleaseWiring,
): Stage<ReleaseItemInput, LocalReleaseOutput, unknown> {
  const dataset = entry.definition;
  const verifying = (config: unknown) =>
    entry.verify !== undefined && releaseSettings(config).verify_before_release;
  const stage = defineStage<ReleaseItemInput, LocalReleaseOutput, unknown>({
    name: entry.releaseStage,
    // 2: rows carry problem_statement_source; card and manifest name the sample, the models; the
    // funnel counts rows. 3: SWE-Bench 5G rows carry image_name too (both changes merged)
    // 4: SWE-Bench 5G rows carry problem_statement_model; model-written rows in their own config
    version: 4,
    needs: [],
    description: `Local release of ${dataset.prettyName} under <state>/releases/${dataset.id}/ (no upload).`,
    async preflight(ctx) {
      const source = sourceStageOf(ctx.config, wiring, entry);
      const check = entry.verify?.preflight;
      if (!check || !verifying(ctx.config) || wiring.stageVersion(source) === undefined) return;
      if ([...ctx.store.outputsNamed(source)].length === 0) return;
      await check(ctx.config);
    },
    *plan(ctx) {
      const cfg = releaseSettings(ctx.config);
      const source = sourceStageOf(ctx.config, wiring, entry);
      if (wiring.stageVersion(source) === undefined) {
        ctx.log(
          `release of ${dataset.id} planned nothing: its source stage "${source}" is not registered`,
        );
        return;
      }
      const outputs = [...ctx.store.outputsNamed(source)];
      yield {
        key: dataset.id,
        input: {
          dataset: dataset.id,
          version: cfg.local.version,
          source,
          rows: hashJson(outputs.map((o) => [o.key, o.output])),
          ...(entry.rowInputs ? { row_inputs: hashJson(entry.rowInputs(ctx.store)) } : {}),
          funnel: hashJson(
            funnelOf(ctx.store, wiring.pipelineStages(entry.pipeline), entry.funnelRows),
          ),
        },
      };
    },
    async run(item, ctx) {
      try {
        const out = await releaseDataset({
          ctx,
          wiring,
          entry,
          version: item.input.version,
          verifier: verifying(ctx.config)
            ? (entry.verify?.verifier(ctx.config, {
                stateDir: ctx.stateDir,
                configFile: ctx.configFile,
                log: (m) => ctx.log(m),
                signal: ctx.signal,
              }) ?? null)
            : null,
        });
        return {
          dataset: dataset.id,
          version: out.manifest.version,
          status: out.status,
          dir: out.dir,
          rows: out.manifest.counts.rows,
          content_digest: out.manifest.content_digest,
        };
      } catch (err) {
        throw asSkip(err);
      }
    },
  });
  Object.defineProperty(stage, 'needs', {
    get: () =>
      [entry.source, ...(entry.alsoNeeds ?? [])].filter(
        (s) => wiring.stageVersion(s) !== undefined,
      ),
    enumerable: true,
  });
  return stage;
}

/**
 * What a release error becomes in the stage: nothing releasable (`release_no_rows`) and rows of
 * the scripted test server (`release_scripted_output`, which a rerun on the same rows cannot
 * change) are skips with the reason, so the run goes on; anything else is returned as it is.
 */
function asSkip(err: unknown): unknown {
  if (err instanceof TelebenchError && err.code === 'release_no_rows')
    return new SkipItem('no_rows', err.message);
  if (err instanceof TelebenchError && err.code === 'release_scripted_output')
    return new SkipItem('scripted_output', err.message);
  return err;
}

/** The local release stage of every dataset the wiring registers, in registration order. */
export function localReleaseStages(
  wiring: ReleaseWiring,
): Stage<never, LocalReleaseOutput, unknown>[] {
  return wiring.datasets.entries.map((e) => makeLocalReleaseStage(e, wiring)) as unknown as Stage<
    never,
    LocalReleaseOutput,
    unknown
  >[];
}

export { releaseSettings };
