/**
 * Reading prediction files for `telebench score` (score.ts): one prediction per JSON Lines row,
 * either the published experiment files' format (`sample_id, sub_benchmark, task_kind, model,
 * continuation_raw, continuation_thinking?, continuation_response?, continuation_pred_index,
 * continuation_pred_float, gold_index, gold_float, prompt_tokens, output_tokens, error`) or our own
 * (`sample_id` plus a raw output, `output` or `content` and `thinking`, or an answer: `answer_index`
 * 0-based, or `answer`, the 1-based option number or the number; optional `model`,
 * `output_tokens`, `prompt_tokens`, `error`: the run's error, excluded as a provider error;
 * `budget_exhausted: true`: the reply was cut at the output budget, excluded as
 * `budget_exhausted`, as resilience-eval's `default` profile does). Rows
 * can also come from an Inspect log (inspect-log.ts, through {@link predictionsFromJson}). Gold and the generator's answer come from the instances or,
 * for the published format, from the row. A bad row is a {@link RowError} with file, line and
 * column; the others are read.
 */
import { z } from 'zod';
import { TelebenchError } from '../../pipeline/errors.js';
import type { ReplyParts } from './parse-modes.js';
import type { EvalInstance } from './eval-instance.js';
import { jsonErrorPlace, jsonErrorText, readInputText } from './input-text.js';

/**
 * Largest option count per ot-lite subset, used only when a row comes without its option texts
 * (the published experiment files): TeleQnA and TeleTables up to 5, TeleLogs 8 (C1-C8), 3GPP_TSG
 * 16 working groups, ORANBench, srsRANBench and SixG_Bench 4 (../shared/data/README.md and the
 * published rows' largest gold_index).
 */
export const OT_LITE_OPTION_COUNTS: Record<string, number> = {
  teleqna: 5,
  teletables: 5,
  telelogs: 8,
  '3gpp_tsg': 16,
  oranbench: 4,
  srsranbench: 4,
  sixg_bench: 4,
};

/**
 * Option texts that are known without the instances: TeleLogs' root-cause labels C1..C8 (the
 * published construction normalises TeleLogs to these eight options, as stages/resilience/adapters.ts
 * does). Other subsets' texts come only from `--instances`.
 */
export const OT_LITE_KNOWN_CHOICES: Record<string, readonly string[]> = {
  telelogs: Array.from({ length: 8 }, (_, i) => `C${i + 1}`),
};

/**
 * The output-token cap of the published continuation runs: `--num-predict` of the authors'
 * scripts/02_eval_continuation.py, default 512 (the experiment files' largest `output_tokens`).
 */
export const PUBLISHED_NUM_PREDICT = 512;

/** The context window of the published run (collect_metadata.json `ollama_num_ctx`). */
export const PUBLISHED_NUM_CTX = 2048;

const publishedPredSchema = z.looseObject({
  sample_id: z.string().min(1),
  sub_benchmark: z.string().min(1),
  task_kind: z.enum(['mc', 'telemath']),
  model: z.string(),
  continuation_raw: z.string(),
  continuation_thinking: z.string().nullable().optional(),
  continuation_response: z.string().nullable().optional(),
  continuation_pred_index: z.number().int().nullable(),
  continuation_pred_float: z.number().nullable(),
  gold_index: z.number().int().nullable(),
  gold_float: z.number().nullable(),
  prompt_tokens: z.number().int().nullable(),
  output_tokens: z.number().int().nullable(),
  error: z.string().nullable(),
});

const ownPredSchema = z
  .looseObject({
    sample_id: z.string().min(1),
    model: z.string().optional(),
    output: z.string().optional(),
    content: z.string().optional(),
    thinking: z.string().optional(),
    done_reason: z.string().nullable().optional(),
    /** The run's error for this row (an Inspect sample's error): excluded as a provider error. */
    error: z.string().nullable().optional(),
    /** The reply was cut at the output budget (an Inspect sample stopped by max_tokens): excluded. */
    budget_exhausted: z.boolean().optional(),
    answer_index: z.number().int().nonnegative().optional(),
    answer: z.union([z.number(), z.string()]).optional(),
    output_tokens: z.number().int().nullable().optional(),
    prompt_tokens: z.number().int().nullable().optional(),
  })
  .refine(
    (r) =>
      r.output !== undefined ||
      r.content !== undefined ||
      r.answer_index !== undefined ||
      r.answer !== undefined,
    { message: 'needs a raw output (output, or content/thinking) or an answer' },
  );

