/**
 * The local release stages that end the `all` pipeline: `release.swe5g` (needs `swe5g.validate`)
 * and `release.resilience` (needs the TeleResilienceBench instances stage). Two stages rather than
 * one `release.local`, because the runner blocks a stage whose need stopped at preflight: with one
 * stage needing both branches, a branch stopped at preflight (no model server, no Docker) would
 * block the release of the other. Each writes `<state>/releases/<dataset>/0.0.0-local.<hash>/`
 * (version `release.local.version`, default `auto`); no upload.
 */
import { defineStage, type Stage } from '../../pipeline/stage.js';
import { PreflightError, SkipItem, TelebenchError } from '../../pipeline/errors.js';
import { DockerClient } from '../../pipeline/providers/docker/client.js';
import { swe5gConfigSchema, type HasSwe5g } from '../swe5g/config.js';
import { hashJson } from '../../pipeline/hash.js';
import { swe5gDataset, resilienceDataset, type DatasetDefinition } from '../../datasets/index.js';
import { releaseSettings } from './config.js';
import { releaseDataset, type ReleaseWiring, type Verifier } from './release.js';
import type { VerifierEnv } from './verifier.js';
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

/**
 * Makes the local release stage of one dataset.
 * @param needs the final stage of the dataset's branch when it is registered (else [])
 * @param verifier re-runs SWE-Bench 5G rows before writing (null: not verified, the card says so)
 * Building the stage throws nothing. Its `preflight` rethrows what `args.preflight` throws
 * (PreflightError when Docker does not answer). Its `run` turns `release_no_rows` into
 * SkipItem `no_rows` and rethrows the rest of {@link releaseDataset}'s errors:
 * @throws TelebenchError (from `run`) `release_version_exists`, `release_rows_invalid`,
 *   `release_folder_incomplete`, `release_manifest_unreadable`, and the verifier's errors
 */
export function makeLocalReleaseStage(args: {
  name: string;
  dataset: DatasetDefinition;
  /** Evaluated when the runner reads `needs`, so stages registered later are still seen. */
  needs: () => readonly string[];
  wiring: ReleaseWiring;
  verifier: (config: unknown, env: VerifierEnv) => Verifier | null;
  /** Checks run before the stage when its source holds rows (SWE-Bench 5G: the verify executor). */
  preflight?: (config: unknown) => Promise<void>;
}): Stage<
  { dataset: string; version: string; source: string; rows: string; funnel: string },
  LocalReleaseOutput,
  unknown
> {
  const { dataset, wiring } = args;
  const stage = defineStage<
    { dataset: string; version: string; source: string; rows: string; funnel: string },
    LocalReleaseOutput,
    unknown
  >({
    name: args.name,
    // 2: rows carry problem_statement_source; card and manifest name the sample, the models; the
    // funnel counts rows. 3: SWE-Bench 5G rows carry image_name too (both changes merged)
    version: 3,
    needs: [],
    description: `Local release of ${dataset.prettyName} under <state>/releases/${dataset.id}/ (no upload).`,
    async preflight(ctx) {
      const cfg = releaseSettings(ctx.config);
      const source = cfg.sources[dataset.id as keyof typeof cfg.sources];
      if (!args.preflight || wiring.stageVersion(source) === undefined) return;
      if ([...ctx.store.outputsNamed(source)].length === 0) return;
      await args.preflight(ctx.config);
    },
    *plan(ctx) {
      const cfg = releaseSettings(ctx.config);
      const source = cfg.sources[dataset.id as keyof typeof cfg.sources];
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
          funnel: hashJson(funnelOf(ctx.store, wiring.branchStages(dataset.id))),
        },
      };
    },
    async run(item, ctx) {
      try {
        const out = await releaseDataset({
          ctx,
          wiring,
          dataset,
          version: item.input.version,
          verifier: releaseSettings(ctx.config).verify_before_release
            ? args.verifier(ctx.config, {
                stateDir: ctx.stateDir,
                configFile: ctx.configFile,
                log: (m) => ctx.log(m),
                signal: ctx.signal,
              })
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
        if (err instanceof TelebenchError && err.code === 'release_no_rows')
          throw new SkipItem('no_rows', err.message);
        // a rerun on the same rows cannot change this: skipped with the reason, the run goes on
        if (err instanceof TelebenchError && err.code === 'release_scripted_output')
          throw new SkipItem('scripted_output', err.message);
        throw err;
      }
    },
  });
  Object.defineProperty(stage, 'needs', { get: args.needs, enumerable: true });
  return stage;
}

/**
 * The two local release stages. Each needs its branch's final stage when that stage is registered
 * (`swe5g.validate`, `resilience.instances`), checked whenever the runner asks.
 */
export function localReleaseStages(args: {
  wiring: ReleaseWiring;
  swe5gFinal: string;
  resilienceFinal: string;
  verifier: (config: unknown, env: VerifierEnv) => Verifier | null;
}): Stage<never, LocalReleaseOutput, unknown>[] {
  return [
    makeLocalReleaseStage({
      name: 'release.swe5g',
      dataset: swe5gDataset as unknown as DatasetDefinition,
      needs: () =>
        args.wiring.stageVersion(args.swe5gFinal) !== undefined ? [args.swe5gFinal] : [],
      wiring: args.wiring,
      verifier: args.verifier,
      preflight: verifyPreflight,
    }),
    makeLocalReleaseStage({
      name: 'release.resilience',
      dataset: resilienceDataset as unknown as DatasetDefinition,
      needs: () =>
        args.wiring.stageVersion(args.resilienceFinal) !== undefined ? [args.resilienceFinal] : [],
      wiring: args.wiring,
      verifier: () => null,
    }),
  ] as unknown as Stage<never, LocalReleaseOutput, unknown>[];
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

export { releaseSettings };
