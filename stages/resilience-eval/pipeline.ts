/**
 * The `resilience-eval` pipeline (`telebench run resilience-eval`) and its report
 * (`telebench report resilience-eval`): Markdown on stdout and one self-contained HTML page at
 * `<state>/reports/resilience-eval.html` with Table I per parse mode and figures like the paper's
 * Figures 3-7 (CFR per subset, CFR against mean output tokens, CFR against VRAM, CFR by
 * difficulty).
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { notStarted } from '../../pipeline/cli/reports.js';
import type { Pipeline, StageContext } from '../../pipeline/stage.js';
import { renderReportPage, type ReportBlock } from '../../pipeline/report/html.js';
import {
  constructionDigest,
  evalStages,
  reportPath,
  type EvalInstancesInput,
  type EvalInstancesOutput,
  type EvalScoreOutput,
  evalScore,
  evalContinue,
  evalInstances,
} from './stages.js';
import { fmtRate } from './metrics.js';
import {
  DETAIL_HEADER,
  RATES_LEGEND,
  detailRows,
  detailTable,
  macroNotes,
  tableOne,
} from './tables.js';
import { PARSE_MODES, type ParseMode } from './parse-modes.js';
import { paperFigures, tableOneBlock, type FigureModel } from './figures.js';
import { evalSettings, type HasResilienceEval } from './config.js';
import { resilienceTruncate } from '../resilience/truncate.js';

/** The targets as the figures take them (VRAM in GiB, measured). */
const figureModels = (scores: readonly EvalScoreOutput[], mode: ParseMode): FigureModel[] =>
  scores.map((s) => ({
    model: s.target,
    m: s.modes[mode],
    vram: s.vram.bytes === null ? null : s.vram.bytes / 2 ** 30,
    vram_method: s.vram.method,
  }));

const scoresOf = (ctx: StageContext<unknown>): EvalScoreOutput[] =>
  [...ctx.store.outputs(evalScore)].map((o) => o.output);

/**
 * Why `stage` did not start in the newest run whose event log says so (`<state>/runs/<id>/
 * events.jsonl`), or null. Only asked when the stage has no item at all.
 */
function whyNotStarted(ctx: StageContext<HasResilienceEval>, stage: string): string | null {
  const runs = join(ctx.stateDir, 'runs');
  if (!existsSync(runs)) return null;
  const logs = readdirSync(runs)
    .map((id) => join(runs, id, 'events.jsonl'))
    .filter((f) => existsSync(f))
    .sort((x, y) => statSync(y).mtimeMs - statSync(x).mtimeMs);
  for (const f of logs) {
    const why = notStarted(f)[stage];
    if (why) return why;
  }
  return null;
}

const errorText = (e: Record<string, unknown> | null): string =>
  e
    ? `${typeof e.code === 'string' ? `${e.code}: ` : ''}${String(e.message ?? 'unknown error')}`
    : 'unknown error';

/**
 * Why there is no score to report, naming the real cause: the instances stage never started (and
 * why, from the last run's event log: construction stopped at preflight, ...), reading the input
 * failed (the error, e.g. `input_missing`, `hub_unreachable`), the input or the construction held
 * no instance, no target is configured, or no continuation finished (failed items with their
 * error codes, or the stage not started and why). Pure over the store and the event logs.
 * @returns one Markdown paragraph
 */
