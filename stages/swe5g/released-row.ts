/**
 * What a released SWE-Bench 5G row says about how its tests run, read from the row alone and the
 * registry (no state of the build): the registry entry it belongs to and the test plan validation
 * ran (test directories, the registry's commands, the kept build's selection). Shared by `telebench verify` (stages/release)
 * and `telebench evaluate --dataset` (stages/swe5g/evaluate), so a row is re-run and graded on
 * exactly the tests validation ran.
 */
import type { Swe5gRow } from '../../datasets/index.js';
import type { RecipeName } from '../../pipeline/providers/docker/recipes.js';
import type { EnvironmentsSettings } from './environments-config.js';
import { githubRepoOf, type RegistryEntry } from './registry.js';
import { registryTestsOf, testPlan, type TestPlan } from './test-plan.js';

export { RECIPE_LANGUAGE } from './test-plan.js';

/**
 * Registry entry of a row: among the entries of the row's repository, the one whose `path`
 * prefixes every file the gold patch touches (the longest such path); the whole-repository entry
 * otherwise. Undefined when the registry has no entry for the repository.
 */
export function registryEntryOf(
  row: Pick<Swe5gRow, 'repo' | 'patch'>,
  entries: readonly RegistryEntry[],
): RegistryEntry | undefined {
  const files = [...row.patch.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1]!);
  const candidates = entries.filter((e) => githubRepoOf(e) === row.repo);
  const fits = candidates
    .filter((e) => !e.path || files.every((f) => f.startsWith(`${e.path}/`)))
    .sort((a, b) => (b.path ?? '').length - (a.path ?? '').length);
  return fits[0];
}

/**
 * The test plan of a released row: {@link testPlan} (the function `swe5g.validate` builds its steps
 * from) over the row's gold `patch` and `test_patch` (which is validation's `test_patch` +
 * `f2p_test_patch`) with the registry entry (module folder, scope, commands, `environment`: the
 * kept build's selection), so a row is re-run and graded on the step validation ran.
 */
export function rowTestPlan(
  row: Pick<Swe5gRow, 'image_recipe' | 'patch' | 'test_patch'>,
  entry: RegistryEntry | undefined,
  settings: Pick<EnvironmentsSettings, 'test_scope'>,
): TestPlan {
  return testPlan(
    {
      recipe: row.image_recipe as RecipeName,
      moduleDir: entry?.path ?? '',
      patch: row.patch,
      testPatches: [row.test_patch],
    },
    registryTestsOf(entry, row.patch),
    settings,
  );
}

/**
 * The test directories of a released row ({@link rowTestPlan}'s): relative to the module folder,
 * or `'all'`.
 */
export function rowTestDirs(
  row: Swe5gRow,
  entry: RegistryEntry | undefined,
  settings: Pick<EnvironmentsSettings, 'test_scope'>,
): string[] | 'all' {
  return rowTestPlan(row, entry, settings).test_dirs;
}
