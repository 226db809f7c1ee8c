/**
 * What the SWE-Bench 5G evaluation report shows a reader, apart from the store reads of
 * report.ts: the funnel figure (paper Fig. 3) as a Vega-Lite spec, why an empty table is empty,
 * and count words. Pure.
 *
 * Reading rules (issue 26): counts get integer axes (no 0.2 steps of instances); an all-zero
 * figure says so in place, over its empty frame; step labels are the steps' names in pipeline
 * order, unrotated and without sort prefixes; legend labels are never cut.
 */
import type { Attempt, RunSummary } from './metrics.js';

/** `1 attempt`, `2 attempts`. Pure. */
export function countOf(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}

/** The funnel's steps in pipeline order, as the axis names them. */
export const FUNNEL_STEPS = ['diagnosed', 'patch applied', 'resolved'] as const;

/**
 * Vega-Lite spec of the funnel: grouped bars per run over the three steps, instances on an
 * integer axis; when every count is 0, a line over the frame says so.
 * @param sums the runs' summaries (metrics.ts `summarize`)
 */
export function funnelSpec(sums: readonly RunSummary[]): Record<string, unknown> {
  const values = sums.flatMap((s) => [
    { run: s.run, step: FUNNEL_STEPS[0], n: s.diagnosed },
    { run: s.run, step: FUNNEL_STEPS[1], n: s.applied },
    { run: s.run, step: FUNNEL_STEPS[2], n: s.resolved },
  ]);
  const max = Math.max(1, ...values.map((v) => v.n));
  const bars = {
    mark: 'bar',
    encoding: {
      x: {
        field: 'step',
        type: 'nominal',
        title: null,
        sort: [...FUNNEL_STEPS],
        axis: { labelAngle: 0 },
      },
      xOffset: { field: 'run', type: 'nominal' },
      y: {
        field: 'n',
        type: 'quantitative',
        title: 'instances',
        scale: { domain: [0, max] },
        axis: { tickMinStep: 1, format: 'd' },
      },
      color: {
        field: 'run',
        type: 'nominal',
        legend: { orient: 'bottom', direction: 'vertical', labelLimit: 0, title: 'run' },
      },
    },
  };
  const allZero = values.every((v) => v.n === 0);
  const note = {
    data: { values: [{ text: allZeroText(sums.length) }] },
    mark: { type: 'text', fontSize: 13, color: '#444' },
    encoding: {
      text: { field: 'text', type: 'nominal' },
      x: { value: 240 },
      y: { value: 100 },
    },
  };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 480,
    height: 240,
    data: { values },
    ...(allZero ? { layer: [bars, note] } : bars),
  };
}

/** The line an all-zero funnel shows in place of bars. Pure. */
export function allZeroText(runs: number): string {
  return `every count is 0: no attempt of the ${countOf(runs, 'run')} was diagnosed, applied or resolved`;
}

/**
 * Why Table VI (skills A/B) has no row, as a sentence: skills off in the configuration; no
 * attempt ran with a skill (and why, from the excluded skill attempts); or no instance has both
 * conditions graded.
 * @param skillsEnabled `swe5g.evaluation.skills.enabled`
 */
export function whySkillsEmpty(attempts: readonly Attempt[], skillsEnabled: boolean): string {
  if (!skillsEnabled)
    return 'No A/B pair: skills are off in this configuration (`swe5g.evaluation.skills.enabled: false`), so no attempt ran with a skill.';
  const skill = attempts.filter((a) => a.condition === 'skill');
  if (skill.length === 0)
    return 'No A/B pair: no attempt ran with a skill (no instance of the A/B subset has an accepted skill, or its solves have not run yet).';
  const excluded = skill.filter((a) => a.excluded !== null);
  if (excluded.length === skill.length)
    return `No A/B pair: every attempt with a skill was excluded (${excluded.map((a) => `${a.instance_id} ${a.mode}: ${a.excluded}`).join('; ')}).`;
  return 'No A/B pair: no instance has both its attempt without and with the skill graded in the same mode yet.';
}

/** A report table; `empty` says why it has no row. */
export interface ReportTable {
  title: string;
  header: string[];
  rows: string[][];
  empty?: string;
}

/** A table in Markdown, or its `empty` sentence when it has no row. Pure. */
export const markdownTable = (t: ReportTable): string =>
  [
    `### ${t.title}`,
    '',
    ...(t.rows.length
      ? [
          `| ${t.header.join(' | ')} |`,
          `|${t.header.map(() => '---').join('|')}|`,
          ...t.rows.map((r) => `| ${r.join(' | ')} |`),
        ]
      : [t.empty ?? 'No row yet.']),
    '',
  ].join('\n');
