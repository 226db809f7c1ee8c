/**
 * Markdown tables of the evaluation (paper Table I shape: CFR/NFR/WFR per subset and model,
 * macro), one per parse mode, shared by `telebench score` and `telebench report resilience-eval`.
 */
import {
  DISCRETE_SUBSETS,
  fmtFlipRate,
  fmtRate,
  NA_LEGEND,
  type GroupMetrics,
  SMALL_SAMPLE,
  subBenchmarkName,
  type ModeMetrics,
} from './metrics.js';
import { rowErrorText, type RowScore, type ScoreSummary } from './score.js';
import type { ParseMode } from './parse-modes.js';
import { COMPARISON_HEADER, COMPARISON_LEGEND, compareModels, comparisonRows } from './compare.js';

const MODE_LABEL: Record<string, string> = {
  recorded: 'recorded (the file’s own predictions)',
  published: 'published (the authors\u2019 scorer, src/parsing.py, branch by branch)',
  strict: 'strict (`Final Answer: <n>` as the last line of the reply)',
  lenient: 'lenient (the answer grammar; ambiguous, retracted and cut-off replies refused)',
};

/** Rows per model and subset the scorer could not decide (the `published` mode without option texts). */
export type UndecidedCounts = ReadonlyMap<string, Readonly<Record<string, number>>>;

/** A CFR with its mark when the cell holds undecided rows: `7.8 (12 undecided)`. */
export const markUndecided = (text: string, undecided: number): string =>
  undecided > 0 ? `${text} (${undecided} undecided)` : text;

/** NFR or WFR of the macro: `n/a` when every subset's rows are all parse failures. */
export function macroFlip(m: ModeMetrics, which: 'nfr' | 'wfr'): string {
  const groups = DISCRETE_SUBSETS.flatMap((s) => (m.by_subset[s] ? [m.by_subset[s]] : []));
  if (
    m.macro[which] === null &&
    groups.length &&
    groups.every((g) => g.scored > 0 && g.answered === 0)
  )
    return 'n/a';
  return fmtRate(m.macro[which]);
}

/** The macro CFR with its 95% interval: `29.1 [26.4, 31.9]`. */
export const macroCfrText = (m: ModeMetrics): string =>
  `${fmtRate(m.macro.cfr)}${m.macro.cfr_ci ? ` [${m.macro.cfr_ci[0].toFixed(1)}, ${m.macro.cfr_ci[1].toFixed(1)}]` : ''}`;

/**
 * Table I rows for several (model, metrics) pairs of one mode; a cell holding rows the scorer
 * could not decide says how many (`undecided`, by model then subset). Pure.
 */
