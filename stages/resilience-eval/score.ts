/**
 * `telebench score`: scores predictions made elsewhere, in the three parse modes, beside the
 * recorded predictions when the file has them.
 *
 * Input: JSON Lines, one prediction per line, either
 * - the published experiment files' format (`../shared/data/teleresiliencebench/experiments/
 *   <model>/{main,aux}.jsonl`: `sample_id, sub_benchmark, task_kind, model, continuation_raw,
 *   continuation_thinking?, continuation_response?, continuation_pred_index,
 *   continuation_pred_float, gold_index, gold_float, prompt_tokens, output_tokens, error`), or
 * - our own: `sample_id` plus a raw output (`output`, or `content` and `thinking`) or an answer
 *   (`answer_index`, 0-based, or `answer`: the 1-based option number, or the number for numeric
 *   items), optional `model`, `output_tokens`, `prompt_tokens`.
 * Gold and the generator's answer come from `--instances` (our schema or the published one) or,
 * for the published format, from the row's `gold_index` / `gold_float`.
 * A malformed row is reported with its line number; the other rows are scored.
 */
import { z } from 'zod';
import { TelebenchError } from '../../pipeline/errors.js';
import {
  PARSE_MODES,
  parseInMode,
  publishedRaw,
  NO_ANSWER,
  type ModeParse,
  type ParseMode,
  type ReplyParts,
} from './parse-modes.js';
import {
  classifyOutcome,
  isClose,
  modeMetrics,
  type ModeMetrics,
  type Outcome,
  type ScoredRow,
} from './metrics.js';
import type { EvalInstance } from './eval-instance.js';
import { lastFinalAnswerPayload, publishedMcOutput, pyStrip } from './published-scorer.js';
import {
  dedupe,
  jsonErrorPlace,
  jsonErrorText,
  readInputText,
  type DuplicatePolicy,
} from './input-text.js';

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
  const rows: PredictionRow[] = [];
  const errors: RowError[] = [];
  text.split('\n').forEach((l, i) => {
    if (l.trim() === '') return;
    const line = i + 1;
    let json: unknown;
    try {
      json = JSON.parse(l);
    } catch (e) {
      const at = jsonErrorPlace(l, e);
      errors.push({
        file: path,
        line,
        column: at.column,
        message: `not JSON: ${jsonErrorText(e)}`,
      });
      return;
    }
    try {
      rows.push(readRow(json, line, instances));
    } catch (e) {
      const err = e as Error & { column?: string };
      errors.push({ file: path, line, column: err.column, message: err.message });
    }
  });
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

function readRow(
  json: unknown,
  line: number,
  instances: ReadonlyMap<string, EvalInstance>,
): PredictionRow {
  const isPublished = typeof json === 'object' && json !== null && 'continuation_raw' in json;
  if (isPublished) {
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
      num_options: inst?.choices.length || OT_LITE_OPTION_COUNTS[subset] || 0,
      choices: inst?.choices.length ? inst.choices : (OT_LITE_KNOWN_CHOICES[subset] ?? []),
      difficulty: inst?.difficulty ?? null,
      prompt_tokens: r.prompt_tokens,
      output_tokens: r.output_tokens,
      provider_error: r.error,
      recorded: { index: r.continuation_pred_index, value: r.continuation_pred_float },
    };
  }
  const p = ownPredSchema.safeParse(json);
  if (!p.success) throw rowSchemaError('', p.error);
  const r = p.data;
  const inst = instances.get(r.sample_id);
  if (!inst) throw new Error(`${r.sample_id}: not in the instances (give --instances)`);
  let given: PredictionRow['given'] = null;
  if (r.answer_index !== undefined) given = { index: r.answer_index, value: null };
  else if (r.answer !== undefined && r.output === undefined && r.content === undefined) {
    const v = Number(r.answer);
    if (!Number.isFinite(v)) throw new Error(`answer ${JSON.stringify(r.answer)} is not a number`);
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
    provider_error: null,
    recorded: null,
  };
}

/** One row scored in every mode. */
export interface RowScore {
  line: number;
  sample_id: string;
  sub_benchmark: string;
  subset: string;
  model: string;
  parses: Record<ParseMode, ModeParse>;
  outcomes: Record<ParseMode | 'recorded', Outcome | null>;
  /** published-mode answer equals the recorded one (null: nothing recorded). */
  reproduced: boolean | null;
  /** Why a recorded answer is not reproduced. */
  unreproduced_reason: string | null;
  prompt_at_limit: boolean;
}

const givenParse = (g: { index: number | null; value: number | null }): ModeParse =>
  g.index !== null
    ? { status: 'answer', rule: 'given', index: g.index, value: null, matched: String(g.index) }
    : { status: 'answer', rule: 'given', index: null, value: g.value!, matched: String(g.value) };

