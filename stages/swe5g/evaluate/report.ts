/**
 * `telebench report swe5g-eval`: Markdown on stdout and one self-contained HTML page
 * (`<state>/swe5g-eval/report.html`, pipeline/report) with the funnel figure (paper Fig. 3), the
 * failure stages (Table V), the resolve rate by bug category (Table IV), single- against
 * multi-turn, tokens, and the skills A/B (Table VI). Rules of every number: metrics.ts.
 */
import { isComplete, withCurrentStatement } from '../statement/current.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { StageContext } from '../../../pipeline/stage.js';
import {
  renderReportPage,
  type ReportPage,
  type ReportSection,
} from '../../../pipeline/report/html.js';
import type { HasSwe5g } from '../config.js';
import { validateStage, type Validated } from '../validate/validate.js';
import { swe5gSettings } from '../config.js';
import { byCategory, failureStage, skillsAB, summarize, type Attempt } from './metrics.js';
import { patchPaths } from './grade.js';
import type { GradeInput, GradeOutput, SkillOutput, SolveOutput } from './stages.js';
import {
  allZeroText,
  countOf,
  funnelSpec,
  markdownTable as md,
  whySkillsEmpty,
  type ReportTable as Table,
} from './report-view.js';
import { evalSelection, gradeStage, skillsStage, solveStage } from './stages.js';
import { windowLine } from './window.js';

/**
 * How a report names the predictions file of an external row: `<file name>@<first 8 hex of its
 * sha256>` (two files, or two versions of one file, are two runs), or `predictions file` for rows
 * graded before files were told apart.
 */
export function predictionsLabel(origin: GradeInput['origin']): string {
  if (!origin?.digest) return 'predictions file';
  return `${basename(origin.file)}@${origin.digest.slice(0, 8)}`;
}

/** Reads every attempt of the state (solves with their grades, external grades). */
export function collectAttempts(ctx: StageContext<HasSwe5g>): Attempt[] {
  const inst = new Map<string, Validated>();
  for (const o of ctx.store.outputs(validateStage)) inst.set(o.key, o.output);
  const grades = new Map<string, GradeOutput>();
  const gradeInputs = new Map<string, GradeInput>();
  for (const o of ctx.store.outputs(gradeStage)) {
    grades.set(o.key, o.output);
    gradeInputs.set(o.key, o.input);
  }
  const out: Attempt[] = [];
  for (const rec of ctx.store.items(solveStage)) {
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
    const input = gradeInputs.get(key);
    // the instance the grade was made on (with `--dataset` a released row: its gold patch and
    // bug category; a fresh state has no validate output), else the state's validated record
    const v = input?.instance ?? inst.get(g.instance_id);
    const patch = input?.model_patch ?? '';
    out.push({
      run: `${g.model_name_or_path} (${predictionsLabel(input?.origin)})`,
      model: g.model_name_or_path,
      mode: 'external',
      condition: 'none',
      instance_id: g.instance_id,
      bug_category: v?.bug_category ?? 'other',
      gold_patch: v?.patch ?? '',
      excluded: null,
      files_named: patchPaths(patch),
      last_edits: [],
      last_blocks: 0,
      model_patch: patch,
      grade: g,
      tokens: 0,
      skill_spec: null,
      turns: 0,
    });
  }
  return out;
}

/**
 * Why a state has no graded attempt, as sentences a user can act on, checked in pipeline order:
 * no complete instance (none validated; validated by an older `swe5g.validate` version; validated
 * but without a problem statement), none in the date window (`--after`), no target (no `swe5g.evaluation.models` and no predictions file
 * graded), nothing finished (solves pending, failed or skipped, grades missing or failed).
 * @returns one or more sentences; never empty
 */
