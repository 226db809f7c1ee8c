/**
 * The instance executor behind `telebench verify` and the pre-release check of SWE-Bench 5G: each
 * released row is re-run from its own fields (repo, base_commit, version, environment_setup_commit,
 * image_recipe, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS) with the environments branch's code:
 * images from the same recipes (`buildInstanceImages`, stages/swe5g/build, given the row's own
 * fields), steps in fresh network-less containers (`DockerExecutor`) or on the host
 * (`LocalExecutor`), through the harness of validation and grading (stages/swe5g/harness: the
 * test spec, the one step runner, the parser table, pure grading; gold patches applied exactly).
 *
 * Two runs per instance (the SWE-bench harness check): test_patch + gold patch must resolve it
 * (every FAIL_TO_PASS and PASS_TO_PASS test passes); test_patch alone (the empty patch) must not.
 * Instances whose gold patch does not reproduce are dropped and listed with the reason.
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
import type { VerifySummary } from '../../datasets/card.js';
import { swe5gConfigSchema, type Swe5gConfig, type HasSwe5g } from '../swe5g/config.js';
import { loadRegistry, type RegistryEntry } from '../swe5g/registry.js';
import { buildInstanceImages, type BuildSubject } from '../swe5g/build/build.js';
import { executorFor, executorPreflight } from '../swe5g/executors.js';
import { mirrorPath } from '../swe5g/resolve/resolve.js';
import type { TestStatus } from '../swe5g/harness/parsers.js';
import { overlayFor } from '../swe5g/harness/apply.js';
import { gradeTests } from '../swe5g/harness/grading.js';
import { runStep } from '../swe5g/harness/run-step.js';
import { planSpec } from '../swe5g/test-plan.js';
import { RECIPE_LANGUAGE, registryEntryOf, rowTestPlan } from '../swe5g/released-row.js';

export { registryEntryOf, rowTestDirs } from '../swe5g/released-row.js';
import { ensureLocalImage, parseDigestRef } from '../../pipeline/providers/docker/registry.js';
import { exportTestbed } from '../../pipeline/providers/docker/contract.js';
import type { Verifier, VerifierEnv } from './entry.js';

export type { VerifierEnv };

/** Outcome of one instance. */
export interface InstanceVerdict {
  instance_id: string;
  gold_resolved: boolean;
  empty_resolved: boolean;
  /** Why the gold patch did not resolve ('' when it did). */
  reason: string;
}

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
 * Re-runs one row twice (gold patch, empty patch) and grades both. A row whose `image_name` is a
 * registry digest reference (`release --push`) runs in that image, pulled when the engine lacks
 * it, with the source tree copied out of it; other rows rebuild their images from the recipes.
 * @throws TelebenchError from the image build, pull (`image_pull_failed`) or the executor
 *   (infra); a patch that no longer applies is a verdict (not resolved), not an error
 */
