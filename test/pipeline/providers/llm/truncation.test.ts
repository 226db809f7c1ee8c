import { describe, it, expect } from 'vitest';
import {
  DEFAULT_TRUNCATION_POLICY,
  assertPromptFits,
  budgetRanOut,
  estimatePromptTokens,
  promptReachedLimit,
  requiredContext,
  splitThinkTags,
} from '../../../../pipeline/providers/llm/truncation.js';
import { countCl100k } from '../../../../pipeline/providers/tokenizer/cl100k.js';
import { TelebenchError } from '../../../../pipeline/errors.js';

const where = { endpoint: 'http://x', model: 'm' };

describe('prompt check before sending', () => {
  it('estimates cl100k tokens plus 5 per message (ChatML) plus 3', () => {
    const msgs = [
      { role: 'system' as const, content: 'You are a 5G expert.' },
      { role: 'user' as const, content: 'What is an AMF?' },
    ];
    expect(estimatePromptTokens(msgs)).toBe(
      3 + 10 + countCl100k(msgs[0]!.content) + countCl100k(msgs[1]!.content),
    );
  });

  it('required = ceil(estimate * (1 + ratio)) + tokens', () => {
    expect(requiredContext(100, { marginRatio: 0.15, marginTokens: 32, slackTokens: 0 })).toBe(147);
  });

  it('refuses exactly when the required size reaches num_ctx', () => {
    const msgs = [{ role: 'user' as const, content: 'word '.repeat(100) }];
    const est = estimatePromptTokens(msgs);
    const req = requiredContext(est, DEFAULT_TRUNCATION_POLICY);
    expect(assertPromptFits(msgs, req + 1, DEFAULT_TRUNCATION_POLICY, where)).toBe(est);
    expect(() => assertPromptFits(msgs, req, DEFAULT_TRUNCATION_POLICY, where)).toThrow(
      TelebenchError,
    );
    expect(assertPromptFits(msgs, undefined, DEFAULT_TRUNCATION_POLICY, where)).toBe(est);
    expect(() => assertPromptFits(msgs, 64, DEFAULT_TRUNCATION_POLICY, where)).toThrow(
      expect.objectContaining({
        code: 'prompt_too_long',
        tier: 'content',
        message: expect.stringContaining('num_ctx) is 64'),
      }),
    );
  });
});

describe('flags after the answer', () => {
  it('prompt at num_ctx (minus slack) is truncated; null count is not evidence', () => {
    // Default slack 1: older Ollama keeps num_ctx tokens, v0.30 keeps num_ctx - 1.
    const p = { ...DEFAULT_TRUNCATION_POLICY };
    expect(p.slackTokens).toBe(1);
    expect(promptReachedLimit(2048, 2048, p)).toBe(true);
    expect(promptReachedLimit(2047, 2048, p)).toBe(true);
    expect(promptReachedLimit(2046, 2048, p)).toBe(false);
    expect(promptReachedLimit(2047, 2048, { ...p, slackTokens: 0 })).toBe(false);
    expect(promptReachedLimit(null, 2048, p)).toBe(false);
    expect(promptReachedLimit(5000, undefined, p)).toBe(false);
  });

  it('budget: length reason, or no reason and output at the budget', () => {
    expect(budgetRanOut('length', 10, 4096)).toBe(true);
    expect(budgetRanOut('stop', 4096, 4096)).toBe(false);
    expect(budgetRanOut('', 4096, 4096)).toBe(true);
    expect(budgetRanOut('', 4095, 4096)).toBe(false);
    expect(budgetRanOut('', null, 4096)).toBe(false);
  });
});

describe('<think> tags in content', () => {
  it.each([
    ['<think>a b.</think>\n\nFinal Answer: 2', 'a b.', 'Final Answer: 2'],
    ['  <think>\nx\n</think>Final Answer: 1', 'x', 'Final Answer: 1'],
    ['reasoning here</think>\n\nFinal Answer: 3', 'reasoning here', 'Final Answer: 3'],
    ['<think>cut off by the budget', 'cut off by the budget', ''],
    ['no tags at all', '', 'no tags at all'],
    ['Answer mentions <think> later', '', 'Answer mentions <think> later'],
  ])('%j', (text, thinking, content) => {
    expect(splitThinkTags(text)).toEqual({ thinking, content });
  });
});
