/**
 * `swe5g.validate`: the three-step validation of the SWE-Bench 5G paper (section "Validation") on
 * SWE-bench's convention: the parent ("before") run holds the test patches (`test_patch` +
 * testgen's `f2p_test_patch`), so every test is judged on the test patch's version of it, before
 * and after (a test the patch rewrites or renames is judged on its new version only).
 *  0. testgen's deferred Python Strategy A test (`TestGen.deferred_a`, when it has one) is decided
 *     in the instance image first (deferred-a.ts): when it fails at the parent and passes with the
 *     gold patch it replaces the Strategy B test in the steps below (`strategy` 'A'), else B stays
 *     and `deferred_a` says why;
 *  1. at the parent with the test patches (`parent_p2p`, `test_repeats` fresh runs): tests that
 *     pass are the PASS_TO_PASS candidates. A parent that does not build is rejected
 *     (`build_failed_at_parent`) unless only the new tests need the fix (`parent_bare`, the
 *     parent without them, builds). A step that does not build because a dependency could not be
 *     obtained (harness/build-log.ts: the module cache, the proxy, the network, a system library)
 *     is no verdict: the item fails `dependency_unavailable` (tier infra) and is retried. Paper
 *     rule: an existing test failing before AND after the fix rejects (`p2p_fails_at_parent`);
 *     `pass_to_pass_policy: drop-failing` drops it and lists it;
 *  2. the given fail-to-pass tests (testgen's) fail in step 1, else `f2p_does_not_fail_at_parent`;
 *  3. after the fix (`patch` + test patches), `fix_runs` times (`fix_1..3`): FAIL_TO_PASS =
 *     failing (or missing: SWE-bench's `test_failed`) before and passing after; PASS_TO_PASS =
 *     passing both. A test whose result differs between runs is flaky: a flaky PASS_TO_PASS test is
 *     dropped and listed, a flaky FAIL_TO_PASS test rejects (`flaky`).
 * Step 1 is re-run (`parent_reruns`) after step 3 while a test fails in every before run and does
 * not pass consistently after the fix, so a one-in-three flake is seen flaky, not taken for a
 * failure. Steps 1 and 3 run the tests `test_repeats` times in FRESH runs (issue 21: separate
 * `go test -count=1` processes for Go, separate containers for the other runners), so a
 * one-in-three flake reaches PASS_TO_PASS with probability (2/3)^(test_repeats x (1 + fix_runs))
 * = (2/3)^12 = 0.77% with the defaults (environments-config.ts). A C repository whose registry
 * entry gives `test.command` (and `test.build`) is tested through them instead of meson.
 * Every step runs through the harness (stages/swe5g/harness: the spec, the one step runner, the
 * parser table); its logs are stored as blobs; the parsed result must agree with the exit code
 * (`ambiguous_log`). The decisions are in verdicts.ts.
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { registryById } from '../registry.js';
import { defineStage, type WorkItem } from '../../../pipeline/stage.js';
import { ensureInstanceImage } from '../build/on-demand.js';
import { sameKeyIn } from '../resolve/plan.js';
import { SkipItem } from '../../../pipeline/errors.js';
import type { Executor } from '../../../pipeline/providers/docker/executor.js';
import type { Overlay } from '../../../pipeline/providers/docker/overlay.js';
import { stageExecutor, executorPreflight } from '../executors.js';
import { git } from '../../../pipeline/providers/git/repo.js';
import type { Resolved, TestGen, ValidatedInstance } from '../types.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import type { EnvironmentsSettings } from '../environments-config.js';
import type { Built } from '../build/build.js';
import type { ParsedRun } from '../harness/parsers.js';
import { overlayFor } from '../harness/apply.js';
import { dependencyUnavailable, firstErrorLines } from '../harness/build-log.js';
import type { RecipeName } from '../../../pipeline/providers/docker/recipes.js';
import { runStep, type StepOutcome } from '../harness/run-step.js';
import {
  usesMakeStep,
  type ExcludedSuite,
  type RegistryCommands,
  type TestSelection,
} from '../harness/spec.js';
import { planSpec, registryTestsOf, testPlan } from '../test-plan.js';
import {
  environmentalReason,
  fixRuns,
  goTestOutput,
  notFailingAtParent,
  parentNeedsRerunAfterFix,
  reportedId,
  splitBeforeAfter,
} from './verdicts.js';
import { buildStage } from '../build/build.js';
import { GO_ASSUMED_VERSION } from '../../../pipeline/providers/docker/go-directive.js';
import { testgenStage } from '../testgen/testgen.js';
import { resolveStage } from '../resolve/resolve.js';
import { currentIssueText, withIssueText, withoutIssueText } from '../statement/current.js';
import { inRunOrder } from '../run-order.js';
import { tryDeferredA, type DeferredADecision } from './deferred-a.js';

export { environmentalReason, goTestOutput } from './verdicts.js';

/** Input of one validation item. */
export interface ValidateInput {
  resolved: Resolved;
  testgen: TestGen;
  built: Built;
}

