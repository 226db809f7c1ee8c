/**
 * SIGKILL in the middle of the generation stage, then resume: the branch completes and the model
 * server answers each row at most once more than the requests that were in flight at the kill
 * (done items are never asked again; the response cache covers the rest).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startLlmServer, type LlmServer } from '../../servers/llm-server.js';
import { writeResilienceWorkdir } from '../../fixtures/resilience-workdir.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/telebench.js');
const ROWS = 12;
const SLOTS = 2;

let llm: LlmServer;
const work = mkdtempSync(join(tmpdir(), 'resilience-resume-'));

beforeAll(async () => {
  llm = await startLlmServer({
    delayMs: 300,
    parallel: SLOTS,
    fallback: {
      thinking: 'First I read it. Then I compare. Option 2 looks right.',
      content: 'Final Answer: 2',
    },
  });
});
afterAll(async () => {
  await llm?.close();
  rmSync(work, { recursive: true, force: true });
});

function cli(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, CI: 'true' },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (ok) => child.on('close', (code, signal) => ok({ code, signal, stderr })),
  );
  return { child, done };
}

describe('resilience resume after SIGKILL', () => {
  it('repeats at most the in-flight requests and completes', async () => {
    const { configFile: config } = writeResilienceWorkdir({
      dir: work,
      rows: Array.from({ length: ROWS }, (_, i) => [
        `Resume question ${i}?`,
        ['1. A', '2. B', '3. C'],
        '1',
      ]),
      source: 'resume-test',
      llmUrl: llm.url,
      concurrency: SLOTS,
      retries: 0,
    });
    const state = join(work, 'state');
    const first = cli(['run', 'resilience', '--config', config, '--state', state]);
    const t0 = Date.now();
    while (llm.chatRequests().length < 5 && Date.now() - t0 < 600_000) await sleep(20); // hang guard only, sized for load 30
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    const before = llm.chatRequests().length;
    expect(before).toBeGreaterThanOrEqual(5);
    expect(before).toBeLessThan(ROWS);

    const second = cli(['run', 'resilience', '--config', config, '--state', state]);
    const r = await second.done;
    expect(r.stderr).toContain('exit 0');
    const sent = llm
      .chatRequests()
      .map((q) => (q.body as { messages: { content: string }[] }).messages[0]!.content);
    expect(sent.length).toBeLessThanOrEqual(ROWS + SLOTS);
    // every row was asked, and only rows in flight at the kill were asked twice
    const counts = new Map<string, number>();
    for (const p of sent) counts.set(p, (counts.get(p) ?? 0) + 1);
    expect(counts.size).toBe(ROWS);
    expect([...counts.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(SLOTS);
    const instances = readFileSync(
      join(state, 'resilience', 'instances', 'instances.jsonl'),
      'utf8',
    )
      .trim()
      .split('\n');
    expect(instances).toHaveLength(ROWS);
  });
});
