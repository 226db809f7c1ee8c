/**
 * `telebench report swe5g-eval`: Markdown on stdout and one self-contained HTML page
 * (`<state>/swe5g-eval/report.html`, pipeline/report) with the funnel figure (paper Fig. 3), the
 * failure stages (Table V), the resolve rate by bug category (Table IV), single- against
 * multi-turn, tokens, and the skills A/B (Table VI). Rules of every number: metrics.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StageContext } from '../../../pipeline/stage.js';
import { renderReportPage, type ReportSection } from '../../../pipeline/report/html.js';
import type { HasSwe5g } from '../config.js';
import type { Validated } from '../validate/validate.js';
import { byCategory, skillsAB, summarize, type Attempt, type RunSummary } from './metrics.js';
import { patchPaths } from './grade.js';
import type { GradeOutput, SolveOutput } from './stages.js';

/** Reads every attempt of the state (solves with their grades, external grades). */
export function collectAttempts(ctx: StageContext<HasSwe5g>): Attempt[] {
  const inst = new Map<string, Validated>();
  for (const o of ctx.store.outputs<Validated>('swe5g.validate')) inst.set(o.key, o.output);
  const grades = new Map<string, GradeOutput>();
  for (const o of ctx.store.outputs<GradeOutput>('swe5g.eval.grade')) grades.set(o.key, o.output);
  const out: Attempt[] = [];
  for (const rec of ctx.store.items('swe5g.eval.solve')) {
    if (rec.state !== 'done' && rec.state !== 'skipped') continue;
    const input = rec.input as {
      instance: { instance_id: string; bug_category: string; patch: string };
      model: { name: string };
      mode: 'single' | 'multi';
      condition: 'none' | 'skill';
      skill: { spec: string } | null;
    };
    const s = rec.state === 'done' ? (rec.output as SolveOutput) : null;
    const g = grades.get(rec.key);
    if (s && !g) continue; // solved, not graded yet
    const last = s?.turns.at(-1);
    out.push({
      run: `${input.model.name} ${input.mode}${input.condition === 'skill' ? ' +skill' : ''}`,
      model: input.model.name,
      mode: input.mode,
      condition: input.condition,
      instance_id: input.instance.instance_id,
      bug_category: input.instance.bug_category,
      gold_patch: input.instance.patch,
      excluded: s ? null : (rec.skipReason ?? 'skipped'),
      files_named: s ? [...new Set(s.turns.flatMap((t) => t.edits.map((e) => e.file)))] : [],
      last_edits: last?.edits ?? [],
      last_blocks: last?.blocks ?? 0,
      model_patch: s?.model_patch ?? '',
      grade: g ?? null,
      tokens: s ? s.tokens.prompt + s.tokens.output : 0,
      skill_spec: input.skill?.spec ?? null,
      turns: s?.turns.length ?? 0,
    });
  }
  for (const [key, g] of grades) {
    if (g.source !== 'external') continue;
    const v = inst.get(g.instance_id);
    out.push({
      run: `${g.model_name_or_path} (predictions file)`,
      model: g.model_name_or_path,
      mode: 'external',
      condition: 'none',
      instance_id: g.instance_id,
      bug_category: v?.bug_category ?? 'other',
      gold_patch: v?.patch ?? '',
      excluded: null,
      files_named: patchPaths(
        (ctx.store.item('swe5g.eval.grade', key)?.input as { model_patch?: string })?.model_patch ??
          '',
      ),
      last_edits: [],
      last_blocks: 0,
      model_patch:
        (ctx.store.item('swe5g.eval.grade', key)?.input as { model_patch?: string })?.model_patch ??
        '',
      grade: g,
      tokens: 0,
      skill_spec: null,
      turns: 0,
    });
  }
  return out;
}

