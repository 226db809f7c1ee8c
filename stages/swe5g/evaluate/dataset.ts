/**
 * A released SWE-Bench 5G dataset as the instances `telebench evaluate --dataset` grades on, with
 * no state of the build: the rows of a release folder (its `manifest.json`'s JSON Lines files,
 * or every `*.jsonl` below a folder without one: a downloaded dataset's `data/`) or of one JSON
 * Lines file, each checked against the release schema (`swe5gRowSchema`), turned into the
 * {@link EvalInstance} grading needs with the registry (the test plan validation ran: module
 * folder, test directories, commands, the kept build's selection; stages/swe5g/released-row.ts). The instance's source tree is
 * not known yet (`source_dir` ''): grading copies `/testbed` out of the row's `image_name`,
 * pulled when the engine lacks it (stages.ts).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ConfigError } from '../../../pipeline/errors.js';
import type { RecipeName } from '../../../pipeline/providers/docker/recipes.js';
import { swe5gRowSchema, type Swe5gRow } from '../../../datasets/index.js';
import type { EnvironmentsSettings } from '../environments-config.js';
import type { RegistryEntry } from '../registry.js';
import type { Resolved } from '../types.js';
import { RECIPE_LANGUAGE, registryEntryOf, rowTestPlan } from '../released-row.js';
import type { EvalInstance } from './grade.js';

/** Environment variable through which `telebench evaluate --dataset` names its rows. */
export const DATASET_ENV = 'TELEBENCH_DATASET';

/** A row read from a dataset file, with where it stands. */
export interface DatasetRow {
  row: Swe5gRow;
  file: string;
  line: number;
}

/** Most problems listed in one error (the rest counted). */
const MAX_LISTED = 20;

/** The JSON Lines files of a dataset path (see the module comment), sorted. */
function datasetFiles(path: string): string[] {
  if (!existsSync(path)) throw new ConfigError(`--dataset: not found: ${path}`, { file: path });
  if (!statSync(path).isDirectory()) return [path];
  const manifest = join(path, 'manifest.json');
  if (existsSync(manifest)) {
    let files: Record<string, unknown>;
    try {
      files =
        (JSON.parse(readFileSync(manifest, 'utf8')) as { files?: Record<string, unknown> }).files ??
        {};
    } catch (err) {
      throw new ConfigError(`--dataset: ${manifest} is not JSON: ${(err as Error).message}`, {
        file: manifest,
      });
    }
    return Object.keys(files)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .map((f) => join(path, f));
  }
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.jsonl')) out.push(join(dir, e.name));
    }
  };
  walk(path);
  return out.sort((a, b) => relative(path, a).localeCompare(relative(path, b)));
}

/**
 * Reads and checks the rows of a dataset path.
 * @param path a release folder, a folder of JSON Lines files, or one JSON Lines file
 * @returns every row with its file and line (1-based)
 * @throws ConfigError (exit 2) when the path is missing or holds no row, naming each bad row as
 *   `file:line: field <name>: <why>` (not JSON, a field missing or of the wrong shape, an unknown
 *   field, an instance_id given twice: both lines), all of them at once (the first 20)
 */
