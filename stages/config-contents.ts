/**
 * What `telebench config check` reads besides the configuration itself: the registries it names.
 * A run reads them when its first stage plans (`swe5g.mine`, `resilience.load`); checking them
 * here gives the same errors (file, line, key) before anything runs.
 */
import { dirname, resolve } from 'node:path';
import type { AppConfig } from './config.js';
import { swe5gSettings } from './swe5g/config.js';
import { loadRegistry, registryWarnings, selectRepos } from './swe5g/registry.js';
import { resilienceSettings } from './resilience/config.js';
import { loadSubsets } from './resilience/subsets.js';

/**
 * Loads and validates the registries of the branches whose stages are in `stages`: the SWE-Bench
 * 5G repository registry (`swe5g.registry`, schema in stages/swe5g/registry.ts; `swe5g.repos`
 * must name its entries) and the TeleResilienceBench subsets registry (`resilience.subsets_file`;
 * `resilience.only_subsets` must name its subsets). Call after {@link checkConfigPaths}, which
 * reports missing files.
 * @param file absolute path of the configuration file (paths resolve against its folder)
 * @param stages names of the stages the check covers (a branch is checked when one of its
 *   stages is among them)
 * @returns warnings that do not stop a run (an unknown NF, a licence the release table lacks),
 *   one sentence each, naming the entry
 * @throws ConfigError naming the registry file, the line and the key of the first invalid value
 */
export function checkConfigContents(
  file: string,
  config: AppConfig,
  stages: readonly string[],
): string[] {
  const warnings: string[] = [];
  if (stages.some((s) => s.startsWith('swe5g.'))) {
    const s = swe5gSettings(config);
    const entries = selectRepos(loadRegistry(resolve(dirname(file), s.registry)), s.repos);
    warnings.push(...registryWarnings(entries));
  }
  if (stages.includes('resilience.load')) loadSubsets(file, resilienceSettings(config));
  return warnings;
}
