/**
 * Row adapters: read a subset's file (JSON array, JSON Lines or CSV) and normalise every row to a
 * {@link ResilienceItem}. A row that cannot be used (no options, empty question, gold out of range,
 * unreadable) becomes a {@link RejectedRow} naming the file and row; nothing is guessed.
 *
 * Shapes (issue 6; the ot-lite fields are listed in ../shared/data/README.md):
 * - `ot-lite-mc`: `{question, choices[], answer}` with `answer` an option index (`answer_base`,
 *   0 for ot-lite: the authors' loader takes `answer` as the 0-based gold index, and the published
 *   `ot-lite:teleqna:4` has gold index 0 with the first option as correct answer); difficulty from
 *   `difficulty`, or from TeleTables' boolean `difficult`.
 * - `ot-lite-telelogs`: `{question, answer: "C3"}`; the choices are C1..C8.
 * - `ot-lite-labels` (3GPP_TSG): `{question, answer: "SA5"}`; the choices are the sorted distinct
 *   labels of the whole split (code-point order), the gold is the label's index.
 * - `ot-lite-numeric` (TeleMath): `{question, answer: number}`.
 * - `gajjar-jsonl` (ORAN-Bench-13K, srsRANBench on GitHub): `[question, ["1. opt", ...], "k"]`, k
 *   the 1-based gold option as a string.
 * - `fields`: any JSON object or CSV record, mapped by the entry's `fields`.
 */
import type * as csvParseTypes from 'csv-parse/sync';
import type { ResolvedSubset } from './subsets.js';
import type { RejectedRow, ResilienceItem } from './types.js';
import { parseNumber, pythonFloatRepr } from './numbers.js';
import { lazy } from '../../pipeline/lazy.js';

const csvParse = lazy<typeof csvParseTypes>('csv-parse/sync');

/** One raw row of a file. */
export interface RawRow {
  /** 0-based row of the split. */
  row: number;
  /** 1-based line in the file, when the format has lines. */
  line: number | null;
  value: unknown;
}

/**
 * Splits a file's text into rows.
 * - `json`: a JSON array (one row per element).
 * - `jsonl`: one JSON value per non-empty line; row numbers count non-empty lines.
 * - `csv`: RFC 4180 with a header line (csv-parse); one object per record.
 * - `auto`: `.csv` names are CSV; otherwise a text whose whole parses as a JSON array is `json`,
 *   else `jsonl` (ORAN-Bench-13K's `.json` files are JSON Lines).
 * @param text file content (a UTF-8 BOM is ignored)
 * @param fileName used for `auto` and messages
 * @returns rows plus the lines that could not be parsed (as rejections with reason `unparseable_row`)
 * @throws Error when a `json` file is not a JSON array (the whole file is unusable; the caller
 *   reports it with the file name). CSV and JSON Lines problems are per row (`rejected`).
 */