/** One prediction row after reading. */
export interface PredictionRow {
  line: number;
  sample_id: string;
  sub_benchmark: string;
  subset: string;
  model: string;
  kind: 'mc' | 'numeric';
  reply: ReplyParts | null;
  /** An answer given directly (0-based index, or number). */
  given: { index: number | null; value: number | null } | null;
  gold_index: number | null;
  gold_value: number | null;
  generator_index: number | null;
  generator_value: number | null;
  num_options: number;
  /** Option texts when known (instances, or {@link OT_LITE_KNOWN_CHOICES}); [] when not. */
  choices: readonly string[];
  difficulty: string | null;
  prompt_tokens: number | null;
  output_tokens: number | null;
  provider_error: string | null;
  /** The reply was cut at the output budget: excluded as `budget_exhausted`. */
  budget_exhausted: boolean;
  /** The published file's own prediction (published format only). */
  recorded: { index: number | null; value: number | null } | null;
}

/** A row that could not be used: where (`file`, 1-based `line`, `column` when known) and why. */
export interface RowError {
  file: string;
  line: number;
  column?: string | number;
  message: string;
}

/** `file:line[:column]: message`, as `telebench score` prints a row error. */
export const rowErrorText = (e: RowError): string =>
  `${e.file}:${e.line}${e.column !== undefined ? `:${e.column}` : ''}: ${e.message}`;

/**
 * Reads a predictions file. Never throws for a bad row: it goes to `errors` with its line.
 * @param instances by sample_id (gold, generator answer, options); may be empty
 * @throws TelebenchError `input_missing` when the file cannot be read
 */
export function readPredictions(
  path: string,
  instances: ReadonlyMap<string, EvalInstance>,
): { rows: PredictionRow[]; errors: RowError[] } {
  const text = readInputText(path, 'predictions');
  const parsed: { line: number; json: unknown }[] = [];
  const errors: RowError[] = [];
  text.split('\n').forEach((l, i) => {
    if (l.trim() === '') return;
    const line = i + 1;
    try {
      parsed.push({ line, json: JSON.parse(l) });
    } catch (e) {
      const at = jsonErrorPlace(l, e);
      errors.push({
        file: path,
        line,
        column: at.column,
        message: `not JSON: ${jsonErrorText(e)}`,
      });
    }
  });
  const read = predictionsFromJson(path, parsed, instances);
  return { rows: read.rows, errors: [...errors, ...read.errors].sort((a, b) => a.line - b.line) };
}

/**
 * Prediction rows from JSON values already read (a JSON Lines file's lines, or the samples of an
 * Inspect log, inspect-log.ts), each with its place (`line`). Never throws for a bad row.
 * @param path the file, for messages
 * @throws TelebenchError `input_empty` when there is neither a row nor an error
 */
export function predictionsFromJson(
  path: string,
  values: readonly { line: number; json: unknown }[],
  instances: ReadonlyMap<string, EvalInstance>,
): { rows: PredictionRow[]; errors: RowError[] } {
  const rows: PredictionRow[] = [];
  const errors: RowError[] = [];
  for (const { line, json } of values) {
    try {
      rows.push(readRow(json, line, instances));
    } catch (e) {
      const err = e as Error & { column?: string };
      errors.push({ file: path, line, column: err.column, message: err.message });
    }
  }
  if (rows.length === 0 && errors.length === 0)
    throw new TelebenchError('input_empty', `${path}: no prediction rows`, { tier: 'content' });
  return { rows, errors };
}

/** A row's schema error, naming the column(s) (`column` set to the first one). */
function rowSchemaError(prefix: string, e: z.ZodError): Error & { column?: string } {
  const cols = e.issues.map((i) => i.path.join('.') || '(row)');
  const err: Error & { column?: string } = new Error(
    `${prefix}${e.issues.map((i, k) => `column ${cols[k]}: ${i.message.replace(/received undefined$/, 'missing')}`).join('; ')}`,
  );
  if (cols[0] && cols[0] !== '(row)') err.column = cols[0];
  return err;
}

/**
 * Columns only the published experiment format has: a row with any of them is read (and its
 * errors named) as that format, so a published row without `continuation_raw` is told that
 * column is missing, not that it lacks our `output`.
 */
const PUBLISHED_ONLY_COLUMNS = [
  'continuation_raw',
  'continuation_response',
  'continuation_thinking',
  'continuation_pred_index',
  'continuation_pred_float',
  'task_kind',
  'gold_index',
  'gold_float',
] as const;

const isPublishedRow = (json: unknown): boolean =>
  typeof json === 'object' && json !== null && PUBLISHED_ONLY_COLUMNS.some((c) => c in json);

/** An error naming its column (`file:line:column: message` in the report). */
const columnError = (column: string, message: string): Error & { column: string } =>
  Object.assign(new Error(`column ${column}: ${message}`), { column });

/**
 * Refuses a 0-based option index outside the item's options: negative, or at least
 * `numOptions` when that is known (the instance's choices, else the subset's largest,
 * {@link OT_LITE_OPTION_COUNTS}). A gold index of 42 would otherwise be scored as a question
 * nobody can answer and move the subset's CFR.
 * @throws Error with `column` set when the index is outside
 */