/**
 * Scores one row in every mode (and the recorded prediction, when the file has one).
 * @param numCtx the run's context window: a prompt whose count reached it is flagged
 */
export function scoreRow(r: PredictionRow, numCtx = PUBLISHED_NUM_CTX): RowScore {
  const target = { kind: r.kind, numOptions: r.num_options, choices: r.choices };
  const parses = Object.fromEntries(
    PARSE_MODES.map((m) => [m, r.given ? givenParse(r.given) : parseInMode(m, r.reply!, target)]),
  ) as Record<ParseMode, ModeParse>;
  const ot = {
    kind: r.kind,
    goldIndex: r.gold_index,
    goldValue: r.gold_value,
    generatorIndex: r.generator_index,
    generatorValue: r.generator_value,
  };
  const excluded = r.provider_error ? 'provider_error' : null;
  const outcomes = Object.fromEntries(
    PARSE_MODES.map((m) => [m, classifyOutcome(parses[m], ot, excluded)]),
  ) as Record<ParseMode | 'recorded', Outcome | null>;
  let reproduced: boolean | null = null;
  let why: string | null = null;
  if (r.recorded) {
    const rec = r.recorded;
    const recParse: ModeParse =
      r.kind === 'mc'
        ? rec.index === null
          ? NO_ANSWER
          : { status: 'answer', rule: 'recorded', index: rec.index, value: null, matched: '' }
        : rec.value === null
          ? NO_ANSWER
          : { status: 'answer', rule: 'recorded', index: null, value: rec.value, matched: '' };
    outcomes.recorded = classifyOutcome(recParse, ot, excluded);
    const p = parses.published;
    reproduced =
      r.kind === 'mc'
        ? (p.status === 'answer' ? p.index : null) === rec.index
        : p.status === 'answer' && rec.value !== null
          ? isClose(p.value!, rec.value, { rel: 1e-9, abs: 0 })
          : p.status !== 'answer' && rec.value === null;
    if (!reproduced) why = unreproducedReason(r, rec.index, parses.published);
  } else outcomes.recorded = null;
  return {
    line: r.line,
    sample_id: r.sample_id,
    sub_benchmark: r.sub_benchmark,
    subset: r.subset,
    model: r.model,
    parses,
    outcomes,
    reproduced,
    unreproduced_reason: why,
    prompt_at_limit: r.prompt_tokens !== null && r.prompt_tokens >= numCtx,
  };
}

/** Reason prefix of the rows that cannot be decided because the option texts are missing. */
export const LACKS_OPTION_TEXTS = 'lacks option texts';
/** Reason prefix of the rows decided by the item's option count, which the file does not carry. */
export const LACKS_OPTION_COUNT = 'lacks the option count';

/**
 * Why the published scorer's recorded answer is not what our `published` mode reads. `published`
 * is their `parse_mc_output` branch by branch, so a difference on a file without option texts
 * comes from what the file lacks, found by what their branches would do:
 * - the option count: with fewer options (the subset's largest is assumed) their digit rules
 *   read the recorded answer (TeleQnA items with 4 options, `5` then not an option number);
 * - the option texts: their option-text rule runs on the `Final Answer:` payload before the
 *   digit rules run on the whole text, and on the whole text when no digit is found; when our
 *   reading did not come from the payload's digits, that rule decided the row.
 * With the option texts given, a remaining difference is reported as such.
 */
function unreproducedReason(r: PredictionRow, recIndex: number | null, p: ModeParse): string {
  if (r.kind !== 'mc') return 'numeric value differs';
  if (r.choices.length > 0)
    return 'option texts known: the published scorer read another option than our published rules';
  const raw = r.reply ? publishedRaw(r.reply) : '';
  for (let n = r.num_options - 1; n >= 2; n--)
    if (publishedMcOutput(raw, Array<string>(n).fill('')).index === recIndex)
      return `${LACKS_OPTION_COUNT}: with ${n} options their digit rules read the recorded answer`;
  if (p.rule?.startsWith('published:payload'))
    return 'the recorded answer came from the Final Answer digits, which our published rules read otherwise';
  if (lastFinalAnswerPayload(pyStrip(raw)))
    return `${LACKS_OPTION_TEXTS}: the Final Answer payload names no option number, so their option-text rule on it decided`;
  return `${LACKS_OPTION_TEXTS}: ${p.status === 'answer' ? 'an option text outranks nothing here, yet the answer differs' : 'no option number in the output, so their option-text rule on the whole text decided'}`;
}

