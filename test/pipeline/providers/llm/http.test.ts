import { describe, it, expect, afterEach } from 'vitest';
import { errorMessageOf, parseRetryAfter } from '../../../../pipeline/providers/llm/http.js';
import { OllamaProvider } from '../../../../pipeline/providers/llm/ollama.js';
import { TelebenchError } from '../../../../pipeline/errors.js';
import { startLlmServer, type LlmServer } from '../../../servers/llm-server.js';
import type { TelebenchEvent } from '../../../../pipeline/events.js';

describe('retry-after parsing (RFC 9110 section 10.2.3)', () => {
  it('reads delay-seconds and HTTP-dates', () => {
    expect(parseRetryAfter('1')).toBe(1000);
    expect(parseRetryAfter(' 2.5 ')).toBe(2500);
    const now = Date.parse('Sun, 29 Nov 2026 12:00:00 GMT');
    expect(parseRetryAfter('Sun, 29 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 29 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it('extracts server error messages of both shapes', () => {
    expect(errorMessageOf('{"error":"model \\"x\\" not found"}')).toBe('model "x" not found');
    expect(errorMessageOf('{"error":{"message":"Rate limit reached"}}')).toBe('Rate limit reached');
    expect(errorMessageOf('<html>Bad Gateway</html>')).toBe('<html>Bad Gateway</html>');
    expect(errorMessageOf('')).toBe('(empty body)');
  });
});

describe('retry policy over real HTTP', () => {
  let server: LlmServer | undefined;
  afterEach(async () => {
    await server?.close();
  });
  const ask = { model: 'qwen3.5:2b', messages: [{ role: 'user' as const, content: 'q' }] };

  it('a retry-after longer than max_retry_after_ms is not waited for: rate-limit error at once', async () => {
    server = await startLlmServer({
      script: [{ status: 429, headers: { 'retry-after': '3600' }, error: 'quota exhausted' }],
    });
    const p = new OllamaProvider({
      baseUrl: server.url,
      http: { retries: 3, minBackoffMs: 5, maxRetryAfterMs: 1000 },
    });
    const err = await p.chat(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).tier).toBe('rate-limit');
    expect((err as TelebenchError).context.retryAfterMs).toBe(3_600_000);
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('emits rate-limit and retry events while waiting', async () => {
    server = await startLlmServer({
      script: [
        { status: 429, headers: { 'retry-after': '0' }, error: 'slow down' },
        { status: 502, error: 'bad gateway' },
        { content: 'ok' },
      ],
    });
    const events: TelebenchEvent[] = [];
    const p = new OllamaProvider({
      baseUrl: server.url,
      http: { retries: 3, minBackoffMs: 5, maxBackoffMs: 10 },
      onEvent: (e) => events.push(e),
    });
    expect((await p.chat(ask)).content).toBe('ok');
    expect(events.map((e) => e.kind)).toEqual(['rate-limit', 'retry']);
    expect(events[1]).toMatchObject({ service: `ollama ${server.url}`, attempt: 2 });
  });

  it('an error line inside an Ollama stream is retried as transient', async () => {
    server = await startLlmServer({
      script: [
        {
          body: '{"model":"qwen3.5:2b","message":{"role":"assistant","content":"a"},"done":false}\n{"error":"llama runner process has terminated"}\n',
        },
        { content: 'second try' },
      ],
    });
    const p = new OllamaProvider({ baseUrl: server.url, http: { retries: 2, minBackoffMs: 5 } });
    expect((await p.chat(ask)).content).toBe('second try');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('a 400 the server will not change (thinking unsupported) is a config error, not retried', async () => {
    server = await startLlmServer({
      script: [{ status: 400, error: '"qwen3.5:2b" does not support thinking' }],
    });
    const p = new OllamaProvider({ baseUrl: server.url, http: { retries: 3, minBackoffMs: 5 } });
    const err = (await p
      .chat({ ...ask, providerOptions: { ollama: { think: true } } })
      .catch((e: unknown) => e)) as TelebenchError;
    expect(err.code).toBe('llm_request_rejected');
    expect(err.tier).toBe('config');
    expect(err.message).toContain('does not support thinking');
    expect(server.chatRequests()).toHaveLength(1);
  });
});
