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
let byteLengths: Uint8Array | undefined;

// tiktoken's split pattern runs on Rust's regex engine, where `\s` is Unicode White_Space;
// JavaScript's `\s` also matches U+FEFF and misses U+0085. js-tiktoken ships the pattern as is, so
// it split such text differently from tiktoken (other token counts and midpoints). The pattern is
// given tiktoken's whitespace explicitly.
const WHITE_SPACE = '\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const tiktokenPattern = (patStr: string): string =>
  patStr
    .replaceAll('[^\\s', `[^${WHITE_SPACE}`)
    .replaceAll('\\S', `[^${WHITE_SPACE}]`)
    .replaceAll('\\s', `[${WHITE_SPACE}]`);

/** The rank table, loaded on first use (the CLI starts without it: pipeline/lazy.ts). */
const cl100kRanks = (): typeof Cl100kBase =>
  lazy<{ default: typeof Cl100kBase }>('js-tiktoken/ranks/cl100k_base')().default;

/** The shared `cl100k_base` encoder (built on first call, about 100 ms; then cached). */
export function cl100k(): Tiktoken {
  if (!encoder) {
    // loaded here, not at import: the CLI starts without the rank table (pipeline/lazy.ts)
    const { Tiktoken } = lazy<typeof TiktokenLite>('js-tiktoken/lite')();
    const ranks = cl100kRanks();
    encoder = new Tiktoken({ ...ranks, pat_str: tiktokenPattern(ranks.pat_str) });
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

/**
 * UTF-8 byte length of every `cl100k_base` token, indexed by token id (0 for ids that are not
 * ordinary tokens). Built once per process from the rank table (each entry is the token's bytes in
 * base64), so callers can find where a token prefix ends without decoding it.
 */
export function cl100kTokenByteLengths(): Uint8Array {
  if (byteLengths) return byteLengths;
  const table = new Uint8Array(100_352);
  for (const line of cl100kRanks().bpe_ranks.split('\n')) {
    if (line === '') continue;
    const fields = line.split(' ');
    const offset = Number.parseInt(fields[1] ?? '', 10);
    for (let i = 2; i < fields.length; i++) {
      const b64 = fields[i]!;
      const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
      table[offset + i - 2] = (b64.length / 4) * 3 - pad;
    }
  }
  byteLengths = table;
  return table;
}
