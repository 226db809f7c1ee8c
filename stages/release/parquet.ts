/**
 * Parquet for releases: written with hyparquet-writer and read back with hyparquet (why: both pure
 * JavaScript and maintained by the same author — no native build on these machines, and the reader
 * is the writer's own counterpart). The schema is explicit, from the dataset's {@link FieldSpec}s:
 * strings, numbers and booleans as optional primitive columns, string arrays as native 3-level
 * Parquet LISTs (`list<string>` for pyarrow and the Hub), objects as JSON text in a UTF-8 column.
 * Checked once by hand with pyarrow 26: every column reads back with the intended type.
 */
import type * as hyparquetWriterTypes from 'hyparquet-writer';
import type * as hyparquetTypes from 'hyparquet';
import type { FieldSpec } from '../../datasets/definition.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { SchemaElement } from 'hyparquet-writer';
import { lazy } from '../../pipeline/lazy.js';

const hyparquetWriter = lazy<typeof hyparquetWriterTypes>('hyparquet-writer');
const hyparquet = lazy<typeof hyparquetTypes>('hyparquet');

/** Parquet schema elements of the fields (root first). */
export function parquetSchema(fields: readonly FieldSpec[]): SchemaElement[] {
  const out: SchemaElement[] = [{ name: 'root', num_children: fields.length }];
  for (const f of fields) {
    switch (f.parquet) {
      case 'STRING':
      case 'JSON_TEXT':
        out.push({
          name: f.name,
          type: 'BYTE_ARRAY',
          converted_type: 'UTF8',
          repetition_type: 'OPTIONAL',
        });
        break;
      case 'INT32':
        out.push({ name: f.name, type: 'INT32', repetition_type: 'OPTIONAL' });
        break;
      case 'DOUBLE':
        out.push({ name: f.name, type: 'DOUBLE', repetition_type: 'OPTIONAL' });
        break;
      case 'BOOLEAN':
        out.push({ name: f.name, type: 'BOOLEAN', repetition_type: 'OPTIONAL' });
        break;
      case 'LIST_STRING':
        out.push(
          { name: f.name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
          { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
          {
            name: 'element',
            type: 'BYTE_ARRAY',
            converted_type: 'UTF8',
            repetition_type: 'OPTIONAL',
          },
        );
        break;
    }
  }
  return out;
}

function columnValue(f: FieldSpec, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (f.parquet === 'JSON_TEXT') return JSON.stringify(v);
  if (f.parquet === 'LIST_STRING' && (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))) {
    throw new TelebenchError(
      'parquet_bad_value',
      `field ${f.name} must be a list of strings, got ${JSON.stringify(v).slice(0, 80)}`,
      {
        tier: 'bug',
        context: { field: f.name },
      },
    );
  }
  return v;
}

/**
 * Rows -> Parquet bytes, one column per field in `fields` order (SNAPPY, the writer's default).
 * @throws TelebenchError `parquet_bad_value` naming the field when a value does not fit its type,
 *   `parquet_write_failed` when the writer refuses the data
 */
export function rowsToParquet(
  rows: readonly Record<string, unknown>[],
  fields: readonly FieldSpec[],
): Uint8Array {
  const columnData = fields.map((f) => ({
    name: f.name,
    data: rows.map((r) => columnValue(f, r[f.name])) as never,
  }));
  try {
    const buf = hyparquetWriter().parquetWriteBuffer({
      columnData,
      schema: parquetSchema(fields),
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

/**
 * Parquet bytes -> rows as plain objects. With `fields`, `JSON_TEXT` columns are parsed back to the
 * objects the JSON Lines files hold.
 * @throws TelebenchError `parquet_bad_json` naming the column when a JSON text cell does not parse
 */
export async function parquetToRows(
  bytes: Uint8Array,
  fields?: readonly FieldSpec[],
): Promise<Record<string, unknown>[]> {
  const ab = bytes.buffer.slice(
    bytes.byteOffset,
    bytes.byteOffset + bytes.byteLength,
  ) as ArrayBuffer;
  const rows = (await hyparquet().parquetReadObjects({ file: ab })) as Record<string, unknown>[];
  const jsonCols = (fields ?? []).filter((f) => f.parquet === 'JSON_TEXT').map((f) => f.name);
  for (const r of rows) {
    for (const c of jsonCols) {
      if (typeof r[c] !== 'string') continue;
      try {
        r[c] = JSON.parse(r[c]);
      } catch (err) {
        throw new TelebenchError('parquet_bad_json', `column ${c} holds text that is not JSON`, {
          tier: 'config',
          cause: err,
        });
      }
    }
  }
  return rows;
}
