/**
 * The subset registry of TeleResilienceBench (`config/subsets.yaml`): which subsets are loaded,
 * from where (the GSMA/ot-lite Hub dataset or a local file), with which row adapter, and how they
 * are reported. Adding a subset is one YAML entry (plus an adapter in `adapters.ts` when its row
 * shape is new).
 *
 * Source: paper section III (seven discrete-choice ot-lite subsets plus TeleMath) and issue 6
 * (further sources under their own names, never substituted for an ot-lite subset).
 */
import { resolve, dirname, join } from 'node:path';
import { z } from 'zod';
import { loadConfigFile } from '../../pipeline/config/load.js';
import { ConfigError } from '../../pipeline/errors.js';
import type { ResilienceConfig } from './config.js';
// The paper's seven main subsets are defined once, with the release schema.
import { MAIN_SUBSETS } from '../../datasets/teleresiliencebench/schema.js';

export const ADAPTERS = [
  'ot-lite-mc',
  'ot-lite-telelogs',
  'ot-lite-labels',
  'ot-lite-numeric',
  'gajjar-jsonl',
  'fields',
] as const;
export type AdapterName = (typeof ADAPTERS)[number];

const lowerName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]*$/, 'lowercase letters, digits, "_", "." or "-"');

/** Field mapping of the generic `fields` adapter (JSON objects or CSV records). */
export const fieldMapSchema = z.strictObject({
  question: z.string().min(1),
  /** One field holding an array of options, or a list of fields (CSV columns) one per option. */
  choices: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  answer: z.string().min(1),
  difficulty: z.string().min(1).optional(),
});

export const subsetEntrySchema = z
  .strictObject({
    name: lowerName,
    source: lowerName,
    adapter: z.enum(ADAPTERS),
    role: z.enum(['main', 'auxiliary', 'extra']).default('extra'),
    /** Published `sub_benchmark` value; default the name for ot-lite, `source` otherwise. */
    sub_benchmark: lowerName.optional(),
    /** Local file relative to `resilience.data_root` (required unless source is ot-lite). */
    file: z.string().min(1).optional(),
    format: z.enum(['auto', 'json', 'jsonl', 'csv']).default('auto'),
    /** Difficulty given to every row (a row's own difficulty field wins). */
    difficulty: z.string().min(1).optional(),
    /** Index base of integer answers: ot-lite stores 0-based indices, gajjar-jsonl 1-based. */
    answer_base: z.union([z.literal(0), z.literal(1)]).optional(),
    /** How `fields.answer` is read by the `fields` adapter. */
    answer_format: z.enum(['index', 'letter', 'text', 'number']).default('index'),
    fields: fieldMapSchema.optional(),
    /** Number of TeleLogs root causes C1..Cn. */
    telelogs_causes: z.number().int().min(2).max(50).default(8),
    enabled: z.boolean().default(true),
  })
  .superRefine((e, ctx) => {
    if (e.source !== 'ot-lite' && !e.file) {
      ctx.addIssue({ code: 'custom', path: ['file'], message: 'a local source needs `file`' });
    }
    if (e.source === 'ot-lite' && e.file) {
      ctx.addIssue({
        code: 'custom',
        path: ['file'],
        message: 'ot-lite subsets come from the Hub; `file` is not used (set hub.file_pattern)',
      });
    }
    if (e.adapter === 'fields' && !e.fields) {
      ctx.addIssue({
        code: 'custom',
        path: ['fields'],
        message: 'adapter `fields` needs `fields`',
      });
    }
    if (
      e.role === 'main' &&
      e.source === 'ot-lite' &&
      !(MAIN_SUBSETS as readonly string[]).includes(e.name)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['role'],
        message: `role main is reserved for the seven paper subsets (${MAIN_SUBSETS.join(', ')})`,
      });
    }
    if (e.role === 'main' && e.source !== 'ot-lite') {
      ctx.addIssue({
        code: 'custom',
        path: ['role'],
        message:
          'a local source cannot be a main subset: main subsets are the ot-lite ones (use role extra)',
      });
    }
  });
export type SubsetEntry = z.output<typeof subsetEntrySchema>;

export const subsetRegistrySchema = z
  .strictObject({
    version: z.literal(1),
    subsets: z.array(subsetEntrySchema).min(1),
  })
  .superRefine((r, ctx) => {
    const seen = new Map<string, number>();
    r.subsets.forEach((s, i) => {
      const id = `${s.source}:${s.name}`;
      if (seen.has(id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['subsets', i, 'name'],
          message: `duplicate subset ${id} (also at subsets[${seen.get(id)}])`,
        });
      }
      seen.set(id, i);
    });
  });
export type SubsetRegistry = z.output<typeof subsetRegistrySchema>;

/** A registry entry with its paths resolved and defaults filled in. */
export interface ResolvedSubset extends SubsetEntry {
  /** `<source>:<name>`: the work-item key of the load stages. */
  id: string;
  sub_benchmark: string;
  answer_base: 0 | 1;
  /** Absolute path of the local file (undefined for ot-lite). */
  path?: string;
  /** File name inside the Hub dataset (ot-lite only). */
  hubFile?: string;
}