export function readRows(
  text: string,
  format: 'auto' | 'json' | 'jsonl' | 'csv',
  fileName: string,
): { rows: RawRow[]; rejected: RejectedRow[] } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let fmt = format;
  let whole: unknown;
  /** Why the text is not one JSON document (auto mode), reported if no line parses either. */
  let notOneDocument: string | undefined;
  if (fmt === 'auto') {
    if (/\.csv$/i.test(fileName)) fmt = 'csv';
    else {
      try {
        whole = JSON.parse(body);
        fmt = Array.isArray(whole) ? 'json' : 'jsonl';
      } catch (err) {
        // Not one JSON document: read it as JSON Lines (each line reports its own error).
        notOneDocument = (err as Error).message;
        fmt = 'jsonl';
      }
    }
  }
  if (fmt === 'json') {
    const v = whole ?? JSON.parse(body);
    if (!Array.isArray(v)) throw new Error(`${fileName}: expected a JSON array of rows`);
    return { rows: v.map((value, row) => ({ row, line: null, value })), rejected: [] };
  }
  if (fmt === 'csv') {
    // Row-level rejection, as for JSON Lines: a record with more or fewer fields than the header,
    // or one the parser gives up on (e.g. a quote never closed), is rejected with its line; the
    // other rows load.
    const rejected: RejectedRow[] = [];
    const records = csvParse().parse(body, {
      columns: false,
      skip_empty_lines: true,
      relax_column_count: true,
      info: true,
      skip_records_with_error: true,
      on_skip: (err) => {
        if (!err) return;
        const line = (err as { lines?: number }).lines ?? null;
        rejected.push({
          file: fileName,
          row: null,
          line,
          reason: 'unparseable_row',
          detail: `${fileName}${line !== null ? `:${line}` : ''}: not a CSV record: ${err.message}`,
        });
      },
    }) as unknown as { record: string[]; info: { lines: number } }[];
    const [header, ...data] = records;
    if (!header) return { rows: [], rejected };
    const rows: RawRow[] = [];
    data.forEach((r, row) => {
      // a record starts on the line after the previous one ends (a quoted cell may span lines)
      const line = (row === 0 ? header : data[row - 1]!).info.lines + 1;
      if (r.record.length !== header.record.length) {
        const missing = header.record.slice(r.record.length);
        rejected.push({
          file: fileName,
          row,
          line,
          reason: 'unparseable_row',
          detail: `${fileName}:${line} row ${row}: ${r.record.length} fields, the header has ${header.record.length}${missing.length ? ` (no cell for column ${missing.join(', ')}, column ${r.record.length + 1}${missing.length > 1 ? ` to ${header.record.length}` : ''})` : ''}`,
        });
        return;
      }
      rows.push({
        row,
        line,
        value: Object.fromEntries(header.record.map((h, i) => [h, r.record[i]!])),
      });
    });
    return { rows, rejected };
  }
  const rows: RawRow[] = [];
  const rejected: RejectedRow[] = [];
  const lines = body.split(/\r?\n/);
  let row = 0;
  lines.forEach((l, i) => {
    if (l.trim() === '') return;
    try {
      rows.push({ row, line: i + 1, value: JSON.parse(l) as unknown });
    } catch (err) {
      rejected.push({
        file: fileName,
        row,
        line: i + 1,
        reason: 'unparseable_row',
        detail: `${fileName}:${i + 1} row ${row}: not JSON: ${(err as Error).message}`,
      });
    }
    row++;
  });
  if (rows.length === 0 && rejected.length > 0 && notOneDocument !== undefined) {
    throw new Error(
      `${fileName}: neither a JSON array (${notOneDocument}) nor JSON Lines (no line parses)`,
    );
  }
  return { rows, rejected };
}

class RowProblem extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const str = (v: unknown): string | null =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;

function requireQuestion(v: unknown): string {
  const q = str(v);
  if (q === null || q.trim() === '')
    throw new RowProblem('empty_question', 'the question is empty');
  return q;
}

function requireChoices(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0)
    throw new RowProblem('no_options', 'the row has no options');
  const out = v.map((c) => str(c));
  if (out.some((c) => c === null || c.trim() === ''))
    throw new RowProblem('empty_option', 'an option is empty or not text');
  if (out.length < 2) throw new RowProblem('too_few_options', `only ${out.length} option`);
  return out as string[];
}

function indexGold(v: unknown, base: 0 | 1, n: number): number {
  const t = str(v)?.trim() ?? '';
  if (!/^\d+$/.test(t))
    throw new RowProblem('bad_gold', `the answer ${JSON.stringify(v)} is not an option number`);
  const idx = Number(t) - base;
  if (idx < 0 || idx >= n)
    throw new RowProblem(
      'gold_out_of_range',
      `the answer ${t} (${base}-based) is outside the ${n} options`,
    );
  return idx;
}

function difficultyOf(rec: Record<string, unknown>, fallback: string | undefined): string | null {
  const d = rec.difficulty;
  if (d !== undefined && d !== null && String(d).trim() !== '')
    return String(d).trim().toLowerCase();
  if (typeof rec.difficult === 'boolean') return rec.difficult ? 'hard' : 'easy';
  return fallback ?? null;
}