/** Output: the validated instance plus per-step timings (seconds) and layer sizes (bytes). */
export interface Validated extends ValidatedInstance {
  step_seconds: Record<string, number>;
  image_sizes: Built['sizes'];
  /** Tests dropped from PASS_TO_PASS because they failed at the parent (drop-failing policy). */
  dropped_failing_at_parent: { test: string; reason: string }[];
  /**
   * Registry commands the steps ran with (C: make instead of meson), so grading runs the same
   * tests; absent in records validated before they were read.
   */
  test_commands?: RegistryCommands;
  /** Suites the registry excludes (they need a service), with the reason: never run, never failing. */
  excluded_suites?: ExcludedSuite[];
  /**
   * testgen's deferred Python Strategy A test (`TestGen.deferred_a`), decided in the instance image
   * before the three steps (deferred-a.ts): used (`strategy` 'A') or not, and why. Absent when the
   * testgen record deferred none.
   */
  deferred_a?: DeferredADecision;
  /**
   * The fail-to-pass test patch the steps ran when it is not testgen's `f2p_test_patch` (the
   * deferred A test was used): what grading and the audit apply (evaluate/instances.ts).
   */
  f2p_test_patch?: string;
}

/** Everything validation needs besides the instance. */
export interface ValidateContext {
  executor: Executor;
  settings: EnvironmentsSettings;
  /** Stores a step log; returns its digest. */
  saveLog: (step: string, text: string) => string;
  log?: (message: string) => void;
  signal?: AbortSignal;
  /** Registry test scope of the repository (`touched` | `repo`), used when settings say `registry`. */
  registryScope?: 'touched' | 'repo';
  /** Registry test and build commands of the repository (used by the C recipe: make). */
  registryCommands?: RegistryCommands;
  /** Registry test selection (meson suites to run, suites excluded with the reason). */
  registrySelection?: TestSelection;
}

/**
 * Runs the three validation steps for one instance.
 * @returns the validated instance (SWE-bench fields plus images, toolchain, executor, step logs)
 * @throws SkipItem with the failed step's reason (see the module comment)
 */