/**
 * Loads the registry named by `resilience.subsets_file` and resolves it.
 * @param configFile absolute path of the main configuration file (paths resolve against its folder)
 * @returns enabled subsets (filtered by `only_subsets` when set), in registry order
 * @throws ConfigError when the registry file is missing or invalid, or `only_subsets` names an
 *   unknown subset
 */
export function loadSubsets(
  configFile: string,
  cfg: ResilienceConfig,
  stateDir?: string,
): ResolvedSubset[] {
  const base = dirname(configFile);
  const file = resolve(base, cfg.subsets_file);
  const registry = loadConfigFile(file, subsetRegistrySchema);
  const dataRoot = dataRootOf(configFile, cfg, stateDir);
  const all = registry.subsets.map((s) => resolveEntry(s, dataRoot, cfg.hub.file_pattern));
  for (const want of cfg.only_subsets) {
    if (!all.some((s) => s.id === want || s.name === want)) {
      throw new ConfigError(
        `resilience.only_subsets names "${want}", which is not in ${file} (known: ${all.map((s) => s.id).join(', ')})`,
        { file: configFile, path: 'resilience.only_subsets' },
      );
    }
  }
  return all.filter(
    (s) =>
      s.enabled &&
      (cfg.only_subsets.length === 0 ||
        cfg.only_subsets.includes(s.id) ||
        cfg.only_subsets.includes(s.name)),
  );
}

/** Environment variable naming the local sources folder when `resilience.data_root` is unset. */
export const DATA_ROOT_ENV = 'TELEBENCH_DATA_ROOT';

/**
 * The configured local sources folder: `resilience.data_root` (relative to the config file), else
 * `$TELEBENCH_DATA_ROOT` (relative to the working directory), else undefined.
 */
export function configuredDataRoot(configFile: string, cfg: ResilienceConfig): string | undefined {
  if (cfg.data_root) return resolve(dirname(configFile), cfg.data_root);
  const env = process.env[DATA_ROOT_ENV];
  return env ? resolve(env) : undefined;
}

/** {@link configuredDataRoot}, else `<stateDir>/data` (else `data` beside the config file). */
export function dataRootOf(configFile: string, cfg: ResilienceConfig, stateDir?: string): string {
  return (
    configuredDataRoot(configFile, cfg) ??
    (stateDir ? join(stateDir, 'data') : resolve(dirname(configFile), 'data'))
  );
}

/** Commit of GitHub `prnshv/TeleResilienceBench` the published data files are read at. */
const TRB_COMMIT = '7ac3159825695094b558e961ba521af0e08ff17f';

/**
 * Publisher location of each local source file (path under the data root, same layout as the
 * build machine's shared/data): `<owner>/<repo>/<ref>/<path>` under `resilience.data_url_base`.
 */
export const SOURCE_FILES: Readonly<Record<string, string>> = {
  'oran-bench-13k/fin_E.json': 'prnshv/ORAN-Bench-13K/main/Benchmark/fin_E.json',
  'oran-bench-13k/fin_M.json': 'prnshv/ORAN-Bench-13K/main/Benchmark/fin_M.json',
  'oran-bench-13k/fin_H.json': 'prnshv/ORAN-Bench-13K/main/Benchmark/fin_H.json',
  'srsranbench/srsRANBench.json': 'prnshv/srsRANBench/main/srsRANBench.json',
  // The TeleResilienceBench authors' release (instances and raw experiment outputs), pinned to the
  // commit whose bytes the published Table I figures were computed from.
  ...Object.fromEntries(
    [
      ['AuxiliaryBenchmark.json', 'data/AuxiliaryBenchmark.json'],
      ['collect_metadata.json', 'data/collect_metadata.json'],
      ...['gemma4_31b', 'nemotron-3-nano_4b'].flatMap((m) =>
        ['main', 'aux'].map((f) => [`experiments/${m}/${f}.jsonl`, `Experiments/${m}/${f}.jsonl`]),
      ),
    ].map(([local, remote]) => [
      `teleresiliencebench/${local}`,
      `prnshv/TeleResilienceBench/${TRB_COMMIT}/${remote}`,
    ]),
  ),
};

/** Fills the defaults of one entry. Pure. */
export function resolveEntry(
  s: SubsetEntry,
  dataRoot: string,
  filePattern: string,
): ResolvedSubset {
  const hub = s.source === 'ot-lite';
  return {
    ...s,
    id: `${s.source}:${s.name}`,
    sub_benchmark: s.sub_benchmark ?? (hub ? s.name : s.source),
    answer_base: s.answer_base ?? (s.adapter === 'gajjar-jsonl' ? 1 : 0),
    ...(s.file ? { path: resolve(dataRoot, s.file) } : {}),
    ...(hub ? { hubFile: filePattern.replaceAll('{subset}', s.name) } : {}),
  };
}
