/**
 * One evaluation instance, whatever its source: this project's instances
 * (`stages/resilience/instance.ts`), a released snapshot (same schema), or the published
 * TeleResilienceBench files (`sample_id, sub_benchmark, question, choices, correct_answer,
 * incorrect_answer, half_reasoning_trace`), read as they are: the half trace, the generator's
 * wrong answer and the published ids are kept.
 */
import { z } from 'zod';
import { TelebenchError } from '../../pipeline/errors.js';
import { resilienceInstanceSchema } from '../resilience/instance.js';
import { readRows } from '../resilience/adapters.js';
import {
  dedupe,
  jsonErrorPlace,
  jsonErrorText,
  readInputText,
  type DuplicatePolicy,
} from './input-text.js';

export interface EvalInstance {
  sample_id: string;
  sub_benchmark: string;
  /** Lower-case subset id (`teleqna`, `3gpp_tsg`, `telemath`, ...). */
  subset: string;
  kind: 'mc' | 'numeric';
  question: string;
  choices: string[];
  half_reasoning_trace: string;
  gold_index: number | null;
  gold_value: number | null;
  /** The generator's wrong answer (null when unknown). */
  generator_index: number | null;
  generator_value: number | null;
  correct_answer: string;
  incorrect_answer: string;
  difficulty: string | null;
  /** `project` (our schema) or `published` (the published fields only). */
  origin: 'project' | 'published';
  /** Where it was read (`file:line`, `file record N`, counted from 1), for messages. */
  where: string;
}

const publishedRowSchema = z.looseObject({
  sample_id: z.string().min(1),
  sub_benchmark: z.string().min(1),
  question: z.string().min(1),
  choices: z.array(z.string()).optional(),
  correct_answer: z.union([z.string(), z.number()]),
  incorrect_answer: z.union([z.string(), z.number()]),
  half_reasoning_trace: z.string().min(1),
  difficulty: z.string().nullable().optional(),
});

const uniqueIndex = (choices: readonly string[], text: string): number | null => {
  const norm = (s: string) => s.trim().toLowerCase();
  const hits = choices.flatMap((c, i) => (norm(c) === norm(text) ? [i] : []));
  return hits.length >= 1 ? hits[0]! : null;
};

/**
 * Refuses a row's `correct_index` / `incorrect_index` (0-based, when present and not null) that is
 * not an integer inside its `n` options.
 * @throws TelebenchError `bad_instance_row` naming the place, the sample_id and the column
 */
function checkIndexColumns(row: Record<string, unknown>, n: number, where: string): void {
  for (const col of ['correct_index', 'incorrect_index'] as const) {
    const v = row[col];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || (n > 0 && v >= n))
      throw new TelebenchError(
        'bad_instance_row',
        `${where}: ${String(row.sample_id)}: column ${col}: ${JSON.stringify(v)} is outside the options (0-based: 0..${n - 1})`,
        { tier: 'content' },
      );
  }
}

/**
 * The Table I subset of a published row: the middle part of a `<source>:<subset>:<n>` sample_id
 * (the published files' form, e.g. `gsma:teleqna:17`), else `sub_benchmark` (a user's own ids such
 * as `me:1` or `q17` name no subset). Lower-cased.
 */
export function subsetOf(sampleId: string, subBenchmark: string): string {
  const parts = sampleId.split(':');
  return (parts.length >= 3 && parts[1] ? parts[1] : subBenchmark).toLowerCase();
}

/**
 * Reads one row of either schema.
 * @throws TelebenchError `bad_instance_row` naming the file and line when the row fits neither
 */