export function tableOne(
  entries: readonly { model: string; m: ModeMetrics }[],
  undecided: UndecidedCounts = new Map(),
): string[] {
  const subsets = DISCRETE_SUBSETS.filter((s) => entries.some((e) => e.m.by_subset[s]));
  const head = [
    'model',
    ...subsets.map((s) => `${subBenchmarkName(s)} CFR / NFR / WFR`),
    'macro CFR [95% CI] / NFR / WFR',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const { model, m } of entries) {
    const u = undecided.get(model) ?? {};
    const cell = (s: string) => {
      const g = m.by_subset[s] as GroupMetrics | undefined;
      return g
        ? `${markUndecided(fmtRate(g.cfr), u[s] ?? 0)} / ${fmtFlipRate(g, 'nfr')} / ${fmtFlipRate(g, 'wfr')}`
        : '-';
    };
    const total = subsets.reduce((a, s) => a + (u[s] ?? 0), 0);
    // one cell per column: with no main subset evaluated (e.g. only ORAN-Bench-13K rows) the row
    // is `| model | macro |`, not `| model |  | macro |`
    const cells = [
      model,
      ...subsets.map(cell),
      `${markUndecided(macroCfrText(m), total)} / ${macroFlip(m, 'nfr')} / ${macroFlip(m, 'wfr')}`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
}

/** Column names of the per-subset detail table (Markdown and HTML). */
export const DETAIL_HEADER = [
  'subset',
  'n',
  'scored',
  'correct flip',
  'no flip',
  'wrong flip',
  'incorrect (generator answer unknown)',
  'parse failures (ambiguous)',
  'excluded',
  'CFR [95% CI, exact]',
  'NFR',
  'WFR',
  'parse-failure rate',
  'mean output tokens',
  'cut prompt or budget exhausted',
  'correct flips from those rows',
] as const;

/**
 * Rows of the detail table of one model in one mode: one per subset the model answered (every
 * loaded subset, main or not), then the micro row over the seven main subsets. Pure.
 * @returns cells in {@link DETAIL_HEADER} order
 */
export function detailRows(m: ModeMetrics): string[][] {
  const rows = [
    ...Object.entries(m.by_subset),
    // no row of a main subset (e.g. ORAN-Bench-13K only): a micro row of zeros says nothing
    ...(m.micro.n > 0 ? [['**micro (the seven main subsets)**', m.micro] as const] : []),
  ];
  return rows.map(([s, g]) => {
    const small = g.scored > 0 && g.scored < SMALL_SAMPLE ? ` (small sample: n = ${g.scored})` : '';
    const ci = g.cfr_ci ? ` [${g.cfr_ci[0].toFixed(1)}, ${g.cfr_ci[1].toFixed(1)}]${small}` : '';
    return [
      s,
      String(g.n),
      String(g.scored),
      String(g.counts.correct_flip),
      String(g.counts.no_flip),
      String(g.counts.wrong_flip),
      String(g.counts.incorrect),
      `${g.counts.parse_failure} (${g.ambiguous})`,
      String(g.counts.excluded),
      `${fmtRate(g.cfr)}${ci}`,
      fmtFlipRate(g, 'nfr'),
      fmtFlipRate(g, 'wfr'),
      fmtRate(g.parse_failure_rate),
      fmtRate(g.mean_output_tokens, 0),
      String(g.cut_rows),
      g.cut_share_of_correct === null ? 'unavailable' : `${g.cut_share_of_correct.toFixed(1)}%`,
    ];
  });
}

/**
 * What the rates mean (paper arXiv:2605.09929 section IV-A), for the reports: one paragraph.
 */
export const RATES_LEGEND =
  'CFR (Correct Flip Rate): % of scored instances where the target model, continuing the weak generator\u2019s wrong half reasoning trace, ends at the gold answer. NFR (No Flip Rate): it ends at the generator\u2019s same wrong answer. WFR (Wrong Flip Rate): it ends at another wrong answer. Scored = all but excluded rows (cut prompt, exhausted budget, provider error); a parse failure stays in the denominator as not corrected, so CFR + NFR + WFR + parse-failure rate = 100. A rate reads "unavailable" when there is nothing to compute it from (no scored row; NFR and WFR when the generator\u2019s answer is unknown). Macro: the unweighted mean over the seven discrete subsets of Table I that have scored rows.';

/**
 * Why a model's macro is what it is: over how many of the seven discrete subsets, or why none.
 * @returns one sentence (`macro over 3 of the 7 discrete subsets (...); ...`)
 */
export function macroNote(model: string, m: ModeMetrics): string {
  const used = DISCRETE_SUBSETS.filter((s) => (m.by_subset[s]?.scored ?? 0) > 0);
  const others = Object.keys(m.by_subset).filter(
    (s) => !(DISCRETE_SUBSETS as readonly string[]).includes(s),
  );
  const extra = others.length
    ? `; ${others.join(', ')} ${others.length > 1 ? 'are' : 'is'} not in it (see the detail table)`
    : '';
  if (!used.length)
    return `${model}: macro unavailable: none of the seven discrete subsets (${DISCRETE_SUBSETS.join(', ')}) has a scored row${extra}.`;
  return `${model}: macro over ${used.length} of the 7 discrete subsets (${used.join(', ')})${m.macro.cfr === null ? ', unavailable because one of their rates is' : ''}${extra}.`;
}

/**
 * The macro notes of several models, one sentence per distinct note: models whose notes say the
 * same (`macro over 7 of the 7 discrete subsets (...)`) share one sentence naming them all.
 */
export function macroNotes(entries: readonly { model: string; m: ModeMetrics }[]): string[] {
  const byText = new Map<string, string[]>();
  for (const e of entries) {
    const body = macroNote('\u0000', e.m).replace('\u0000: ', '');
    byText.set(body, [...(byText.get(body) ?? []), e.model]);
  }
  return [...byText].map(([body, models]) =>
    models.length === 1
      ? `${models[0]}: ${body}`
      : `${models.length === entries.length ? `All ${models.length} models` : models.join(', ')}: ${body}`,
  );
}

/** Per model, the rows per subset the published mode could not decide (the file lacks option texts or count). */
export function undecidedCounts(results: readonly { s: ScoreSummary }[]): UndecidedCounts {
  return new Map(results.map(({ s }) => [s.model, s.reproduction?.undecided_by_subset ?? {}]));
}

/** What a cell marked `(N undecided)` means, one sentence. */
export const UNDECIDED_LEGEND =
  "(N undecided): N rows of the cell are scored by the authors' rules without what decides them (the file carries no option texts, or not the item's option count), so the rate may differ from the authors' own; give --instances with choices to decide them.";

/** The comparison Markdown of one mode: legend and table, or nothing with fewer than two models. */
function comparisonMarkdown(
  results: readonly ScoredResult[],
  mode: ParseMode | 'recorded',
): string[] {
  const withScores = results.filter((r) => r.scores && r.s.modes[mode]);
  if (withScores.length < 2) return [];
  const rows = comparisonRows(
    compareModels(
      withScores.map((r) => ({ model: r.s.model, scores: r.scores! })),
      mode,
    ),
  );
  return [
    '',
    `### Paired comparisons (${mode})`,
    '',
    COMPARISON_LEGEND,
    '',
    `| ${COMPARISON_HEADER.join(' | ')} |`,
    `|${COMPARISON_HEADER.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** Detail table of one model in one mode: counts, parse failures, CI, tokens (Markdown). Pure. */
export function detailTable(m: ModeMetrics): string[] {
  const align = DETAIL_HEADER.map((h) =>
    h === 'subset' || h === 'CFR [95% CI, exact]' ? '---' : '---:',
  );
  return [
    `| ${DETAIL_HEADER.join(' | ')} |`,
    `|${align.join('|')}|`,
    ...detailRows(m).map((cells) => `| ${cells.join(' | ')} |`),
  ];
}

/**
 * The modes whose models are compared pairwise: the file's own predictions and the authors'
 * scorer (the paper's numbers); strict and lenient are diagnostics of the parse, and each pair's
 * bootstrap costs about 30 ms (8 models: 28 pairs per mode).
 */
export const COMPARED_MODES: readonly (ParseMode | 'recorded')[] = ['recorded', 'published'];

/** One scored model as `scoreFiles` returns it (`scores` gives the paired comparisons). */
export interface ScoredResult {
  file: string;
  s: ScoreSummary;
  scores?: readonly RowScore[];
}

/** The Markdown of `telebench score` for one or more files. Pure. */
export function scoreMarkdown(summaries: readonly ScoredResult[]): string {
  const out: string[] = ['# TeleResilienceBench scores', ''];
  for (const { file, s } of summaries) {
    out.push(
      `- \`${file}\`: model ${s.model}, ${s.rows} rows scored, ${s.errors.length} malformed; prompts at the ${s.num_ctx}-token limit: ${s.prompts_at_limit} of ${s.rows}.`,
    );
    if (s.reproduction) {
      const r = s.reproduction;
      const reasons = Object.entries(r.reasons)
        .map(([k, v]) => `${k} (${v} ${v === 1 ? 'row' : 'rows'})`)
        .join('; ');
      out.push(
        `  published mode reproduces ${r.reproduced} of ${r.compared} recorded predictions${reasons ? ` (not reproduced: ${reasons})` : ''}.`,
      );
      if (r.lacking_option_texts)
        out.push(
          `  ${r.lacking_option_texts} ${r.lacking_option_texts === 1 ? 'row' : 'rows'} cannot be decided without the option texts: the file carries none, and the authors' scorer (src/parsing.py) reads an option's text on the \`Final Answer:\` payload before digits elsewhere, and on the whole text when no digit is found (\`Final Answer: UDM\`, a quoted option value); give \`--instances\` whose rows carry \`choices\` (instances built here, or the published Hub dataset's TeleResilienceBench.csv) to apply its option-text rules; a file without \`choices\` (e.g. AuxiliaryBenchmark.json, TeleMath only) cannot supply them.`,
        );
    }
    if (s.reproduction?.lacking_option_count)
      out.push(
        `  ${s.reproduction.lacking_option_count} ${s.reproduction.lacking_option_count === 1 ? 'row' : 'rows'} cannot be decided without the option count: the file does not carry it and the subset's largest is assumed, while their digit rules read only 1..N (a TeleQnA item with 4 options does not read \`5\`); \`--instances\` with \`choices\` decide them.`,
      );
    for (const e of s.errors.slice(0, 20)) out.push(`  - ${rowErrorText(e)}`);
  }
  for (const mode of ['recorded', 'published', 'strict', 'lenient'] as const) {
    const entries = summaries.flatMap(({ s }) =>
      s.modes[mode] ? [{ model: s.model, m: s.modes[mode] }] : [],
    );
    if (!entries.length) continue;
    const undecided = mode === 'published' ? undecidedCounts(summaries) : new Map();
    out.push('', `## ${MODE_LABEL[mode]}`, '', ...tableOne(entries, undecided), '');
    out.push(...macroNotes(entries).map((n) => `- ${n}`));
    if ([...undecided.values()].some((u) => Object.keys(u).length)) out.push('', UNDECIDED_LEGEND);
    if (entries.some((e) => tableOne([e]).some((l) => l.includes('n/a')))) out.push('', NA_LEGEND);
    const tm = entries.filter((e) => e.m.telemath);
    if (tm.length)
      out.push(
        '',
        `TeleMath CR%: ${tm.map((e) => `${e.model} ${fmtRate(e.m.telemath!.cfr)} (NFR ${fmtRate(e.m.telemath!.nfr)})`).join('; ')}.`,
      );
    if (COMPARED_MODES.includes(mode)) out.push(...comparisonMarkdown(summaries, mode));
    for (const e of entries) out.push('', `### ${e.model}`, '', ...detailTable(e.m));
  }
  return `${out.join('\n')}\n`;
}
