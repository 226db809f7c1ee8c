import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderReportPage, escapeHtml } from '../../../pipeline/report/html.js';
import { renderChartSvg } from '../../../pipeline/report/charts.js';
import { checkPage } from '../../fixtures/chromium-page.js';

const bars = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  data: {
    values: [
      { s: 'a', v: 1 },
      { s: 'b', v: 3 },
      { s: 'c', v: 2 },
    ],
  },
  mark: 'bar',
  encoding: { x: { field: 's', type: 'nominal' }, y: { field: 'v', type: 'quantitative' } },
} as const;
const points = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  data: { values: [1, 2, 3, 4].map((x) => ({ x, y: x * x, m: `m${x}` })) },
  mark: 'point',
  encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } },
} as const;

describe('report page helper', () => {
  it('renders a Vega-Lite spec to SVG in Node with one path per bar', async () => {
    const svg = await renderChartSvg(bars);
    expect(svg.startsWith('<svg')).toBe(true);
    const group = /<g class="mark-rect role-mark[^"]*"[^>]*>([\s\S]*?)<\/g>/.exec(svg);
    expect(group).not.toBeNull();
    expect(group![1]!.match(/<path/g)?.length).toBe(3);
  });

  it('rejects a bad spec with chart_render_failed', async () => {
    await expect(
      renderChartSvg({ data: { values: [] }, mark: 'nonsense' } as never),
    ).rejects.toMatchObject({ code: 'chart_render_failed' });
  });

  it('an empty table says so (and why, when told) instead of showing a bare header', async () => {
    const html = await renderReportPage({
      title: 't',
      sections: [
        {
          title: 's',
          blocks: [
            {
              kind: 'table',
              caption: 'Table VI',
              header: ['model', 'dP'],
              rows: [],
              empty: 'skills are off.',
            },
            { kind: 'table', header: ['a'], rows: [] },
          ],
        },
      ],
    });
    expect(html).toContain('<p class="empty">Table VI: skills are off.</p>');
    expect(html).toContain('<p class="empty">no rows.</p>');
    expect(html).not.toContain('<th>model</th>');
  });

  it('escapes text', () => {
    expect(escapeHtml(`<a href="x">&'`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;');
  });

  it('makes a self-contained page that headless Chromium shows with every mark and no console error', async () => {
    const html = await renderReportPage({
      title: 'Test <report>',
      intro: 'intro text',
      sections: [
        {
          title: 'Tables',
          blocks: [
            {
              kind: 'table',
              caption: 'T',
              header: ['a', 'b'],
              rows: [
                ['x<y', 1],
                ['z', null],
              ],
            },
            { kind: 'figure', id: 'bars', caption: 'three bars', spec: bars },
            { kind: 'figure', id: 'points', caption: 'four points', spec: points },
          ],
        },
      ],
      footer: 'footer',
    });
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org|vega\.github\.io)/);
    expect(html).toContain('x&lt;y');
    expect(html).toContain('<td>unavailable</td>');
    const dir = mkdtempSync(join(tmpdir(), 'telebench-report-'));
    const file = join(dir, 'page.html');
    writeFileSync(file, html);
    const seen = await checkPage(file);
    expect(seen.consoleErrors).toEqual([]);
    expect(seen.textLength).toBeGreaterThan(20);
    expect(seen.figures['bars']!.marks).toBe(3);
    expect(seen.figures['points']!.marks).toBe(4);
    expect(seen.figures['bars']!.width).toBeGreaterThan(0);
  });
});
