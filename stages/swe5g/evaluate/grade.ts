/**
 * Grading of a model patch (SWE-Bench 5G paper, Fig. 2 phase 2: "the patch is applied in a fresh
 * container and validated against the test suite"), with validation's own code: the instance image
 * `swe5g.build` made (a fresh `git init` holding only `base_commit`), a fresh network-less
 * container per run through the {@link Executor} interface (Docker, local, or any other executor
 * behind it), through the harness (stages/swe5g/harness: the test spec, the one step runner, the
 * parser table, pure grading).
 *
 * The files of a run (SWE-bench's harness order): the model patch (SWE-bench's chain of apply
 * methods, harness/apply.ts; the method that applied it is recorded), then every file the instance's
 * `test_patch` touches is put back as it was at `base_commit` (a model that edited or created the
 * hidden fail-to-pass test file is graded against the real one anyway), then `test_patch` (the
 * PR's tests plus the generated fail-to-pass test, never shown to the solver). Resolved iff every
 * FAIL_TO_PASS and PASS_TO_PASS test passes (paper, "Task formulation").
 */
import { cpSync, existsSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Executor, StepResult } from '../../../pipeline/providers/docker/executor.js';
import { overlayOf, type Overlay } from '../../../pipeline/providers/docker/overlay.js';
import { applyPatch } from '../../../pipeline/providers/git/repo.js';
import type { EnvironmentsSettings } from '../environments-config.js';
import type { BugCategory } from '../types.js';
import type { ParsedRun, TestStatus } from '../harness/parsers.js';
import { applyPrediction, patchPaths } from '../harness/apply.js';
import { gradeTests } from '../harness/grading.js';
import { runStep, type StepOutcome } from '../harness/run-step.js';
import { dependencyUnavailable } from '../harness/build-log.js';
import { planSpec, type TestPlan } from '../test-plan.js';

export { patchPaths } from '../harness/apply.js';

/**
 * Everything grading and the solver need of one validated, complete instance: its SWE-bench
 * fields, its image and clean tree, and its {@link TestPlan} (`image_recipe`, `module_dir`,
 * `test_dirs`, `test_commands`, `test_selection`: the plan validation's steps ran, made by the
 * same `testPlan`; from a state `stateInstance`, from a released row `datasetInstance`).
 */
export interface EvalInstance extends TestPlan {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  /** Gold patch: used by metrics (diagnosis rule) and the skill leak check, never by the solver. */
  patch: string;
  /** Hidden tests: the PR's tests plus the generated fail-to-pass test. */
  test_patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  bug_category: BugCategory;
  nf: string;
  spec_refs: string[];
  image: string;
  /** Host folder with the clean tree at base_commit (the solver reads its context from it). */
  source_dir: string;
}

/** Grading verdict of one patch. */
export interface Grade {
  instance_id: string;
  /** The model patch applied (an empty patch is NOT applied: `patch_method` `empty`). */
  patch_applied: boolean;
  apply_error: string;
  /**
   * How it applied: the command of SWE-bench's chain that applied it (`git apply --verbose`,
   * `git apply --verbose --3way`, `git apply --verbose --reject`, `patch --batch --forward
   * --fuzz=5 -p1 -i`), `already applied`, or `empty` / `failed`. Absent in grades made before.
   */
  patch_method?: string;
  /** CRLF line endings of the patch were normalised to the tree's LF before applying. */
  line_endings_normalised?: boolean;
  resolved: boolean;
  /** Per-test status of the hidden tests (`absent` when the test did not run). */
  FAIL_TO_PASS: Record<string, TestStatus | 'absent'>;
  PASS_TO_PASS: Record<string, TestStatus | 'absent'>;
  /** Packages that did not compile. */
  build_failures: string[];
  timed_out: boolean;
  /** The log disagreed with the exit code (forged output, corrupt log): graded not resolved. */
  ambiguous_log: string;
  /** Files of `test_patch` the model patch changed (put back before the hidden tests went in). */
  touched_test_files: string[];
  exit_code: number | null;
  executor: string;
  /** Blob digest of the run's log ('' when the patch did not apply and nothing ran). */
  log: string;
}

