import { describe, it, expect } from 'vitest';
import {
  cl100k,
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

  it('loads the rank table once', () => {
    expect(cl100k()).toBe(cl100k());
  });
});
