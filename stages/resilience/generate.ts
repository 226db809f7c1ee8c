/**
 * `resilience.generate`: the weak generator (paper section III: qwen3.5:2b, temperature 0, thinking
 * on) answers every normalised item once. One work item per row (`sample_id`). Every answered item
 * is kept with its parsed answer, the parse rule and whether it is correct; the truncation stage
 * keeps the parseable-but-wrong ones.
 *
 * No silent truncation (issue 6): a prompt that cannot fit the context is refused before sending
 * (`prompt_too_long`), a prompt whose server count reached the window is `prompt_truncated`, an
 * answer cut by the output budget is `budget_exhausted`; all three are recorded as skipped items
 * with that reason (counted by `telebench status` and in the construction summary), never scored.
 * An answer no rule can parse is skipped as `unparsed`.
 *
 * Responses come through the response cache (pipeline/providers/llm/cache.ts): a re-run makes no
 * model call. The thinking text is stored as an artifact (blob); the output keeps its digest.
 */
import { defineStage, type StageContext } from '../../pipeline/stage.js';
import { SkipItem, TelebenchError } from '../../pipeline/errors.js';
import { hasWarning } from '../../pipeline/providers/llm/types.js';
import type { ChatResult, LlmProvider, ModelInfo } from '../../pipeline/providers/llm/types.js';
import { createProvider, stageLlmDeps } from '../../pipeline/providers/llm/config.js';
import { estimatePromptTokens, requiredContext } from '../../pipeline/providers/llm/truncation.js';
import { resilienceSettings, type GeneratorConfig, type HasResilience } from './config.js';
import {
  isCutOffReply,
  parseChoiceAnswer,
  parseNumericAnswer,
  type AnswerRule,
} from './parse-answer.js';
import { numbersMatch, pythonFloatRepr } from './numbers.js';
import type { PromptedItem } from './types.js';
import { chatRequestOf, type GenerationRequest } from './request.js';
import { resilienceLoad } from './load.js';

/** Settings of the `paper` profile (paper section IV; collect_metadata.json). */
export const PAPER_PROFILE = {
  numCtx: 2048,
  numPredict: 4096,
  temperature: 0,
  think: true,
} as const;

/** Input of one generation: the item and the exact request. */
export interface GenerateInput {
  item: PromptedItem;
  request: GenerationRequest;
  profile: 'default' | 'paper';
  rules: AnswerRule[];
  tolerance: { rel: number; abs: number };
  /** Present only when the trace is the reply text (`generator.trace: reply`). */
  trace?: 'reply';
}

/** What the generator answered, parsed. */
export interface GenerateOutput {
  sample_id: string;
  correct: boolean;
  parse_rule: AnswerRule;
  parse_matched: string;
  /** 0-based option the generator chose (mc) or null. */
  answer_index: number | null;
  /** Number the generator gave (numeric) or null. */
  answer_value: number | null;
  /** The option text, or the number as Python prints it. */
  answer_text: string;
  /** Blob digest of the thinking text (artifact `thinking`). */
  thinking_digest: string;
  /** With `generator.trace: reply`: blob digest of the reply text halved instead (artifact `trace`). */
  trace_digest?: string;
  thinking_chars: number;
  content: string;
  prompt_tokens_server: number | null;
  prompt_tokens_local: number | null;
  output_tokens: number | null;
  done_reason: string;
  latency_ms: number;
  cached: boolean;
  /** The sampling seed used: the runtime's report (embedded), else the request's, else null. */
  seed?: number | null;
  /** paper profile: the server slid the window (prompt + output went past num_ctx). */
  context_shifted: boolean;
  endpoint: string;
  raw_digest: string | null;
  model: { name: string; digest: string | null; server_version: string | null; provider: string };
}

/** Items of the done load outputs (Hub and local subsets), in subset key order. */
export function* loadedItems(ctx: StageContext<unknown>): Iterable<PromptedItem> {
  for (const o of ctx.store.outputs(resilienceLoad)) yield* o.output.items;
}

/**
 * The context window for a set of prompts: `paper` gives 2048; `default` gives the largest prompt
 * after the providers' safety margin plus the output budget, rounded up to 1024; a number in the
 * configuration wins over both. Shared by the generator and the evaluation's targets
 * (stages/resilience-eval/stages.ts), whose `paper` window is the same 2048.
 * @param g            the generator's (or a target's) profile, window, budget and prompt check
 * @param promptTokens cl100k counts of the prompt texts (one user message each); the chat
 *   overhead of {@link estimatePromptTokens} (4 per message + 3) is added here
 */
