/**
 * The files and folders a configuration names by path, checked before a run starts (and by
 * `telebench config check`): every such path resolves against the configuration file's folder,
 * so a configuration copied to another folder keeps `registry: repos.yaml`, `subsets_file:
 * subsets.yaml`, a model's `path: ../../cache/models/x.gguf`, ..., which then name files that are
 * not there. One error lists every such path with its key and line, instead of one per run, deep
 * inside a stage.
 *
 * Checked: the registries and prompt folder (always: they have defaults), and when set the
 * issues file, the skills folder, the predictions file, the resilience data root, the evaluation's
 * instance files, and every embedded model `path` source of every LLM block (generator, testgen,
 * evaluation models, skill writer, evaluation targets) that has no other source to fall back to.
 * Not checked: `swe5g.mining.mirrors_dir` (a missing folder means "no mirrors": they are cloned
 * into `<state>/mirrors`).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../pipeline/errors.js';
import { keyLine } from '../pipeline/config/load.js';
import { PROJECT_ROOT } from '../pipeline/manifest.js';
import type { LlmConfig } from '../pipeline/providers/llm/config.js';
import type { AppConfig } from './config.js';
import { swe5gSettings } from './swe5g/config.js';
import { resilienceSettings } from './resilience/config.js';
import { evalSettings as resilienceEvalSettings } from './resilience-eval/config.js';

/** One path the configuration names: where (key path), what (the value as written). */
interface NamedPath {
  key: (string | number)[];
  value: string;
}

/** A kind of path-valued key: the stages that read it, and the file that must exist under it. */
interface PathKey {
  stages: string[];
  /** Every path of this kind in the configuration ([] when unset). */
  find: (c: AppConfig) => NamedPath[];
  /** The file that must exist: the path itself, or a file inside the folder it names. */
  mustHave: (abs: string) => string;
  /** What to do about a missing one (appended to the problem line). */
  hint: string;
}

const one = (key: string, value: string | undefined): NamedPath[] =>
  value === undefined ? [] : [{ key: key.split('.'), value }];

/**
 * The embedded endpoints' `path` sources of one LLM block that nothing else backs: a path with an
 * `ollama` or `hub` source in the same list is a first choice, not a requirement.
 */
function modelPaths(prefix: (string | number)[], llm: LlmConfig | undefined): NamedPath[] {
  if (!llm) return [];
  const lists = [
    ['endpoints', llm.endpoints],
    ['fallback', llm.fallback ?? []],
  ] as const;
  return lists.flatMap(([name, eps]) =>
    eps.flatMap((e, i) => {
      if (e.kind !== 'embedded' || !e.source.every((s) => 'path' in s)) return [];
      return e.source.flatMap((s, j) =>
        'path' in s
          ? [{ key: [...prefix, 'llm', name, i, 'source', j, 'path'], value: s.path }]
          : [],
      );
    }),
  );
}

const MODEL_HINT =
  "put the GGUF file there (`node scripts/setup.mjs` fetches SmolLM2-135M-Instruct into the checkout's cache/models/), or add an `ollama` or `hub` source after it";

