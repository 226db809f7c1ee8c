/**
 * The composition root of the stages: every stage and every pipeline (the CLI commands that the
 * dataset branches add are in `commands.ts`, which loads no stage). The CLI (`pipeline/cli/`)
 * imports this file when a command runs; nothing in `pipeline/` else does.
 */
import { SWE5G_STAGES } from './swe5g/pipeline-stages.js';
import type { Pipeline, Stage } from '../pipeline/stage.js';
import type { AppConfig } from './config.js';
import {
  selftestItems,
  selftestEcho,
  selftestSummary,
  selftestPipeline,
} from './selftest/selftest.js';
import { swe5gMiningStages, miningFunnelMarkdown } from './swe5g/mining.js';
import { evalStages as resilienceEvalStages } from './resilience-eval/stages.js';
import { resilienceEvalPipeline } from './resilience-eval/pipeline.js';
import { resilienceStages, resiliencePipeline } from './resilience/pipeline.js';
import { testgenStage } from './swe5g/testgen/testgen.js';
import { testgenMarkdown } from './swe5g/testgen/report.js';
import { validationMarkdown } from './swe5g/validate/report.js';
import { environmentsMarkdown } from './swe5g/report-environments.js';
import { resolveStage } from './swe5g/resolve/resolve.js';
import { buildStage } from './swe5g/build/build.js';
import { validateStage } from './swe5g/validate/validate.js';
import { auditStage } from './swe5g/audit/audit.js';
import { statementStage } from './swe5g/statement/stage.js';
import { auditMarkdown } from './swe5g/audit/report.js';
import { localReleaseStages } from './release/stage.js';
import type { ReleaseWiring } from './release/release.js';
import { datasetRegistry, type DatasetRegistry } from './release/entry.js';
import { TelebenchError } from '../pipeline/errors.js';
import { swe5gEntry } from './swe5g/dataset.js';
import { resilienceEntry } from './resilience/dataset.js';
import { evalStages as swe5gEvalStages } from './swe5g/evaluate/stages.js';
import { swe5gEvalMarkdown } from './swe5g/evaluate/report.js';

export { appConfigSchema, type AppConfig } from './config.js';
export { checkConfigPaths } from './config-paths.js';
export { checkConfigContents } from './config-contents.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const stages: Stage<any, any, any>[] = [
  ...swe5gMiningStages,
  ...resilienceStages,
  ...resilienceEvalStages,
  selftestItems,
  selftestEcho,
  selftestSummary,
  testgenStage,
  resolveStage,
  buildStage,
  validateStage,
  auditStage,
  statementStage,
  ...swe5gEvalStages,
];

/**
 * The released datasets, each an entry defined next to its stages (schema, card, the stage outputs
 * that become its rows, its verifier and image hooks, the pipeline that builds it): the one place
 * a dataset is registered. `release`, `publish`, `verify` and the release stages find them here.
 */
export const DATASET_ENTRIES: DatasetRegistry = datasetRegistry([swe5gEntry, resilienceEntry]);
stages.push(...DATASET_ENTRIES.entries.flatMap((e) => e.stages ?? []));

/**
 * Release (issue 7): one local release stage per dataset (`release.swe5g`, `release.resilience`)
 * ends the `all` pipeline, so a branch stopped at preflight never blocks another's release.
 */
export const releaseWiring: ReleaseWiring = {
  datasets: DATASET_ENTRIES,
  pipelineStages(name) {
    const p = pipelines.get(name);
    if (!p)
      throw new TelebenchError(
        'unknown_pipeline',
        `no pipeline "${name}" is registered (a dataset entry names it as the branch that builds its rows); known: ${[...pipelines.keys()].join(', ')}`,
        { tier: 'bug', context: { pipeline: name } },
      );
    return p.stages;
  },
  stageVersion: (name) => registry.get(name)?.version,
};
stages.push(...localReleaseStages(releaseWiring));

