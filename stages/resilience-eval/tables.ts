/**
 * Markdown tables of the evaluation (paper Table I shape: CFR/NFR/WFR per subset and model,
 * macro), one per parse mode, shared by `telebench score` and `telebench report resilience-eval`.
 */
import {
  DISCRETE_SUBSETS,
  fmtRate,
  SMALL_SAMPLE,
  subBenchmarkName,
  type ModeMetrics,
} from './metrics.js';
import { rowErrorText, type ScoreSummary } from './score.js';

const MODE_LABEL: Record<string, string> = {
  recorded: 'recorded (the file’s own predictions)',
  published: 'published (the authors\u2019 scorer, src/parsing.py, branch by branch)',
  strict: 'strict (`Final Answer: <n>` as the last line of the reply)',
  lenient: 'lenient (our fallback chain; ambiguous, retracted and cut-off replies refused)',
};

/** Table I rows for several (model, metrics) pairs of one mode. Pure. */
export function tableOne(entries: readonly { model: string; m: ModeMetrics }[]): string[] {
  const subsets = DISCRETE_SUBSETS.filter((s) => entries.some((e) => e.m.by_subset[s]));
  const head = [
    'model',
    ...subsets.map((s) => `${subBenchmarkName(s)} CFR / NFR / WFR`),
    'macro CFR / NFR / WFR',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const { model, m } of entries) {
    const cell = (g: { cfr: number | null; nfr: number | null; wfr: number | null } | undefined) =>
      g ? `${fmtRate(g.cfr)} / ${fmtRate(g.nfr)} / ${fmtRate(g.wfr)}` : '-';
    // one cell per column: with no main subset evaluated (e.g. only ORAN-Bench-13K rows) the row
    // is `| model | macro |`, not `| model |  | macro |`
    const cells = [model, ...subsets.map((s) => cell(m.by_subset[s])), cell(m.macro)];
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
  'CFR [95% CI]',
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
      fmtRate(g.nfr),
      fmtRate(g.wfr),
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

/** Detail table of one model in one mode: counts, parse failures, CI, tokens (Markdown). Pure. */
export function detailTable(m: ModeMetrics): string[] {
  const align = DETAIL_HEADER.map((h) => (h === 'subset' || h === 'CFR [95% CI]' ? '---' : '---:'));
  return [
    `| ${DETAIL_HEADER.join(' | ')} |`,
    `|${align.join('|')}|`,
    ...detailRows(m).map((cells) => `| ${cells.join(' | ')} |`),
  ];
}

/** The Markdown of `telebench score` for one or more files. Pure. */
export function scoreMarkdown(summaries: readonly { file: string; s: ScoreSummary }[]): string {
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
    out.push('', `## ${MODE_LABEL[mode]}`, '', ...tableOne(entries));
    const tm = entries.filter((e) => e.m.telemath);
    if (tm.length)
      out.push(
        '',
        `TeleMath CR%: ${tm.map((e) => `${e.model} ${fmtRate(e.m.telemath!.cfr)} (NFR ${fmtRate(e.m.telemath!.nfr)})`).join('; ')}.`,
      );
    for (const e of entries) out.push('', `### ${e.model}`, '', ...detailTable(e.m));
  }
  return `${out.join('\n')}\n`;
}