function asRecord(v: unknown): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new RowProblem('unparseable_row', 'the row is not a JSON object');
  return v as Record<string, unknown>;
}

/**
 * Normalises the rows of one subset.
 * @param subset the resolved registry entry
 * @param rows rows from {@link readRows}
 * @param fileLabel how rejections name the file
 * @returns items in row order and the rejected rows
 */
export function normaliseRows(
  subset: ResolvedSubset,
  rows: readonly RawRow[],
  fileLabel: string,
): { items: ResilienceItem[]; rejected: RejectedRow[] } {
  const items: ResilienceItem[] = [];
  const rejected: RejectedRow[] = [];
  const prefix = `${subset.source}:${subset.name}`;
  // 3GPP_TSG: the choices are the sorted distinct labels of the whole split.
  let labels: string[] = [];
  if (subset.adapter === 'ot-lite-labels') {
    const set = new Set<string>();
    for (const r of rows) {
      const v = r.value as Record<string, unknown> | null;
      const a = v && typeof v === 'object' ? str(v.answer)?.trim() : undefined;
      if (a) set.add(a);
    }
    labels = [...set].sort();
  }
  for (const r of rows) {
    try {
      const base = {
        sample_id: `${prefix}:${r.row}`,
        source: subset.source,
        subset: subset.name,
        sub_benchmark: subset.sub_benchmark,
        role: subset.role,
        row: r.row,
      };
      let item: ResilienceItem;
      switch (subset.adapter) {
        case 'gajjar-jsonl': {
          const v = r.value;
          if (!Array.isArray(v) || v.length < 3)
            throw new RowProblem(
              'unparseable_row',
              'expected [question, [options...], "k"] with three elements',
            );
          const question = requireQuestion(v[0]);
          const choices = requireChoices(v[1]);
          const gold = indexGold(v[2], subset.answer_base, choices.length);
          item = mc(base, question, choices, gold, subset.difficulty ?? null);
          break;
        }
        case 'ot-lite-mc': {
          const rec = asRecord(r.value);
          const question = requireQuestion(rec.question);
          const choices = requireChoices(rec.choices);
          const gold = indexGold(rec.answer, subset.answer_base, choices.length);
          item = mc(base, question, choices, gold, difficultyOf(rec, subset.difficulty));
          break;
        }
        case 'ot-lite-telelogs': {
          const rec = asRecord(r.value);
          const question = requireQuestion(rec.question);
          const n = subset.telelogs_causes;
          const choices = Array.from({ length: n }, (_, i) => `C${i + 1}`);
          const a = (str(rec.answer) ?? '').trim().toUpperCase();
          const m = /^C(\d+)$/.exec(a);
          if (!m)
            throw new RowProblem(
              'bad_gold',
              `the answer ${JSON.stringify(rec.answer)} is not C1..C${n}`,
            );
          const k = Number(m[1]);
          if (k < 1 || k > n)
            throw new RowProblem('gold_out_of_range', `the answer ${a} is outside C1..C${n}`);
          item = mc(base, question, choices, k - 1, difficultyOf(rec, subset.difficulty));
          break;
        }
        case 'ot-lite-labels': {
          const rec = asRecord(r.value);
          const question = requireQuestion(rec.question);
          const a = (str(rec.answer) ?? '').trim();
          if (!a) throw new RowProblem('bad_gold', 'the answer label is empty');
          if (labels.length < 2)
            throw new RowProblem('too_few_options', 'the split has fewer than two distinct labels');
          item = mc(
            base,
            question,
            labels,
            labels.indexOf(a),
            difficultyOf(rec, subset.difficulty),
          );
          break;
        }
        case 'ot-lite-numeric': {
          const rec = asRecord(r.value);
          const question = requireQuestion(rec.question);
          item = numeric(base, question, rec.answer, difficultyOf(rec, subset.difficulty));
          break;
        }
        case 'fields': {
          item = byFields(subset, base, r.value);
          break;
        }
      }
      items.push(item);
    } catch (err) {
      if (!(err instanceof RowProblem)) throw err;
      rejected.push({
        file: fileLabel,
        row: r.row,
        line: r.line,
        reason: err.reason,
        detail: `${fileLabel}${r.line !== null ? `:${r.line}` : ''} row ${r.row}: ${err.message}`,
      });
    }
  }
  return { items, rejected };
}

