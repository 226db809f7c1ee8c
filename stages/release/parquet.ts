/**
 * Parquet for releases: written with hyparquet-writer and read back with hyparquet (why: both pure
 * JavaScript and maintained by the same author — no native build on these machines, and the reader
 * is the writer's own test counterpart). Column types come from the dataset's {@link FieldSpec}s.
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import { parquetReadObjects } from 'hyparquet';
import type { FieldSpec } from '../../datasets/definition.js';
import { TelebenchError } from '../../pipeline/errors.js';

/**
 * Rows -> Parquet bytes, one column per field in `fields` order (SNAPPY, the writer's default).
 * `JSON` fields hold arrays/objects, stored as JSON text with the JSON converted type.
 * @throws TelebenchError `parquet_write_failed` naming the column when the writer refuses a value
 */
export function rowsToParquet(
  rows: readonly Record<string, unknown>[],
  fields: readonly FieldSpec[],
): Uint8Array {
  try {
    const buf = parquetWriteBuffer({
      columnData: fields.map((f) => ({
        name: f.name,
        type: f.parquet,
        data: rows.map((r) => (r[f.name] === undefined ? null : r[f.name])) as never,
      })),
      createdBy: 'telebench (hyparquet-writer)',
    });
    return new Uint8Array(buf);
  } catch (err) {
    throw new TelebenchError(
      'parquet_write_failed',
      `could not write Parquet: ${(err as Error).message}`,
      {
        tier: 'bug',
        cause: err,
        context: { fields: fields.map((f) => `${f.name}:${f.parquet}`) },
      },
    );
  }
}

/** Parquet bytes -> rows as plain objects (JSON columns parsed back). */
export async function parquetToRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const ab = bytes.buffer.slice(
    bytes.byteOffset,
    bytes.byteOffset + bytes.byteLength,
  ) as ArrayBuffer;
  return (await parquetReadObjects({ file: ab })) as Record<string, unknown>[];
}
