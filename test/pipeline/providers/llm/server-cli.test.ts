import { describe, it, expect, afterEach } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OllamaProvider } from '../../../../pipeline/providers/llm/ollama.js';
import { parseScript, startLlmServer, standInAnswer } from '../../../servers/llm-server.js';

const serverScript = fileURLToPath(new URL('../../../servers/llm-server.ts', import.meta.url));

describe('scripted server as a standalone process (for pipeline runs without a model)', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    child?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers rules from a JSON Lines script, then stand-in answers naming a listed option', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tb-llm-cli-'));
    const script = join(dir, 'replies.jsonl');
    writeFileSync(
      script,
      [
        JSON.stringify({
          match: 'AMF',
          thinking: 'The AMF handles registration.',
          content: 'Final Answer: 2',
        }),
        '',
      ].join('\n'),
    );
    child = spawn(
      process.execPath,
      ['--import', 'tsx', serverScript, '--port', '0', '--script', script],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const url = await new Promise<string>((resolve, reject) => {
      child!.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
      createInterface({ input: child!.stdout! }).on('line', (line) => {
        const m = /listening on (http:\/\/\S+)/.exec(line);
        if (m) resolve(m[1]!);
      });
    });
    const p = new OllamaProvider({ baseUrl: url, http: { idleTimeoutMs: 5000 } });
    const info = await p.preflight('qwen3.5:2b');
    expect(info.serverVersion).toBe('0.12.6-telebench-scripted');
    const rule = await p.chat({
      model: 'qwen3.5:2b',
      messages: [{ role: 'user', content: 'Which NF is the AMF?' }],
    });
    expect(rule.content).toBe('Final Answer: 2');
    const q = 'Which layer does RLC belong to?\n1. PHY\n2. Layer 2\n3. RRC\n4. NAS';
    const standIn = await p.chat({
      model: 'qwen3.5:2b',
      messages: [{ role: 'user', content: q }],
      providerOptions: { ollama: { think: true }, embedded: { think: true } },
    });
    const n = Number(/Final Answer: (\d+)/.exec(standIn.content)?.[1]);
    expect([1, 2, 3, 4]).toContain(n);
    expect(standIn.thinking).toContain('Which layer does RLC belong to?');
    expect(standIn.thinking.split('. ').length).toBeGreaterThan(3);
  });

  it('parseScript names the bad line', () => {
    expect(() => parseScript('{"content":"a"}\n{oops\n', 'r.jsonl')).toThrow(
      /r\.jsonl:2: not JSON/,
    );
    expect(() => parseScript('[1]\n', 'r.jsonl')).toThrow(/r\.jsonl:1: expected a JSON object/);
    const { rules, queue } = parseScript('{"match":"x","content":"1"}\n\n{"content":"2"}\n');
    expect(rules).toHaveLength(1);
    expect(queue).toEqual([{ content: '2' }]);
  });

  it('stand-in answers a question without options with a number', () => {
    const r = standInAnswer({
      method: 'POST',
      path: '/api/chat',
      headers: {},
      body: { messages: [{ role: 'user', content: 'Compute the path loss in dB.' }] },
      receivedAt: 0,
    });
    expect(r.content).toMatch(/^Final Answer: \d+(\.\d)?$/);
  });
});

describe('aborting a request', () => {
  it('stops at once with the abort reason and does not retry', async () => {
    const server = await startLlmServer({ fallback: { content: 'late', delayMs: 2000 } });
    try {
      const p = new OllamaProvider({ baseUrl: server.url, http: { retries: 3, minBackoffMs: 5 } });
      const controller = new AbortController();
      const call = p.chat(
        { model: 'qwen3.5:2b', messages: [{ role: 'user', content: 'q' }] },
        { signal: controller.signal },
      );
      setTimeout(() => controller.abort(new Error('interrupted by SIGINT')), 50);
      await expect(call).rejects.toThrow('interrupted by SIGINT');
      expect(server.chatRequests()).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