/** Every stage by name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const registry: ReadonlyMap<string, Stage<any, any, any>> = new Map(
  stages.map((s) => [s.name, s]),
);

/**
 * SWE-Bench 5G: swe5g.mine -> swe5g.link -> swe5g.filter (mining); the environments and
 * fail-to-pass stages append theirs. The report is the funnel, extended by later stages.
 */
const swe5gPipeline: Pipeline<AppConfig> = {
  name: 'swe5g',
  description:
    'SWE-Bench 5G: mine merged PRs of the 5G core repositories, link their issues, filter, then build and validate instances.',
  stages: [...SWE5G_STAGES],
  report: (ctx) =>
    [
      miningFunnelMarkdown(ctx),
      testgenMarkdown(ctx),
      environmentsMarkdown(ctx),
      validationMarkdown(ctx),
      auditMarkdown(ctx),
    ]
      .filter(Boolean)
      .join('\n'),
};

/** `telebench mine`: the mining stages of SWE-Bench 5G alone. */
const swe5gMinePipeline: Pipeline<AppConfig> = {
  name: 'swe5g-mine',
  description: 'SWE-Bench 5G mining only: swe5g.mine -> swe5g.link -> swe5g.filter.',
  stages: ['swe5g.mine', 'swe5g.link', 'swe5g.filter'],
  report: (ctx) => miningFunnelMarkdown(ctx),
};

/**
 * `swe5g-eval` (issue 11): the coding-agent evaluation over complete validated instances: skills,
 * the solver loop per model and mode, grading, SWE-bench predictions files.
 */
const swe5gEvalPipeline: Pipeline<AppConfig> = {
  name: 'swe5g-eval',
  description:
    'SWE-Bench 5G evaluation: models solve complete instances (single/multi-turn, skills A/B), patches graded in fresh sandboxes.',
  stages: ['swe5g.eval.skills', 'swe5g.eval.solve', 'swe5g.eval.grade', 'swe5g.eval.predictions'],
  report: (ctx) => swe5gEvalMarkdown(ctx),
};

/** `telebench evaluate --predictions FILE`: grading of external predictions only. */
const swe5gEvaluatePipeline: Pipeline<AppConfig> = {
  name: 'swe5g-evaluate',
  description:
    'Grades SWE-bench-format predictions (swe5g.evaluation.predictions) on the validated instances.',
  stages: ['swe5g.eval.grade'],
  report: (ctx) => swe5gEvalMarkdown(ctx),
};

const branchPipelines: Pipeline<AppConfig>[] = [
  swe5gPipeline,
  swe5gEvalPipeline,
  swe5gEvaluatePipeline,
  swe5gMinePipeline,
  resiliencePipeline as Pipeline<AppConfig>,
  resilienceEvalPipeline as Pipeline<AppConfig>,
  selftestPipeline as Pipeline<AppConfig>,
  ...DATASET_ENTRIES.entries.flatMap((e) => (e.pipelines ?? []) as Pipeline<AppConfig>[]),
];

/** `all`: every dataset branch side by side, then the releases. Grows as branches land. */
const allPipeline: Pipeline<AppConfig> = {
  name: 'all',
  description: 'Every dataset branch (SWE-Bench 5G and TeleResilienceBench) and the local release.',
  stages: [
    ...swe5gPipeline.stages,
    ...swe5gEvalPipeline.stages,
    ...resiliencePipeline.stages,
    ...resilienceEvalPipeline.stages,
    // the branch of a dataset that brings its own pipeline
    ...DATASET_ENTRIES.entries.flatMap(
      (e) => e.pipelines?.find((p) => p.name === e.pipeline)?.stages ?? [],
    ),
    ...DATASET_ENTRIES.entries.map((e) => e.releaseStage),
  ],
};

/** Every pipeline by name. */
export const pipelines: ReadonlyMap<string, Pipeline<AppConfig>> = new Map(
  [...branchPipelines, allPipeline].map((p) => [p.name, p]),
);