const PATH_KEYS: PathKey[] = [
  {
    stages: ['swe5g.mine', 'swe5g.link'],
    find: (c) => one('swe5g.registry', swe5gSettings(c).registry),
    mustHave: (p) => p,
    hint: `the project's own is ${join(PROJECT_ROOT, 'config', 'repos.yaml')}`,
  },
  {
    stages: ['resilience.load'],
    find: (c) => one('resilience.subsets_file', resilienceSettings(c).subsets_file),
    mustHave: (p) => p,
    hint: `the project's own is ${join(PROJECT_ROOT, 'config', 'subsets.yaml')}`,
  },
  {
    stages: ['resilience.load', 'resilience-eval.continue'],
    find: (c) => one('resilience.prompts_dir', resilienceSettings(c).prompts_dir),
    mustHave: (p) => join(p, 'prompts.yaml'),
    hint: `the project's own is ${join(PROJECT_ROOT, 'config', 'prompts', 'resilience')}`,
  },
  {
    stages: ['resilience.load'],
    find: (c) => one('resilience.data_root', c.resilience?.data_root),
    mustHave: (p) => p,
    hint: 'a folder laid out like oran-bench-13k/fin_E.json, srsranbench/srsRANBench.json (unset: $TELEBENCH_DATA_ROOT, else downloaded into <state>/data)',
  },
  {
    stages: ['swe5g.link'],
    find: (c) => one('swe5g.mining.issues_from', c.swe5g?.mining.issues_from),
    mustHave: (p) => p,
    hint: 'a JSON Lines file of GitHub issue objects',
  },
  {
    stages: ['swe5g.eval.skills'],
    find: (c) => one('swe5g.evaluation.skills.dir', c.swe5g?.evaluation.skills.dir),
    mustHave: (p) => p,
    hint: `the project's own is ${join(PROJECT_ROOT, 'skills')} (the default)`,
  },
  {
    stages: ['swe5g.eval.predictions'],
    find: (c) => one('swe5g.evaluation.predictions', c.swe5g?.evaluation.predictions),
    mustHave: (p) => p,
    hint: 'a JSON Lines file of SWE-bench predictions',
  },
  {
    stages: ['resilience-eval.instances'],
    find: (c) => {
      const input = c.resilience_eval?.input;
      if (input?.source !== 'file') return [];
      return input.files.map((f, i) => ({
        key: ['resilience_eval', 'input', 'files', i],
        value: f,
      }));
    },
    mustHave: (p) => p,
    hint: 'a file of TeleResilienceBench instances',
  },
  {
    stages: ['resilience.generate'],
    find: (c) => modelPaths(['resilience', 'generator'], c.resilience?.generator.llm),
    mustHave: (p) => p,
    hint: MODEL_HINT,
  },
  {
    stages: ['swe5g.testgen'],
    find: (c) => modelPaths(['swe5g', 'testgen'], c.swe5g?.testgen.llm),
    mustHave: (p) => p,
    hint: MODEL_HINT,
  },
  {
    stages: ['swe5g.eval.solve'],
    find: (c) =>
      (c.swe5g?.evaluation.models ?? []).flatMap((m, i) =>
        modelPaths(['swe5g', 'evaluation', 'models', i], m.llm),
      ),
    mustHave: (p) => p,
    hint: MODEL_HINT,
  },
  {
    stages: ['swe5g.eval.skills'],
    find: (c) =>
      modelPaths(['swe5g', 'evaluation', 'skills', 'model'], c.swe5g?.evaluation.skills.model?.llm),
    mustHave: (p) => p,
    hint: MODEL_HINT,
  },
  {
    stages: ['resilience-eval.continue'],
    find: (c) =>
      c.resilience_eval
        ? resilienceEvalSettings(c).targets.flatMap((t, i) =>
            modelPaths(['resilience_eval', 'targets', i], t.llm),
          )
        : [],
    mustHave: (p) => p,
    hint: MODEL_HINT,
  },
];

/** `swe5g.evaluation.models[0].llm.endpoints[0].source[0].path`. Pure. */
function dotted(key: (string | number)[]): string {
  return key.map((k, i) => (typeof k === 'number' ? `[${k}]` : i ? `.${k}` : k)).join('');
}

/**
 * Checks that the files named by paths in `config` exist, for the stages that will run.
 * @param configFile absolute path of the configuration (paths resolve against its folder)
 * @param stages the stages of the run (a path only its other stages read is not checked)
 * @throws ConfigError listing every missing path with its key, line, value, the absolute path it
 *   names and what to do; `path` is the first missing key (dotted, `[i]` for list items)
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
    for (const { key, value } of k.find(config)) {
      const need = k.mustHave(resolve(dirname(configFile), value));
      if (existsSync(need)) continue;
      const line = keyLine(configFile, key.map(String));
      first ??= dotted(key);
      problems.push(
        `  ${configFile}${line ? `:${line}` : ''}: ${dotted(key)}: "${value}"${line ? '' : ' (the default)'} names ${need}, which does not exist; ${k.hint}`,
      );
    }
  }
  if (problems.length)
    throw new ConfigError(
      `invalid configuration in ${configFile} (paths in it resolve relative to its folder, ${dirname(configFile)}):\n${problems.join('\n')}`,
      { file: configFile, path: first },
    );
}
