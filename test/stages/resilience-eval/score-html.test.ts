/**
 * `telebench score --html` as a reader sees it in Chromium at 1400 px (issue 33): Table I fits or
 * scrolls inside its column; cells of the `published` mode holding rows the scorer could not
 * decide say how many; NFR/WFR are `n/a` (with why) where every row is a parse failure; Fig. 4
 * labels its points and marks the output cap; Fig. 5 keeps its largest point off the border;
 * no sentence is printed twice. The two shared published runs (real data).
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkPage } from '../../fixtures/chromium-page.js';
import { experimentFiles } from '../../fixtures/data-root.js';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('telebench score --html at 1400 px', () => {
  it('Table I in its box, undecided cells marked, labelled points, the output cap, no repeated sentences', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-score-html-1400-'));
    const html = join(dir, 'report.html');
    const files = ['gemma4_31b', 'nemotron-3-nano_4b'].flatMap(experimentFiles);
    const r = spawnSync(
      'node',
      [
        join(ROOT, 'bin/telebench.js'),
        'score',
        ...files,
        '--html',
        html,
        '--vram',
        'gemma4:31b=20',
        'nemotron-3-nano:4b=2.8',
      ],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const seen = await checkPage(html, { width: 1400 });
    expect(seen.consoleErrors).toEqual([]);
    // nothing sticks out of the page; every table ends inside the column, wide ones scroll
    expect(seen.scrollWidth).toBeLessThanOrEqual(seen.innerWidth);
    const t1 = seen.tables.filter((t) => t.caption.startsWith('Table I'));
    expect(t1).toHaveLength(4);
    for (const t of seen.tables) expect(t.right, t.caption).toBeLessThanOrEqual(t.columnRight + 1);
    expect(t1.every((t) => t.scrolls)).toBe(true);
    const page = readFileSync(html, 'utf8');
    // published mode without option texts: gemma4:31b 3GPP_TSG is not the authors' 16.7 and says so
    expect(page).toMatch(
      /<td>gemma4:31b<\/td>(?:<td>[^<]*<\/td>){9}<td>10\.0 \(34 undecided\)<\/td>/,
    );
    expect(seen.text).toContain('(N undecided): N rows of the cell');
    // the recorded cells are the authors' own answers: no mark
    expect(page).toMatch(/<td>gemma4:31b<\/td>(?:<td>[^<]*<\/td>){9}<td>16\.7<\/td>/);
    // Fig. 4: each model's label, non-overlapping; the 512-token cap drawn and named
    for (const mode of ['recorded', 'published']) {
      const f4 = seen.figures[`${mode}:cfr-vs-tokens`]!;
      const labels = f4.labelBoxes.filter((l) => /gemma|nemotron/.test(l.text));
      expect(labels.map((l) => l.text).sort()).toEqual(['gemma4:31b', 'nemotron-3-nano:4b']);
      expect(f4.texts).toContain('output cap 512 tokens');
      const f5 = seen.figures[`${mode}:cfr-vs-vram`]!;
      expect(f5.labelBoxes.map((l) => l.text)).toEqual(expect.arrayContaining(['gemma4:31b']));
      // the 20 GB point is inside the plot, not on its right border
      for (const p of f5.points) expect(p.x).toBeLessThan(f5.plotWidth - 10);
    }
    // every paragraph once (the macro note was printed once per model and mode: 8 times)
    const paras = [...page.matchAll(/<p>([^<]*)<\/p>/g)].map((m) => m[1]!);
    expect(paras.length).toBeGreaterThan(5);
    expect(paras.filter((p, i) => paras.indexOf(p) !== i)).toEqual([]);
    expect(page.match(/macro over 7 of the 7/g)).toHaveLength(1);
    // the paired comparison of the two models, with the McNemar test
    expect(seen.text).toMatch(/gemma4:31b vs nemotron-3-nano:4b\s+818/);
    expect(seen.text).toMatch(/McNemar exact/);
  });

  it('Fig. 4 labels of points close together do not overlap', async () => {
    const { placeLabels } = await import('../../../stages/resilience-eval/figures.js');
    const pts = [
      { x: 510, y: 17.6, model: 'qwen3.5:27b' },
      { x: 510, y: 16.9, model: 'qwen3.5:4b' },
      { x: 509, y: 17.4, model: 'qwen3.5:9b' },
    ];
    const out = placeLabels(pts, 600);
    const ys = out.map((o) => ((100 - o.label_y) / 100) * 260).sort((a, b) => a - b);
    for (let i = 1; i < ys.length; i++) expect(ys[i]! - ys[i - 1]!).toBeGreaterThanOrEqual(13);
  });
});
