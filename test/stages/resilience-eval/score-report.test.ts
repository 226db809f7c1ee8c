/**
 * `telebench score --html`: the report of the published runs opened in Debian's Chromium. The
 * figures have marks and labelled axes with percent ticks; a figure without data says why.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkPage } from '../../fixtures/chromium-page.js';
import { dataRoot, experimentFiles } from '../../fixtures/data-root.js';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('telebench score --html on the two shared published runs', () => {
  it('gives Table I per mode and the paper figures, each with marks and labelled axes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-score-html-'));
    const html = join(dir, 'report.html');
    const files = ['gemma4_31b', 'nemotron-3-nano_4b'].flatMap(experimentFiles);
    const aux = join(dataRoot('teleresiliencebench'), 'AuxiliaryBenchmark.json');
    const r = spawnSync(
      'node',
      [
        join(ROOT, 'bin/telebench.js'),
        'score',
        ...files,
        '--instances',
        aux,
        '--html',
        html,
        // the authors' VRAM figures (Graphs/scatter_common.py)
        '--vram',
        'gemma4:31b=20',
        'nemotron-3-nano:4b=2.8',
      ],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const page = readFileSync(html, 'utf8');
    for (const mode of ['recorded', 'published', 'strict', 'lenient'])
      expect(page).toContain(`Table I (${mode})`);
    // Table I cells of the paper (recorded): gemma4:31b TeleQnA 32.9, nemotron macro 27.5
    expect(page).toMatch(/<td>gemma4:31b<\/td><td>32\.9<\/td>/);
    expect(page).toMatch(
      /<td>nemotron-3-nano:4b<\/td>(?:<td>[^<]*<\/td>){21}<td>27\.5 \[[\d.]+, [\d.]+\]<\/td>/,
    );
    // no difficulty labels in the experiment files: said, not an empty frame
    expect(page).toContain(
      '(figure recorded:cfr-by-difficulty): not drawn: no scored discrete row has a difficulty label',
    );
    const seen = await checkPage(html);
    expect(seen.consoleErrors).toEqual([]);
    for (const mode of ['recorded', 'published']) {
      const f = (id: string) => seen.figures[`${mode}:${id}`]!;
      expect(f('cfr-by-subset').marks).toBe(14); // 7 sub-benchmarks x 2 models
      // two points each, plus their two labels (and Fig. 4's output-cap rule and its label)
      expect(f('cfr-vs-tokens').points).toHaveLength(2);
      expect(f('cfr-vs-tokens').marks).toBe(6);
      expect(f('cfr-vs-vram').points).toHaveLength(2);
      expect(f('cfr-vs-vram').marks).toBe(4);
      expect(f('telemath-cr').marks).toBe(2);
      expect(seen.figures[`${mode}:cfr-by-difficulty`]).toBeUndefined();
      expect(f('cfr-by-subset').axisTitles).toEqual(
        expect.arrayContaining(['sub-benchmark', 'CFR (%)']),
      );
      expect(f('cfr-vs-tokens').axisTitles).toEqual(
        expect.arrayContaining(['mean output tokens', 'macro CFR (%)']),
      );
      expect(f('cfr-vs-vram').axisTitles).toContain('VRAM (GB)');
      // percent axis 0..100 in whole numbers; token counts whole numbers
      expect(f('cfr-by-subset').tickLabels).toEqual(expect.arrayContaining(['0', '100']));
      for (const t of f('cfr-vs-tokens').tickLabels.filter((x) => /^[\d,.]+$/.test(x)))
        expect(t).toMatch(/^\d[\d,]*$/);
      expect(f('cfr-by-subset').tickLabels).toContain('TeleQnA');
    }
  });
});