const pct = (a: number, b: number): string => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(1)}%`);
const num = (x: number | null, d = 1): string => (x === null ? 'n/a' : x.toFixed(d));

/** The report's tables as header + rows (shared by Markdown and HTML). */
export function reportTables(attempts: readonly Attempt[]): {
  title: string;
  header: string[];
  rows: string[][];
}[] {
  const sums = summarize(attempts);
  const funnel = {
    title: 'Funnel per run (paper Fig. 3): diagnosed -> patch applied -> resolved',
    header: ['run', 'attempted', 'excluded', 'diagnosed', 'applied', 'resolved', 'resolve rate'],
    rows: sums.map((s) => [
      s.run,
      String(s.attempted),
      String(s.excluded),
      `${s.diagnosed} (${pct(s.diagnosed, s.attempted)})`,
      `${s.applied} (${pct(s.applied, s.attempted)})`,
      `${s.resolved}`,
      pct(s.resolved, s.attempted),
    ]),
  };
  const stages = {
    title: 'Failure stage per instance (paper Table V; earliest stage that failed)',
    header: ['run', 'format', 'apply', 'compile', 'incomplete', 'resolved', 'excluded'],
    rows: sums.map((s) => [
      s.run,
      String(s.stages.format),
      String(s.stages.apply),
      String(s.stages.compile),
      String(s.stages.incomplete),
      String(s.resolved),
      String(s.excluded),
    ]),
  };
  const cats = byCategory(attempts);
  const catNames = [...new Set(cats.map((c) => c.category))].sort();
  const byCat = {
    title: 'Resolve rate by bug category (paper Table IV)',
    header: ['run', ...catNames, 'average'],
    rows: sums.map((s) => [
      s.run,
      ...catNames.map((c) => {
        const cell = cats.find((x) => x.run === s.run && x.category === c);
        return cell
          ? `${pct(cell.resolved, cell.attempted)} (${cell.resolved}/${cell.attempted})`
          : '-';
      }),
      pct(s.resolved, s.attempted),
    ]),
  };
  const modes = {
    title: 'Single- against multi-turn, and tokens',
    header: ['run', 'mode', 'mean turns', 'tokens (total)', 'tokens per instance', 'resolved'],
    rows: sums.map((s) => [
      s.run,
      s.mode,
      num(s.turns_mean, 2),
      String(s.tokens_total),
      num(s.tokens_mean, 0),
      `${s.resolved}/${s.attempted}`,
    ]),
  };
  const ab = skillsAB(attempts);
  const skills = {
    title: 'Specification as skill, A/B (paper Table VI)',
    header: ['model', 'specification', 'instances', 'Pass-', 'Pass+', 'dP', 'C+ (tokens)', 'rho'],
    rows: ab.map((r) => [
      r.model,
      r.spec,
      String(r.instances),
      r.pass_minus === null ? 'n/a' : pct(r.pass_minus, 1),
      r.pass_plus === null ? 'n/a' : pct(r.pass_plus, 1),
      r.delta === null ? 'n/a' : `${r.delta >= 0 ? '+' : ''}${(100 * r.delta).toFixed(1)}%`,
      num(r.cost_plus, 0),
      r.overhead === null ? 'n/a' : `${(100 * r.overhead).toFixed(1)}%`,
    ]),
  };
  return [funnel, stages, byCat, modes, skills];
}

/** Vega-Lite spec of the funnel: grouped bars per run over the three steps. */
export function funnelSpec(sums: readonly RunSummary[]): Record<string, unknown> {
  const values = sums.flatMap((s) => [
    { run: s.run, step: '1 diagnosed', n: s.diagnosed },
    { run: s.run, step: '2 patch applied', n: s.applied },
    { run: s.run, step: '3 resolved', n: s.resolved },
  ]);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 480,
    height: 240,
    data: { values },
    mark: 'bar',
    encoding: {
      x: { field: 'step', type: 'nominal', title: null, sort: null },
      xOffset: { field: 'run', type: 'nominal' },
      y: { field: 'n', type: 'quantitative', title: 'instances' },
      color: { field: 'run', type: 'nominal' },
    },
  };
}

const md = (t: { title: string; header: string[]; rows: string[][] }): string =>
  [
    `### ${t.title}`,
    '',
    `| ${t.header.join(' | ')} |`,
    `|${t.header.map(() => '---').join('|')}|`,
    ...(t.rows.length
      ? t.rows.map((r) => `| ${r.join(' | ')} |`)
      : [`| ${t.header.map(() => '').join(' | ')} |`]),
    '',
  ].join('\n');

/**
 * Markdown report; writes the HTML page beside the state.
 * @returns the Markdown text (ends with the HTML page's path)
 * @throws TelebenchError `chart_render_failed` from the HTML renderer
 */
export async function swe5gEvalMarkdown(ctx: StageContext<HasSwe5g>): Promise<string> {
  const attempts = collectAttempts(ctx);
  const tables = reportTables(attempts);
  const sums = summarize(attempts);
  const file = join(ctx.stateDir, 'swe5g-eval', 'report.html');
  const sections: ReportSection[] = [
    {
      title: 'Funnel',
      blocks: [
        {
          kind: 'figure',
          id: 'funnel',
          caption:
            'Instances per run at each step: bug diagnosed (a block names a file the gold patch changes), patch applied, resolved.',
          spec: funnelSpec(sums) as never,
        },
      ],
    },
    ...tables.map((t) => ({
      title: t.title,
      blocks: [{ kind: 'table' as const, header: t.header, rows: t.rows }],
    })),
  ];
  mkdirSync(join(ctx.stateDir, 'swe5g-eval'), { recursive: true });
  writeFileSync(
    file,
    await renderReportPage({
      title: 'SWE-Bench 5G evaluation',
      intro: `${attempts.length} attempts over ${new Set(attempts.map((a) => a.instance_id)).size} instances. Rules: stages/swe5g/evaluate/metrics.ts.`,
      sections,
    }),
  );
  return [
    '## SWE-Bench 5G evaluation',
    '',
    attempts.length === 0
      ? 'No graded attempt yet (run `telebench run swe5g-eval` or `telebench evaluate --predictions FILE`).'
      : `${attempts.length} attempts over ${new Set(attempts.map((a) => a.instance_id)).size} instances.`,
    '',
    ...tables.map(md),
    `HTML report with the funnel figure: ${file}`,
    '',
  ].join('\n');
}
