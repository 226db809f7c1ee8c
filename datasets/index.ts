/**
 * The definitions of the released datasets (schemas, fields, card texts). They are registered, with
 * the stage outputs that become their rows, as entries in `stages/index.ts` (`DATASET_ENTRIES`),
 * which finds them by id or alias. Imported by `stages/release/` and by stages that produce rows.
 */

export { swe5gDataset, type Swe5gRow, swe5gRowSchema } from './swe-bench-5g/schema.js';
export {
  resilienceDataset,
  type ResilienceRow,
  resilienceRowSchema,
  MAIN_SUBSETS,
} from './teleresiliencebench/schema.js';
export type { DatasetDefinition, FieldSpec, ParquetType } from './definition.js';