export function checkOptionIndex(
  index: number | null,
  numOptions: number,
  column: string,
  subset: string,
): void {
  if (index === null) return;
  if (index < 0 || (numOptions > 0 && index >= numOptions))
    throw columnError(
      column,
      `${index} is outside the options (0-based: 0..${numOptions > 0 ? numOptions - 1 : 'N-1'}${numOptions > 0 ? `, ${subset} has at most ${numOptions}` : ''})`,
    );
}

function readRow(
  json: unknown,
  line: number,
  instances: ReadonlyMap<string, EvalInstance>,
): PredictionRow {
  if (isPublishedRow(json)) {
    const p = publishedPredSchema.safeParse(json);
    if (!p.success) throw rowSchemaError('published experiment row: ', p.error);
    const r = p.data;
    const inst = instances.get(r.sample_id);
    const subset = r.sample_id.split(':')[1]?.toLowerCase() ?? r.sub_benchmark;
    const kind = r.task_kind === 'mc' ? 'mc' : 'numeric';
    const gold_index = inst?.gold_index ?? r.gold_index;
    const gold_value = inst?.gold_value ?? r.gold_float;
    if (kind === 'mc' ? gold_index === null : gold_value === null)
      throw new Error(`${r.sample_id}: no gold answer in the row or the instances`);
    const num_options = inst?.choices.length || OT_LITE_OPTION_COUNTS[subset] || 0;
    if (kind === 'mc') {
      checkOptionIndex(r.gold_index, num_options, 'gold_index', subset);
      checkOptionIndex(r.continuation_pred_index, num_options, 'continuation_pred_index', subset);
    }
    return {
      line,
      sample_id: r.sample_id,
      sub_benchmark: r.sub_benchmark,
      subset,
      model: r.model,
      kind,
      reply: {
        content: r.continuation_response ?? (r.continuation_thinking ? '' : r.continuation_raw),
        thinking: r.continuation_thinking ?? '',
        raw: r.continuation_raw,
      },
      given: null,
      gold_index,
      gold_value,
      generator_index: inst?.generator_index ?? null,
      generator_value: inst?.generator_value ?? null,
      num_options,
      choices: inst?.choices.length ? inst.choices : (OT_LITE_KNOWN_CHOICES[subset] ?? []),
      difficulty: inst?.difficulty ?? null,
      prompt_tokens: r.prompt_tokens,
      output_tokens: r.output_tokens,
      provider_error: r.error,
      budget_exhausted: false,
      recorded: { index: r.continuation_pred_index, value: r.continuation_pred_float },
    };
  }
  const p = ownPredSchema.safeParse(json);
  if (!p.success) throw rowSchemaError('', p.error);
  const r = p.data;
  const inst = instances.get(r.sample_id);
  if (!inst) throw new Error(`${r.sample_id}: not in the instances (give --instances)`);
  let given: PredictionRow['given'] = null;
  const n = inst.choices.length;
  if (r.answer_index !== undefined) {
    if (inst.kind === 'mc') checkOptionIndex(r.answer_index, n, 'answer_index', inst.subset);
    given = { index: r.answer_index, value: null };
  } else if (r.answer !== undefined && r.output === undefined && r.content === undefined) {
    const v = Number(r.answer);
    if (!Number.isFinite(v)) throw new Error(`answer ${JSON.stringify(r.answer)} is not a number`);
    // an option number (1-based) past the choices would be silently a wrong flip
    if (inst.kind === 'mc' && (!Number.isInteger(v) || v < 1 || (n > 0 && v > n)))
      throw columnError('answer', `${v} is not an option number (1..${n > 0 ? n : 'N'})`);
    given = inst.kind === 'mc' ? { index: v - 1, value: null } : { index: null, value: v };
  }
  return {
    line,
    sample_id: r.sample_id,
    sub_benchmark: inst.sub_benchmark,
    subset: inst.subset,
    model: r.model ?? 'unnamed',
    kind: inst.kind,
    reply:
      given === null
        ? {
            content: r.content ?? r.output ?? '',
            thinking: r.thinking ?? '',
            doneReason: r.done_reason ?? null,
          }
        : null,
    given,
    gold_index: inst.gold_index,
    gold_value: inst.gold_value,
    generator_index: inst.generator_index,
    generator_value: inst.generator_value,
    num_options: inst.choices.length,
    choices: inst.choices,
    difficulty: inst.difficulty,
    prompt_tokens: r.prompt_tokens ?? null,
    output_tokens: r.output_tokens ?? null,
    provider_error: r.error ?? null,
    budget_exhausted: r.budget_exhausted ?? false,
    recorded: null,
  };
}