/**
 * The files a grading run writes over the instance image, relative to the repository root.
 * @returns `files` (the {@link Overlay}: bytes and git mode, null = delete) with the method that
 *   applied the model patch, or `applyError` (and the method: `empty` / `failed`) when it was not
 *   applied
 * @throws TelebenchError `patch_does_not_apply` (content) when the instance's own test_patch does
 *   not apply after the model's changes were put back (a broken instance, not a model failure)
 */
export async function gradingFiles(
  sourceDir: string,
  modelPatch: string,
  testPatch: string,
): Promise<
  ({ files: Overlay; method: string } | { applyError: string; method: 'empty' | 'failed' }) & {
    touchedTests: string[];
    line_endings_normalised: boolean;
  }
> {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-grade-'));
  try {
    const testFiles = new Set(patchPaths(testPatch));
    const applied = await applyPrediction(dir, sourceDir, modelPatch);
    if (!applied.applied)
      return {
        applyError: applied.error,
        method: applied.method,
        line_endings_normalised: applied.line_endings_normalised,
        touchedTests: patchPaths(modelPatch).filter((p) => testFiles.has(p)),
      };
    const { changed, deleted } = applied;
    const touchedTests = [...changed, ...deleted].filter((p) => testFiles.has(p)).sort();
    for (const p of touchedTests) {
      const orig = join(sourceDir, p);
      if (existsSync(orig)) {
        mkdirSync(dirname(join(dir, p)), { recursive: true });
        cpSync(orig, join(dir, p));
      } else rmSync(join(dir, p), { force: true });
    }
    const t = await applyPatch(dir, testPatch, 'test_patch');
    // bytes and git mode of what is there now, null for what is gone (issue 14, section 1)
    const files = overlayOf(
      dir,
      [...changed, ...t.changed].filter((p) => existsSync(join(dir, p))),
    );
    for (const p of [...deleted, ...t.deleted]) if (!(p in files)) files[p] = null;
    // a test file the model created and the test patch does not recreate: gone again
    for (const p of touchedTests)
      if (!(p in files) && !existsSync(join(sourceDir, p))) files[p] = null;
    return {
      files,
      method: applied.method,
      line_endings_normalised: applied.line_endings_normalised,
      touchedTests,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What grading needs besides the instance and the patch. */
export interface GradeDeps {
  executor: Executor;
  settings: Pick<EnvironmentsSettings, 'limits'>;
  /** Stores a run log; returns its digest. */
  saveLog: (name: string, text: string) => string;
  signal?: AbortSignal;
}

/** One test run of a patch: the grade, plus the raw result and parse (for the solver's feedback). */
export interface GradedRun {
  grade: Grade;
  result: StepResult | null;
  parsed: ParsedRun | null;
}

/** One prediction to grade. */
export interface GradeRequest {
  /** The instance, with the test plan validation ran ({@link EvalInstance}). */
  instance: EvalInstance;
  /** The patch under test (SWE-bench's `model_patch`; '' or blank: not applied, `empty`). */
  model_patch: string;
  /** Name of the run in logs (`grade`, `turn_2`, a mutant's id); default `grade`. */
  step?: string;
}

/**
 * THE grading of SWE-Bench 5G: runs the instance's hidden tests on a patch in a fresh sandbox and
 * grades it, in the step validation's fix run took (`planSpec` of the instance's plan: the same
 * recipe, kept incremental build and test selection; the kept build compiles the objects of the
 * model patch's files, so the gold patch runs validation's fix step exactly). Used by
 * `swe5g.eval.grade` (solver and external predictions, `telebench evaluate`), the solver's
 * feedback turns and any other grader (mutants).
 * @returns the {@link GradedRun}: a patch that does not apply, a timeout, a log that disagrees
 *   with its exit code are verdicts (not resolved), not errors
 * @throws TelebenchError from the executor (infra), or `patch_does_not_apply` when the instance's
 *   own test_patch breaks (see {@link gradingFiles}), or `dependency_unavailable` (infra) when the
 *   run did not build because a dependency could not be obtained (see {@link environmentFault})
 */
export async function gradePrediction(req: GradeRequest, deps: GradeDeps): Promise<GradedRun> {
  const inst = req.instance;
  const step = req.step ?? 'grade';
  const base: Grade = {
    instance_id: inst.instance_id,
    patch_applied: false,
    apply_error: '',
    resolved: false,
    FAIL_TO_PASS: Object.fromEntries(inst.FAIL_TO_PASS.map((t) => [t, 'absent'])),
    PASS_TO_PASS: Object.fromEntries(inst.PASS_TO_PASS.map((t) => [t, 'absent'])),
    build_failures: [],
    timed_out: false,
    ambiguous_log: '',
    touched_test_files: [],
    exit_code: null,
    executor: deps.executor.kind,
    log: '',
  };
  const prepared = await gradingFiles(inst.source_dir, req.model_patch, inst.test_patch);
  base.touched_test_files = prepared.touchedTests;
  base.patch_method = prepared.method;
  base.line_endings_normalised = prepared.line_endings_normalised;
  if ('applyError' in prepared) {
    return { grade: { ...base, apply_error: prepared.applyError }, result: null, parsed: null };
  }
  const out = await runStep(
    planSpec(inst, deps.settings, req.model_patch),
    {
      name: step,
      files: prepared.files,
      notes: [
        `${inst.instance_id}: model patch applied with ${prepared.method}${prepared.line_endings_normalised ? ' (CRLF line endings normalised)' : ''}`,
        `touched test files put back: ${prepared.touchedTests.join(', ') || 'none'}`,
      ],
    },
    {
      executor: deps.executor,
      instance: { image: inst.image, sourceDir: inst.source_dir },
      saveLog: deps.saveLog,
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
  );
  environmentFault(out, inst, req.model_patch, step);
  const result = out.results[0]!;
  const verdict = gradeTests(out.parsed, inst, {
    timedOut: out.timedOut,
    ambiguous: out.ambiguous,
  });
  return {
    grade: {
      ...base,
      patch_applied: true,
      resolved: verdict.resolved,
      FAIL_TO_PASS: verdict.FAIL_TO_PASS,
      PASS_TO_PASS: verdict.PASS_TO_PASS,
      build_failures: out.parsed.build_failures,
      timed_out: out.timedOut || out.parsed.timed_out,
      ambiguous_log: out.ambiguous,
      exit_code: result.exitCode,
      log: out.logs[step]!,
    },
    result,
    parsed: out.parsed,
  };
}

/** Dependency manifests: a patch that changes one owns the dependencies it then lacks. */
const MANIFEST =
  /(?:^|\/)(?:go\.mod|go\.sum|meson\.build|meson_options\.txt|meson\.options|requirements[^/]*\.txt|setup\.py|setup\.cfg|pyproject\.toml|Pipfile(?:\.lock)?|poetry\.lock|uv\.lock)$/;

/**
 * A grading run that did not build because a dependency could not be obtained (harness/build-log.ts:
 * the module cache, the proxy, the network, a system library) grades nothing of the model: it is
 * the environment's failure, retried, as in validation. Unless the model patch changed a
 * dependency manifest (go.mod, meson.build, requirements, ...): then the dependency it lacks is the
 * patch's own doing, and the run stays a verdict (not resolved).
 * @throws TelebenchError `dependency_unavailable` (tier infra) naming the instance, the step and
 *   the log lines that say it
 */
function environmentFault(
  out: StepOutcome,
  inst: EvalInstance,
  modelPatch: string,
  step: string,
): void {
  if (patchPaths(modelPatch).some((p) => MANIFEST.test(p))) return;
  const err = dependencyUnavailable(out, {
    instanceId: inst.instance_id,
    step,
    recipe: inst.image_recipe,
    context: { step_logs: out.logs },
  });
  if (err) throw err;
}
