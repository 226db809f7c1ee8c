/**
 * `POST /v1/responses` of `telebench serve-model` (pipeline/providers/llm/serve-responses.ts):
 * OpenAI's Responses API, which Inspect AI's `openai/` provider calls by default, over the real
 * SmolLM2. The answer is the embedded runtime's answer to the same messages, in one body or as
 * the SSE events OpenAI streams; the input written as a string or as typed parts gives the same
 * reply; what the runtime cannot serve (tool calls, images) and bad bodies are refused with the
 * OpenAI error shape. Inspect itself against this route: test/stages/resilience-eval/
 * inspect-task.e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbeddedProvider } from '../../../../pipeline/providers/llm/embedded.js';
import { startModelServer, type ModelServer } from '../../../../pipeline/providers/llm/serve.js';
import { SMOLLM2_NAME } from '../../../fixtures/smollm2.js';
import { smollm2Provider } from '../../../fixtures/smollm2-provider.js';

const QUESTION = 'What does the SMF do in a 5G core? One sentence.';
const RULE = 'You are a telecom engineering assistant.';

interface ResponseBody {
  object: string;
  status: string;
  incomplete_details: { reason: string } | null;
  model: string;
  output: { type: string; role?: string; content: { type: string; text: string }[] }[];
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  error?: { message: string; code: string };
}

describe('serve-model: the Responses API', () => {
  let dir: string;
  let provider: EmbeddedProvider;
  let server: ModelServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tb-serve-resp-'));
    provider = smollm2Provider(dir, { contextSize: 1024, sequences: 1 });
    server = await startModelServer({ provider, model: SMOLLM2_NAME, contextSize: 1024 });
  });
  afterAll(async () => {
    await server.close();
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (body: unknown) =>
    fetch(`${server.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const text = (r: ResponseBody) => r.output.at(-1)!.content[0]!.text;

  it('answers as the runtime answers the same messages; a string input is the same user message', async () => {
    const direct = await provider.chat({
      model: SMOLLM2_NAME,
      messages: [
        { role: 'system', content: RULE },
        { role: 'user', content: QUESTION },
      ],
      temperature: 0,
      maxTokens: 20,
      providerOptions: { embedded: { numCtx: 1024 } },
    });
    // as Inspect sends it: typed parts, store false, include []
    const res = await post({
      model: SMOLLM2_NAME,
      input: [
        { role: 'developer', content: [{ type: 'input_text', text: RULE }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: QUESTION }] },
      ],
      max_output_tokens: 20,
      temperature: 0,
      store: false,
      include: [],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ResponseBody;
    expect(body).toMatchObject({ object: 'response', model: SMOLLM2_NAME });
    expect(text(body)).toBe(direct.content);
    expect(body.output.at(-1)).toMatchObject({ type: 'message', role: 'assistant' });
    expect(body.usage).toMatchObject({
      input_tokens: direct.promptTokens,
      output_tokens: direct.outputTokens,
    });
    expect(body.status).toBe(direct.doneReason === 'length' ? 'incomplete' : 'completed');
    // the same conversation written otherwise: instructions + a plain string input
    const same = (await (
      await post({
        model: SMOLLM2_NAME,
        instructions: RULE,
        input: QUESTION,
        max_output_tokens: 20,
        temperature: 0,
      })
    ).json()) as ResponseBody;
    expect(text(same)).toBe(direct.content);
  });

  it('streams the deltas and ends with the whole response; a spent budget is incomplete', async () => {
    const res = await post({
      model: SMOLLM2_NAME,
      input: QUESTION,
      max_output_tokens: 6,
      temperature: 0,
      stream: true,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.includes('data: '))
      .map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as Record<string, unknown>);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.incomplete');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta as string);
    expect(deltas.length).toBeGreaterThan(1);
    const last = events.at(-1)!.response as ResponseBody;
    expect(last).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      usage: { output_tokens: 6 },
    });
    expect(text(last)).toBe(deltas.join(''));
    const done = events.find((e) => e.type === 'response.output_text.done')!;
    expect(done.text).toBe(deltas.join(''));
  });

  it('refuses what it cannot serve, naming the item, in the OpenAI error shape', async () => {
    const cases: [unknown, number, RegExp][] = [
      [
        {
          model: SMOLLM2_NAME,
          input: [
            { role: 'user', content: 'hi' },
            { type: 'function_call', call_id: 'c1', name: 'bash', arguments: '{}' },
          ],
        },
        400,
        /input\[1\].*function_call/,
      ],
      [
        {
          model: SMOLLM2_NAME,
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: 'what is this?' },
                { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
              ],
            },
          ],
        },
        400,
        /input\[0\]\.content\[1\].*input_image/,
      ],
      [{ model: SMOLLM2_NAME, input: [{ role: 'tool', content: 'x' }] }, 400, /role tool/],
      [{ model: SMOLLM2_NAME }, 400, /input/],
      ['{"model": ', 400, /not JSON/],
      [{ model: 'qwen3.5:2b', input: 'hi', max_output_tokens: 2 }, 404, /qwen3\.5:2b/],
    ];
    for (const [body, status, message] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      const err = ((await res.json()) as ResponseBody).error!;
      expect(err.message).toMatch(message);
    }
  });
});
