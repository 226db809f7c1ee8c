/**
 * `telebench score`: scores predictions made elsewhere, in the three parse modes, beside the
 * recorded predictions when the file has them.
 *
 * Input: prediction files as predictions.ts reads them (the published experiment files or our own
 * JSON Lines) and Inspect AI logs (`.eval`, `.json`; inspect-log.ts). A malformed row is reported with its file, line and column; the other rows are
 * scored; a `sample_id` twice for one model is an error naming both places (or `first`/`last`).
 */
import {
  PARSE_MODES,
  parseInMode,
  publishedRaw,
  NO_ANSWER,
  type ModeParse,
  type ParseMode,
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
import { dedupe, type DuplicatePolicy } from './input-text.js';
import { isInspectLog, readInspectLog } from './inspect-log.js';
import {
  predictionsFromJson,
  PUBLISHED_NUM_CTX,
  PUBLISHED_NUM_PREDICT,
  readPredictions,
  type PredictionRow,
  type RowError,
} from './predictions.js';

export {
  OT_LITE_KNOWN_CHOICES,
  OT_LITE_OPTION_COUNTS,
  PUBLISHED_NUM_CTX,
  PUBLISHED_NUM_PREDICT,
  readPredictions,
  rowErrorText,
  type PredictionRow,
  type RowError,
} from './predictions.js';

/** A prediction file already read into rows (an Inspect log). */
export interface PredictionFile {
  path: string;
  rows: PredictionRow[];
  errors: RowError[];
}

/**
 * Reads the prediction files `telebench score` was given: Inspect logs (`.eval`, or `.json` with
 * Inspect's `eval` and `samples`; inspect-log.ts) into rows, JSON Lines paths left for
 * {@link scoreFiles} to read.
 * @throws TelebenchError from {@link readInspectLog} (`input_missing`, `input_empty`)
 */
export async function readPredictionInputs(
  paths: readonly string[],
  instances: ReadonlyMap<string, EvalInstance>,
): Promise<(string | PredictionFile)[]> {
  const out: (string | PredictionFile)[] = [];
  for (const path of paths) {
    if (!isInspectLog(path)) {
      out.push(path);
      continue;
    }
    const log = await readInspectLog(path);
    const read = predictionsFromJson(path, log.rows, instances);
    out.push({ path, rows: read.rows, errors: [...log.errors, ...read.errors] });
  }
  return out;
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
  /** The reply was cut at the output budget (excluded; counted with the cut rows). */
  budget_exhausted: boolean;
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
  const excluded = r.provider_error
    ? 'provider_error'
    : r.budget_exhausted
      ? 'budget_exhausted'
      : null;
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
    budget_exhausted: r.budget_exhausted,
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

/** A reason that says the file lacks what would decide the row (option texts or count). */
export const isUndecided = (reason: string): boolean =>
  reason.startsWith(LACKS_OPTION_TEXTS) || reason.startsWith(LACKS_OPTION_COUNT);

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
    /** Rows of those two kinds (undecided without the option texts or count) by subset. */
    undecided_by_subset: Record<string, number>;
  } | null;
  prompts_at_limit: number;
  num_ctx: number;
  /** The published runs' output cap and the rows whose output reached it (published rows only). */
  output_cap: { tokens: number; rows_at_cap: number; rows: number } | null;
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
      cut: s.prompt_at_limit || s.budget_exhausted,
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
  const undecided: Record<string, number> = {};
  for (const s of compared)
    if (s.unreproduced_reason) {
      reasons[s.unreproduced_reason] = (reasons[s.unreproduced_reason] ?? 0) + 1;
      if (isUndecided(s.unreproduced_reason)) undecided[s.subset] = (undecided[s.subset] ?? 0) + 1;
    }
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
          undecided_by_subset: undecided,
        }
      : null,
    prompts_at_limit: scores.filter((s) => s.prompt_at_limit).length,
    num_ctx: numCtx,
    output_cap: rows.some((r) => r.recorded)
      ? {
          tokens: PUBLISHED_NUM_PREDICT,
          rows_at_cap: rows.filter(
            (r) =>
              r.recorded && r.output_tokens !== null && r.output_tokens >= PUBLISHED_NUM_PREDICT,
          ).length,
          rows: rows.filter((r) => r.recorded).length,
        }
      : null,
  };
}

/**
 * Scores several files; rows are grouped by model (a model's `main` and `aux` files make one
 * summary: Table I from the discrete subsets, TeleMath CR from the auxiliary rows). A
 * `sample_id` twice for one model is an error naming both places unless `onDuplicate` says
 * which wins (the first is kept for scoring either way under `error`).
 * @param inputs prediction files (JSON Lines) by path, or files already read (an Inspect log,
 *   {@link readPredictionInputs})
 * @throws TelebenchError `input_missing` when a file cannot be read, `input_empty` when one has
 *   no rows
 */
export function scoreFiles(
  inputs: readonly (string | PredictionFile)[],
  instances: ReadonlyMap<string, EvalInstance> = new Map(),
  numCtx = PUBLISHED_NUM_CTX,
  onDuplicate: DuplicatePolicy = 'error',
): { file: string; s: ScoreSummary; scores: RowScore[] }[] {
  const byModel = new Map<
    string,
    { files: string[]; rows: (PredictionRow & { file: string })[]; errors: RowError[] }
  >();
  for (const input of inputs) {
    const { path, rows, errors } =
      typeof input === 'string' ? { path: input, ...readPredictions(input, instances) } : input;
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
