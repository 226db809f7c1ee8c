/**
 * `resilience.truncate` (HalfTrace, paper section III eq. 1): for every item the generator
 * answered wrongly, the first half of its reasoning cut at a sentence end (half-trace.ts), built
 * into an instance of the published schema plus provenance (instance.ts). Items the generator got
 * right are skipped as `generator_correct`, so `telebench status` shows the whole funnel.
 */
import { defineStage } from '../../pipeline/stage.js';
import { SkipItem } from '../../pipeline/errors.js';
import { resilienceSettings, type HasResilience } from './config.js';
import { halfTrace, type Boundary, type NoSentenceEndPolicy } from './half-trace.js';
import type { GenerateInput, GenerateOutput } from './generate.js';
import { resilienceInstanceSchema, type ResilienceInstance } from './instance.js';
import { resilienceGenerate } from './generate.js';

export interface TruncateInput {
  generation: GenerateOutput;
  item: GenerateInput['item'];
  request: GenerateInput['request'];
  profile: GenerateInput['profile'];
  boundary: Boundary;
  no_sentence_end: NoSentenceEndPolicy;
  /** Half traces under this many tokens are short: flagged, or dropped with `short_half: drop`. */
  min_half_tokens: number;
  short_half: 'flag' | 'drop';
}

export const resilienceTruncate = defineStage<TruncateInput, ResilienceInstance, HasResilience>({
  name: 'resilience.truncate',
  version: 3,
  needs: ['resilience.generate'],
  // item k reads generation k only: it starts as soon as that answer exists (streaming)
  itemNeeds: (wi) => ({ 'resilience.generate': [wi.key] }),
  description:
    'HalfTrace: keeps the wrong answers and cuts their reasoning at the cl100k midpoint, snapped back to a sentence end.',
  concurrency: () => 2,
  *plan(ctx) {
    const t = resilienceSettings(ctx.config).truncate;
    for (const o of ctx.store.outputs(resilienceGenerate)) {
      const gi = o.input as GenerateInput;
      yield {
        key: o.key,
        input: {
          generation: o.output,
          item: gi.item,
          request: gi.request,
          profile: gi.profile,
          boundary: t.boundary,
          no_sentence_end: t.no_sentence_end,
          min_half_tokens: t.min_half_tokens,
          short_half: t.short_half,
        },
      };
    }
  },
  async run(wi, ctx) {
    const { generation: g, item, request } = wi.input;
    if (g.correct) {
      throw new SkipItem(
        'generator_correct',
        `${item.sample_id}: the generator answered correctly`,
      );
    }
    const thinking = ctx.blobs.getText(g.trace_digest ?? g.thinking_digest);
    const h = halfTrace(thinking, {
      boundary: wi.input.boundary,
      noSentenceEnd: wi.input.no_sentence_end,
    });
    if (h.cut === 'none') {
      const reason = h.fullTokens < 2 ? 'no_reasoning' : 'no_sentence_end';
      throw new SkipItem(
        reason,
        reason === 'no_reasoning'
          ? `${item.sample_id}: the generator gave no reasoning to halve (${h.fullTokens} tokens)`
          : `${item.sample_id}: no sentence end before the token midpoint (${h.midpointTokens} of ${h.fullTokens} tokens) and the policy is skip`,
        { full_tokens: h.fullTokens },
      );
    }
    const short = h.halfTokens < wi.input.min_half_tokens;
    if (short && wi.input.short_half === 'drop')
      throw new SkipItem(
        'short_half_trace',
        `${item.sample_id}: the half trace has ${h.halfTokens} tokens, under resilience.truncate.min_half_tokens ${wi.input.min_half_tokens} (${JSON.stringify(h.half.slice(0, 60))})`,
        { half_tokens: h.halfTokens },
      );
    ctx.artifact('half_reasoning_trace', h.half, 'text/plain');
    const instance: ResilienceInstance = {
      sample_id: item.sample_id,
      sub_benchmark: item.sub_benchmark,
      question: item.question,
      ...(item.kind === 'mc' ? { choices: item.choices } : {}),
      correct_answer: item.correct_answer,
      incorrect_answer: g.answer_text,
      half_reasoning_trace: h.half,
      source: item.source,
      subset: item.subset,
      row: item.row,
      role: item.role,
      kind: item.kind,
      difficulty: item.difficulty,
      correct_index: item.gold_index,
      incorrect_index: g.answer_index,
      correct_value: item.gold_value,
      incorrect_value: g.answer_value,
      generator: {
        model: g.model.name,
        model_digest: g.model.digest,
        server_version: g.model.server_version,
        provider: g.model.provider,
        profile: wi.input.profile,
        ...(g.trace_digest !== undefined ? { trace: 'reply' as const } : {}),
        options: {
          think: request.think ?? null,
          num_ctx: request.numCtx ?? null,
          num_predict: request.maxTokens ?? null,
          temperature: request.temperature ?? null,
          seed: request.seed ?? g.seed ?? null,
        },
      },
      prompt_template: item.prompt_template,
      prompt_version: item.prompt_version,
      parse_rule: g.parse_rule,
      tokens: {
        prompt_server: g.prompt_tokens_server,
        prompt_local: g.prompt_tokens_local,
        output: g.output_tokens,
        reasoning_full: h.fullTokens,
        reasoning_half: h.halfTokens,
        midpoint: h.midpointTokens,
      },
      half_trace: { tokenizer: 'cl100k_base', boundary: wi.input.boundary, cut: h.cut, short },
    };
    return resilienceInstanceSchema.parse(instance);
  },
});