export function whyNoScores(ctx: StageContext<HasResilienceEval>): string {
  const cfg = evalSettings(ctx.config);
  const src = cfg.input.source;
  const where =
    src === 'project'
      ? 'the construction (resilience.truncate)'
      : src === 'hub'
        ? `the Hub files ${cfg.input.hub.files.join(', ')} of ${cfg.input.hub.dataset}@${cfg.input.hub.revision}`
        : `the input files ${cfg.input.files.join(', ') || '(none listed in resilience_eval.input.files)'}`;
  const rec = [...ctx.store.items(evalInstances)][0];
  if (!rec) {
    const why = whyNotStarted(ctx, 'resilience-eval.instances');
    if (why) return `No instances to evaluate: resilience-eval.instances ${why}.`;
    if (src === 'project') {
      const built = [...ctx.store.outputs(resilienceTruncate)].length;
      if (built === 0)
        return 'No instances to evaluate: the construction has produced none in this state folder (resilience.truncate has no output; see `telebench report resilience` for its funnel). Run `telebench run resilience`, or evaluate published files (resilience_eval.input.source: file or hub).';
    }
    return `No instances read yet from ${where}: run \`telebench run resilience-eval\`.`;
  }
  if (rec.state === 'failed')
    return `No instances to evaluate: reading ${where} failed (${errorText(rec.error)}); fix the input and run \`telebench run resilience-eval --retry-failed\`.`;
  if (rec.state !== 'done')
    return `No instances to evaluate yet: resilience-eval.instances is ${rec.state}; run \`telebench run resilience-eval\`.`;
  const n = (rec.output as EvalInstancesOutput).instances.length;
  if (n === 0) {
    const files = (rec.input as EvalInstancesInput).files;
    return src === 'project'
      ? 'No instances to evaluate: the construction produced none (every generated answer was skipped or right; see the funnel in `telebench report resilience`).'
      : `No instances to evaluate: ${files.length ? `the input files ${files.join(', ')}` : where} hold no rows.`;
  }
  if (cfg.targets.length === 0)
    return `${n} instances read from ${where}, but no target model is configured: add \`resilience_eval.targets\` and run \`telebench run resilience-eval\`.`;
  const cont = [...ctx.store.items(evalContinue)];
  const done = cont.filter((c) => c.state === 'done').length;
  if (done === 0) {
    const failed = cont.filter((c) => c.state === 'failed');
    if (failed.length) {
      const codes = new Map<string, number>();
      for (const f of failed) {
        const code = String(f.error?.code ?? 'unknown');
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
      return `${n} instances, but no continuation finished: ${failed.length} failed (${[...codes].map(([c, k]) => `${k} ${c}`).join(', ')}; first: ${errorText(failed[0]!.error)}); run again with \`--retry-failed\`.`;
    }
    const why = whyNotStarted(ctx, 'resilience-eval.continue');
    return `${n} instances, but no continuation ran${why ? `: resilience-eval.continue ${why}` : ''}; run \`telebench run resilience-eval\`.`;
  }
  return `${done} continuations done, but not scored yet: run \`telebench run resilience-eval\` (resilience-eval.score).`;
}

/**
 * Rows of one target whose prompt was cut, context shifted or budget exhausted, over every
 * subset it answered (the seven discrete ones, TeleMath and any other loaded subset), so the
 * summary agrees with the per-subset tables' "cut prompt or budget exhausted" column. Parse-mode independent.
 */
function cutRowsOf(s: EvalScoreOutput): number {
  return Object.values(s.modes.lenient.by_subset).reduce((a, g) => a + g.cut_rows, 0);
}

/** Markdown of the evaluation. Pure over the store. */
export function evalMarkdown(
  scores: readonly EvalScoreOutput[],
  htmlPath: string | null,
  empty = 'No target scored yet: run `telebench run resilience-eval`.',
): string {
  const out = ['# TeleResilienceBench evaluation', ''];
  if (!scores.length) {
    out.push(empty);
    if (htmlPath) out.push('', `HTML report: ${htmlPath}`);
    return `${out.join('\n')}\n`;
  }
  for (const s of scores) {
    out.push(
      `- ${s.target} (${s.model}, profile ${s.profile}${s.num_ctx ? `, num_ctx ${s.num_ctx}` : ''}): ${s.rows} replies, ${s.failed} failed items; VRAM ${s.vram.bytes === null ? 'unavailable' : `${(s.vram.bytes / 2 ** 30).toFixed(2)} GiB`} (${s.vram.method}: ${s.vram.detail}); rows with a cut prompt, context shift or exhausted budget: ${cutRowsOf(s)}.`,
    );
  }
  out.push('', RATES_LEGEND);
  for (const mode of PARSE_MODES) {
    const entries = scores.map((s) => ({ model: s.target, m: s.modes[mode] }));
    out.push('', `## Table I, ${mode} parse`, '', ...tableOne(entries), '');
    for (const n of macroNotes(entries)) out.push(`- ${n}`);
    const tm = entries.filter((e) => e.m.telemath);
    if (tm.length)
      out.push(
        '',
        `TeleMath CR%: ${tm.map((e) => `${e.model} ${fmtRate(e.m.telemath!.cfr)}`).join('; ')}.`,
      );
    for (const e of entries) out.push('', `### ${e.model} (${mode})`, '', ...detailTable(e.m));
  }
  if (htmlPath) out.push('', `HTML report: ${htmlPath}`);
  return `${out.join('\n')}\n`;
}

/**
 * When the evaluation read the project's instances and construction has changed them since
 * (more or other instances), one sentence saying so; else null.
 */
export function staleNote(ctx: StageContext<HasResilienceEval>): string | null {
  if (evalSettings(ctx.config).input.source !== 'project') return null;
  const item = ctx.store.item(evalInstances, 'instances');
  if (item?.state !== 'done') return null;
  const read = (item.input as { construction?: string | null } | null)?.construction;
  if (read === constructionDigest(ctx.store)) return null;
  const now = [...ctx.store.outputs(resilienceTruncate)].length;
  return `The constructed instances changed after this evaluation read them (resilience.truncate has ${now} now): run \`telebench run resilience-eval\` again to evaluate the current ones; the figures below are of the earlier set.`;
}

/**
 * Writes the HTML page and returns the Markdown (`telebench report resilience-eval`).
 * @throws TelebenchError `chart_render_failed` when a figure cannot be drawn
 */
export async function evalReport(ctx: StageContext<HasResilienceEval>): Promise<string> {
  const scores = scoresOf(ctx);
  const path = reportPath(ctx.stateDir);
  const empty = scores.length ? null : whyNoScores(ctx);
  const stale = staleNote(ctx);
  const sections = PARSE_MODES.map((mode) => ({
    title: `${mode} parse`,
    blocks: [
      tableOneBlock(
        `Table I (${mode}): CFR / NFR / WFR % per discrete sub-benchmark with scored rows, and the macro (unweighted mean over them)`,
        scores.map((s) => ({ model: s.target, m: s.modes[mode] })),
      ),
      ...macroNotes(scores.map((s) => ({ model: s.target, m: s.modes[mode] }))).map(
        (text): ReportBlock => ({ kind: 'paragraph', text }),
      ),
      // every subset a target answered, main or not (an ORAN-Bench-13K-only run has no Table I cell)
      ...scores.map((s): ReportBlock => ({
        kind: 'table',
        caption: `${s.target} (${mode}): per subset, counts, CFR % with exact 95% interval, tokens`,
        header: [...DETAIL_HEADER],
        rows: detailRows(s.modes[mode]).map((cells) => [
          cells[0]!.replace(/\*\*/g, ''),
          ...cells.slice(1),
        ]),
      })),
      ...(mode === 'lenient'
        ? paperFigures(
            figureModels(scores, mode),
            `${mode} parse`,
            'no VRAM was measured for these targets (nvidia-smi, the Ollama /api/ps allocation or the process RSS: see the table below for each method).',
          )
        : []),
    ],
  }));
  sections.unshift({
    title: 'What the rates mean',
    blocks: [
      ...(stale ? [{ kind: 'paragraph' as const, text: stale }] : []),
      { kind: 'paragraph', text: RATES_LEGEND },
    ],
  });
  sections.push({
    title: 'Models, VRAM and cut prompts',
    blocks: [
      {
        kind: 'table',
        header: [
          'model',
          'profile',
          'replies',
          'failed',
          'VRAM GiB',
          'VRAM method',
          'rows with a cut prompt or exhausted budget',
          'correct flips from those rows %',
          'mean output tokens',
        ],
        rows: scores.map((s) => [
          s.target,
          s.profile,
          s.rows,
          s.failed,
          s.vram.bytes === null ? null : (s.vram.bytes / 2 ** 30).toFixed(2),
          s.vram.method,
          cutRowsOf(s),
          s.modes.lenient.micro.cut_share_of_correct === null
            ? null
            : s.modes.lenient.micro.cut_share_of_correct.toFixed(1),
          s.modes.lenient.mean_output_tokens === null
            ? null
            : s.modes.lenient.mean_output_tokens.toFixed(0),
        ]),
      },
    ],
  });
  if (empty)
    sections.unshift({ title: 'Nothing scored', blocks: [{ kind: 'paragraph', text: empty }] });
  const html = await renderReportPage({
    title: 'TeleResilienceBench evaluation',
    intro:
      'Target models continue flawed half reasoning traces (arXiv:2605.09929). Three parse modes side by side: strict, lenient (our chain; ambiguous, retracted and cut-off replies refused), published (the authors\u2019 scorer, src/parsing.py, branch by branch). Figures use the lenient parse.',
    sections,
    footer: `telebench, state ${ctx.stateDir}`,
  });
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, html);
  const md = evalMarkdown(scores, path, empty ?? undefined);
  return stale ? md.replace('\n\n', `\n\n**${stale}**\n\n`) : md;
}

export const resilienceEvalPipeline: Pipeline<HasResilienceEval> = {
  name: 'resilience-eval',
  description:
    'TeleResilienceBench evaluation: target models continue the flawed half traces; CFR/NFR/WFR in three parse modes; report.',
  stages: evalStages.map((s) => s.name),
  report: evalReport,
};
