/**
 * What a released SWE-Bench 5G row says about how its tests run, read from the row alone and the
 * registry (no state of the build): the registry entry it belongs to, the test directories
 * validation ran, the registry's test commands. Shared by `telebench verify` (stages/release)
 * and `telebench evaluate --dataset` (stages/swe5g/evaluate), so a row is re-run and graded on
 * exactly the tests validation ran.
 */
import type { Swe5gRow } from '../../datasets/index.js';
import type { RecipeName } from '../../pipeline/providers/docker/recipes.js';
import type { EnvironmentsSettings } from './environments-config.js';
import { selectTestDirs, type RegistryCommands } from './harness/spec.js';
import { githubRepoOf, type RegistryEntry } from './registry.js';
import { filesOfPatch, packageDirs } from './resolve/packages.js';
import type { Resolved } from './types.js';

/** The language of each image recipe. */
export const RECIPE_LANGUAGE: Record<RecipeName, Resolved['language']> = {
  go: 'go',
  'c-meson': 'c',
  python: 'python',
};

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
 * The test directories of a released row: {@link selectTestDirs} (the selection `swe5g.validate`
 * made) over the fix's directories (`Resolved.test_dirs`, rebuilt from `patch`) and the row's
 * `test_patch` (which is validation's `test_patch` + `f2p_test_patch`), with the registry entry's
 * test scope and module folder.
 * @returns the directories relative to the module folder, or `'all'`
 */
export function rowTestDirs(
  row: Swe5gRow,
  entry: RegistryEntry | undefined,
  settings: Pick<EnvironmentsSettings, 'test_scope'>,
): string[] | 'all' {
  const scope =
    settings.test_scope === 'registry' ? (entry?.test.scope ?? 'touched') : settings.test_scope;
  return selectTestDirs({
    recipe: row.image_recipe as RecipeName,
    scope,
    moduleDir: entry?.path ?? '',
    sourceDirs: packageDirs(
      filesOfPatch(row.patch),
      RECIPE_LANGUAGE[row.image_recipe as RecipeName],
    ),
    testPatches: [row.test_patch],
  });
}

/** The registry entry's test commands (a C entry tested through make), or undefined. */
export function rowTestCommands(entry: RegistryEntry | undefined): RegistryCommands | undefined {
  if (!entry) return undefined;
  return {
    ...(entry.test.command ? { test: entry.test.command } : {}),
    ...(entry.test.build ? { build: entry.test.build } : {}),
  };
}
