/**
 * Testgen's deferred Python Strategy A test (`TestGen.deferred_a`, types.ts `DeferredStrategyA`)
 * decided where validation runs: in the instance image `swe5g.build` made, through the same
 * executor, test plan and step runner as validation's three steps. testgen keeps such a test when
 * its host flip check stopped at the fixed module's import (Magma: setup.py dependencies and
 * generated protos exist only in the image). Before its three steps, validation runs the test file
 * alone (validation's own pytest command in the module folder, narrowed to that file):
 *  - `deferred_a_parent`: at base_commit with the test patches (`test_patch` + the A patch);
 *  - `deferred_a_fix`: with the gold patch as well.
 * When the A test fails at the parent and passes at the fix, it is the instance's fail-to-pass
 * test: validation goes on with `strategy: 'A'`, the A patch as `f2p_test_patch` and its ids as
 * FAIL_TO_PASS (the ids the image reports, which may be rooted elsewhere than testgen's
 * repository-relative ones). Otherwise validation goes on with testgen's Strategy B test and the
 * record says why A was not used (it does not import even here, does not fail at the parent, does
 * not pass at the fix, timed out, ...). The image is never rebuilt: test patches are files written
 * over the instance at step time (harness/apply.ts `overlayFor`).
 */
import { posix } from 'node:path';
import { TelebenchError } from '../../../pipeline/errors.js';
import type { Overlay } from '../../../pipeline/providers/docker/overlay.js';
import { overlayFor, patchPaths } from '../harness/apply.js';
import { dependencyUnavailable } from '../harness/build-log.js';
import type { TestStatus } from '../harness/parsers.js';
import { runStep, type StepOutcome } from '../harness/run-step.js';
import { planSpec, testPlan } from '../test-plan.js';
import { pythonImportFailure } from '../testgen/py-direct-call.js';
import type { DeferredStrategyA, TestGen } from '../types.js';
import type { ValidateContext, ValidateInput } from './validate.js';
import { reportedId } from './verdicts.js';

export { reportedId } from './verdicts.js';

/** What validation decided about a deferred A test (the validated record's `deferred_a`). */
export interface DeferredADecision {
  /** True: the A test is the instance's fail-to-pass test (`strategy` 'A'). */
  used: boolean;
  /** Why, in the instance image (`A: ... decided in the instance image`, or why it was not used). */
  reason: string;
}

/** One run of the A test in the image, as the decision reads it. */
export interface ImageRun {
  /** The A test's status per its id (`absent`: the run did not report it). */
  statuses: Record<string, TestStatus | 'absent'>;
  /** stdout and stderr of the run. */
  log: string;
  timedOut: boolean;
  /** The parse's disagreement with the exit code ('' when none). */
  ambiguous: string;
  /** Test files pytest could not collect. */
  collectionErrors: string[];
}

const statusList = (r: ImageRun): string =>
  Object.entries(r.statuses)
    .map(([id, st]) => `${id.split('::').at(-1)}: ${st}`)
    .join(', ');

/**
 * Why the A test's run at the parent does not let it be the fail-to-pass test, or null when every
 * id failed there, as testgen's host check (`checkFlip`) asks: on the crash, or on an import
 * inside the test (the fixed module may be new, or import only after the fix: the run with the
 * gold patch decides, {@link fixReading}). A test that was not collected did not run.
 * @returns `timed out at the parent`, `... ambiguous ...`, `does not fail at the parent (t: pass)`,
 *   `does not import even here (No module named 'x')` (not collected because of an import),
 *   `does not run at the parent (...)`
 */
export function parentReading(run: ImageRun): string | null {
  if (run.timedOut) return 'timed out at the parent';
  if (run.ambiguous) return `its log at the parent is ambiguous (${run.ambiguous.slice(0, 200)})`;
  const sts = Object.values(run.statuses);
  if (sts.some((s) => s === 'pass' || s === 'skip'))
    return `does not fail at the parent (${statusList(run)})`;
  if (sts.some((s) => s === 'absent')) {
    const imp = pythonImportFailure(run.log);
    if (imp) return `does not import even here (${imp})`;
    return `does not run at the parent (${run.collectionErrors.length ? `collection errors in ${run.collectionErrors.join(', ')}` : 'not in the report'})`;
  }
  return null;
}

/**
 * Why the A test's run with the gold patch does not let it be the fail-to-pass test, or null when
 * every id passed.
 * @returns `timed out at the fix`, `... ambiguous ...`, `does not import even here (...)` (the
 *   image lacks what the host lacked, or something else the module imports), `does not pass at the
 *   fix (t: fail)`
 */
export function fixReading(run: ImageRun): string | null {
  if (run.timedOut) return 'timed out at the fix';
  if (run.ambiguous) return `its log at the fix is ambiguous (${run.ambiguous.slice(0, 200)})`;
  if (Object.values(run.statuses).every((s) => s === 'pass')) return null;
  const imp = pythonImportFailure(run.log);
  if (imp) return `does not import even here (${imp})`;
  return `does not pass at the fix (${statusList(run)})`;
}

/** The A test's statuses in a step, keyed by testgen's ids, and the ids the step reported. */
function imageRun(out: StepOutcome, ids: readonly string[]): { run: ImageRun; mapped: string[] } {
  const reported = Object.keys(out.parsed.tests);
  const mapped = ids.map((id) => reportedId(id, reported) ?? id);
  return {
    mapped,
    run: {
      statuses: Object.fromEntries(
        ids.map((id, i) => [id, out.parsed.tests[mapped[i]!] ?? 'absent']),
      ),
      log: out.stored.map((r) => `${r.stdout}\n${r.stderr}`).join('\n'),
      timedOut: out.timedOut || out.parsed.timed_out,
      ambiguous: out.ambiguous,
      collectionErrors: out.parsed.build_failures,
    },
  };
}

