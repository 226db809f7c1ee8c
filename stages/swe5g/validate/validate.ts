/**
 * `swe5g.validate`: the three-step validation of the SWE-Bench 5G paper (section "Validation"):
 *  1. at the parent (`base_commit`), the existing tests pass (`parent_p2p`). Paper rule: any
 *     failure rejects (`p2p_fails_at_parent`); `pass_to_pass_policy: drop-failing` instead drops
 *     the failing tests from PASS_TO_PASS and lists them (SWE-bench's behaviour);
 *  2. at the parent with the test patches (`test_patch` + the generated `f2p_test_patch`), the
 *     fail-to-pass tests fail (`parent_f2p`), else `f2p_does_not_fail_at_parent`;
 *  3. after the fix (`patch` + test patches), FAIL_TO_PASS and PASS_TO_PASS pass, `fix_runs`
 *     times (`fix_1..3`); a test whose result differs between runs is flaky: a flaky
 *     PASS_TO_PASS test is dropped and listed, a flaky FAIL_TO_PASS test rejects (`flaky`).
 * Steps 1 and 3 run the tests `test_repeats` times in FRESH runs (issue 21: separate `go test
 * -count=1` processes for Go, separate containers for the other runners; a test that fails only
 * on a second iteration inside one process is not flaky), so a one-in-three flake reaches
 * PASS_TO_PASS with probability (2/3)^(test_repeats x (1 + fix_runs)) = (2/3)^12 = 0.77% with the
 * defaults (environments-config.ts). A C repository whose registry entry gives `test.command`
 * (and `test.build`) is tested through them instead of meson.
 * Every step runs through the harness (stages/swe5g/harness: the spec, the one step runner, the
 * parser table); its logs are stored as blobs; the parsed result must agree with the exit code
 * (`ambiguous_log`). Strategy `shipped` with an empty FAIL_TO_PASS: the fail-to-pass tests are
 * those failing (or absent) in step 2 and passing in every fix run. The decisions are in
 * verdicts.ts.
 */
