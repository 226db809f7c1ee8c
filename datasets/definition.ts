/**
 * What a dataset definition is: the row schema (zod), the column list that drives both the Parquet
 * schema and the card's field table, how rows map to Hub configs, and the fixed card texts.
 * `stages/release/` turns rows plus a definition into a release folder.
 */
import type { z } from 'zod';

/**
 * Parquet column type of a field. `LIST_STRING` is a native Parquet LIST of UTF-8 strings (pyarrow
 * and the Hub's `datasets` read it as `list<string>`, a `Sequence(Value("string"))`);
 * `JSON_TEXT` is a plain UTF-8 column holding the value's JSON text (an object of varying keys has
 * no fixed Parquet struct; a plain string is what every reader understands), decoded back to the
 * object by {@link parquetToRows} and kept as an object in the JSON Lines files.
 */
export type ParquetType = 'STRING' | 'INT32' | 'DOUBLE' | 'BOOLEAN' | 'LIST_STRING' | 'JSON_TEXT';

/** One column of a release: its name, Parquet type and the sentence shown in the card. */
export interface FieldSpec {
  name: string;
  parquet: ParquetType;
  description: string;
}

/** A released dataset. `Row` is the zod output type of `rowSchema`. */
export interface DatasetDefinition<Row extends Record<string, unknown> = Record<string, unknown>> {
  /** Folder and CLI name: `swe-bench-5g`, `teleresiliencebench`. */
  readonly id: string;
  /** Other names the CLI accepts (`swe5g`, `resilience`). */
  readonly aliases: readonly string[];
  readonly prettyName: string;
  readonly rowSchema: z.ZodType<Row>;
  /** Every column in output order; rows are written with exactly these keys. */
  readonly fields: readonly FieldSpec[];
  /** Unique key of a row (`instance_id`, `sample_id`). */
  key(row: Row): string;
  /** Hub config (subset) of a row: project for SWE-Bench 5G, subset for TeleResilienceBench. */
  config(row: Row): string;
  /** SPDX licence of a row. */
  license(row: Row): string;
  /** Extra configs spanning several subsets: name -> member configs (first is the default). */
  aggregateConfigs(configs: readonly string[]): { name: string; members: string[] }[];
  /** Split name of every config. */
  readonly split: string;
  /**
   * Date windows, for a dataset whose rows carry dates (SWE-Bench 5G: UTC quarters of the
   * instance date, datasets/swe-bench-5g/dates.ts): each window is one more Hub config
   * (`windows/<name>/<split>.parquet`) and a row of the card's window table. Absent: no windows.
   */
  readonly windows?: DateWindows<Row>;
  readonly taskCategories: readonly string[];
  readonly tags: readonly string[];
  /** Card paragraphs: what the dataset is, with its paper. */
  readonly summary: string;
  /** Card list: limitations that hold for every release. */
  readonly limitations: readonly string[];
  readonly citation: string;
}

/** How a dataset's rows fall into date windows. */
export interface DateWindows<Row> {
  /** The date that decides a row's window (ISO 8601 UTC), '' when the row has none. */
  dateOf(row: Row): string;
  /** The window of such a date (`2024-Q3`; a usable folder and Hub config name). */
  windowOf(date: string): string;
  /** Card paragraphs: which date it is, and how to score a model only after its cutoff. */
  readonly text: string;
}

/** Hub `size_categories` bucket for a row count. */
export function sizeCategory(n: number): string {
  if (n < 1_000) return 'n<1K';
  if (n < 10_000) return '1K<n<10K';
  if (n < 100_000) return '10K<n<100K';
  if (n < 1_000_000) return '100K<n<1M';
  return '1M<n<10M';
}
