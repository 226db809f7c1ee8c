/**
 * The instance executor behind `telebench verify` and the pre-release check of SWE-Bench 5G: each
 * released row is re-run from its own fields (repo, base_commit, version, environment_setup_commit,
 * image_recipe, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS) with the environments branch's code:
 * images from the same recipes (`buildInstanceImages`, stages/swe5g/build, given the row's own
 * fields), steps in fresh network-less containers (`DockerExecutor`) or on the host
 * (`LocalExecutor`), through the harness of validation and grading (stages/swe5g/harness: the
 * test spec, the one step runner, the parser table, pure grading; gold patches applied exactly).
 *
 * The SWE-bench harness check, repeated (`release.reproof_runs`, default 3; reproof.ts): test_patch
 * + gold patch must resolve it (every FAIL_TO_PASS and PASS_TO_PASS test passes) in every run,
 * test_patch alone (the empty patch) in none, each run in a fresh container. Instances that do
 * not hold are dropped and listed with the reason; every instance's runs, image id and log
 * digests are recorded (`VerifySummary.records`, the manifest's `verify`).
 */
import { dirname, join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { TelebenchError, SkipItem } from '../../pipeline/errors.js';
import { DockerClient } from '../../pipeline/providers/docker/client.js';
import type { Executor } from '../../pipeline/providers/docker/executor.js';
import type { RecipeName } from '../../pipeline/providers/docker/recipes.js';
import { exportCleanRepo } from '../../pipeline/providers/git/repo.js';
import type { Overlay } from '../../pipeline/providers/docker/overlay.js';
import type { Swe5gRow } from '../../datasets/index.js';
import { swe5gConfigSchema, type Swe5gConfig, type HasSwe5g } from '../swe5g/config.js';
import { loadRegistry, type RegistryEntry } from '../swe5g/registry.js';
import { buildInstanceImages, type BuildSubject } from '../swe5g/build/build.js';
import { executorFor, executorPreflight } from '../swe5g/executors.js';
import { mirrorPath } from '../swe5g/resolve/resolve.js';
import type { TestStatus } from '../swe5g/harness/parsers.js';
import { overlayFor } from '../swe5g/harness/apply.js';
import { gradeTests } from '../swe5g/harness/grading.js';
import { runStep } from '../swe5g/harness/run-step.js';
import { dependencyUnavailable } from '../swe5g/harness/build-log.js';
import { planSpec } from '../swe5g/test-plan.js';
import { RECIPE_LANGUAGE, registryEntryOf, rowTestPlan } from '../swe5g/released-row.js';

export { registryEntryOf, rowTestDirs } from '../swe5g/released-row.js';
import { ensureLocalImage, parseDigestRef } from '../../pipeline/providers/docker/registry.js';
import { exportTestbed } from '../../pipeline/providers/docker/contract.js';
import type { Verifier, VerifierEnv } from './entry.js';
import { BlobStore } from '../../pipeline/store/blobs.js';
import { sha256 } from '../../pipeline/hash.js';
import { releaseSettings } from './config.js';
import {
  repeatRuns,
  reproofRecord,
  summarizeReproof,
  type PatchRun,
  type ReproofRecord,
} from './reproof.js';

export type { VerifierEnv };

/**
 * Whether a run resolves an instance: every FAIL_TO_PASS and PASS_TO_PASS test passed (a test that
 * did not run counts as not passed, and so does a test the log reported twice: `conflicts` from
 * the parser).
 * @returns the verdict and the first tests that did not pass
 */
export function gradeRun(
  tests: Record<string, TestStatus>,
  row: Pick<Swe5gRow, 'FAIL_TO_PASS' | 'PASS_TO_PASS'>,
  conflicts: readonly string[] = [],
): { resolved: boolean; notPassing: string[] } {
  const v = gradeTests(
    {
      tests,
      build_failures: [],
      package_failures: [],
      timed_out: false,
      conflicts: [...conflicts],
    },
    row,
  );
  return { resolved: v.resolved, notPassing: v.not_passing };
}

/**
 * What the image build reads of a released row ({@link BuildSubject}): the row's own repo,
 * base_commit, version and environment_setup_commit, the registry entry's id and the language of
 * its `image_recipe`. Nothing is made up to look like a mined record.
 */
export function buildSubjectOfRow(row: Swe5gRow, entry: RegistryEntry | undefined): BuildSubject {
  const recipe = row.image_recipe as RecipeName;
  return {
    instance_id: row.instance_id,
    repo: row.repo,
    registry_id: entry?.id ?? row.repo,
    language: RECIPE_LANGUAGE[recipe] ?? entry?.language ?? 'go',
    version: row.version,
    environment_setup_commit: row.environment_setup_commit,
    // the fix's files name the objects a C kept build compiles in the instance layer
    patch: row.patch,
    base_commit: row.base_commit,
  };
}

/**
 * Re-proves one row: the gold patch up to `runs` times and the empty patch up to `runs` times,
 * each run in a fresh container (reproof.ts: stops at the first run that breaks the rule; the
 * empty patch is not run when the gold already failed). A row whose `image_name` is a registry
 * digest reference (`release --push`) runs in that image, pulled when the engine lacks it, with the
 * source tree copied out of it; other rows rebuild their images from the recipes.
 * @param deps.runs runs of each patch (`release.reproof_runs`; 1 when not given)
 * @returns the instance's {@link ReproofRecord}: runs, image and its id, log digests, seconds
 * @throws TelebenchError from the image build, pull (`image_pull_failed`) or the executor
 *   (infra), `dependency_unavailable` (infra) when a run does not build because a dependency
 *   could not be obtained (harness/build-log.ts); a patch that no longer applies is a verdict (not
 *   resolved), not an error
 */
export async function verifyRow(
  row: Swe5gRow,
  deps: {
    executor: Executor;
    docker: DockerClient | null;
    settings: Swe5gConfig['environments'];
    stateDir: string;
    entry: RegistryEntry | undefined;
    runs?: number;
    signal?: AbortSignal;
    log?: (m: string) => void;
    /** Stores a run's log; returns its digest (default: the sha256 of the text, not stored). */
    saveLog?: (name: string, text: string) => string;
  },
): Promise<ReproofRecord> {
  const started = Date.now();
  const runs = Math.max(1, Math.floor(deps.runs ?? 1));
  const { sourceDir, image } = await instanceTree(row, deps);
  // the step validation ran (a C entry's make commands, the kept build's selection)
  const spec = planSpec(rowTestPlan(row, deps.entry, deps.settings), deps.settings);
  const runWith = async (label: string, patches: [string, string][]): Promise<PatchRun> => {
    let files: Overlay;
    try {
      // the row's own patches, exactly (`git apply`): a gold patch that needs fuzz is a finding
      files = await overlayFor(sourceDir, patches);
    } catch (err) {
      if (
        err instanceof TelebenchError &&
        (err.code === 'patch_does_not_apply' || err instanceof SkipItem)
      )
        return { resolved: false, why: err.message, logs: [] };
      throw err;
    }
    const out = await runStep(
      spec,
      { name: `verify_${label}`, files },
      {
        executor: deps.executor,
        instance: { image, sourceDir },
        saveLog: deps.saveLog ?? ((_name, text) => sha256(text)),
        ...(deps.signal ? { signal: deps.signal } : {}),
      },
    );
    const logs = Object.values(out.logs);
    // a dependency the environment cannot supply proves nothing of the row: retried, not a finding
    const unavailable = dependencyUnavailable(out, {
      instanceId: row.instance_id,
      step: `verify_${label}`,
      recipe: row.image_recipe as RecipeName,
      context: { logs },
    });
    if (unavailable) throw unavailable;
    if (out.timedOut)
      return {
        resolved: false,
        why: `${label} run timed out after ${deps.settings.limits.timeout_s} s`,
        logs,
      };
    const g = gradeTests(out.parsed, row, { ambiguous: out.ambiguous });
    deps.log?.(
      `${row.instance_id} ${label}: ${g.resolved ? 'resolved' : 'not resolved'} (exit ${out.results[0]!.exitCode})`,
    );
    return {
      resolved: g.resolved,
      why: g.resolved ? '' : `tests not passing: ${g.not_passing.slice(0, 5).join(', ')}`,
      logs,
    };
  };
  const gold = await repeatRuns(runs, true, (i) =>
    runWith(`gold_${i + 1}`, [
      ['test_patch', row.test_patch],
      ['patch', row.patch],
    ]),
  );
  const goldHolds = gold.length === runs && gold.every((r) => r.resolved);
  const empty = goldHolds
    ? await repeatRuns(runs, false, (i) =>
        runWith(`empty_${i + 1}`, [['test_patch', row.test_patch]]),
      )
    : [];
  const image_id = image && deps.docker ? ((await deps.docker.inspect(image))?.Id ?? '') : '';
  return reproofRecord({
    instance_id: row.instance_id,
    runs,
    gold,
    empty,
    image,
    image_id,
    seconds: (Date.now() - started) / 1000,
  });
}

/**
 * The image and host tree a row runs in: its pushed image by digest (pulled when missing, the tree
 * copied out of it), else the images rebuilt from its recipe, else (local executor) a clean export
 * of the state's mirror at base_commit.
 * @throws TelebenchError `verify_mirror_missing` (preflight) for the local executor without a mirror
 */
async function instanceTree(
  row: Swe5gRow,
  deps: {
    docker: DockerClient | null;
    settings: Swe5gConfig['environments'];
    stateDir: string;
    entry: RegistryEntry | undefined;
    signal?: AbortSignal;
    log?: (m: string) => void;
  },
): Promise<{ sourceDir: string; image: string }> {
  if (deps.docker && parseDigestRef(row.image_name)) {
    // a pushed image (release --push): pulled when the engine lacks it, the tree copied out of it
    const image = await ensureLocalImage(deps.docker, row.image_name);
    const sourceDir = join(deps.stateDir, 'release-verify', row.instance_id, 'testbed');
    await exportTestbed(deps.docker, image, sourceDir);
    return { sourceDir, image };
  }
  if (deps.docker) {
    const built = await buildInstanceImages(buildSubjectOfRow(row, deps.entry), {
      docker: deps.docker,
      settings: deps.settings,
      stateDir: deps.stateDir,
      log: deps.log,
      signal: deps.signal,
    });
    return { sourceDir: built.source_dir, image: built.images.instance };
  }
  const mirror = mirrorPath(deps.stateDir, row.repo);
  if (!existsSync(mirror)) {
    throw new TelebenchError(
      'verify_mirror_missing',
      `no git mirror of ${row.repo} at ${mirror}: run the swe5g pipeline (resolve) on this machine first`,
      { tier: 'preflight' },
    );
  }
  const sourceDir = join(deps.stateDir, 'release-verify', row.instance_id, 'testbed');
  await exportCleanRepo(mirror, row.base_commit, sourceDir);
  return { sourceDir, image: '' };
}

/**
 * The verifier for a configuration: Docker, Swarm or local executor as `swe5g.environments.executor` says.
 * Rows run one after another (each step already uses the configured CPUs).
 * @returns a Verifier; it throws TelebenchError `verify_unavailable` (preflight) when Docker does not answer
 */
export function swe5gVerifier(config: unknown, env: VerifierEnv): Verifier<Swe5gRow> {
  return async (rows) => {
    // parse (not just read) the section: defaults fill what a hand-written configuration leaves out
    const swe5g = swe5gConfigSchema.parse((config as HasSwe5g | null)?.swe5g ?? {});
    const settings = swe5g.environments;
    let docker: DockerClient | null = null;
    if (settings.executor !== 'local') {
      docker = new DockerClient();
      try {
        await executorPreflight(settings);
      } catch (err) {
        throw new TelebenchError(
          'verify_unavailable',
          `verify needs the ${settings.executor === 'swarm' ? 'Docker engine (a Swarm manager) and the registry' : 'Docker engine'}: ${(err as Error).message}`,
          { tier: 'preflight', cause: err },
        );
      }
    }
    // A container or service the engine could not remove is reported, the verdict still stands.
    const log = env.log;
    const executor: Executor = executorFor(
      settings,
      docker,
      log ? { onCleanupError: (e) => log(e.message), log } : {},
    );
    const registryFile = resolve(dirname(env.configFile), swe5g.registry);
    const entries = existsSync(registryFile) ? loadRegistry(registryFile) : [];
    const runs = releaseSettings(config).reproof_runs;
    // every run's log is a blob of the state; the manifest names them by sha256
    const blobs = new BlobStore(join(env.stateDir, 'blobs'));
    const records: ReproofRecord[] = [];
    for (const row of rows) {
      records.push(
        await verifyRow(row, {
          executor,
          docker,
          settings,
          stateDir: env.stateDir,
          entry: registryEntryOf(row, entries),
          runs,
          signal: env.signal,
          log: env.log,
          saveLog: (_name, text) => blobs.put(text),
        }),
      );
    }
    const summary = summarizeReproof(records, executor.kind, runs);
    const dropped = new Set(summary.dropped.map((d) => d.instance_id));
    return {
      summary,
      reproduced: new Set(rows.map((r) => r.instance_id).filter((id) => !dropped.has(id))),
    };
  };
}