export function toEvalInstance(row: unknown, where: string): EvalInstance {
  const own = resilienceInstanceSchema.safeParse(row);
  if (own.success) {
    const i = own.data;
    if (i.kind === 'mc') checkIndexColumns(i, i.choices?.length ?? 0, where);
    return {
      sample_id: i.sample_id,
      sub_benchmark: i.sub_benchmark,
      subset: i.subset.toLowerCase(),
      kind: i.kind,
      question: i.question,
      choices: i.choices ?? [],
      half_reasoning_trace: i.half_reasoning_trace,
      gold_index: i.correct_index,
      gold_value: i.correct_value,
      generator_index: i.incorrect_index,
      generator_value: i.incorrect_value,
      correct_answer: i.correct_answer,
      incorrect_answer: i.incorrect_answer,
      difficulty: i.difficulty,
      origin: 'project',
      where,
    };
  }
  const pub = publishedRowSchema.safeParse(row);
  if (!pub.success)
    throw new TelebenchError(
      'bad_instance_row',
      `${where}: not a TeleResilienceBench instance: ${pub.error.issues.map((i) => `${i.path.join('.') || '(row)'}: ${i.message}`).join('; ')}`,
      { tier: 'content' },
    );
  const p = pub.data;
  // a row with telebench's index columns but not all of its schema is read as a published one:
  // its indexes must still be inside its choices (docs/resilience-scoring.md)
  if ((p.choices?.length ?? 0) > 0) checkIndexColumns(p, p.choices!.length, where);
  const correct = String(p.correct_answer);
  const incorrect = String(p.incorrect_answer);
  const choices = p.choices ?? [];
  const kind = choices.length > 0 ? 'mc' : 'numeric';
  const num = (s: string): number | null => {
    const v = Number(s.trim());
    return s.trim() !== '' && Number.isFinite(v) ? v : null;
  };
  const gold_index = kind === 'mc' ? uniqueIndex(choices, correct) : null;
  const gold_value = kind === 'numeric' ? num(correct) : null;
  if (kind === 'mc' ? gold_index === null : gold_value === null)
    throw new TelebenchError(
      'bad_instance_row',
      `${where}: ${p.sample_id}: correct_answer ${JSON.stringify(correct)} is ${kind === 'mc' ? 'not one of the choices' : 'not a number'}`,
      { tier: 'content' },
    );
  return {
    sample_id: p.sample_id,
    sub_benchmark: p.sub_benchmark,
    subset: subsetOf(p.sample_id, p.sub_benchmark),
    kind,
    question: p.question,
    choices,
    half_reasoning_trace: p.half_reasoning_trace,
    gold_index,
    gold_value,
    generator_index: kind === 'mc' ? uniqueIndex(choices, incorrect) : null,
    generator_value: kind === 'numeric' ? num(incorrect) : null,
    correct_answer: correct,
    incorrect_answer: incorrect,
    difficulty: p.difficulty ?? null,
    origin: 'published',
    where,
  };
}

const PY_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '0': '\0',
};

/**
 * The option texts of a CSV cell: a JSON array of strings (`["a", "b"]`) or a Python list of
 * string literals as pandas writes a list column (`['a', "b's"]`, backslash escapes `\n \t \r
 * \\ \' \" \xHH \uHHHH`). An empty cell is no choices (a numeric row).
 * @returns the option texts, or undefined for an empty cell
 * @throws Error naming what is wrong when the cell is neither form
 */
export function parseChoicesCell(cell: string): string[] | undefined {
  const t = cell.trim();
  if (t === '' || t === '[]') return undefined;
  try {
    const v = JSON.parse(t) as unknown;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
  } catch {
    // not JSON: a Python list literal, read below
  }
  const out: string[] = [];
  let i = 0;
  const ws = () => {
    while (i < t.length && /\s/.test(t[i]!)) i++;
  };
  const fail = (why: string): never => {
    throw new Error(`choices ${JSON.stringify(t.slice(0, 60))}: ${why} at character ${i}`);
  };
  if (t[i] !== '[') fail('not a JSON array or a Python list');
  i++;
  ws();
  while (t[i] !== ']') {
    const q = t[i];
    if (q !== "'" && q !== '"') fail('expected a quoted string');
    i++;
    let v = '';
    while (i < t.length && t[i] !== q) {
      if (t[i] === '\\') {
        const e = t[i + 1] ?? '';
        if (e === 'x' || e === 'u') {
          const n = e === 'x' ? 2 : 4;
          const hex = t.slice(i + 2, i + 2 + n);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== n) fail('bad escape');
          v += String.fromCharCode(parseInt(hex, 16));
          i += 2 + n;
          continue;
        }
        v += PY_ESCAPES[e] ?? `\\${e}`;
        i += 2;
        continue;
      }
      v += t[i];
      i++;
    }
    if (i >= t.length) fail('unterminated string');
    i++;
    out.push(v);
    ws();
    if (t[i] === ',') {
      i++;
      ws();
    } else if (t[i] !== ']') fail("expected ',' or ']'");
  }
  if (t.slice(i + 1).trim() !== '') fail('text after the list');
  return out;
}