export async function validateInstance(
  input: ValidateInput,
  vc: ValidateContext,
): Promise<Validated> {
  const { resolved: res, built } = input;
  const s = vc.settings;
  // testgen's deferred Python Strategy A, decided here in the image before the three steps
  const deferred = await tryDeferredA(input, vc);
  const tg = deferred?.testgen ?? input.testgen;
  const recipe = built.image_recipe;
  const commands = vc.registryCommands;
  // the one test plan of the instance: grading builds its step from the same function
  const spec = planSpec(
    testPlan(
      {
        recipe,
        moduleDir: built.module_dir,
        // the patch, not res.test_dirs: a store resolved before packageDirs may hold `.` for a
        // root go.mod (which Go answers with "no Go files")
        patch: res.patch,
        testPatches: [res.test_patch, tg.f2p_test_patch],
      },
      { scope: vc.registryScope, commands, selection: vc.registrySelection },
      s,
    ),
    s,
  );
  const step_logs: Validated['step_logs'] = { ...deferred?.logs };
  const step_seconds: Record<string, number> = { ...deferred?.seconds };

  const run = async (
    step: keyof Validated['step_logs'] & string,
    files: Overlay,
    runs: number,
    dependencies = true,
  ): Promise<StepOutcome> => {
    const out = await runStep(
      spec,
      { name: step, files, runs },
      {
        executor: vc.executor,
        instance: { image: built.images.instance, sourceDir: built.source_dir },
        saveLog: vc.saveLog,
        ...(vc.signal ? { signal: vc.signal } : {}),
        log: (m) => vc.log?.(`${res.instance_id} ${m}`),
      },
    );
    Object.assign(step_logs, out.logs);
    step_seconds[step] = out.seconds;
    if (out.timedOut)
      throw new SkipItem(
        'timeout',
        `${res.instance_id} step ${step}: killed after ${s.limits.timeout_s} s`,
        { step, step_logs },
      );
    if (out.parsed.timed_out)
      throw new SkipItem(
        'timeout',
        `${res.instance_id} step ${step}: the test framework reported a timeout`,
        { step, step_logs },
      );
    if (out.ambiguous)
      throw new SkipItem('ambiguous_log', out.ambiguous, {
        step,
        conflicts: out.parsed.conflicts ?? [],
        step_logs,
      });
    if (dependencies)
      mustHaveDependencies(out, { step, instanceId: res.instance_id, recipe, step_logs });
    return out;
  };

  // SWE-bench's "before" state is the parent WITH the test patches (step 1, which also decides
  // step 2); the fix's file set is prepared on the host while step 1 runs (its errors,
  // patch_does_not_apply, are raised where it is awaited).
  const testPatches: [string, string][] = [
    ['test_patch', res.test_patch],
    ['f2p_test_patch', tg.f2p_test_patch],
  ];
  const withTests = await overlayFor(built.source_dir, testPatches);
  const withFixP = overlayFor(built.source_dir, [['patch', res.patch], ...testPatches]);
  withFixP.catch(() => undefined); // rethrown by the await below

  // Step 1: every test at the parent with the test patches, test_repeats fresh runs.
  // (a dependency the test patches alone import is the tests' own: the bare parent decides)
  const s1 = await run('parent_p2p', withTests, s.test_repeats, !hasTestPatches(testPatches));
  if (s1.parsed.build_failures.length > 0)
    await parentMustBuild(s1, { run, instanceId: res.instance_id, testPatches, step_logs });
  // Step 2: the given fail-to-pass tests fail before (in step 1's runs), by the ids the step
  // reports (pytest roots them at a pytest.ini above the folder: Magma's lte/gateway)
  const givenF2P = tg.FAIL_TO_PASS.map((id) => reportedId(id, Object.keys(s1.parsed.tests)) ?? id);
  const notFailing = notFailingAtParent(s1.parsed, givenF2P, recipe);
  if (notFailing.length > 0) {
    throw new SkipItem(
      'f2p_does_not_fail_at_parent',
      `${res.instance_id}: ${notFailing.join(', ')} do(es) not fail at the parent (${notFailing.map((id) => s1.parsed.tests[id] ?? 'absent').join(', ')})`,
      { not_failing: notFailing, step_logs },
    );
  }

  // Step 3: after the fix, fix_runs times.
  const withFix = await withFixP;
  const runs: ParsedRun[] = [];
  const stepNames = ['fix_1', 'fix_2', 'fix_3'] as const;
  for (let i = 0; i < s.fix_runs; i++)
    runs.push((await run(stepNames[Math.min(i, 2)]!, withFix, s.test_repeats)).parsed);
  const fix = fixRuns(runs);
  // Step 1 again while a test fails in every before run and not consistently passing after: a
  // flake passes in one of them and is listed (dropped), never a reason to reject.
  const parentRuns: ParsedRun[] = [s1.parsed];
  for (let i = 0; i < s.parent_reruns && parentNeedsRerunAfterFix(parentRuns, fix, givenF2P); i++)
    parentRuns.push(
      (await run(`parent_p2p_${i + 2}`, withTests, s.test_repeats, !hasTestPatches(testPatches)))
        .parsed,
    );
  const split = splitBeforeAfter(parentRuns, fix, givenF2P);
  const { parent, FAIL_TO_PASS, p2pCandidates } = split;
  const s1stdout = s1.stored.map((r) => r.stdout).join('\n');
  const dropped_failing_at_parent = split.failingBoth.map((test) => ({
    test,
    reason:
      environmentalReason(recipe === 'go' ? goTestOutput(s1stdout, test) : s1stdout) ||
      'fails at the parent',
  }));
  if (
    (split.failingBoth.length > 0 || split.packageFailuresBoth.length > 0) &&
    s.pass_to_pass_policy === 'reject'
  ) {
    throw new SkipItem(
      'p2p_fails_at_parent',
      `${res.instance_id}: ${split.failingBoth.length} existing test(s) fail at the parent and after the fix: ${split.failingBoth.slice(0, 5).join(', ')}${split.packageFailuresBoth.length ? `; packages ${split.packageFailuresBoth.join(', ')}` : ''}`,
      {
        failing: dropped_failing_at_parent,
        package_failures: split.packageFailuresBoth,
        step_logs,
      },
    );
  }
  if (FAIL_TO_PASS.length === 0) {
    throw new SkipItem(
      'f2p_does_not_fail_at_parent',
      `${res.instance_id}: no test fails at the parent and passes after the fix`,
      { step_logs },
    );
  }
  const flakyF2P = FAIL_TO_PASS.filter((id) => !fix.consistent(id) || parent.flaky.includes(id));
  if (flakyF2P.length > 0) {
    throw new SkipItem(
      'flaky',
      `${res.instance_id}: fail-to-pass test(s) ${flakyF2P.slice(0, 5).join(', ')}${flakyF2P.length > 5 ? ` and ${flakyF2P.length - 5} more` : ''} differ between the ${s.fix_runs} fix runs or the parent runs (${flakyF2P
        .slice(0, 5)
        .map((id) => fix.statusesOf(id).join('/'))
        .join('; ')})`,
      { flaky: flakyF2P, step_logs },
    );
  }
  const f2pFailing = FAIL_TO_PASS.filter((id) => !fix.allPass(id));
  if (f2pFailing.length > 0) {
    throw new SkipItem(
      'f2p_fails_after_fix',
      `${res.instance_id}: ${f2pFailing.join(', ')} still fail(s) after the fix (${f2pFailing.map((id) => fix.statusesOf(id)[0]).join(', ')})`,
      { failing: f2pFailing, step_logs },
    );
  }
  const dropped_flaky = [
    ...new Set([
      ...p2pCandidates.filter((id) => !fix.consistent(id)),
      ...parent.flaky,
      ...split.missingFlaky,
    ]),
  ].sort();
  const p2pBroken = p2pCandidates.filter(
    (id) => fix.consistent(id) && !fix.allPass(id) && fix.statusesOf(id)[0] !== 'skip',
  );
  if (p2pBroken.length > 0) {
    throw new SkipItem(
      'p2p_fails_after_fix',
      `${res.instance_id}: ${p2pBroken.length} test(s) passing at the parent fail after the fix: ${p2pBroken.slice(0, 5).join(', ')}`,
      { failing: p2pBroken, step_logs },
    );
  }
  const PASS_TO_PASS = p2pCandidates.filter((id) => fix.consistent(id) && fix.allPass(id)).sort();
  return {
    instance_id: res.instance_id,
    repo: res.repo,
    base_commit: res.base_commit,
    patch: res.patch,
    test_patch: [res.test_patch, tg.f2p_test_patch].filter((p) => p.trim() !== '').join(''),
    problem_statement: res.problem_statement,
    hints_text: res.hints_text,
    created_at: res.created_at,
    version: res.version,
    environment_setup_commit: res.environment_setup_commit,
    FAIL_TO_PASS,
    PASS_TO_PASS,
    alias: res.alias,
    nf: res.nf,
    bug_category: tg.bug_category,
    strategy: tg.strategy,
    spec_refs: tg.spec_refs,
    license: res.license,
    images: built.images,
    image_recipe: recipe,
    toolchain: built.toolchain,
    executor: vc.executor.kind,
    step_logs,
    dropped_flaky,
    incomplete: res.incomplete,
    step_seconds,
    image_sizes: built.sizes,
    dropped_failing_at_parent:
      s.pass_to_pass_policy === 'drop-failing' ? dropped_failing_at_parent : [],
    ...(spec.excluded.length ? { excluded_suites: spec.excluded } : {}),
    ...(deferred ? { deferred_a: deferred.decision } : {}),
    ...(deferred?.decision.used ? { f2p_test_patch: tg.f2p_test_patch } : {}),
    ...(recipe === 'c-meson' && usesMakeStep(commands) ? { test_commands: commands } : {}),
  };
}

