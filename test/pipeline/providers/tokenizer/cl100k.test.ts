import { describe, it, expect } from 'vitest';
import {
  cl100k,
  cl100kTokenByteLengths,
  countCl100k,
  decodeCl100k,
  encodeCl100k,
} from '../../../../pipeline/providers/tokenizer/cl100k.js';

describe('cl100k_base helpers', () => {
  it('encodes known text to the published cl100k ids', () => {
    // "hello world" is [15339, 1917] in cl100k_base (tiktoken's own test vector).
    expect(encodeCl100k('hello world')).toEqual([15339, 1917]);
    expect(countCl100k('')).toBe(0);
    expect(encodeCl100k('')).toEqual([]);
  });

  it('round-trips ASCII, CRLF, decimals and non-ASCII text', () => {
    for (const text of [
      '1. First step.\r\n2. Second: 3.5 dB?',
      'Größe — 5G NR gNB ⟨x⟩ 日本語',
      ' \t\n',
    ]) {
      expect(decodeCl100k(encodeCl100k(text))).toBe(text);
      expect(countCl100k(text)).toBe(encodeCl100k(text).length);
    }
  });

  it('treats special-token text as ordinary text', () => {
    const ids = encodeCl100k('<|endoftext|>');
    expect(ids.length).toBeGreaterThan(1);
    expect(ids).not.toContain(100257);
    expect(decodeCl100k(ids)).toBe('<|endoftext|>');
  });

  it('a prefix cut inside a multi-byte character decodes to the replacement character', () => {
    const ids = encodeCl100k('日');
    if (ids.length > 1) expect(decodeCl100k(ids.slice(0, 1))).toContain('\uFFFD');
    else expect(decodeCl100k(ids)).toBe('日');
  });

  it('splits whitespace as tiktoken does (Unicode White_Space: U+FEFF is not, U+0085 is)', () => {
    // ids from tiktoken 0.14 (cl100k_base) on the same strings; JavaScript's own \s gave
    // [1178, 220, 3305, 3684] for the first (U+FEFF taken for a space)
    expect(encodeCl100k('word \ufeffnext')).toEqual([1178, 76880, 3684]);
    expect(encodeCl100k('word\u0085 next')).toEqual([1178, 126, 227, 1828]);
  });

  it('knows the UTF-8 length of every token', () => {
    const lengths = cl100kTokenByteLengths();
    for (const text of ['hello world', 'größe 😀 日本語', 'a\r\n\tb']) {
      const ids = encodeCl100k(text);
      const sum = ids.reduce((n, id) => n + lengths[id]!, 0);
      expect(sum).toBe(Buffer.byteLength(text, 'utf8'));
    }
    expect(lengths[15339]).toBe(5); // "hello"
  });

  it('loads the rank table once', () => {
    expect(cl100k()).toBe(cl100k());
  });
});