/** A CSV record of the published schema as a row object: `choices` decoded, empty cells dropped. */
function csvRecord(rec: Record<string, string>, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) {
    if (v === '') continue;
    if (k === 'choices') {
      try {
        const c = parseChoicesCell(v);
        if (c) out[k] = c;
      } catch (e) {
        throw new TelebenchError('bad_instance_row', `${where}: ${(e as Error).message}`, {
          tier: 'content',
        });
      }
    } else out[k] = v;
  }
  return out;
}

/** The published schema's columns a CSV must have (`choices` and `difficulty` are optional). */
const CSV_COLUMNS = [
  'sample_id',
  'sub_benchmark',
  'question',
  'correct_answer',
  'incorrect_answer',
  'half_reasoning_trace',
] as const;

const badRow = (message: string): TelebenchError =>
  new TelebenchError('bad_instance_row', message, { tier: 'content' });

function readCsvInstances(text: string, label: string): EvalInstance[] {
  const { rows, rejected } = readRows(text, 'csv', label);
  if (rejected.length) throw badRow(rejected.map((r) => r.detail).join('; '));
  const header = rows[0] ? Object.keys(rows[0].value as Record<string, string>) : [];
  const absent = CSV_COLUMNS.filter((c) => !header.includes(c));
  if (rows.length && absent.length)
    throw badRow(`${label}:1: the header has no column ${absent.join(', ')}`);
  return rows.map((r) => {
    const rec = r.value as Record<string, string>;
    const where = `${label}:${r.line ?? '?'}`;
    const empty = CSV_COLUMNS.filter((c) => (rec[c] ?? '').trim() === '');
    if (empty.length)
      throw badRow(
        `${where}: empty cell in column ${empty.join(', ')} (column ${empty.map((c) => header.indexOf(c) + 1).join(', ')})`,
      );
    return toEvalInstance(csvRecord(rec, where), where);
  });
}

/**
 * Reads instances from a JSON array file, a JSON Lines file or a CSV file with a header line
 * (either schema; CSV `choices` as in {@link parseChoicesCell}). A UTF-8 BOM is skipped.
 * @param label how messages name the file (default its path), e.g. `hub:owner/name@rev/file.csv`
 * @param allowEmpty an empty file is no instances (the evaluation stages report it) instead of an
 *   error (`telebench score`)
 * @throws TelebenchError `input_missing` (no file), `input_empty` (nothing in it),
 *   `bad_instance_row` (file, line and column: bad JSON, a missing CSV column or cell, a row of
 *   neither schema)
 */
export function readEvalInstances(path: string, label = path, allowEmpty = true): EvalInstance[] {
  const text = readInputText(path, 'instances', label, allowEmpty);
  if (text === '') return [];
  if (/\.csv$/i.test(path)) return readCsvInstances(text, label);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let rows: unknown;
    try {
      rows = JSON.parse(text);
    } catch (e) {
      const at = jsonErrorPlace(text, e);
      throw badRow(`${label}:${at.line}:${at.column}: not a JSON array: ${jsonErrorText(e)}`);
    }
    if (!Array.isArray(rows)) throw badRow(`${label}: not a JSON array`);
    return rows.map((r, i) => toEvalInstance(r, `${label} record ${i + 1}`));
  }
  const out: EvalInstance[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (e) {
      const at = jsonErrorPlace(line, e);
      throw badRow(`${label}:${i + 1}:${at.column}: not JSON: ${jsonErrorText(e)}`);
    }
    out.push(toEvalInstance(row, `${label}:${i + 1}`));
  });
  return out;
}

/**
 * Instances of several files by `sample_id`.
 * @throws TelebenchError `duplicate_instance` naming both places when a `sample_id` occurs twice
 *   and `policy` is `error`; `first` / `last` say which wins
 */
export function indexInstances(
  files: readonly string[],
  policy: DuplicatePolicy = 'error',
): Map<string, EvalInstance> {
  const all = files.flatMap((f) => readEvalInstances(f, f, false));
  const { rows, duplicates } = dedupe(
    all,
    (i) => i.sample_id,
    (i) => i.where,
    policy,
  );
  if (duplicates.length)
    throw new TelebenchError(
      'duplicate_instance',
      `instances: ${duplicates.map((d) => d.message).join('; ')}`,
      { tier: 'content' },
    );
  return new Map(rows.map((i) => [i.sample_id, i]));
}