export async function verifyRow(
  row: Swe5gRow,
  deps: {
    executor: Executor;
    docker: DockerClient | null;
    settings: Swe5gConfig['environments'];
    stateDir: string;
    entry: RegistryEntry | undefined;
    signal?: AbortSignal;
    log?: (m: string) => void;
    /** Stores a run's log; returns its digest (default: not stored). */
    saveLog?: (name: string, text: string) => string;
  },
): Promise<InstanceVerdict> {
  let sourceDir: string;
  let image = '';
  if (deps.docker && parseDigestRef(row.image_name)) {
    // a pushed image (release --push): pulled when the engine lacks it, the tree copied out of it
    image = await ensureLocalImage(deps.docker, row.image_name);
    sourceDir = join(deps.stateDir, 'release-verify', row.instance_id, 'testbed');
    await exportTestbed(deps.docker, image, sourceDir);
  } else if (deps.docker) {
    const built = await buildInstanceImages(buildSubjectOfRow(row, deps.entry), {
      docker: deps.docker,
      settings: deps.settings,
      stateDir: deps.stateDir,
      log: deps.log,
      signal: deps.signal,
    });
    sourceDir = built.source_dir;
    image = built.images.instance;
  } else {
    const mirror = mirrorPath(deps.stateDir, row.repo);
    if (!existsSync(mirror)) {
      throw new TelebenchError(
        'verify_mirror_missing',
        `no git mirror of ${row.repo} at ${mirror}: run the swe5g pipeline (resolve) on this machine first`,
        { tier: 'preflight' },
      );
    }
    sourceDir = join(deps.stateDir, 'release-verify', row.instance_id, 'testbed');
    await exportCleanRepo(mirror, row.base_commit, sourceDir);
  }
  // the step validation ran (a C entry's make commands, the kept build's selection)
  const spec = planSpec(rowTestPlan(row, deps.entry, deps.settings), deps.settings);
  const runWith = async (
    label: string,
    patches: [string, string][],
  ): Promise<{ resolved: boolean; why: string }> => {
    let files: Overlay;
    try {
      // the row's own patches, exactly (`git apply`): a gold patch that needs fuzz is a finding
      files = await overlayFor(sourceDir, patches);
    } catch (err) {
      if (
        err instanceof TelebenchError &&
        (err.code === 'patch_does_not_apply' || err instanceof SkipItem)
      )
        return { resolved: false, why: err.message };
      throw err;
    }
    const out = await runStep(
      spec,
      { name: `verify_${label}`, files },
      {
        executor: deps.executor,
        instance: { image, sourceDir },
        saveLog: deps.saveLog ?? ((name) => name),
        ...(deps.signal ? { signal: deps.signal } : {}),
      },
    );
    if (out.timedOut)
      return {
        resolved: false,
        why: `${label} run timed out after ${deps.settings.limits.timeout_s} s`,
      };
    const g = gradeTests(out.parsed, row, { ambiguous: out.ambiguous });
    deps.log?.(
      `${row.instance_id} ${label}: ${g.resolved ? 'resolved' : 'not resolved'} (exit ${out.results[0]!.exitCode})`,
    );
    return {
      resolved: g.resolved,
      why: g.resolved ? '' : `tests not passing: ${g.not_passing.slice(0, 5).join(', ')}`,
    };
  };
  const gold = await runWith('gold', [
    ['test_patch', row.test_patch],
    ['patch', row.patch],
  ]);
  const empty = await runWith('empty', [['test_patch', row.test_patch]]);
  return {
    instance_id: row.instance_id,
    gold_resolved: gold.resolved,
    empty_resolved: empty.resolved,
    reason: gold.why,
  };
}

/** Folds verdicts into the card's summary. */
export function summarize(verdicts: readonly InstanceVerdict[], executor: string): VerifySummary {
  const gold = verdicts.filter((v) => v.gold_resolved).length;
  return {
    attempted: verdicts.length,
    gold_resolved: gold,
    rate: verdicts.length ? gold / verdicts.length : 1,
    empty_patch_resolved: verdicts.filter((v) => v.empty_resolved).length,
    dropped: verdicts
      .filter((v) => !v.gold_resolved || v.empty_resolved)
      .map((v) => ({
        instance_id: v.instance_id,
        reason: v.gold_resolved
          ? 'the empty patch also resolves it (tests do not detect the bug)'
          : v.reason,
      })),
    executor,
  };
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
    const verdicts: InstanceVerdict[] = [];
    for (const row of rows) {
      verdicts.push(
        await verifyRow(row, {
          executor,
          docker,
          settings,
          stateDir: env.stateDir,
          entry: registryEntryOf(row, entries),
          signal: env.signal,
          log: env.log,
        }),
      );
    }
    const summary = summarize(verdicts, executor.kind);
    const dropped = new Set(summary.dropped.map((d) => d.instance_id));
    return {
      summary,
      reproduced: new Set(rows.map((r) => r.instance_id).filter((id) => !dropped.has(id))),
    };
  };
}
