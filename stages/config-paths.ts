/**
 * The files and folders a configuration names by a relative path, checked before a run starts:
 * a configuration copied to another folder keeps `registry: repos.yaml`, `subsets_file:
 * subsets.yaml`, ..., which then name files that are not there. One error lists every such path
 * with its key and line, instead of one per run, deep inside a stage.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../pipeline/errors.js';
import { keyLine } from '../pipeline/config/load.js';
import { PROJECT_ROOT } from '../pipeline/manifest.js';
import type { AppConfig } from './config.js';
import { swe5gSettings } from './swe5g/config.js';
import { resilienceSettings } from './resilience/config.js';

/** A path-valued key: the stages that read it, and the file that must exist under it. */
interface PathKey {
  stages: string[];
  key: string;
  value: (c: AppConfig) => string;
  /** The file that must exist: the path itself, or a file inside the folder it names. */
  mustHave: (abs: string) => string;
  /** Where the project keeps its own copy (named in the hint). */
  project: string;
}

const PATH_KEYS: PathKey[] = [
  {
    stages: ['swe5g.mine', 'swe5g.link'],
    key: 'swe5g.registry',
    value: (c) => swe5gSettings(c).registry,
    mustHave: (p) => p,
    project: join(PROJECT_ROOT, 'config', 'repos.yaml'),
  },
  {
    stages: ['resilience.load'],
    key: 'resilience.subsets_file',
    value: (c) => resilienceSettings(c).subsets_file,
    mustHave: (p) => p,
    project: join(PROJECT_ROOT, 'config', 'subsets.yaml'),
  },
  {
    stages: ['resilience.load'],
    key: 'resilience.prompts_dir',
    value: (c) => resilienceSettings(c).prompts_dir,
    mustHave: (p) => join(p, 'prompts.yaml'),
    project: join(PROJECT_ROOT, 'config', 'prompts', 'resilience'),
  },
];

/**
 * Checks that the files named by relative paths in `config` exist, for the stages that will run.
 * @param configFile absolute path of the configuration (paths resolve against its folder)
 * @param stages the stages of the run (a path only its other stages read is not checked)
 * @throws ConfigError listing every missing path with its key, line, value and the project's copy
 */
export function checkConfigPaths(
  configFile: string,
  config: AppConfig,
  stages: readonly string[],
): void {
  const problems: string[] = [];
  let first: string | undefined;
  for (const k of PATH_KEYS) {
    if (!k.stages.some((s) => stages.includes(s))) continue;
    const value = k.value(config);
    const abs = resolve(dirname(configFile), value);
    const need = k.mustHave(abs);
    if (existsSync(need)) continue;
    const line = keyLine(configFile, k.key.split('.'));
    first ??= k.key;
    problems.push(
      `  ${configFile}${line ? `:${line}` : ''}: ${k.key}: "${value}"${line ? '' : ' (the default)'} names ${need}, which does not exist; the project's own is ${k.project}`,
    );
  }
  if (problems.length)
    throw new ConfigError(
      `invalid configuration in ${configFile} (paths in it resolve relative to its folder, ${dirname(configFile)}):\n${problems.join('\n')}`,
      { file: configFile, path: first },
    );
}
