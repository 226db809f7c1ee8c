/**
 * The TeleResilienceBench construction branch: `telebench run resilience`.
 *
 *   resilience.load -> resilience.generate -> resilience.truncate -> resilience.instances
 *
 * `telebench report resilience` prints the construction funnel per sub-benchmark.
 */
import type { Pipeline, StageContext } from '../../pipeline/stage.js';
import { resilienceLoad } from './load.js';
import { resilienceGenerate } from './generate.js';
import { resilienceTruncate } from './truncate.js';
import { resilienceInstances, constructionSummary } from './instances.js';
import { resilienceSettings, type HasResilience } from './config.js';

export const resilienceStages = [
  resilienceLoad,
  resilienceGenerate,
  resilienceTruncate,
  resilienceInstances,
] as const;

/** Markdown funnel of the construction (rows -> instances) per sub-benchmark. */
export function resilienceReport(ctx: StageContext<HasResilience>): string {
  const s = constructionSummary(ctx.store);
  const lines = [
    '# TeleResilienceBench construction',
    '',
    `Generator: ${s.generator ?? 'not run yet'}; profile: ${s.profile ?? '-'}.`,
    '',
    '| sub_benchmark | rows | rejected | generated | correct | wrong | instances | skipped |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const [name, r] of [
    ...Object.entries(s.by_sub_benchmark),
    ['**total**', s.totals] as const,
  ]) {
    const skipped = Object.entries(r.skipped)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    lines.push(
      `| ${name} | ${r.rows} | ${r.rejected} | ${r.generated} | ${r.correct} | ${r.wrong} | ${r.instances} | ${skipped || '-'} |`,
    );
  }
  lines.push(
    '',
    `Not scored (no silent truncation): prompt_too_long ${s.truncation.prompt_too_long}, prompt_truncated ${s.truncation.prompt_truncated}, budget_exhausted ${s.truncation.budget_exhausted}.`,
  );
  const t = resilienceSettings(ctx.config).truncate;
  const short = [...ctx.store.outputs(resilienceTruncate)].filter(
    (o) => o.output.half_trace.short,
  ).length;
  lines.push(
    '',
    `Half traces under ${t.min_half_tokens} cl100k tokens (resilience.truncate.min_half_tokens): ${short} kept and flagged (half_trace.short)${t.short_half === 'drop' ? '; short_half is drop, so the others are skipped as short_half_trace' : '; set resilience.truncate.short_half: drop to drop them'}.`,
  );
  // Subsets that did not load are part of the funnel too: named, with the reason (issue 15).
  const notLoaded = [...ctx.store.items(resilienceLoad)].filter(
    (r) =>
      r.state === 'failed' ||
      r.state === 'skipped' ||
      r.state === 'pending' ||
      r.state === 'running',
  );
  if (notLoaded.length) {
    lines.push(
      '',
      `Subsets not loaded: ${notLoaded.length} (their rows are not counted above):`,
      '',
    );
    for (const r of notLoaded) {
      const why =
        r.state === 'failed'
          ? `failed: ${String(r.error?.code ?? 'error')}: ${failedWhy(String(r.error?.message ?? ''))}`
          : r.state === 'skipped'
            ? `skipped: ${r.skipReason ?? ''}${r.skipDetail ? `: ${r.skipDetail}` : ''}`
            : `${r.state}: not loaded yet (run again to load it)`;
      lines.push(`- ${r.key}: ${why}`);
    }
  }
  const rejected = [...ctx.store.outputs(resilienceLoad)].flatMap((o) => o.output.rejected);
  if (rejected.length) {
    const shown = rejected.slice(0, 20);
    lines.push(
      '',
      `Rejected rows: ${rejected.length} in total${rejected.length > shown.length ? `, the first ${shown.length}` : ''}:`,
      '',
    );
    for (const r of shown) lines.push(`- ${r.reason}: ${r.detail}`);
  }
  return `${lines.join('\n')}\n`;
}

export const resiliencePipeline: Pipeline<HasResilience> = {
  name: 'resilience',
  description:
    'TeleResilienceBench construction: load subsets, generate with the weak model, HalfTrace the wrong answers, write instances.',
  stages: resilienceStages.map((s) => s.name),
  report: resilienceReport,
};

/** A failed item's first message line, with the retry advice unless the message already gives it. */
function failedWhy(message: string): string {
  const first = message.split('\n')[0]!;
  return /--retry-failed/.test(first) ? first : `${first} (rerun with --retry-failed)`;
}