export function whyNothingGraded(ctx: StageContext<HasSwe5g>): string[] {
  const out: string[] = [];
  const validate = [...ctx.store.items(validateStage)];
  const current = validate.filter(
    (r) => r.state === 'done' && r.stageVersion === validateStage.version,
  );
  const now = withCurrentStatement(ctx.store);
  const complete = current.filter((r) => isComplete(now(r.output as Validated)));
  if (complete.length === 0) {
    if (validate.length === 0)
      out.push(
        'No instances: this state has no validated SWE-Bench 5G instance (run `telebench run swe5g` first).',
      );
    else {
      const older = validate.filter(
        (r) => r.state === 'done' && r.stageVersion !== validateStage.version,
      ).length;
      const notDone = validate.filter((r) => r.state !== 'done' && r.state !== 'orphaned');
      const parts = [
        `No instances: none of the ${validate.length} \`swe5g.validate\` items is a complete instance.`,
      ];
      if (older)
        parts.push(
          `${older} were validated by an older version of the stage (stored v${validate.find((r) => r.stageVersion !== validateStage.version)!.stageVersion}, current v${validateStage.version}): run \`telebench run swe5g\` to validate them again.`,
        );
      if (current.length)
        parts.push(
          `${current.length} validated without a problem statement (git-only): complete them with \`telebench mine --issues-from FILE\`, then run \`telebench run swe5g\`.`,
        );
      if (notDone.length)
        parts.push(
          `${notDone.length} not validated (${countBy(notDone.map((r) => r.skipReason ?? r.state))}).`,
        );
      out.push(parts.join(' '));
    }
    return out;
  }
  // a date window that keeps none of the complete instances: nothing to solve or grade in it
  const { window } = evalSelection(ctx);
  if (window && window.kept === 0) {
    out.push(
      `Nothing in the date window: ${windowLine(window)} Nothing is solved or graded outside it: give an earlier \`--after\` date (or \`swe5g.evaluation.after\`), or none.`,
    );
    return out;
  }
  const models = swe5gSettings(ctx.config).evaluation.models;
  const solves = [...ctx.store.items(solveStage)].filter((r) => r.state !== 'orphaned');
  const grades = [...ctx.store.items(gradeStage)].filter((r) => r.state !== 'orphaned');
  const external = grades.filter((r) => (r.input as GradeInput | undefined)?.source === 'external');
  if (models.length === 0 && external.length === 0) {
    out.push(
      `No targets: ${complete.length} complete instance(s), but \`swe5g.evaluation.models\` is empty and no predictions file was graded (add a model, or run \`telebench evaluate --predictions FILE\`).`,
    );
    return out;
  }
  const parts = [`Nothing finished: ${complete.length} complete instance(s)`];
  parts.push(
    solves.length === 0
      ? 'no solve has run yet (run `telebench run swe5g-eval`)'
      : `solves ${countBy(solves.map((r) => (r.state === 'skipped' ? `skipped ${r.skipReason}` : r.state)))}`,
  );
  if (grades.length)
    parts.push(
      `grades ${countBy(grades.map((r) => (r.state === 'skipped' ? `skipped ${r.skipReason}` : r.state)))}`,
    );
  else if (solves.some((r) => r.state === 'done'))
    parts.push('no grade yet (run `telebench run swe5g-eval` again)');
  const failed = [...solves, ...grades].find((r) => r.state === 'failed');
  if (failed)
    parts.push(
      `first failure: ${failed.stage} ${failed.key}: ${String((failed.error as { message?: string } | null)?.message ?? 'no message')}`,
    );
  out.push(`${parts.join('; ')}.`);
  return out;
}

const countBy = (xs: readonly string[]): string => {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return [...m.entries()].map(([k, n]) => `${n} ${k}`).join(', ');
};

/**
 * The skills table: per instance the writer of the skill in use, its tokens, and a model-written
 * skill's rejection (its check's problems) or an instance without a skill (the skip reason).
 */
export function skillsTable(ctx: StageContext<HasSwe5g>): Table {
  const rows: string[][] = [];
  for (const r of ctx.store.items(skillsStage)) {
    if (r.state === 'done') {
      const o = r.output as SkillOutput;
      const a = o.model_attempt;
      rows.push([
        r.key,
        o.spec,
        o.writer,
        String(o.check.tokens),
        a
          ? a.check.ok
            ? `${a.model}: accepted`
            : `${a.model}: rejected (${a.check.problems.join('; ')})`
          : '-',
      ]);
    } else if (r.state === 'skipped' && r.skipReason !== 'no_spec_refs')
      rows.push([r.key, '-', 'none', '-', `${r.skipReason}: ${r.skipDetail ?? ''}`]);
  }
  return {
    title: 'Specification skills (writer in use; model-written skills that failed a check)',
    header: ['instance', 'specification', 'writer', 'tokens', 'model-written skill'],
    rows,
  };
}