import { dirname, join, resolve as resolvePath } from 'node:path';
import { existsSync } from 'node:fs';
import { loadRegistry } from '../registry.js';
import { defineStage } from '../../../pipeline/stage.js';
import { sameKeyIn } from '../resolve/plan.js';
import { SkipItem } from '../../../pipeline/errors.js';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import type { Executor } from '../../../pipeline/providers/docker/executor.js';
import type { Overlay } from '../../../pipeline/providers/docker/overlay.js';
import { executorFor, executorPreflight } from '../executors.js';
import { git } from '../../../pipeline/providers/git/repo.js';
import type { Resolved, TestGen, ValidatedInstance } from '../types.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import type { EnvironmentsSettings } from '../environments-config.js';
import type { Built } from '../build/build.js';
import type { ParsedRun } from '../harness/parsers.js';
import { overlayFor } from '../harness/apply.js';
import { runStep, type StepOutcome } from '../harness/run-step.js';
import {
  usesMakeStep,
  type ExcludedSuite,
  type RegistryCommands,
  type TestSelection,
} from '../harness/spec.js';
import type { RegistryEntry } from '../registry.js';
import { planSpec, registryTestsOf, testPlan } from '../test-plan.js';
import {
  environmentalReason,
  fixRuns,
  goTestOutput,
  notFailingAtParent,
  parentNeedsRerun,
  parentVerdict,
  shippedFailToPass,
} from './verdicts.js';
import { buildStage } from '../build/build.js';
import { testgenStage } from '../testgen/testgen.js';
import { resolveStage } from '../resolve/resolve.js';

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
  const { resolved: res, testgen: tg, built } = input;
  const s = vc.settings;
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
  const step_logs: Validated['step_logs'] = {};
  const step_seconds: Record<string, number> = {};

  const run = async (
    step: keyof Validated['step_logs'] & string,
    files: Overlay,
    runs: number,
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
    return out;
  };

  // The patched file sets of steps 2 and 3 are prepared on the host while step 1 runs; their
  // errors (patch_does_not_apply) are raised where they are awaited, after step 1.
  const testPatches: [string, string][] = [
    ['test_patch', res.test_patch],
    ['f2p_test_patch', tg.f2p_test_patch],
  ];
  const withTestsP = overlayFor(built.source_dir, testPatches);
  const withFixP = overlayFor(built.source_dir, [['patch', res.patch], ...testPatches]);
  withTestsP.catch(() => undefined); // rethrown by the await below
  withFixP.catch(() => undefined); // rethrown by the await below

  // Step 1: existing tests at the parent, re-run while tests fail: a test that passes in one run
  // and fails in another is flaky (listed, dropped), not a failure at the parent.
  const s1 = await run('parent_p2p', {}, s.test_repeats);
  if (s1.parsed.build_failures.length > 0) {
    const errors = firstErrorLines(s1.stored.map((r) => `${r.stdout}\n${r.stderr}`).join('\n'));
    throw new SkipItem(
      'build_failed_at_parent',
      `${res.instance_id}: ${s1.parsed.build_failures.join(', ')} do not build at the parent${errors.length ? `: ${errors.join(' | ')}` : ''}`,
      { build_failures: s1.parsed.build_failures, first_errors: errors, step_logs },
    );
  }
  const parentRuns: ParsedRun[] = [s1.parsed];
  for (let i = 0; i < s.parent_reruns && parentNeedsRerun(parentRuns); i++)
    parentRuns.push((await run(`parent_p2p_${i + 2}`, {}, s.test_repeats)).parsed);
  const parent = parentVerdict(parentRuns);
  const s1stdout = s1.stored.map((r) => r.stdout).join('\n');
  const dropped_failing_at_parent = parent.failing.map((test) => ({
    test,
    reason:
      environmentalReason(recipe === 'go' ? goTestOutput(s1stdout, test) : s1stdout) ||
      'fails at the parent',
  }));
  if (
    (parent.failing.length > 0 || s1.parsed.package_failures.length > 0) &&
    s.pass_to_pass_policy === 'reject'
  ) {
    throw new SkipItem(
      'p2p_fails_at_parent',
      `${res.instance_id}: ${parent.failing.length} existing test(s) fail at the parent: ${parent.failing.slice(0, 5).join(', ')}${s1.parsed.package_failures.length ? `; packages ${s1.parsed.package_failures.join(', ')}` : ''}`,
      {
        failing: dropped_failing_at_parent,
        package_failures: s1.parsed.package_failures,
        step_logs,
      },
    );
  }

  // Step 2: fail-to-pass tests fail at the parent.
  const s2 = (await run('parent_f2p', await withTestsP, 1)).parsed;
  if (tg.FAIL_TO_PASS.length > 0) {
    const notFailing = notFailingAtParent(s2, tg.FAIL_TO_PASS, recipe);
    if (notFailing.length > 0) {
      throw new SkipItem(
        'f2p_does_not_fail_at_parent',
        `${res.instance_id}: ${notFailing.join(', ')} do(es) not fail at the parent (${notFailing.map((id) => s2.tests[id] ?? 'absent').join(', ')})`,
        { not_failing: notFailing, step_logs },
      );
    }
  }

  // Step 3: after the fix, fix_runs times.
  const withFix = await withFixP;
  const runs: ParsedRun[] = [];
  const stepNames = ['fix_1', 'fix_2', 'fix_3'] as const;
  for (let i = 0; i < s.fix_runs; i++)
    runs.push((await run(stepNames[Math.min(i, 2)]!, withFix, s.test_repeats)).parsed);
  const fix = fixRuns(runs);
  const FAIL_TO_PASS =
    tg.FAIL_TO_PASS.length > 0 ? tg.FAIL_TO_PASS : shippedFailToPass(s2, fix, parent.passing);
  if (FAIL_TO_PASS.length === 0) {
    throw new SkipItem(
      'f2p_does_not_fail_at_parent',
      `${res.instance_id}: no test fails at the parent and passes after the fix`,
      { step_logs },
    );
  }
  const flakyF2P = FAIL_TO_PASS.filter((id) => !fix.consistent(id));
  if (flakyF2P.length > 0) {
    throw new SkipItem(
      'flaky',
      `${res.instance_id}: fail-to-pass test(s) ${flakyF2P.slice(0, 5).join(', ')}${flakyF2P.length > 5 ? ` and ${flakyF2P.length - 5} more` : ''} differ between the ${s.fix_runs} fix runs (${flakyF2P
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
  const f2pSet = new Set(FAIL_TO_PASS);
  const p2pCandidates = parent.passing.filter((id) => !f2pSet.has(id));
  const dropped_flaky = [
    ...new Set([...p2pCandidates.filter((id) => !fix.consistent(id)), ...parent.flaky]),
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
    ...(recipe === 'c-meson' && usesMakeStep(commands) ? { test_commands: commands } : {}),
  };
}

/** Whether `dir` is a repository work tree (used by tests to sanity-check source dirs). */
export async function isRepo(dir: string): Promise<boolean> {
  return existsSync(join(dir, '.git')) && (await git(dir).checkIsRepo());
}

/**
 * Every registry entry (`config/repos.yaml`) by id. A registry that cannot be read is a
 * configuration error of the mining stages, which read it first.
 * @throws ConfigError from loadRegistry
 */
function registryEntries(cfg: HasSwe5g, configFile: string): Map<string, RegistryEntry> {
  const file = resolvePath(dirname(configFile), swe5gSettings(cfg).registry);
  if (!existsSync(file)) return new Map();
  return new Map(loadRegistry(file).map((e) => [e.id, e]));
}

export { selectTestDirs, testCommand, type RegistryCommands } from '../harness/spec.js';

export { registrySelection } from '../test-plan.js';

/**
 * The first lines of a build log that say what failed (ninja `FAILED:`, compiler `error:`, meson
 * `ERROR:`, linker `undefined reference`, `fatal error`, Go `cannot find`/`undefined:`), at most
 * `max`, each cut to 300 characters; the last non-empty lines when none matches.
 */
export function firstErrorLines(log: string, max = 5): string[] {
  // terminal colour codes (meson, gcc) are not text: ESC [ ... m as one sequence, so a literal
  // `[magma/...` in a Go import path keeps its letters
  const colour = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
  const lines = log.split('\n').map((l) => l.replace(colour, '').trimEnd());
  const re =
    /^FAILED: |\b(error|ERROR|fatal error|undefined reference|cannot find|No such file or directory|Dependency .* not found|not found or not usable)\b|\bundefined: /;
  const hits = lines.filter((l) => re.test(l) && !/^# command:/.test(l));
  const pick = hits.length > 0 ? hits : lines.filter((l) => l.trim() !== '').slice(-max);
  return pick.slice(0, max).map((l) => (l.length > 300 ? `${l.slice(0, 297)}...` : l));
}
export { overlayFor } from '../harness/apply.js';

/**
 * Stage `swe5g.validate`: one item per built instance that also has a `swe5g.testgen` record.
 * @throws SkipItem with the failed step's reason (contract list in stages/swe5g/types.ts)
 */
export const validateStage = defineStage<ValidateInput, Validated, HasSwe5g>({
  name: 'swe5g.validate',
  // 2: test dirs are Go packages / source folders (packages.ts), not every touched dir;
  // 3: repeats in fresh processes/containers (issue 21), the harness's step log format (issue 22);
  // 4: C registry `environment`: kept-build steps over the selected tests, first error lines;
  // 5: a meson per-test TIMEOUT is that test failing, not a `timeout` skip of the instance
  version: 5,
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
  *plan(ctx) {
    let n = 0;
    const tests = new Map([...ctx.store.outputs(testgenStage)].map((t) => [t.key, t.output]));
    for (const b of ctx.store.outputs(buildStage)) {
      const testgen = tests.get(b.key);
      const resolved = ctx.store.item(resolveStage, b.key);
      if (!testgen || resolved?.state !== 'done' || !resolved.output) continue;
      if (ctx.limit !== undefined && n >= ctx.limit) return;
      n++;
      yield {
        key: b.key,
        input: { resolved: resolved.output as Resolved, testgen, built: b.output },
      };
    }
  },
  async run(item, ctx) {
    const settings = swe5gSettings(ctx.config).environments;
    const executor: Executor = executorFor(
      settings,
      settings.executor === 'local' ? null : ctx.memo('docker', () => new DockerClient()),
      {
        // the step's result stands; a container or service left behind is reported in the event log
        onCleanupError: (e) => ctx.log(e.message, { code: e.code, ...e.context }),
        log: (m) => ctx.log(m),
      },
    );
    const reg = registryTestsOf(
      ctx
        .memo('swe5g.validate.registry', () => registryEntries(ctx.config, ctx.configFile))
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
