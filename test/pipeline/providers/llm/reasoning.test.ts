import { describe, it, expect } from 'vitest';
import { reasoningText } from '../../../../pipeline/providers/llm/reasoning.js';

describe('reasoningText (the one reader of OpenAI-compatible reasoning fields)', () => {
  it('takes the field that has text; empty and null fields never shadow it', () => {
    expect(reasoningText({ reasoning: '', reasoning_content: 'abc' })).toBe('abc');
    expect(reasoningText({ reasoning: 'abc', reasoning_content: '' })).toBe('abc');
    expect(reasoningText({ reasoning: null, reasoning_content: 'abc' })).toBe('abc');
    expect(reasoningText({ reasoning: 'abc', reasoning_content: null })).toBe('abc');
    expect(reasoningText({})).toBe('');
    expect(reasoningText(null)).toBe('');
  });

  it('reads a text sent in both fields once, and keeps both of two different texts', () => {
    expect(reasoningText({ reasoning: 'same', reasoning_content: 'same' })).toBe('same');
    expect(reasoningText({ reasoning: ' two', reasoning_content: 'one' })).toBe('one two');
  });
});
