/**
 * What a reader sees in the SWE-Bench 5G evaluation report, in Debian's Chromium: an all-zero
 * funnel says so in place; counts on an integer axis; step labels without sort prefixes, not
 * rotated; legend labels whole; Table VI says why it is empty when skills are off; "1 attempt".
 * The attempts are the report's own input records (metrics.ts `Attempt`), built by hand.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderReportPage } from '../../../../pipeline/report/html.js';
import { evalReport } from '../../../../stages/swe5g/evaluate/report.js';
import type { Attempt } from '../../../../stages/swe5g/evaluate/metrics.js';
import { checkPage, type PageCheck } from '../../../fixtures/chromium-page.js';

const att = (over: Partial<Attempt>): Attempt => ({
  run: 'm single',
  model: 'm',
  mode: 'single',
  condition: 'none',
  instance_id: 'free5gc__amf-161',
  bug_category: 'nil_pointer',
  gold_patch: 'diff --git a/a.go b/a.go\n',
  excluded: null,
  files_named: [],
  last_edits: [],
  last_blocks: 0,
  model_patch: '',
  grade: { patch_applied: false, resolved: false, build_failures: [] },
  tokens: 1820,
  skill_spec: null,
  turns: 1,
  ...over,
});

const noSkills = { header: [], rows: [], title: 'skills' };
const dir = mkdtempSync(join(tmpdir(), 'telebench-report-view-'));

async function open(name: string, attempts: Attempt[], skillsEnabled: boolean) {
  const view = evalReport(attempts, { skills: noSkills, skillsEnabled });
  const file = join(dir, `${name}.html`);
  writeFileSync(file, await renderReportPage(view.page));
  return { page: await checkPage(file), markdown: view.markdown };
}

describe('SWE-Bench 5G evaluation report as a reader sees it', () => {
  let zero: { page: PageCheck; markdown: string };
  let data: { page: PageCheck; markdown: string };
  beforeAll(async () => {
    // one SmolLM2-like attempt that failed at format (the measured free5GC run)
    zero = await open('zero', [att({})], false);
    // two runs with long names, counts 0..2
    const long = 'qwen2.5-coder:32b-instruct-q4_K_M multi +skill';
    data = await open(
      'data',
      [
        att({
          run: long,
          mode: 'multi',
          files_named: ['a.go'],
          model_patch: 'diff',
          grade: { patch_applied: true, resolved: true, build_failures: [] },
        }),
        att({
          run: long,
          mode: 'multi',
          instance_id: 'free5gc__udm-85',
          files_named: ['a.go'],
          model_patch: 'diff',
          grade: { patch_applied: true, resolved: true, build_failures: [] },
        }),
        att({ run: 'm single', instance_id: 'free5gc__udm-85', files_named: ['a.go'] }),
      ],
      true,
    );
  });

  it('an all-zero funnel says so in the figure, not as an empty frame with a 0.000000 tick', () => {
    const f = zero.page.figures.funnel!;
    expect(zero.page.consoleErrors).toEqual([]);
    expect(f.texts).toContain(
      'every count is 0: no attempt of the 1 run was diagnosed, applied or resolved',
    );
    expect(f.texts.some((t) => /^0\.0+$/.test(t))).toBe(false);
    expect(zero.page.text).toContain('The figure is empty because every count is 0');
  });

  it('one attempt is "1 attempt over 1 instance"', () => {
    expect(zero.page.text).toContain('1 attempt over 1 instance.');
    expect(zero.markdown).toContain('1 attempt over 1 instance.');
    expect(data.page.text).toContain('3 attempts over 2 instances.');
  });

  it('Table VI with skills off says why it is empty (no bare header)', () => {
    const why =
      'No A/B pair: skills are off in this configuration (`swe5g.evaluation.skills.enabled: false`)';
    expect(zero.page.text).toContain(why);
    expect(zero.markdown).toContain(why);
    expect(zero.markdown).not.toContain('| model | specification | instances |');
    // skills on, but no attempt ran with one: another reason
    expect(data.page.text).toContain('No A/B pair: no attempt ran with a skill');
  });

  it('counts on an integer axis, steps named in order without prefixes, legend labels whole', () => {
    const f = data.page.figures.funnel!;
    expect(data.page.consoleErrors).toEqual([]);
    expect(f.marks).toBe(6); // 3 steps x 2 runs
    const ticks = f.texts.filter((t) => /^\d+(\.\d+)?$/.test(t));
    expect(ticks.length).toBeGreaterThan(1);
    for (const t of ticks) expect(t).toMatch(/^\d+$/);
    expect(f.texts).toEqual(expect.arrayContaining(['diagnosed', 'patch applied', 'resolved']));
    expect(f.texts.some((t) => /^\d diagnosed$/.test(t))).toBe(false);
    expect(f.texts).toContain('qwen2.5-coder:32b-instruct-q4_K_M multi +skill');
    expect(f.cut).toBe(false);
  });
});