/**
 * Step 1 (the parent with the test patches) did not build. SWE-bench counts the tests it lost as
 * failing before; the paper's rule still rejects a parent that does not build by itself. So the
 * parent is run once more WITHOUT the test patches (`parent_bare`; with none, step 1 was that
 * run): when it builds, the new tests need the fix (their tests are failing before, candidates
 * for FAIL_TO_PASS); when it does not, the instance is skipped.
 * @throws SkipItem `build_failed_at_parent` with what failed and the first error lines; the
 *   bare run's `dependency_unavailable` (from `run`) when a dependency could not be obtained
 */
async function parentMustBuild(
  s1: StepOutcome,
  ctx: {
    run: (step: 'parent_bare', files: Overlay, runs: number) => Promise<StepOutcome>;
    instanceId: string;
    testPatches: [string, string][];
    step_logs: Validated['step_logs'];
  },
): Promise<void> {
  const withTests = hasTestPatches(ctx.testPatches);
  const bare = withTests ? await ctx.run('parent_bare', {}, 1) : s1;
  const failures = bare.parsed.build_failures;
  if (failures.length === 0) return;
  const errors = firstErrorLines(bare.stored.map((r) => `${r.stdout}\n${r.stderr}`).join('\n'));
  throw new SkipItem(
    'build_failed_at_parent',
    `${ctx.instanceId}: ${failures.join(', ')} do not build at the parent${errors.length ? `: ${errors.join(' | ')}` : ''}`,
    { build_failures: failures, first_errors: errors, step_logs: ctx.step_logs },
  );
}

