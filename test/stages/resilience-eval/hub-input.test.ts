/**
 * `resilience_eval.input.source: hub`: the published TeleResilienceBench files (the dataset card's
 * `TeleResilienceBench.csv` and `Auxiliary.csv`) read from a Hub dataset repository at a pinned
 * revision through the real `@huggingface/hub` client, against the local Hub server
 * (test/servers/hub-server.ts), downloaded once into the state; then continued by a target on the
 * scripted Ollama-protocol server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHubServer, type HubServer } from '../../servers/hub-server.js';
import { startLlmServer, type LlmServer } from '../../servers/llm-server.js';
import {
  parseChoicesCell,
  readEvalInstances,
  subsetOf,
} from '../../../stages/resilience-eval/eval-instance.js';
import { ROOT, runCli, runPipelineCli } from '../../fixtures/cli.js';

const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
const HEADER =
  'sample_id,sub_benchmark,question,choices,correct_answer,incorrect_answer,half_reasoning_trace';
// choices as pandas writes a list column (Python literals, one with an apostrophe) and as JSON
const MAIN = [
  HEADER,
  [
    'ot-lite:teleqna:4',
    'teleqna',
    'HUBQ1 Which timer?',
    `['T300', "the UE's T301", 'T310']`,
    'T300',
    "the UE's T301",
    'The timer looks like T301, so option 2.',
  ]
    .map(q)
    .join(','),
  [
    'ot-lite:telelogs:7',
    'telelogs',
    'HUBQ2 Root cause?',
    JSON.stringify(['C1', 'C2', 'C3', 'C4', 'C5', 'C6', 'C7', 'C8']),
    'C3',
    'C5',
    'Line one of the trace.\nLine two, with a comma.',
  ]
    .map(q)
    .join(','),
].join('\n');
const AUX = [
  HEADER,
  ['ot-lite:telemath:1', 'telemath', 'HUBQ3 Sum?', '', '293.0', '256.0', 'We add 256 and 37.']
    .map(q)
    .join(','),
].join('\n');

describe('subsetOf: the Table I subset of a published-schema row', () => {
  it('reads the published <source>:<subset>:<n> id, and sub_benchmark for any other id', () => {
    expect(subsetOf('gsma:teleqna:17', 'TeleQnA')).toBe('teleqna');
    expect(subsetOf('oran:ORANBench:3', 'x')).toBe('oranbench');
    // a user's own ids (a newcomer's trial): not a subset per row ("1", "2", ...)
    expect(subsetOf('me:1', 'TeleQnA')).toBe('teleqna');
    expect(subsetOf('q17', 'srsRANBench')).toBe('srsranbench');
    expect(subsetOf('a::9', 'TeleMath')).toBe('telemath');
  });
});

describe('parseChoicesCell', () => {
  it('reads JSON arrays and Python list literals, and says why a cell is neither', () => {
    expect(parseChoicesCell('["a", "b"]')).toEqual(['a', 'b']);
    expect(parseChoicesCell(`['a', "b's", 'c\\'d', 'e\\nf', '\\xe9']`)).toEqual([
      'a',
      "b's",
      "c'd",
      'e\nf',
      'é',
    ]);
    expect(parseChoicesCell('')).toBeUndefined();
    expect(parseChoicesCell('[]')).toBeUndefined();
    expect(() => parseChoicesCell("['a', 'b'")).toThrow(/expected ',' or ']'/);
    expect(() => parseChoicesCell('a, b')).toThrow(/not a JSON array or a Python list/);
  });
});

describe('resilience-eval input from a Hub dataset (local Hub server)', () => {
  let hub: HubServer;
  let llm: LlmServer;
  let dir: string;
  let pinned: string;
  beforeAll(async () => {
    hub = await startHubServer();
    pinned = hub.seedRepo({
      repo: 'prnshv/TeleResilienceBench',
      type: 'dataset',
      files: { 'TeleResilienceBench.csv': MAIN, 'Auxiliary.csv': AUX, 'README.md': '# card' },
    });
    // main moves on after the pin: the pinned revision must still be what is read
    hub.pushCommit(
      'prnshv/TeleResilienceBench',
      { 'TeleResilienceBench.csv': HEADER },
      { type: 'dataset' },
    );
    llm = await startLlmServer({
      models: [{ name: 'target:1b', digest: 'sha256:t' }],
      rules: [
        { match: 'HUBQ1', thinking: 'T300 guards setup.', content: 'Final Answer: 1' },
        { match: 'HUBQ2', thinking: 'C3.', content: 'Final Answer: 5' },
        { match: 'HUBQ3', thinking: 'Sum.', content: 'Final Answer: 293' },
      ],
    });
    dir = mkdtempSync(join(tmpdir(), 'telebench-eval-hub-'));
  });
  afterAll(async () => {
    await hub?.close();
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const config = (files: string[], url = hub.url) => {
    const f = join(dir, `config-${files.length}-${files[0]}-${url.length}.yaml`);
    writeFileSync(
      f,
      `version: 1
resilience:
  prompts_dir: ${join(ROOT, 'config/prompts/resilience')}
resilience_eval:
  input:
    source: hub
    hub: { url: ${url}, revision: ${pinned}, files: ${JSON.stringify(files)} }
  targets:
    - model: target:1b
      num_predict: 256
      llm:
        endpoints: [{ kind: ollama, base_url: ${llm.url}, concurrency: 2 }]
`,
    );
    return f;
  };

  it('downloads the pinned files once, keeps the published ids and option texts, and scores', async () => {
    const state = join(dir, 'state');
    const run = await runPipelineCli(
      'run',
      'resilience-eval',
      state,
      config(['TeleResilienceBench.csv', 'Auxiliary.csv']),
    );
    expect(run.code, run.stderr).toBe(0);
    const seen = hub.requests.filter((r) => r.path.includes('/resolve/'));
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen) expect(r.path).toContain(`/resolve/${pinned}/`);
    const local = join(
      state,
      'downloads/hf/datasets/prnshv/TeleResilienceBench',
      pinned,
      'TeleResilienceBench.csv',
    );
    expect(existsSync(local)).toBe(true);
    const inst = readEvalInstances(local);
    expect(inst.map((i) => [i.sample_id, i.gold_index, i.generator_index])).toEqual([
      ['ot-lite:teleqna:4', 0, 1],
      ['ot-lite:telelogs:7', 2, 4],
    ]);
    const chats = llm.chatRequests();
    expect(chats).toHaveLength(3);
    const prompts = chats.map(
      (c) => (c.body as { messages: { content: string }[] }).messages[0]!.content,
    );
    expect(prompts.find((p) => p.includes('HUBQ1'))).toContain("2. the UE's T301");
    expect(prompts.find((p) => p.includes('HUBQ2'))).toContain(
      'Line one of the trace.\nLine two, with a comma.',
    );

    // A changed file list is a new input: the stage runs again from the local copies, no request.
    const before = hub.requests.length;
    const again = await runPipelineCli(
      'run',
      'resilience-eval',
      state,
      config(['Auxiliary.csv', 'TeleResilienceBench.csv']),
    );
    expect(again.code, again.stderr).toBe(0);
    expect(hub.requests.length).toBe(before);
    expect(llm.chatRequests()).toHaveLength(3);

    const rep = await runPipelineCli(
      'report',
      'resilience-eval',
      state,
      config(['TeleResilienceBench.csv', 'Auxiliary.csv']),
    );
    expect(rep.code, rep.stderr).toBe(0);
    // teleqna: correct flip; telelogs: answer 5 = the generator's C5 (no flip); TeleMath 293
    expect(rep.stdout).toMatch(/## Table I, strict parse[\s\S]*?TeleMath CR%: target:1b 100\.0/);
    expect(rep.stdout).toMatch(
      /\| target:1b \| 100\.0 \/ 0\.0 \/ 0\.0 \| 0\.0 \/ 100\.0 \/ 0\.0 \|/,
    );
  });

  it('an unreachable Hub fails the item with what to do, and nothing is lost', async () => {
    const state = join(dir, 'state-offline');
    const run = await runPipelineCli(
      'run',
      'resilience-eval',
      state,
      config(['TeleResilienceBench.csv'], 'http://127.0.0.1:9'),
    );
    expect(run.code).not.toBe(0);
    const items = await runCli(['--state', state, 'items', 'resilience-eval.instances']);
    expect(items.stdout).toMatch(/instances\s+failed\s+hub_unreachable/);
    const show = await runCli(['--state', state, 'show', 'resilience-eval.instances', 'instances']);
    expect(show.stdout).toContain('resilience_eval.input.hub.url');
  });
});