type Base = Pick<
  ResilienceItem,
  'sample_id' | 'source' | 'subset' | 'sub_benchmark' | 'role' | 'row'
>;

function mc(
  base: Base,
  question: string,
  choices: string[],
  gold: number,
  difficulty: string | null,
): ResilienceItem {
  return {
    ...base,
    kind: 'mc',
    question,
    choices,
    gold_index: gold,
    gold_value: null,
    correct_answer: choices[gold]!,
    difficulty,
  };
}

function numeric(
  base: Base,
  question: string,
  answer: unknown,
  difficulty: string | null,
): ResilienceItem {
  const v = typeof answer === 'number' ? answer : parseNumber(str(answer) ?? '');
  if (v === null || !Number.isFinite(v))
    throw new RowProblem('bad_gold', `the answer ${JSON.stringify(answer)} is not a finite number`);
  return {
    ...base,
    kind: 'numeric',
    question,
    choices: [],
    gold_index: null,
    gold_value: v,
    correct_answer: pythonFloatRepr(v),
    difficulty,
  };
}

function byFields(subset: ResolvedSubset, base: Base, value: unknown): ResilienceItem {
  const f = subset.fields!;
  const rec = asRecord(value);
  const question = requireQuestion(rec[f.question]);
  const difficulty =
    f.difficulty && rec[f.difficulty] !== undefined && String(rec[f.difficulty]).trim() !== ''
      ? String(rec[f.difficulty]).trim().toLowerCase()
      : (subset.difficulty ?? null);
  if (subset.answer_format === 'number' || f.choices === undefined) {
    return numeric(base, question, rec[f.answer], difficulty);
  }
  let raw: unknown;
  if (typeof f.choices === 'string') {
    raw = rec[f.choices];
    if (typeof raw === 'string' && raw.trim().startsWith('[')) {
      try {
        raw = JSON.parse(raw) as unknown;
      } catch (err) {
        throw new RowProblem(
          'no_options',
          `the options field is not a JSON list: ${(err as Error).message}`,
        );
      }
    }
  } else {
    raw = f.choices.map((c) => rec[c]).filter((c) => c !== undefined && String(c).trim() !== '');
  }
  const choices = requireChoices(raw);
  const ans = rec[f.answer];
  let gold: number;
  if (subset.answer_format === 'letter') {
    const t = (str(ans) ?? '').trim().toUpperCase();
    if (!/^[A-Z]$/.test(t))
      throw new RowProblem('bad_gold', `the answer ${JSON.stringify(ans)} is not a letter`);
    gold = t.charCodeAt(0) - 65;
    if (gold >= choices.length)
      throw new RowProblem(
        'gold_out_of_range',
        `the answer ${t} is outside the ${choices.length} options`,
      );
  } else if (subset.answer_format === 'text') {
    const t = (str(ans) ?? '').trim();
    const hits = choices.flatMap((c, i) => (c.trim() === t ? [i] : []));
    if (hits.length > 1)
      throw new RowProblem(
        'ambiguous_gold',
        `the answer ${JSON.stringify(t)} matches options ${hits.map((i) => i + 1).join(' and ')} (repeated option text)`,
      );
    gold = hits[0] ?? -1;
    if (gold < 0)
      throw new RowProblem(
        'gold_out_of_range',
        `the answer ${JSON.stringify(t)} is not one of the options`,
      );
  } else {
    gold = indexGold(ans, subset.answer_base, choices.length);
  }
  return mc(base, question, choices, gold, difficulty);
}