/** Whether `dir` is a repository work tree (used by tests to sanity-check source dirs). */
export async function isRepo(dir: string): Promise<boolean> {
  return existsSync(join(dir, '.git')) && (await git(dir).checkIsRepo());
}

export { selectTestDirs, testCommand, type RegistryCommands } from '../harness/spec.js';

export { registrySelection } from '../test-plan.js';

export { firstErrorLines } from '../harness/build-log.js';

/** Whether any of the test patches changes something (an empty one is no patch). */
function hasTestPatches(patches: [string, string][]): boolean {
  return patches.some(([, p]) => p.trim() !== '');
}

/**
 * A step that did not build because a dependency could not be obtained (the module cache, the
 * proxy, the network, a system library: harness/build-log.ts) says nothing of the instance: it is
 * an environment failure, recorded as a failed item and retried (a refresh holds its cutoff at
 * it), never a verdict such as `build_failed_at_parent`.
 * @throws TelebenchError `dependency_unavailable` (tier infra) naming the instance, the step, the
 *   reason and the log lines that say it (`context.lines`), with the step logs so far
 */
function mustHaveDependencies(
  out: StepOutcome,
  at: { step: string; instanceId: string; recipe: RecipeName; step_logs: Validated['step_logs'] },
): void {
  const err = dependencyUnavailable(out, { ...at, context: { step_logs: at.step_logs } });
  if (err) throw err;
}

export { overlayFor } from '../harness/apply.js';

/** Testgen's record without its classification of the issue text (what validation runs). */
function withoutClassification(t: TestGen): Omit<TestGen, 'bug_category' | 'spec_refs' | 'nf'> {
  const { bug_category: _b, spec_refs: _s, nf: _n, ...rest } = t;
  return rest;
}

/**
 * Stage `swe5g.validate`: one item per built instance that also has a `swe5g.testgen` record.
 * @throws SkipItem with the failed step's reason (contract list in stages/swe5g/types.ts)
 */
/**
 * What of a build decides a validation: the images (their tags are content hashes of the recipe
 * and its inputs), the recipe, the toolchain and the two folders the steps read. Timings and the
 * build's own notes are left out, so a new build version that rebuilds the same images (its
 * seconds differ every time) re-validates nothing.
 */