const pct = (a: number, b: number): string => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(1)}%`);
const num = (x: number | null, d = 1): string => (x === null ? 'n/a' : x.toFixed(d));

/**
 * How an attempt's patch went in: the grade's `patch_method` (harness/apply.ts), `git apply` /
 * `not applied` for grades made before it was recorded, `-` when not graded.
 */
function patchMethod(a: Attempt): string {
  if (!a.grade) return '-';
  return a.grade.patch_method ?? (a.grade.patch_applied ? 'git apply' : 'not applied');
}

/** The report's tables as header + rows (shared by Markdown and HTML). */
export function reportTables(
  attempts: readonly Attempt[],
  opts: { skillsEnabled?: boolean } = {},
): Table[] {
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
  const skills: Table = {
    empty: whySkillsEmpty(attempts, opts.skillsEnabled ?? true),
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
  const each = {
    title: 'Where each attempt failed (earliest failing stage; rule in metrics.ts)',
    header: ['run', 'instance', 'category', 'turns', 'outcome', 'patch applied with'],
    rows: attempts.map((a) => [
      a.run,
      a.instance_id,
      a.bug_category,
      String(a.turns),
      a.excluded !== null
        ? `excluded (${a.excluded})`
        : a.grade?.resolved
          ? 'resolved'
          : (failureStage(a) ?? 'not graded'),
      patchMethod(a),
    ]),
  };
  const methods = new Map<string, number>();
  for (const a of attempts) {
    if (!a.grade) continue;
    const k = `${a.run}\u0000${patchMethod(a)}`;
    methods.set(k, (methods.get(k) ?? 0) + 1);
  }
  const applyMethods = {
    title:
      "How the model patches went in (SWE-bench's chain: git apply, --3way, --reject, patch --fuzz=5; empty = nothing to apply)",
    header: ['run', 'method', 'attempts'],
    rows: [...methods]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => [...k.split('\u0000'), String(n)]),
  };
  return [funnel, stages, each, applyMethods, byCat, modes, skills];
}

/**
 * Markdown report; writes the HTML page beside the state.
 * @returns the Markdown text (ends with the HTML page's path)
 * @throws TelebenchError `chart_render_failed` from the HTML renderer
 */
export async function swe5gEvalMarkdown(ctx: StageContext<HasSwe5g>): Promise<string> {
  // with a date window (`--after`), only the instances it kept are scored
  const { instances, window } = evalSelection(ctx);
  const attempts = collectAttempts(ctx).filter((a) => !window || instances.has(a.instance_id));
  const file = join(ctx.stateDir, 'swe5g-eval', 'report.html');
  mkdirSync(join(ctx.stateDir, 'swe5g-eval'), { recursive: true });
  if (attempts.length === 0) {
    const why = whyNothingGraded(ctx);
    writeFileSync(
      file,
      await renderReportPage({
        title: 'SWE-Bench 5G evaluation',
        intro: `Nothing graded. ${why.join(' ')}`,
        sections: [],
      }),
    );
    return [
      '## SWE-Bench 5G evaluation',
      '',
      'Nothing graded yet, so no table:',
      '',
      ...(window ? [`- ${windowLine(window)}`] : []),
      ...why.map((w) => `- ${w}`),
      '',
      `HTML report: ${file}`,
      '',
    ].join('\n');
  }
  const view = evalReport(attempts, {
    skills: skillsTable(ctx),
    skillsEnabled: swe5gSettings(ctx.config).evaluation.skills.enabled,
    window: window ? windowLine(window) : null,
  });
  writeFileSync(file, await renderReportPage(view.page));
  return `${view.markdown}HTML report with the funnel figure: ${file}\n`;
}

/**
 * The report of graded attempts: the HTML page (funnel figure, then one section per table; an
 * empty table is a sentence saying why) and the same tables in Markdown. Pure.
 * @param opts.skills the skills table (skillsTable), left out when it has no row
 * @param opts.skillsEnabled `swe5g.evaluation.skills.enabled` (Table VI says so when off)
 * @param opts.window the date window's sentence (window.ts `windowLine`), null without one
 */
export function evalReport(
  attempts: readonly Attempt[],
  opts: { skills: Table; skillsEnabled: boolean; window?: string | null },
): { page: ReportPage; markdown: string } {
  const tables = [
    ...reportTables(attempts, { skillsEnabled: opts.skillsEnabled }),
    ...(opts.skills.rows.length ? [opts.skills] : []),
  ];
  const instances = new Set(attempts.map((a) => a.instance_id)).size;
  const counted =
    `${countOf(attempts.length, 'attempt')} over ${countOf(instances, 'instance')}.` +
    (opts.window ? ` ${opts.window}` : '');
  const sums = summarize(attempts);
  const sections: ReportSection[] = [
    {
      title: 'Funnel',
      blocks: [
        {
          kind: 'figure',
          id: 'funnel',
          caption:
            'Instances per run at each step: bug diagnosed (a block names a file the gold patch changes), patch applied, resolved.' +
            (sums.every((s) => s.diagnosed + s.applied + s.resolved === 0)
              ? ` The figure is empty because ${allZeroText(sums.length)}.`
              : ''),
          spec: funnelSpec(sums) as never,
        },
      ],
    },
    ...tables.map((t) => ({
      title: t.title,
      blocks: [
        {
          kind: 'table' as const,
          header: t.header,
          rows: t.rows,
          ...(t.empty ? { empty: t.empty } : {}),
        },
      ],
    })),
  ];
  return {
    page: {
      title: 'SWE-Bench 5G evaluation',
      intro: `${counted} Rules: stages/swe5g/evaluate/metrics.ts.`,
      sections,
    },
    markdown: ['## SWE-Bench 5G evaluation', '', counted, '', ...tables.map(md)].join('\n'),
  };
}