export function chooseNumCtx(
  g: Pick<GeneratorConfig, 'num_ctx' | 'profile' | 'num_predict' | 'llm'>,
  promptTokens: Iterable<number>,
): number {
  if (g.num_ctx !== 'auto') return g.num_ctx;
  if (g.profile === 'paper') return PAPER_PROFILE.numCtx;
  const policy = {
    marginRatio: g.llm.prompt_check.margin_ratio,
    marginTokens: g.llm.prompt_check.margin_tokens,
    slackTokens: g.llm.prompt_check.limit_slack_tokens,
  };
  const overhead = estimatePromptTokens([{ role: 'user', content: '' }]);
  let max = 0;
  for (const n of promptTokens) {
    const need = requiredContext(n + overhead, policy);
    if (need > max) max = need;
  }
  return Math.ceil((max + g.num_predict + 1) / 1024) * 1024;
}

/** The request settings for one item (sent through {@link chatRequestOf}). Pure. */
export function buildRequest(
  g: GeneratorConfig,
  item: PromptedItem,
  numCtx: number,
): GenerationRequest {
  const paper = g.profile === 'paper';
  return {
    model: g.model,
    messages: [{ role: 'user', content: item.prompt }],
    think: paper ? PAPER_PROFILE.think : g.think,
    numCtx,
    maxTokens: paper ? PAPER_PROFILE.numPredict : g.num_predict,
    temperature: paper ? PAPER_PROFILE.temperature : g.temperature,
    // paper: the published halves show the generator's thinking ran past the 2048 window, which
    // only Ollama's context shift allows; the shift is allowed and every shifted reply flagged.
    ...(paper ? { contextShift: true } : {}),
    ...(g.seed !== undefined ? { seed: g.seed } : {}),
  };
}

/**
 * The generator's provider for this run (createProvider: the endpoints pooled, behind the response
 * cache in the store), built once per run.
 */
export function generatorProvider(ctx: StageContext<HasResilience>): LlmProvider {
  return ctx.memo('resilience.generator', () =>
    createProvider(resilienceSettings(ctx.config).generator.llm, stageLlmDeps(ctx)),
  );
}

const modelInfoHolder = (ctx: StageContext<HasResilience>) =>
  ctx.memo('resilience.generator.info', () => ({ info: null as ModelInfo | null }));

/** Scores a parsed answer against the gold. */
function judge(
  item: PromptedItem,
  chat: ChatResult,
  rules: AnswerRule[],
  tol: { rel: number; abs: number },
) {
  if (item.kind === 'mc') {
    const p = parseChoiceAnswer(chat.content, chat.thinking, item.choices, rules);
    if (!p.ok) return null;
    return {
      rule: p.rule,
      matched: p.matched,
      index: p.index,
      value: null,
      text: item.choices[p.index!]!,
      correct: p.index === item.gold_index,
    };
  }
  const p = parseNumericAnswer(chat.content, chat.thinking, rules);
  if (!p.ok) return null;
  return {
    rule: p.rule,
    matched: p.matched,
    index: null,
    value: p.value,
    text: pythonFloatRepr(p.value!),
    correct: numbersMatch(p.value!, item.gold_value!, tol.rel, tol.abs),
  };
}

