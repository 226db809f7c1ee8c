/**
 * The released datasets by id and alias. Imported by `stages/release/` and by stages that produce rows.
 */
import { ConfigError } from '../pipeline/errors.js';
import type { DatasetDefinition } from './definition.js';
import { swe5gDataset } from './swe-bench-5g/schema.js';
import { resilienceDataset } from './teleresiliencebench/schema.js';

export { swe5gDataset, type Swe5gRow, swe5gRowSchema } from './swe-bench-5g/schema.js';
export {
  resilienceDataset,
  type ResilienceRow,
  resilienceRowSchema,
  MAIN_SUBSETS,
} from './teleresiliencebench/schema.js';
export type { DatasetDefinition, FieldSpec, ParquetType } from './definition.js';

/** Every dataset definition. */
export const DATASETS: readonly DatasetDefinition[] = [
  swe5gDataset as unknown as DatasetDefinition,
  resilienceDataset as unknown as DatasetDefinition,
];

/**
 * The definition named `name` (its id or an alias, case-insensitive).
 * @throws ConfigError naming the known datasets when none matches
 */
export function datasetByName(name: string): DatasetDefinition {
  const n = name.toLowerCase();
  const d = DATASETS.find((x) => x.id === n || x.aliases.includes(n));
  if (!d) {
    throw new ConfigError(
      `unknown dataset "${name}"; known: ${DATASETS.map((x) => `${x.id} (${x.aliases.join(', ')})`).join('; ')}`,
    );
  }
  return d;
}
