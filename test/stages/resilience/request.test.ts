import { describe, it, expect } from 'vitest';
import { buildRequest } from '../../../stages/resilience/generate.js';
import { chatRequestOf } from '../../../stages/resilience/request.js';
import { generatorConfigSchema } from '../../../stages/resilience/config.js';
import { hashJson } from '../../../pipeline/hash.js';
import type { PromptedItem } from '../../../stages/resilience/types.js';

const item = { sample_id: 'x:y:0', prompt: 'Q?', prompt_tokens_cl100k: 3 } as PromptedItem;

describe('the paper profile as provider options', () => {
  it('puts think, the window, the shift and the cut in the namespaces of the runtimes that have them', () => {
    const paper = generatorConfigSchema.parse({ profile: 'paper', seed: 7 });
    const r = chatRequestOf({ ...buildRequest(paper, item, 2048), truncatePrompt: true });
    expect(r).toEqual({
      model: 'qwen3.5:2b',
      messages: [{ role: 'user', content: 'Q?' }],
      maxTokens: 4096,
      temperature: 0,
      seed: 7,
      providerOptions: {
        ollama: { think: true, numCtx: 2048, contextShift: true, truncatePrompt: true },
        embedded: { think: true, numCtx: 2048, contextShift: true, truncatePrompt: true },
        // an OpenAI-compatible server can neither shift nor cut: those are not sent to it
        openai: { think: true, numCtx: 2048 },
      },
    });
    expect(r).not.toHaveProperty('think');
    expect(r).not.toHaveProperty('numCtx');
  });

  it('leaves unset settings out, so the default profile asks for no shift and no cut', () => {
    const r = chatRequestOf(buildRequest(generatorConfigSchema.parse({}), item, 4096));
    expect(r.providerOptions?.ollama).toEqual({ think: true, numCtx: 4096 });
    expect(r.providerOptions?.openai).toEqual({ think: true, numCtx: 4096 });
  });

  it('keeps the stage input as stored before provider options (finished items stay done)', () => {
    // the input hash of a default-profile item as this stage stored it at 4f16d53
    const stored = {
      model: 'qwen3.5:2b',
      messages: [{ role: 'user', content: 'Q?' }],
      think: true,
      numCtx: 4096,
      maxTokens: 4096,
      temperature: 0,
    };
    expect(hashJson(buildRequest(generatorConfigSchema.parse({}), item, 4096))).toBe(
      hashJson(stored),
    );
  });
});