/** Summary of a scored file. */
export interface ScoreSummary {
  model: string;
  rows: number;
  errors: RowError[];
  modes: Record<ParseMode | 'recorded', ModeMetrics | null>;
  reproduction: {
    compared: number;
    reproduced: number;
    reasons: Record<string, number>;
    /** Rows not reproduced because the option texts are missing (sum of those reasons). */
    lacking_option_texts: number;
    /** Rows not reproduced because the option count is missing (sum of those reasons). */
    lacking_option_count: number;
  } | null;
  prompts_at_limit: number;
  num_ctx: number;
}

/** Scores rows (one model) and computes every mode's metrics. Pure. */
export function summarise(
  scores: readonly RowScore[],
  rows: readonly PredictionRow[],
  errors: RowError[],
  numCtx = PUBLISHED_NUM_CTX,
): ScoreSummary {
  const byLine = new Map(rows.map((r) => [r.line, r]));
  const toScored = (s: RowScore, mode: ParseMode | 'recorded'): ScoredRow => {
    const r = byLine.get(s.line)!;
    return {
      sample_id: s.sample_id,
      subset: s.subset,
      outcome: s.outcomes[mode]!,
      parse_status: mode === 'recorded' ? 'answer' : s.parses[mode].status,
      output_tokens: r.output_tokens,
      difficulty: r.difficulty,
      cut: s.prompt_at_limit,
    };
  };
  const modes = Object.fromEntries(
    [...PARSE_MODES, 'recorded' as const].map((m) => {
      const usable = scores.filter((s) => s.outcomes[m] !== null);
      return [m, usable.length ? modeMetrics(usable.map((s) => toScored(s, m))) : null];
    }),
  ) as ScoreSummary['modes'];
  const compared = scores.filter((s) => s.reproduced !== null);
  const reasons: Record<string, number> = {};
  for (const s of compared)
    if (s.unreproduced_reason)
      reasons[s.unreproduced_reason] = (reasons[s.unreproduced_reason] ?? 0) + 1;
  return {
    model: [...new Set(scores.map((s) => s.model))].join(', ') || 'none',
    rows: scores.length,
    errors,
    modes,
    reproduction: compared.length
      ? {
          compared: compared.length,
          reproduced: compared.filter((s) => s.reproduced).length,
          reasons,
          lacking_option_texts: Object.entries(reasons)
            .filter(([k]) => k.startsWith(LACKS_OPTION_TEXTS))
            .reduce((a, [, v]) => a + v, 0),
          lacking_option_count: Object.entries(reasons)
            .filter(([k]) => k.startsWith(LACKS_OPTION_COUNT))
            .reduce((a, [, v]) => a + v, 0),
        }
      : null,
    prompts_at_limit: scores.filter((s) => s.prompt_at_limit).length,
    num_ctx: numCtx,
  };
}

/**
 * Scores several files; rows are grouped by model (a model's `main` and `aux` files make one
 * summary: Table I from the discrete subsets, TeleMath CR from the auxiliary rows). A
 * `sample_id` twice for one model is an error naming both places unless `onDuplicate` says
 * which wins (the first is kept for scoring either way under `error`).
 * @throws TelebenchError `input_missing` when a file cannot be read, `input_empty` when one has
 *   no rows
 */
export function scoreFiles(
  paths: readonly string[],
  instances: ReadonlyMap<string, EvalInstance> = new Map(),
  numCtx = PUBLISHED_NUM_CTX,
  onDuplicate: DuplicatePolicy = 'error',
): { file: string; s: ScoreSummary; scores: RowScore[] }[] {
  const byModel = new Map<
    string,
    { files: string[]; rows: (PredictionRow & { file: string })[]; errors: RowError[] }
  >();
  for (const path of paths) {
    const { rows, errors } = readPredictions(path, instances);
    const models = new Set(rows.map((r) => r.model));
    if (models.size === 0) models.add('none');
    for (const model of models) {
      const g = byModel.get(model) ?? { files: [], rows: [], errors: [] };
      g.files.push(path);
      g.rows.push(...rows.filter((r) => r.model === model).map((r) => ({ ...r, file: path })));
      g.errors.push(...errors);
      byModel.set(model, g);
    }
  }
  return [...byModel].map(([, g]) => {
    const kept = dedupe(
      g.rows,
      (r) => r.sample_id,
      (r) => `${r.file}:${r.line}`,
      onDuplicate,
    );
    for (const d of kept.duplicates)
      g.errors.push({ file: d.row.file, line: d.row.line, message: d.message });
    // rows of several files keep distinct line keys: offset by the file's order
    const rows = kept.rows.map((r) => ({
      ...r,
      line: r.line + g.files.indexOf(r.file) * 1_000_000,
    }));
    const scores = rows.map((r) => scoreRow(r, numCtx));
    return { file: g.files.join(' + '), s: summarise(scores, rows, g.errors, numCtx), scores };
  });
}
