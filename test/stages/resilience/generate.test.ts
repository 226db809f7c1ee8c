import { describe, it, expect } from 'vitest';
import { chooseNumCtx, buildRequest } from '../../../stages/resilience/generate.js';
import { generatorConfigSchema } from '../../../stages/resilience/config.js';
import {
  estimatePromptTokens,
  requiredContext,
} from '../../../pipeline/providers/llm/truncation.js';
import { countCl100k } from '../../../pipeline/providers/tokenizer/cl100k.js';
import type { PromptedItem } from '../../../stages/resilience/types.js';

const prompt = `Question: ${'a long table row; '.repeat(400)}\nFinal Answer: <n>`;
const item = {
  sample_id: 'x:y:0',
  prompt,
  prompt_tokens_cl100k: countCl100k(prompt),
} as PromptedItem;

describe('profiles', () => {
  it('default sizes num_ctx to fit the largest prompt (after the provider margin) plus the output budget', () => {
    const g = generatorConfigSchema.parse({});
    const need = requiredContext(estimatePromptTokens([{ role: 'user', content: prompt }]), {
      marginRatio: 0.15,
      marginTokens: 32,
      slackTokens: 0,
    });
    const ctx = chooseNumCtx(g, [10, item.prompt_tokens_cl100k, 50]);
    expect(ctx % 1024).toBe(0);
    expect(ctx).toBeGreaterThan(need + 4096);
    expect(ctx - 1024).toBeLessThanOrEqual(need + 4096);
    expect(buildRequest(g, item, ctx)).toEqual({
      model: 'qwen3.5:2b',
      messages: [{ role: 'user', content: prompt }],
      think: true,
      numCtx: ctx,
      maxTokens: 4096,
      temperature: 0,
    });
  });

  it('paper uses the published settings whatever else is configured; a fixed num_ctx wins', () => {
    const paper = generatorConfigSchema.parse({
      profile: 'paper',
      temperature: 0.7,
      num_predict: 100,
      think: false,
      seed: 7,
    });
    expect(chooseNumCtx(paper, [item.prompt_tokens_cl100k])).toBe(2048);
    expect(buildRequest(paper, item, 2048)).toMatchObject({
      numCtx: 2048,
      maxTokens: 4096,
      temperature: 0,
      think: true,
      seed: 7,
      contextShift: true,
    });
    // default never lets the server slide the window
    expect(buildRequest(generatorConfigSchema.parse({}), item, 4096).contextShift).toBeUndefined();
    expect(chooseNumCtx(generatorConfigSchema.parse({ num_ctx: 6000 }), [99999])).toBe(6000);
  });
});
