/**
 * Grading of a model patch (SWE-Bench 5G paper, Fig. 2 phase 2: "the patch is applied in a fresh
 * container and validated against the test suite"), with validation's own code: the instance image
 * `swe5g.build` made (a fresh `git init` holding only `base_commit`), a fresh network-less
 * container per run through the {@link Executor} interface (Docker, local, or any other executor
 * behind it), the test command and log parsers of `swe5g.validate` (`testCommand`, `parseStep`).
 *
 * The files of a run (SWE-bench's harness order): the model patch, then every file the instance's
 * `test_patch` touches is put back as it was at `base_commit` (a model that edited or created the
 * hidden fail-to-pass test file is graded against the real one anyway), then `test_patch` (the
 * PR's tests plus the generated fail-to-pass test, never shown to the solver). Resolved iff every
 * FAIL_TO_PASS and PASS_TO_PASS test passes (paper, "Task formulation").
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { TelebenchError, SkipItem } from '../../../pipeline/errors.js';
import type { Executor, StepResult } from '../../../pipeline/providers/docker/executor.js';
import { overlayOf, type Overlay } from '../../../pipeline/providers/docker/overlay.js';
import {
  checkAgreement,
  type ParsedRun,
  type TestStatus,
} from '../../../pipeline/providers/docker/parsers.js';
import type { RecipeName } from '../../../pipeline/providers/docker/recipes.js';
import { applyPatch, patchFiles } from '../../../pipeline/providers/git/repo.js';
import type { EnvironmentsSettings } from '../environments-config.js';
import type { BugCategory } from '../types.js';
import { parseStep, testCommand, type RegistryCommands } from '../validate/validate.js';

/** Everything grading and the solver need of one validated, complete instance. */
export interface EvalInstance {
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
  image_recipe: RecipeName;
  /** Host folder with the clean tree at base_commit (the solver reads its context from it). */
  source_dir: string;
  module_dir: string;
  /** Test directories validation ran (relative to module_dir), or 'all'. */
  test_dirs: string[] | 'all';
  /** Registry commands validation ran with (C repositories tested through make). */
  test_commands?: RegistryCommands;
}

/** Grading verdict of one patch. */
export interface Grade {
  instance_id: string;
  /** The model patch applied with `git apply` (an empty patch counts as applied: nothing to do). */
  patch_applied: boolean;
  apply_error: string;
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
 * Paths a unified diff touches (old and new names of every file; git and plain diffs), exact
 * names even where git quotes them (read by {@link patchFiles}).
 * @returns sorted, unique
 */
export function patchPaths(patch: string): string[] {
  const out = new Set<string>();
  for (const f of patchFiles(patch)) {
    if (f.oldPath !== null) out.add(f.oldPath);
    if (f.newPath !== null) out.add(f.newPath);
  }
  return [...out].sort();
}

/**
 * The files a grading run writes over the instance image, relative to the repository root.
 * @returns `files` (the {@link Overlay}: bytes and git mode, null = delete) or `applyError` when
 *   the model patch does not apply
 * @throws TelebenchError `patch_does_not_apply` (content) when the instance's own test_patch does
 *   not apply after the model's changes were put back (a broken instance, not a model failure)
 */
export async function gradingFiles(
  sourceDir: string,
  modelPatch: string,
  testPatch: string,
): Promise<
  { files: Overlay; touchedTests: string[] } | { applyError: string; touchedTests: string[] }
> {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-grade-'));
  try {
    cpSync(sourceDir, dir, { recursive: true, verbatimSymlinks: true });
    const testFiles = new Set(patchPaths(testPatch));
    let changed: string[] = [];
    let deleted: string[] = [];
    try {
      ({ changed, deleted } = await applyPatch(dir, modelPatch, 'model_patch'));
    } catch (err) {
      if (err instanceof TelebenchError && err.code === 'patch_does_not_apply')
        return {
          applyError: err.message,
          touchedTests: patchPaths(modelPatch).filter((p) => testFiles.has(p)),
        };
      throw err;
    }
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
    const files = overlayOf(dir, [...changed, ...t.changed, ...deleted, ...t.deleted]);
    // a test file the model created and the test patch does not recreate: gone again
    for (const p of touchedTests)
      if (!(p in files) && !existsSync(join(sourceDir, p))) files[p] = null;
    return { files, touchedTests };
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

/**
 * Runs the instance's hidden tests on a patch in a fresh sandbox and grades it.
 * @param step name of the run in logs (`grade`, `turn_2`)
 * @throws TelebenchError from the executor (infra), or `patch_does_not_apply` when the instance's
 *   own test_patch breaks (see {@link gradingFiles}); a model patch that does not apply is a
 *   verdict (`patch_applied: false`), not an error
 */
export async function runPatch(
  inst: EvalInstance,
  modelPatch: string,
  step: string,
  deps: GradeDeps,
): Promise<GradedRun> {
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
  const prepared = await gradingFiles(inst.source_dir, modelPatch, inst.test_patch);
  base.touched_test_files = prepared.touchedTests;
  if ('applyError' in prepared) {
    return { grade: { ...base, apply_error: prepared.applyError }, result: null, parsed: null };
  }
  const s = deps.settings;
  const { command, collect } = testCommand(
    inst.image_recipe,
    inst.test_dirs,
    s.limits.timeout_s,
    inst.module_dir,
    inst.test_commands ? { commands: inst.test_commands } : {},
  );
  const result = await deps.executor.run(
    {
      step,
      instance: { image: inst.image, workdir: '/testbed', sourceDir: inst.source_dir },
      files: prepared.files,
      command,
      collect,
      limits: {
        memory: s.limits.memory_mib * 2 ** 20,
        cpus: s.limits.cpus,
        pids: s.limits.pids,
        timeoutMs: s.limits.timeout_s * 1000 + 15_000,
      },
    },
    deps.signal,
  );
  const log = deps.saveLog(
    step,
    [
      `# ${inst.instance_id} ${step} executor ${result.executor} exit ${result.exitCode} timed_out ${result.timedOut} ${result.durationMs} ms`,
      `# command: ${command}`,
      `# touched test files put back: ${prepared.touchedTests.join(', ') || 'none'}`,
      '## stdout',
      result.stdout,
      '## stderr',
      result.stderr,
      ...Object.entries(result.collected).map(([k, v]) => `## ${k}\n${v ?? '(absent)'}`),
    ].join('\n'),
  );
  const parsed = parseStep(inst.image_recipe, result, collect);
  let ambiguous = '';
  try {
    if (!result.timedOut) checkAgreement(parsed, result.exitCode, step);
  } catch (err) {
    if (!(err instanceof SkipItem)) throw err;
    ambiguous = err.message;
  }
  const status = (id: string): TestStatus | 'absent' => parsed.tests[id] ?? 'absent';
  const f2p = Object.fromEntries(inst.FAIL_TO_PASS.map((t) => [t, status(t)]));
  const p2p = Object.fromEntries(inst.PASS_TO_PASS.map((t) => [t, status(t)]));
  const allPass = [...Object.values(f2p), ...Object.values(p2p)].every((v) => v === 'pass');
  return {
    grade: {
      ...base,
      patch_applied: true,
      resolved: allPass && !ambiguous && !result.timedOut && !parsed.timed_out,
      FAIL_TO_PASS: f2p,
      PASS_TO_PASS: p2p,
      build_failures: parsed.build_failures,
      timed_out: result.timedOut || parsed.timed_out,
      ambiguous_log: ambiguous,
      exit_code: result.exitCode,
      log,
    },
    result,
    parsed,
  };
}