export function readDatasetRows(path: string): DatasetRow[] {
  const files = datasetFiles(path);
  const rows: DatasetRow[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const badRows = new Set<string>();
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        if (text.trim() === '') return;
        const at = `${file}:${i + 1}`;
        const bad = (why: string): void => {
          problems.push(`${at}: ${why}`);
          badRows.add(at);
        };
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch (err) {
          bad(`not JSON (${(err as Error).message})`);
          return;
        }
        const parsed = swe5gRowSchema.safeParse(json);
        if (!parsed.success) {
          for (const issue of parsed.error.issues) {
            const keys = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : '';
            const field = keys || issue.path.join('.') || '(row)';
            bad(`field ${field}: ${issue.message}`);
          }
          return;
        }
        const before = seen.get(parsed.data.instance_id);
        if (before) {
          bad(`field instance_id: ${parsed.data.instance_id} is given twice (also ${before})`);
          return;
        }
        seen.set(parsed.data.instance_id, at);
        rows.push({ row: parsed.data, file, line: i + 1 });
      });
  }
  if (problems.length > 0) {
    const more =
      problems.length > MAX_LISTED ? `\n  ... and ${problems.length - MAX_LISTED} more` : '';
    throw new ConfigError(
      `--dataset: ${badRows.size} bad row(s) in ${path}, ${problems.length} problem(s):\n  ${problems.slice(0, MAX_LISTED).join('\n  ')}${more}`,
      { file: path },
    );
  }
  if (rows.length === 0)
    throw new ConfigError(
      `--dataset: no row in ${path} (${files.length ? files.join(', ') : 'no .jsonl file'})`,
      { file: path },
    );
  return rows;
}

/**
 * What does grade a release when `--dataset` cannot: the end of the message of
 * {@link checkDatasetExecutor} and of an empty `image_name` ({@link datasetInstance}).
 */
export const DATASET_WAYS =
  'grade it from the state it was made in (`telebench evaluate` without --dataset, same --state and --config), or release it with swe5g.environments.executor: docker and `--push` and grade that release';

/**
 * Refuses `--dataset` under an executor other than docker, before any item runs: a released row is
 * graded in its instance image (its `/testbed` copied out of it), which only the docker executor
 * uses.
 * @param executor `swe5g.environments.executor`
 * @param path     the dataset path, for the message
 * @throws ConfigError (exit 2) naming the executor and {@link DATASET_WAYS}
 */
export function checkDatasetExecutor(
  executor: EnvironmentsSettings['executor'],
  path: string,
): void {
  if (executor !== 'docker')
    throw new ConfigError(
      `--dataset: ${path}: evaluate --dataset grades released rows in their instance images, which swe5g.environments.executor: ${executor} does not use; ${DATASET_WAYS}`,
      { file: path },
    );
}

/**
 * The instance grading needs of a released row. `source_dir` is '' (filled from the image when
 * graded); `image` is the row's `image_name`. The executor is checked first
 * ({@link checkDatasetExecutor}).
 * @throws ConfigError naming `file:line` and the field: `image_name` empty (released without
 *   images: nothing to grade in), saying what does grade it; `image_recipe` not a recipe
 */
export function datasetInstance(
  d: DatasetRow,
  entries: readonly RegistryEntry[],
  settings: EnvironmentsSettings,
): EvalInstance & { language: Resolved['language'] } {
  const { row } = d;
  if (row.image_name === '')
    throw new ConfigError(
      `--dataset: ${d.file}:${d.line}: field image_name: empty; the row was released without an instance image, which evaluate --dataset grades in; ${DATASET_WAYS}`,
      { file: d.file, line: d.line },
    );
  const recipe = row.image_recipe as RecipeName;
  if (!Object.hasOwn(RECIPE_LANGUAGE, recipe))
    throw new ConfigError(
      `--dataset: ${d.file}:${d.line}: field image_recipe: unknown recipe ${JSON.stringify(row.image_recipe)} (one of ${Object.keys(RECIPE_LANGUAGE).join(', ')})`,
      { file: d.file, line: d.line },
    );
  const entry = registryEntryOf(row, entries);
  return {
    instance_id: row.instance_id,
    repo: row.repo,
    base_commit: row.base_commit,
    problem_statement: row.problem_statement,
    patch: row.patch,
    test_patch: row.test_patch,
    FAIL_TO_PASS: row.FAIL_TO_PASS,
    PASS_TO_PASS: row.PASS_TO_PASS,
    bug_category: row.bug_category,
    nf: row.nf,
    spec_refs: row.spec_refs,
    image: row.image_name,
    source_dir: '',
    language: RECIPE_LANGUAGE[recipe],
    // validation's test plan, from the row and the registry (the kept build's selection included)
    ...rowTestPlan(row, entry, settings),
  };
}
