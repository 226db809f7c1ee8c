/**
 * One self-contained HTML report page: inline CSS, inline SVG figures, HTML tables; no script, no
 * external URL (it opens offline and prints as is). Used by `telebench report <pipeline>` of the
 * dataset branches (TeleResilienceBench evaluation, SWE-Bench 5G).
 *
 * Shape: a title, an optional intro paragraph, then sections; a section holds blocks:
 * paragraphs, tables (header + rows of cells, text escaped; an empty table is a sentence saying
 * so, and why when the block says; a wide one scrolls inside its box) and figures (a Vega-Lite spec
 * rendered to SVG by {@link renderChartSvg}, with a caption). Each figure is a
 * `<figure data-figure="<id>">` so tests and readers can find it.
 */
import { renderChartSvg, type ChartSpec } from './charts.js';

export type ReportBlock =
  | { kind: 'paragraph'; text: string }
  | {
      kind: 'table';
      caption?: string;
      header: string[];
      rows: (string | number | null)[][];
      /** Shown instead of a bare header when there is no row: why the table is empty. */
      empty?: string;
    }
  | { kind: 'figure'; id: string; caption: string; spec: ChartSpec };

export interface ReportSection {
  title: string;
  blocks: ReportBlock[];
}

export interface ReportPage {
  title: string;
  intro?: string;
  sections: ReportSection[];
  /** Shown in the footer (e.g. the run id and the time the page was made). */
  footer?: string;
}

/** Escapes text for HTML element content and attribute values. Pure. */
export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const CSS = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
.table-wrap{overflow-x:auto;max-width:100%;margin:1rem 0}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}
caption{caption-side:top;text-align:left;font-weight:600;padding:.25rem 0}
figure{margin:1.5rem 0}figcaption{font-size:.85rem;color:#444;margin-top:.25rem}
footer{margin-top:3rem;font-size:.75rem;color:#666}`;

const cell = (c: string | number | null): string =>
  c === null ? 'unavailable' : escapeHtml(typeof c === 'number' ? String(c) : c);

/**
 * Renders the page. Figures are rendered in order (Vega is asynchronous).
 * @returns the complete HTML document text (UTF-8)
 * @throws TelebenchError `chart_render_failed` when a figure's spec is invalid
 */
export async function renderReportPage(page: ReportPage): Promise<string> {
  const out: string[] = [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(page.title)}</title><style>${CSS}</style></head><body>`,
    `<h1>${escapeHtml(page.title)}</h1>`,
  ];
  if (page.intro) out.push(`<p>${escapeHtml(page.intro)}</p>`);
  for (const s of page.sections) {
    out.push(`<section><h2>${escapeHtml(s.title)}</h2>`);
    for (const b of s.blocks) {
      if (b.kind === 'paragraph') out.push(`<p>${escapeHtml(b.text)}</p>`);
      else if (b.kind === 'table' && b.rows.length === 0) {
        // a bare header row tells a reader nothing: say that it is empty, and why when known
        const what = b.caption ? `${b.caption}: ` : '';
        out.push(`<p class="empty">${escapeHtml(`${what}${b.empty ?? 'no rows.'}`)}</p>`);
      } else if (b.kind === 'table') {
        // a table wider than the page column scrolls inside its own box, not past the column
        out.push('<div class="table-wrap"><table>');
        if (b.caption) out.push(`<caption>${escapeHtml(b.caption)}</caption>`);
        out.push(
          `<thead><tr>${b.header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>`,
        );
        for (const r of b.rows)
          out.push(`<tr>${r.map((c) => `<td>${cell(c)}</td>`).join('')}</tr>`);
        out.push('</tbody></table></div>');
      } else {
        const svg = await renderChartSvg(b.spec);
        out.push(
          `<figure data-figure="${escapeHtml(b.id)}">${svg}<figcaption>${escapeHtml(b.caption)}</figcaption></figure>`,
        );
      }
    }
    out.push('</section>');
  }
  if (page.footer) out.push(`<footer>${escapeHtml(page.footer)}</footer>`);
  out.push('</body></html>');
  return `${out.join('\n')}\n`;
}