export const resilienceGenerate = defineStage<GenerateInput, GenerateOutput, HasResilience>({
  name: 'resilience.generate',
  // 3: parsed answers are read by the answer grammar (answer-grammar.ts), whose lenient readings
  // differ from the old reader's on 237 of the authors' 7,160 rows, so cached outputs are stale.
  version: 3,
  needs: ['resilience.load'],
  description: 'The weak generator answers every item once (parsed answers kept, right or wrong).',
  concurrency: (cfg) =>
    resilienceSettings(cfg).generator.llm.endpoints.reduce((n, e) => n + e.concurrency, 0),
  async preflight(ctx) {
    const g = resilienceSettings(ctx.config).generator;
    const info = await generatorProvider(ctx).preflight(g.model, ctx.signal);
    modelInfoHolder(ctx).info = info;
    ctx.log(
      `generator ${g.model} at ${info.endpoint}: server ${info.serverVersion ?? 'unknown'}, digest ${info.modelDigest ?? 'unknown'}`,
      { ...info },
    );
  },
  *plan(ctx) {
    const cfg = resilienceSettings(ctx.config);
    const g = cfg.generator;
    const items = [...loadedItems(ctx)];
    const numCtx = chooseNumCtx(
      g,
      items.map((i) => i.prompt_tokens_cl100k),
    );
    const info = modelInfoHolder(ctx).info;
    if (info?.contextLength && numCtx > info.contextLength) {
      ctx.log(
        `num_ctx ${numCtx} is above ${g.model}'s trained context ${info.contextLength}: answers to the longest prompts may degrade`,
      );
    }
    for (const item of items) {
      yield {
        key: item.sample_id,
        input: {
          item,
          request: buildRequest(g, item, numCtx),
          profile: g.profile,
          rules: g.answer_rules,
          tolerance: cfg.numeric_tolerance,
          ...(g.trace === 'reply' ? { trace: 'reply' as const } : {}),
        },
      };
    }
  },
  async run(wi, ctx) {
    const { item, request } = wi.input;
    let chat: ChatResult;
    try {
      chat = await generatorProvider(ctx).chat(chatRequestOf(request), { signal: ctx.signal });
    } catch (err) {
      if (err instanceof TelebenchError && err.tier === 'content') {
        throw new SkipItem(err.code, err.message, err.context);
      }
      throw err;
    }
    const facts = {
      prompt_tokens_server: chat.promptTokens,
      prompt_tokens_local: chat.promptTokensLocal ?? null,
      output_tokens: chat.outputTokens,
      done_reason: chat.doneReason,
      num_ctx: request.numCtx ?? null,
    };
    if (hasWarning(chat, 'prompt-truncated')) {
      throw new SkipItem(
        'prompt_truncated',
        `${item.sample_id}: the server counted ${chat.promptTokens} prompt tokens, at the context window ${request.numCtx}: the prompt may have been cut, so the answer is not used`,
        facts,
      );
    }
    if (chat.budgetExhausted) {
      throw new SkipItem(
        'budget_exhausted',
        `${item.sample_id}: the output budget (${request.maxTokens} tokens) ran out (done_reason ${chat.doneReason || 'none'}): no complete answer`,
        facts,
      );
    }
    const thinkingDigest = ctx.artifact('thinking', chat.thinking, 'text/plain');
    const traceDigest =
      wi.input.trace === 'reply' ? ctx.artifact('trace', chat.content, 'text/plain') : undefined;
    if (
      isCutOffReply({ content: chat.content, thinking: chat.thinking, doneReason: chat.doneReason })
    ) {
      throw new SkipItem(
        'reply_cut_off',
        `${item.sample_id}: empty visible reply and the reasoning stops mid-sentence (done_reason ${chat.doneReason || 'none'}): a budget or server problem, not an answer`,
        { ...facts, thinking_digest: thinkingDigest },
      );
    }
    const verdict = judge(item, chat, wi.input.rules, wi.input.tolerance);
    if (!verdict) {
      throw new SkipItem(
        'unparsed',
        `${item.sample_id}: no answer rule (${wi.input.rules.join(', ')}) found an answer in the reply ${JSON.stringify(chat.content.slice(-120))}`,
        { ...facts, thinking_digest: thinkingDigest },
      );
    }
    const info = modelInfoHolder(ctx).info;
    return {
      sample_id: item.sample_id,
      correct: verdict.correct,
      parse_rule: verdict.rule!,
      parse_matched: verdict.matched!,
      answer_index: verdict.index ?? null,
      answer_value: verdict.value ?? null,
      answer_text: verdict.text,
      thinking_digest: thinkingDigest,
      ...(traceDigest !== undefined ? { trace_digest: traceDigest } : {}),
      thinking_chars: chat.thinking.length,
      content: chat.content,
      prompt_tokens_server: chat.promptTokens,
      prompt_tokens_local: chat.promptTokensLocal ?? null,
      output_tokens: chat.outputTokens,
      done_reason: chat.doneReason,
      latency_ms: chat.latencyMs,
      seed: chat.seed ?? request.seed ?? null,
      context_shifted: hasWarning(chat, 'context-shifted'),
      cached: chat.cached,
      endpoint: chat.endpoint,
      raw_digest: chat.rawDigest ?? null,
      model: {
        name: request.model,
        digest: info?.modelDigest ?? null,
        server_version: info?.serverVersion ?? null,
        provider: generatorProvider(ctx).provider,
      },
    };
  },
});
