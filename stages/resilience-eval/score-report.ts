/**
 * The HTML report of `telebench score --html FILE`: for every model given, Table I per mode
 * (recorded, published, strict, lenient: CFR / NFR / WFR per sub-benchmark and the macro, rates in
 * percent), TeleMath CR, how far the published mode reproduces the file's own predictions, and the
 * paper's figures (figures.ts) for the recorded predictions and the published mode. One
 * self-contained page (pipeline/report/html.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  renderReportPage,
  type ReportBlock,
  type ReportSection,
} from '../../pipeline/report/html.js';
import { paperFigures, tableOneBlock } from './figures.js';
import {
  COMPARED_MODES,
  detailRows,
  DETAIL_HEADER,
  macroNotes,
  RATES_LEGEND,
  tableOne,
  undecidedCounts,
  UNDECIDED_LEGEND,
  type ScoredResult,
} from './tables.js';
import { NA_LEGEND } from './metrics.js';
import type { ScoreSummary } from './score.js';
import { COMPARISON_HEADER, COMPARISON_LEGEND, compareModels, comparisonRows } from './compare.js';
import type { ParseMode } from './parse-modes.js';

/** How the intervals are made, one paragraph. */
const INTERVALS_LEGEND =
  'Intervals: a sub-benchmark\u2019s CFR carries the exact Clopper-Pearson 95% interval (detail tables; at 0 of n it runs from 0 up, never a single point); the macro CFR a 95% percentile bootstrap stratified by sub-benchmark (2000 resamples, fixed seed). Fewer than 30 scored rows are flagged as a small sample.';

/** The paired comparison table of one mode, or nothing with fewer than two models. */
function comparisonBlocks(
  results: readonly ScoredResult[],
  mode: ParseMode | 'recorded',
): ReportBlock[] {
  const withScores = results.filter((r) => r.scores && r.s.modes[mode]);
  if (withScores.length < 2) return [];
  const cs = compareModels(
    withScores.map((r) => ({ model: r.s.model, scores: r.scores! })),
    mode,
  );
  return [
    { kind: 'paragraph', text: COMPARISON_LEGEND },
    {
      kind: 'table',
      caption: `Paired comparisons (${mode}): every pair of models on the instances both scored`,
      header: [...COMPARISON_HEADER],
      rows: comparisonRows(cs),
    },
  ];
}

const MODES = ['recorded', 'published', 'strict', 'lenient'] as const;
const MODE_TITLE: Record<(typeof MODES)[number], string> = {
  recorded: 'recorded predictions (the file’s own answers)',
  published: 'published mode (the authors’ scorer, src/parsing.py, branch by branch)',
  strict: 'strict mode (`Final Answer: <n>` as the last line of the reply)',
  lenient: 'lenient mode (the answer grammar; ambiguous, retracted and cut-off replies refused)',
};

/** What the report says about how far `published` reproduces the recorded answers. */
function reproductionText(file: string, s: ScoreSummary): string {
  const head = `${file}: model ${s.model}, ${s.rows} rows scored, ${s.errors.length} malformed; prompts at the ${s.num_ctx}-token limit: ${s.prompts_at_limit}.`;
  const r = s.reproduction;
  if (!r) return head;
  const reasons = Object.entries(r.reasons)
    .map(([k, v]) => `${k} (${v})`)
    .join('; ');
  return `${head} Published mode reproduces ${r.reproduced} of ${r.compared} recorded answers${reasons ? `; the others: ${reasons}` : ''}.`;
}

/**
 * The report page of scored files (one entry per model).
 * @param vram VRAM per model name (GB, as the source gives it; the paper's Figure 5), optional
 * @returns the HTML text
 * @throws TelebenchError `chart_render_failed` when a figure cannot be drawn
 */
export async function scoreHtml(
  results: readonly ScoredResult[],
  vram: ReadonlyMap<string, number> = new Map(),
): Promise<string> {
  const sections: ReportSection[] = [
    {
      title: 'Files and reproduction',
      blocks: [
        { kind: 'paragraph', text: RATES_LEGEND },
        ...results.map((r): ReportBlock => ({
          kind: 'paragraph',
          text: reproductionText(r.file, r.s),
        })),
      ],
    },
  ];
  for (const mode of MODES) {
    const entries = results.flatMap(({ s }) =>
      s.modes[mode] ? [{ model: s.model, m: s.modes[mode] }] : [],
    );
    if (!entries.length) continue;
    const undecided = mode === 'published' ? undecidedCounts(results) : new Map();
    const blocks: ReportBlock[] = [
      tableOneBlock(
        `Table I (${mode}): CFR / NFR / WFR % per discrete sub-benchmark, the macro (unweighted mean of the seven) with its 95% interval, TeleMath CR %`,
        entries,
        undecided,
      ),
      ...macroNotes(entries).map((text): ReportBlock => ({ kind: 'paragraph', text })),
      { kind: 'paragraph', text: INTERVALS_LEGEND },
    ];
    if ([...undecided.values()].some((u) => Object.keys(u).length))
      blocks.push({ kind: 'paragraph', text: UNDECIDED_LEGEND });
    if (entries.some((e) => tableOne([e]).some((l) => l.includes('n/a'))))
      blocks.push({ kind: 'paragraph', text: NA_LEGEND });
    if (COMPARED_MODES.includes(mode)) blocks.push(...comparisonBlocks(results, mode));
    if (mode === 'recorded' || mode === 'published')
      blocks.push(
        ...paperFigures(
          entries.map((e, i) => ({
            model: e.model,
            m: e.m,
            vram: vram.get(e.model) ?? null,
            vram_method: vram.has(e.model) ? 'given (--vram)' : null,
            output_cap: results.filter((r) => r.s.modes[mode])[i]!.s.output_cap,
          })),
          mode,
          'the prediction files carry no VRAM; give it per model with --vram MODEL=GB (the authors list theirs in Graphs/scatter_common.py, VRAM_GB_BY_SUBDIR).',
          `${mode}:`,
          'GB',
        ),
      );
    for (const e of entries)
      blocks.push({
        kind: 'table',
        caption: `${e.model} (${mode}): per subset, counts, CFR % with exact 95% interval, mean output tokens`,
        header: [...DETAIL_HEADER],
        rows: detailRows(e.m).map((cells) => [cells[0]!.replace(/\*\*/g, ''), ...cells.slice(1)]),
      });
    sections.push({ title: MODE_TITLE[mode], blocks });
  }
  // a sentence said once is enough (the same macro note or small-sample list in every mode)
  const said = new Set<string>();
  for (const sec of sections)
    sec.blocks = sec.blocks.filter((b) => {
      if (b.kind !== 'paragraph') return true;
      if (said.has(b.text)) return false;
      said.add(b.text);
      return true;
    });
  return renderReportPage({
    title: 'TeleResilienceBench scores',
    intro:
      'Scores of continuation runs (arXiv:2605.09929, Table I and Figures 3-7), read by telebench score: the file’s own predictions, the authors’ scorer (published mode) and our strict and lenient modes, side by side.',
    sections,
  });
}

/** Writes {@link scoreHtml} to `path` (folders made). */
export async function writeScoreHtml(
  path: string,
  results: readonly ScoredResult[],
  vram: ReadonlyMap<string, number> = new Map(),
): Promise<void> {
  const html = await scoreHtml(results, vram);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, html);
}