export function builtIdentity(b: Built): unknown {
  return {
    images: b.images,
    image_recipe: b.image_recipe,
    toolchain: b.toolchain,
    module_dir: b.module_dir,
    source_dir: b.source_dir,
  };
}

export const validateStage = defineStage<ValidateInput, Validated, HasSwe5g>({
  name: 'swe5g.validate',
  // 2: test dirs are Go packages / source folders (packages.ts), not every touched dir;
  // 3: repeats in fresh processes/containers (issue 21), the harness's step log format (issue 22);
  // 4: C registry `environment`: kept-build steps over the selected tests, first error lines;
  // 5: a meson per-test TIMEOUT is that test failing, not a `timeout` skip of the instance;
  // 6: SWE-bench's convention: the parent ("before") run holds the test patches, FAIL_TO_PASS and
  //    PASS_TO_PASS judged on the test patch's version of every test (every stored validation
  //    re-runs once)
  // (the deferred Strategy A try changes the output only of inputs with `TestGen.deferred_a`,
  // which testgen 17 first writes: every other stored validation stays valid, no bump for it)
  // (a go.mod without a `go` directive is built as Go 1.16 in every Go step, go-directive.ts:
  // `go test -mod=mod` wrote the toolchain's version into it, so 2019 Magma folders were built as
  // Go 1.26 code and failed newer vet checks; the cache key of Go validations says so, so only
  // they re-run once, the C and Python ones stay)
  version: 6,
  needs: ['swe5g.build', 'swe5g.testgen'],
  description:
    'Three-step validation: existing tests pass at the parent, F2P tests fail there and pass after the fix (3 runs).',
  // executor swarm: the cluster's task budget (`swe5g.environments.swarm.task_budget`)
  concurrency: (cfg) => {
    const env = swe5gSettings(cfg).environments;
    return env.executor === 'swarm' ? env.swarm.task_budget : 1;
  },
  async preflight(ctx) {
    await executorPreflight(swe5gSettings(ctx.config).environments);
  },
  itemNeeds: sameKeyIn('swe5g.build', 'swe5g.testgen'),
  // no test reads the issue text, nor testgen's classification of it (bug category, 3GPP
  // references, NF): a new problem statement never re-validates (issue 31); the readers of the
  // statement take it from statement/current.ts
  cacheKey: (i) => ({
    resolved: withoutIssueText(i.resolved),
    testgen: withoutClassification(i.testgen),
    built: builtIdentity(i.built),
    ...(i.built.image_recipe === 'go' ? { go_directive: GO_ASSUMED_VERSION } : {}),
  }),
  *plan(ctx) {
    const tests = new Map([...ctx.store.outputs(testgenStage)].map((t) => [t.key, t.output]));
    const text = currentIssueText(ctx.store);
    const items: WorkItem<ValidateInput>[] = [];
    for (const b of ctx.store.outputs(buildStage)) {
      const testgen = tests.get(b.key);
      const resolved = ctx.store.item(resolveStage, b.key);
      if (!testgen || resolved?.state !== 'done' || !resolved.output) continue;
      items.push({
        key: b.key,
        input: {
          resolved: withIssueText(resolved.output as Resolved, text.get(b.key)),
          testgen,
          built: b.output,
        },
      });
    }
    yield* inRunOrder(ctx, items);
  },
  async run(item, ctx) {
    const settings = swe5gSettings(ctx.config).environments;
    // an image evicted under image_budget_gib is rebuilt from its recipe (issue 31)
    const { resolved, built } = item.input;
    await ensureInstanceImage(ctx, item.key, built.images.instance, resolved);
    const executor = stageExecutor(settings, ctx);
    const reg = registryTestsOf(
      ctx
        .memo('swe5g.validate.registry', () => registryById(ctx.config, ctx.configFile))
        .get(item.input.resolved.registry_id),
      item.input.resolved.patch,
    );
    return validateInstance(item.input, {
      executor,
      settings,
      ...(reg ? { registryScope: reg.scope, registryCommands: reg.commands } : {}),
      ...(reg?.selection ? { registrySelection: reg.selection } : {}),
      saveLog: (step, text) => ctx.artifact(`step_logs/${step}`, text, 'text/plain'),
      log: (m) => ctx.log(m),
      signal: ctx.signal,
    });
  },
});