/** What {@link tryDeferredA} gives validation. */
export interface DeferredATry {
  /** testgen's record as validation goes on with it: the A test when used, else unchanged. */
  testgen: TestGen;
  decision: DeferredADecision;
  /** Log digests of the steps it ran (`deferred_a_parent`, `deferred_a_fix`). */
  logs: Record<string, string>;
  /** Their wall times, seconds. */
  seconds: Record<string, number>;
}

/**
 * The test files of the A patch relative to the module folder the steps run in, or null when one
 * lies outside it (the steps could never run it).
 */
function filesInModule(a: DeferredStrategyA, moduleDir: string): string[] | null {
  const files = patchPaths(a.f2p_test_patch);
  if (!moduleDir) return files;
  const rel = files.map((f) =>
    f.startsWith(`${moduleDir}/`) ? f.slice(moduleDir.length + 1) : null,
  );
  return rel.every((f): f is string => f !== null) ? rel : null;
}

const describe = (a: DeferredStrategyA): string =>
  `${a.function}${a.inputs ? ` with ${a.inputs}` : ''}`;

/**
 * Decides the deferred A test of `input.testgen` in the instance image (see the module comment).
 * @returns undefined when the record has none (validation goes on with it as it is)
 * @throws TelebenchError `dependency_unavailable` (infra) when a run could not obtain a dependency
 *   (as validation's steps); the executor's errors; TelebenchError `patch_does_not_apply` when the
 *   A patch or the gold patch does not apply to the instance's tree
 */
export async function tryDeferredA(
  input: ValidateInput,
  vc: ValidateContext,
): Promise<DeferredATry | undefined> {
  const { resolved: res, testgen: tg, built } = input;
  const a = tg.deferred_a;
  if (!a) return undefined;
  const { deferred_a: _d, ...rest } = tg;
  const logs: Record<string, string> = {};
  const seconds: Record<string, number> = {};
  const keepB = (why: string): DeferredATry => ({
    testgen: rest,
    decision: {
      used: false,
      reason: `deferred Strategy A (${describe(a)}) not used: in the instance image it ${why}`,
    },
    logs,
    seconds,
  });
  const files = filesInModule(a, built.module_dir);
  if (!files)
    return keepB(
      `cannot run: its test file lies outside the module folder ${built.module_dir} the steps run in`,
    );
  const s = vc.settings;
  const plan = testPlan(
    {
      recipe: built.image_recipe,
      moduleDir: built.module_dir,
      patch: res.patch,
      testPatches: [res.test_patch, a.f2p_test_patch],
    },
    { scope: vc.registryScope, commands: vc.registryCommands, selection: vc.registrySelection },
    s,
  );
  // validation's own command, narrowed to the A test's file
  const spec = planSpec({ ...plan, test_dirs: files.map((f) => posix.normalize(f)) }, s);
  const testPatches: [string, string][] = [
    ['test_patch', res.test_patch],
    ['f2p_test_patch', a.f2p_test_patch],
  ];
  const run = async (name: 'deferred_a_parent' | 'deferred_a_fix', files: Overlay) => {
    const out = await runStep(
      spec,
      { name, files, runs: 1 },
      {
        executor: vc.executor,
        instance: { image: built.images.instance, sourceDir: built.source_dir },
        saveLog: vc.saveLog,
        ...(vc.signal ? { signal: vc.signal } : {}),
        log: (m) => vc.log?.(`${res.instance_id} ${m}`),
      },
    );
    Object.assign(logs, out.logs);
    seconds[name] = out.seconds;
    const dep = dependencyUnavailable(out, {
      instanceId: res.instance_id,
      step: name,
      recipe: built.image_recipe,
      context: { step_logs: logs },
    });
    if (dep) throw dep;
    return imageRun(out, a.FAIL_TO_PASS);
  };
  let withTests: Overlay;
  try {
    withTests = await overlayFor(built.source_dir, testPatches);
  } catch (err) {
    if (!(err instanceof TelebenchError) || err.code !== 'patch_does_not_apply') throw err;
    return keepB(`cannot run: its test patch does not apply (${err.message.slice(0, 200)})`);
  }
  const parent = await run('deferred_a_parent', withTests);
  const atParent = parentReading(parent.run);
  if (atParent) return keepB(atParent);
  const fix = await run(
    'deferred_a_fix',
    await overlayFor(built.source_dir, [['patch', res.patch], ...testPatches]),
  );
  const atFix = fixReading(fix.run);
  if (atFix) return keepB(atFix);
  // a test that failed at the parent on an import (a module new in the fix) says so
  const parentImport = pythonImportFailure(parent.run.log);
  const atBase = parentImport
    ? `fails at base_commit, where it does not import (${parentImport}), and passes after the fix`
    : 'crashes at base_commit and not after the fix';
  const reason = `A: ${a.function} called with ${a.inputs} ${atBase}, decided in the instance image (testgen's host could not import it: ${a.host_import_failure})`;
  // a Strategy B strength says nothing of an A test
  const { f2p_strength: _s, ...asA } = rest;
  return {
    testgen: {
      ...asA,
      strategy: 'A',
      strategy_reason: reason,
      f2p_test_patch: a.f2p_test_patch,
      FAIL_TO_PASS: fix.mapped,
    },
    decision: { used: true, reason },
    logs,
    seconds,
  };
}
