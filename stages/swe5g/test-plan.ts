/**
 * The test plan of an instance: which tests a step runs and how (test directories, the registry's
 * commands, the meson selection with the kept build), decided ONCE from the instance and its
 * registry entry. `swe5g.validate` (every step), grading (`swe5g.eval.grade`, the solver's
 * feedback runs, `telebench evaluate` from a state or a released dataset) and `telebench verify`
 * build their {@link TestSpec} through {@link testPlan} and {@link planSpec}, so a prediction is
 * graded in the step validation's fix run took: the same recipe, incremental build (the kept
 * meson build of the image, never a fresh `meson setup && meson compile` of the whole project)
 * and test selection (issue 30: an Open5GS prediction graded by a full build ran into the
 * 30-minute step limit, gold patch included).
 *
 * One rule differs by design: the kept build compiles the objects of the files the patch UNDER
 * TEST touches (validation: the gold patch; grading: the model patch), so the gold patch graded
 * as a prediction runs validation's fix step exactly, and a solver's feedback never names the
 * gold patch's files (the meson step prints the ninja targets it builds).
 */
import type { RecipeName } from '../../pipeline/providers/docker/recipes.js';
import type { EnvironmentsSettings } from './environments-config.js';
import {
  selectTestDirs,
  testSpec,
  usesMakeStep,
  type LimitSettings,
  type RegistryCommands,
  type TestSelection,
  type TestSpec,
} from './harness/spec.js';
import { keptCompileFiles, mesonSelection } from './build/c-env.js';
import type { EnvironmentSpec, RegistryEntry } from './registry.js';
import { filesOfPatch, packageDirs } from './resolve/packages.js';
import type { Resolved } from './types.js';

/** The language of each image recipe. */
export const RECIPE_LANGUAGE: Record<RecipeName, Resolved['language']> = {
  go: 'go',
  'c-meson': 'c',
  python: 'python',
};

/**
 * What a step needs to know of an instance's tests besides the limits (the fields of the same
 * names in an `EvalInstance`, stages/swe5g/evaluate/grade.ts).
 */
export interface TestPlan {
  image_recipe: RecipeName;
  /** The module folder the steps run in (a registry entry's `path`; '' for the root). */
  module_dir: string;
  /** Test directories relative to `module_dir`, or 'all' ({@link selectTestDirs}). */
  test_dirs: string[] | 'all';
  /** Registry commands a C repository is tested through (make), absent otherwise. */
  test_commands?: RegistryCommands;
  /** Registry test selection (meson suites and tests, excluded suites, the kept build). */
  test_selection?: TestSelection;
}

/**
 * A registry entry's say in how an instance's tests run (config/repos.yaml `test`, `environment`),
 * the fields `swe5g.validate` takes in its context (`registryScope`, `registryCommands`,
 * `registrySelection`).
 */
export interface RegistryTests {
  /** `test.scope`, read when the settings' `test_scope` is `registry`. */
  scope?: 'touched' | 'repo';
  /** `test.command` and `test.build`. */
  commands?: RegistryCommands;
  /** {@link registrySelection} of the entry's `environment` (absent without one). */
  selection?: TestSelection;
}

/**
 * The registry part of an instance's plan: an entry's scope, commands and, with an `environment`,
 * its {@link registrySelection} for the gold `patch` (undefined: no entry, the settings' defaults).
 */
export function registryTestsOf(
  entry: RegistryEntry | undefined,
  patch: string,
): RegistryTests | undefined {
  if (!entry) return undefined;
  return {
    scope: entry.test.scope,
    commands: {
      ...(entry.test.command ? { test: entry.test.command } : {}),
      ...(entry.test.build ? { build: entry.test.build } : {}),
    },
    ...(entry.environment ? { selection: registrySelection(entry.environment, patch) } : {}),
  };
}

/**
 * The harness's test selection of a registry `environment` (C, meson): its suites and tests, the
 * excluded ones with their reasons, and the kept build (docs/environments.md) whose steps build
 * only the selected tests and the objects of `patch`'s C/C++ files.
 */
export function registrySelection(env: EnvironmentSpec, patch: string): TestSelection {
  const sel = mesonSelection(env, filesOfPatch(patch))!;
  return {
    ...(sel.suites.length ? { suites: sel.suites } : {}),
    ...(sel.tests.length ? { tests: sel.tests } : {}),
    exclude: env.excluded,
    keptBuild: { setupOptions: sel.setupOptions, compile: sel.compile },
  };
}

/** The instance a plan is made for: its recipe, module folder, gold patch and test patches. */
export interface PlanSubject {
  recipe: RecipeName;
  moduleDir: string;
  /** The gold patch (`patch`): the fix's directories and the kept build's objects. */
  patch: string;
  /** `test_patch` and `f2p_test_patch`, or a released row's combined `test_patch` ('' allowed). */
  testPatches: readonly string[];
}

/**
 * The test plan of an instance.
 * - test directories: {@link selectTestDirs} over the gold patch's source directories and the
 *   test patches' directories, with the registry's scope when `settings.test_scope` is
 *   `registry` (`touched` without an entry);
 * - commands: the registry's, kept only where they replace meson (a C entry tested through make,
 *   {@link usesMakeStep}: Go and Python keep their structured reports);
 * - selection: the registry's ({@link registryTestsOf}: absent without an `environment`, and a C
 *   repository then configures and builds the whole project in each step).
 */
export function testPlan(
  subject: PlanSubject,
  reg: RegistryTests | undefined,
  settings: Pick<EnvironmentsSettings, 'test_scope'>,
): TestPlan {
  const scope =
    settings.test_scope === 'registry' ? (reg?.scope ?? 'touched') : settings.test_scope;
  const commands = reg?.commands;
  return {
    image_recipe: subject.recipe,
    module_dir: subject.moduleDir,
    test_dirs: selectTestDirs({
      recipe: subject.recipe,
      scope,
      moduleDir: subject.moduleDir,
      sourceDirs: packageDirs(filesOfPatch(subject.patch), RECIPE_LANGUAGE[subject.recipe]),
      testPatches: subject.testPatches,
    }),
    ...(subject.recipe === 'c-meson' && usesMakeStep(commands) ? { test_commands: commands } : {}),
    ...(reg?.selection ? { test_selection: reg.selection } : {}),
  };
}

/**
 * The {@link TestSpec} of a plan's step with `patch` under test: the plan's selection with the
 * kept build's objects of `patch`'s C/C++ files (see the module comment; validation passes the
 * gold patch, which is what {@link testPlan} put there).
 * @param patch the patch under test (a model patch; '' for none: only the tests' executables)
 */
export function planSpec(plan: TestPlan, settings: LimitSettings, patch?: string): TestSpec {
  let selection = plan.test_selection;
  if (selection?.keptBuild && patch !== undefined)
    selection = {
      ...selection,
      keptBuild: {
        ...selection.keptBuild,
        compile: keptCompileFiles(filesOfPatch(patch)),
      },
    };
  return testSpec({
    recipe: plan.image_recipe,
    dirs: plan.test_dirs,
    moduleDir: plan.module_dir,
    settings,
    commands: plan.test_commands,
    selection,
  });
}
