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
import { detailRows, DETAIL_HEADER, macroNote, RATES_LEGEND } from './tables.js';
import type { ScoreSummary } from './score.js';

const MODES = ['recorded', 'published', 'strict', 'lenient'] as const;
const MODE_TITLE: Record<(typeof MODES)[number], string> = {
  recorded: 'recorded predictions (the file’s own answers)',
  published: 'published mode (the authors’ scorer, src/parsing.py, branch by branch)',
  strict: 'strict mode (`Final Answer: <n>` as the last line of the reply)',
  lenient: 'lenient mode (our fallback chain; ambiguous, retracted and cut-off replies refused)',
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
  results: readonly { file: string; s: ScoreSummary }[],
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
    const blocks: ReportBlock[] = [
      tableOneBlock(
        `Table I (${mode}): CFR / NFR / WFR % per discrete sub-benchmark, the macro (unweighted mean of the seven), TeleMath CR %`,
        entries,
      ),
      ...entries.map((e): ReportBlock => ({ kind: 'paragraph', text: macroNote(e.model, e.m) })),
    ];
    if (mode === 'recorded' || mode === 'published')
      blocks.push(
        ...paperFigures(
          entries.map((e) => ({
            model: e.model,
            m: e.m,
            vram: vram.get(e.model) ?? null,
            vram_method: vram.has(e.model) ? 'given (--vram)' : null,
          })),
          mode,
          'the prediction files carry no VRAM; give it per model with --vram MODEL=GB (the authors list theirs in Graphs/scatter_common.py, VRAM_GB_BY_SUBDIR).',
          `${mode}:`,
        ),
      );
    for (const e of entries)
      blocks.push({
        kind: 'table',
        caption: `${e.model} (${mode}): per subset, counts, CFR % with 95% interval, mean output tokens`,
        header: [...DETAIL_HEADER],
        rows: detailRows(e.m).map((cells) => [cells[0]!.replace(/\*\*/g, ''), ...cells.slice(1)]),
      });
    sections.push({ title: MODE_TITLE[mode], blocks });
  }
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
  results: readonly { file: string; s: ScoreSummary }[],
  vram: ReadonlyMap<string, number> = new Map(),
): Promise<void> {
  const html = await scoreHtml(results, vram);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, html);
}
