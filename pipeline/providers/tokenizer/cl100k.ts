/**
 * The `cl100k_base` byte-pair encoding (OpenAI's GPT-4 / GPT-3.5 tokenizer) over js-tiktoken
 * (why: the maintained pure-JavaScript port of tiktoken, no WASM or native build). The rank table
 * is parsed once per process, on first use, and shared by every caller.
 *
 * TeleResilienceBench counts and halves reasoning traces with `cl100k_base` (paper, section on
 * HalfTrace construction); the LLM providers use it to estimate prompt sizes before sending.
 */
import type { Tiktoken } from 'js-tiktoken/lite';
import type * as TiktokenLite from 'js-tiktoken/lite';
import type Cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import { lazy } from '../../lazy.js';

let encoder: Tiktoken | undefined;

/** The shared `cl100k_base` encoder (built on first call, about 100 ms; then cached). */
export function cl100k(): Tiktoken {
  if (!encoder) {
    // loaded here, not at import: the CLI starts without the rank table (pipeline/lazy.ts)
    const { Tiktoken } = lazy<typeof TiktokenLite>('js-tiktoken/lite')();
    const ranks = lazy<{ default: typeof Cl100kBase }>('js-tiktoken/ranks/cl100k_base')();
    encoder = new Tiktoken(ranks.default);
  }
  return encoder;
}

/**
 * Token ids of `text` under `cl100k_base`. Special-token text such as `<|endoftext|>` is encoded
 * as ordinary text (never as a special token), so user input cannot inject control tokens.
 * @param text any string ('' gives [])
 * @returns token ids (non-negative integers)
 */
export function encodeCl100k(text: string): number[] {
  return cl100k().encode(text, [], []);
}

/**
 * Text of a token id sequence under `cl100k_base`. A prefix that ends inside a multi-byte UTF-8
 * character decodes that character as U+FFFD (the TextDecoder replacement rule).
 * @param tokens token ids from {@link encodeCl100k}
 */
export function decodeCl100k(tokens: readonly number[]): string {
  return cl100k().decode([...tokens]);
}

/** Number of `cl100k_base` tokens in `text` (0 for ''). */
export function countCl100k(text: string): number {
  return text === '' ? 0 : encodeCl100k(text).length;
}
