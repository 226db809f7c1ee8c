import { describe, it, expect } from 'vitest';
import { messageWithCauses } from '../../pipeline/errors.js';

describe('messageWithCauses', () => {
  it('adds the cause chain to the message, without repeats, at most 3 deep', () => {
    const root = new Error('getaddrinfo ENOTFOUND huggingface.co');
    expect(messageWithCauses(new Error('fetch failed', { cause: root }))).toBe(
      'fetch failed: getaddrinfo ENOTFOUND huggingface.co',
    );
    // a cause whose message the outer one already says is left out
    expect(messageWithCauses(new Error('download: boom', { cause: new Error('boom') }))).toBe(
      'download: boom',
    );
    let deep = new Error('e0');
    for (let i = 1; i <= 5; i++) deep = new Error(`e${i}`, { cause: deep });
    expect(messageWithCauses(deep)).toBe('e5: e4: e3: e2');
    expect(messageWithCauses('plain string')).toBe('plain string');
  });
});
