/**
 * The construction branch end to end through the real CLI (`node bin/telebench.js run resilience`)
 * against a local Hugging Face Hub (test/servers/hub-server.ts) holding small ot-lite subsets of
 * every shape, a local JSON Lines source with bad rows, and the scripted model server
 * (test/servers/llm-server.ts) speaking Ollama's routes.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHubServer, type HubServer } from '../../servers/hub-server.js';
import { startLlmServer, type LlmServer } from '../../servers/llm-server.js';
import { resilienceInstanceSchema } from '../../../stages/resilience/instance.js';
import { ROOT, runCli as runCliWith } from '../../fixtures/cli.js';

/** The CLI with no Hub token from the caller's environment (the local Hub needs none). */
const runCli = (args: string[]) => runCliWith(args, { HF_TOKEN: '' });

const THINK =
  'Thinking Process:\n\n1.  **Analyze the Request:** The user asks a telecom question. ' +
  'The options differ in one detail. I recall that the standard defines the timer in clause 5. ' +
  'That suggests the second option. Let me check the alternatives once more before answering. ' +
  'The third option mentions paging, which is unrelated. So the second option remains the best fit.';

const files: Record<string, unknown[]> = {
  test_teleqna: [
    {
      question: 'Which timer guards RRC setup?',
      choices: ['T300', 'T301', 'T310', 'T311'],
      answer: 0,
      subject: 's',
      explaination: '',
    },
    {
      question: 'What does SDT stand for?',
      choices: ['Small Data Transmission', 'Slow Data Transfer'],
      answer: 0,
      subject: 's',
      explaination: '',
    },
    {
      question: 'Which layer does HARQ live in?',
      choices: ['MAC', 'RLC'],
      answer: 0,
      subject: 's',
      explaination: '',
    },
    {
      question: 'Unparseable one?',
      choices: ['x', 'y'],
      answer: 0,
      subject: 's',
      explaination: '',
    },
    { question: 'Bad gold?', choices: ['x', 'y'], answer: 5, subject: 's', explaination: '' },
  ],
  test_teletables: [
    {
      question: 'Which tap has the most power?',
      choices: ['Tap 1', 'Tap 2'],
      answer: 1,
      explanation: '',
      difficult: true,
      table_id: 't1',
    },
  ],
  test_telelogs: [
    { question: 'Drive test shows low throughput. Pick C1..C8 in \\boxed{}.', answer: 'C3' },
  ],
  test_3gpp_tsg: [
    { question: 'Classify: MPEG-DASH streaming QoE text.', answer: 'SA4' },
    { question: 'Classify: charging text.', answer: 'SA5' },
  ],
  test_oranbench: [
    {
      question: 'Which WG defines the O-RAN architecture?',
      choices: ['1. WG1', '2. WG4'],
      answer: 0,
      difficulty: 'Easy',
    },
  ],
  test_srsranbench: [
    { question: 'What is srsdu_base?', choices: ['1. Base library', '2. DPDK'], answer: 0 },
  ],
  test_sixg_bench: [
    {
      question: 'The UAV is icing; pick a policy.',
      choices: ['Land', 'Downgrade'],
      answer: 1,
      task_id: 1,
      task_name: 't',
      difficulty: 'very hard',
      category: 'c',
    },
  ],
  test_telemath: [
    { question: 'Compute the bit error probability of 2-PAM here.', answer: 0.033 },
    { question: 'Compute the throughput in packets per second.', answer: 12.5 },
  ],
};

let hub: HubServer;
let llm: LlmServer;
let pinned: string;
const work = mkdtempSync(join(tmpdir(), 'resilience-e2e-'));

function writeConfig(
  name: string,
  hubUrl: string,
  llmUrl: string,
  opts: {
    dataset?: string;
    revision?: string;
    profile?: string;
    only?: string;
    retries?: number;
  } = {},
): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  // A local source in ORAN-Bench-13K's shape, with a row without options.
  writeFileSync(
    join(dir, 'data', 'local.json'),
    [
      JSON.stringify([
        'Which interface connects O-DU and O-RU?',
        ['1. Open Fronthaul', '2. E2', '3. A1'],
        '1',
      ]),
      JSON.stringify(['A row with no options?', [], '1']),
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'subsets.yaml'),
    `version: 1
subsets:
${['teleqna', 'teletables', 'oranbench', 'srsranbench', 'sixg_bench'].map((n) => `  - { name: ${n}, source: ot-lite, adapter: ot-lite-mc, role: main }`).join('\n')}
  - { name: telelogs, source: ot-lite, adapter: ot-lite-telelogs, role: main }
  - { name: 3gpp_tsg, source: ot-lite, adapter: ot-lite-labels, role: main }
  - { name: telemath, source: ot-lite, adapter: ot-lite-numeric, role: auxiliary }
  - { name: local, source: oran-bench-13k, adapter: gajjar-jsonl, file: local.json, difficulty: easy }
`,
  );
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    `version: 1
resilience:
  subsets_file: subsets.yaml
  prompts_dir: ${join(ROOT, 'config/prompts/resilience')}
  data_root: data
  hub: { url: ${hubUrl}, dataset: ${opts.dataset ?? 'GSMA/ot-lite'}, revision: ${opts.revision ?? pinned}, timeout_ms: 60000 }
  only_subsets: [${opts.only ?? ''}]
  generator:
    profile: ${opts.profile ?? 'default'}
    model: qwen3.5:2b
    num_predict: 512
    llm:
      endpoints:
        - { kind: ollama, base_url: ${llmUrl}, concurrency: 2, retries: ${opts.retries ?? 0}, idle_timeout_ms: 60000 }
`,
  );
  return file;
}

beforeAll(async () => {
  hub = await startHubServer();
  pinned = hub.seedRepo({
    repo: 'GSMA/ot-lite',
    type: 'dataset',
    files: Object.fromEntries(
      Object.entries(files).map(([k, v]) => [`${k}.json`, JSON.stringify(v)]),
    ),
  });
  llm = await startLlmServer({
    rules: [
      { match: 'Which timer guards', thinking: THINK, content: 'Final Answer: 2' }, // wrong
      { match: 'What does SDT', thinking: THINK, content: 'Final Answer: 1' }, // right
      { match: 'Which layer does HARQ', thinking: THINK, content: '', doneReason: 'length' },
      { match: 'Unparseable one', thinking: THINK, content: 'I cannot decide.' },
      {
        match: 'Which tap',
        thinking: 'no sentence end here at all just words and more words',
        content: 'Final Answer: 1',
      },
      { match: 'Drive test', thinking: THINK, content: 'The root cause is \\boxed{C4}' },
      { match: 'MPEG-DASH', thinking: THINK, content: 'Final Answer: SA5' },
      { match: 'charging', thinking: THINK, content: 'Final Answer: 1' }, // SA4, wrong
      { match: 'bit error probability', thinking: THINK, content: 'Final Answer: 2.0' },
      { match: 'packets per second', thinking: THINK, content: 'Final Answer: 12.51' },
      { match: 'O-DU and O-RU', thinking: THINK, content: 'Final Answer: 3' },
      {
        match: 'At the edge of the window',
        thinking: THINK,
        content: 'Final Answer: 2',
        promptEvalCount: 2048,
      },
    ],
    // everything else (oranbench, srsranbench: wrong; sixg_bench: right) answers option 2
    fallback: { thinking: THINK, content: 'Final Answer: 2' },
  });
});

afterAll(async () => {
  await llm?.close();
  await hub?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('telebench run resilience (real CLI, local Hub, scripted model server)', () => {
  it('completes, writes the published-schema instances, and a re-run makes no model or Hub request', async () => {
    const config = writeConfig('ok', hub.url, llm.url);
    const state = join(work, 'ok', 'state');
    const r = await runCli(['run', 'resilience', '--config', config, '--state', state]);
    expect(r.stderr).toContain('exit 0');
    expect(r.code).toBe(0);

    const dir = join(state, 'resilience', 'instances');
    const rows = readFileSync(join(dir, 'instances.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => resilienceInstanceSchema.parse(JSON.parse(l)));
    const byId = Object.fromEntries(rows.map((x) => [x.sample_id, x]));
    // each half's token count is recorded; halves under min_half_tokens (8) are flagged, kept
    for (const x of rows) expect(x.half_trace.short).toBe(x.tokens.reasoning_half < 8);
    const shortHalves = rows.filter((x) => x.half_trace.short).length;
    expect(shortHalves).toBeGreaterThan(0);
    expect(
      (await runCli(['report', 'resilience', '--config', config, '--state', state])).stdout,
    ).toContain(
      `Half traces under 8 cl100k tokens (resilience.truncate.min_half_tokens): ${shortHalves} kept and flagged`,
    );
    expect(Object.keys(byId).sort()).toEqual([
      'oran-bench-13k:local:0',
      'ot-lite:3gpp_tsg:0',
      'ot-lite:3gpp_tsg:1',
      'ot-lite:oranbench:0',
      'ot-lite:srsranbench:0',
      'ot-lite:telelogs:0',
      'ot-lite:telemath:0',
      'ot-lite:teleqna:0',
      'ot-lite:teletables:0',
    ]);
    const q = byId['ot-lite:teleqna:0']!;
    expect(q).toMatchObject({
      sub_benchmark: 'teleqna',
      choices: ['T300', 'T301', 'T310', 'T311'],
      correct_answer: 'T300',
      incorrect_answer: 'T301',
      correct_index: 0,
      incorrect_index: 1,
      parse_rule: 'strict',
      prompt_version: 'tele_resilience_base_mc_v1_reconstructed',
      half_trace: { tokenizer: 'cl100k_base', boundary: 'reference', cut: 'sentence' },
      generator: {
        model: 'qwen3.5:2b',
        profile: 'default',
        options: { think: true, num_predict: 512, temperature: 0 },
      },
    });
    expect(THINK.startsWith(q.half_reasoning_trace)).toBe(true);
    expect(q.tokens.reasoning_half).toBeLessThanOrEqual(q.tokens.midpoint);
    expect(q.generator.model_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(byId['ot-lite:telelogs:0']).toMatchObject({
      incorrect_answer: 'C4',
      correct_answer: 'C3',
      parse_rule: 'boxed',
    });
    expect(byId['ot-lite:3gpp_tsg:0']).toMatchObject({
      choices: ['SA4', 'SA5'],
      incorrect_answer: 'SA5',
      parse_rule: 'option-text',
    });
    expect(byId['ot-lite:teletables:0']).toMatchObject({
      difficulty: 'hard',
      half_trace: { cut: 'token-cut' },
    });
    const tm = byId['ot-lite:telemath:0']!;
    expect(tm).toMatchObject({
      correct_answer: '0.033',
      incorrect_answer: '2.0',
      kind: 'numeric',
      role: 'auxiliary',
    });
    expect('choices' in tm).toBe(false);
    expect(byId['oran-bench-13k:local:0']).toMatchObject({
      sub_benchmark: 'oran-bench-13k',
      role: 'extra',
      incorrect_answer: '3. A1',
    });

    // role files and the construction summary
    const count = (f: string) =>
      readFileSync(join(dir, f), 'utf8').trim().split('\n').filter(Boolean).length;
    expect([count('main.jsonl'), count('auxiliary.jsonl'), count('extra.jsonl')]).toEqual([
      7, 1, 1,
    ]);
    const summary = JSON.parse(readFileSync(join(dir, 'construction.json'), 'utf8'));
    expect(summary.truncation).toEqual({
      prompt_too_long: 0,
      prompt_truncated: 0,
      budget_exhausted: 1,
    });
    expect(summary.by_sub_benchmark.teleqna).toMatchObject({
      rows: 5,
      rejected: 1,
      generated: 2,
      correct: 1,
      wrong: 1,
      instances: 1,
      skipped: { budget_exhausted: 1, unparsed: 1 },
    });
    expect(summary.by_sub_benchmark.telemath).toMatchObject({ correct: 1, wrong: 1, instances: 1 });
    expect(summary.by_sub_benchmark['oran-bench-13k']).toMatchObject({ rows: 2, rejected: 1 });

    // every prompt went to the pinned model with the default profile's context
    const chats = llm.chatRequests();
    expect(chats).toHaveLength(14);
    const body = chats[0]!.body as {
      model: string;
      think: boolean;
      options: { num_ctx: number; num_predict: number; temperature: number };
    };
    expect(body).toMatchObject({
      model: 'qwen3.5:2b',
      think: true,
      options: { num_predict: 512, temperature: 0 },
    });
    expect(body.options.num_ctx % 1024).toBe(0);
    expect(
      hub.requests.every(
        (x) => !x.path.includes('/resolve/') || x.path.includes(`/resolve/${pinned}/`),
      ),
    ).toBe(true);

    // resume: nothing to do, no model call, no Hub request
    const hubBefore = hub.requests.length;
    const again = await runCli(['run', 'resilience', '--config', config, '--state', state]);
    expect(again.code).toBe(0);
    expect(llm.chatRequests()).toHaveLength(14);
    expect(hub.requests.length).toBe(hubBefore);

    // the report shows the funnel
    const rep = await runCli(['report', 'resilience', '--config', config, '--state', state]);
    expect(rep.stdout).toContain(
      '| teleqna | 5 | 1 | 2 | 1 | 1 | 1 | budget_exhausted 1, unparsed 1 |',
    );
    // the rejected rows are listed with their total (under 20 here, so all of them)
    const totalRejected = Object.values(
      summary.by_sub_benchmark as Record<string, { rejected: number }>,
    ).reduce((n, r) => n + r.rejected, 0);
    expect(totalRejected).toBeGreaterThan(1);
    expect(rep.stdout).toContain(`Rejected rows: ${totalRejected} in total:`);
    expect(rep.stdout.split('Rejected rows:')[1]!.match(/^- /gm)).toHaveLength(totalRejected);
  });

  it('with no Hub and no model server: local sources load, generation stops at preflight saying what to start, exit 3; done work stays done', async () => {
    const config = writeConfig('down', 'http://127.0.0.1:9', 'http://127.0.0.1:9');
    const state = join(work, 'down', 'state');
    const r = await runCli(['run', 'resilience', '--config', config, '--state', state]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/resilience\.load: completed — 1 done, 8 failed/);
    // the address once, then what failed (the HTTP error used to repeat the address)
    expect(r.stderr).toContain(
      'resilience.generate: stopped — Ollama is not reachable at http://127.0.0.1:9: GET /api/version failed',
    );
    expect(r.stderr).toContain('start Ollama');
    const status = await runCli(['status', '--json', '--state', state]);
    expect(status.stdout).toContain('hub_unreachable');
    // the report names the subsets that did not load, with the reason
    const rep = await runCli(['report', 'resilience', '--config', config, '--state', state]);
    expect(rep.code).toBe(0);
    expect(rep.stdout).toContain('Subsets not loaded: 8 (their rows are not counted above):');
    expect(rep.stdout).toMatch(/^- ot-lite:teleqna: failed: hub_unreachable: .*--retry-failed/m);
    // the advice once, not the message's and then the report's own
    expect(rep.stdout).not.toMatch(/--retry-failed.*--retry-failed/);
    // a second run reuses the loaded local subset (done stays done) and stops at the same place
    const again = await runCli(['run', 'resilience', '--config', config, '--state', state]);
    expect(again.code).toBe(3);
    expect(again.stdout).toMatch(
      /"kind":"stage-start","stage":"resilience.load","total":9,"alreadyDone":1/,
    );
    expect(existsSync(join(state, 'resilience'))).toBe(false);
  });

  it('a garbled model reply is retried like a 5xx; after the retries the item is failed and --retry-failed runs it again (issue 14, section 5)', async () => {
    const rev = hub.seedRepo({
      repo: 'test/ot-garbled',
      type: 'dataset',
      files: {
        'test_teleqna.json': JSON.stringify([
          { question: 'What does SDT stand for?', choices: ['Small Data', 'Slow Data'], answer: 0 },
          { question: 'Which layer does HARQ live in?', choices: ['MAC', 'RLC'], answer: 0 },
        ]),
      },
    });
    // a body cut mid-JSON, as a proxy or a crashed server sends it
    const garbled = { body: '{"model":"qwen3.5:2b","message":{"role":"assistant","thinking":"Tru' };
    let harqBroken = true;
    const asked = { sdt: 0, harq: 0 };
    const server = await startLlmServer({
      fallback: (req) => {
        const msgs = (req.body as { messages: { content: string }[] }).messages;
        const q = msgs[msgs.length - 1]!.content;
        if (q.includes('What does SDT')) {
          asked.sdt++;
          if (asked.sdt === 1) return garbled; // once: the retry reads the answer
        } else if (q.includes('Which layer does HARQ')) {
          asked.harq++;
          if (harqBroken) return garbled; // on every attempt of this run
        }
        return { thinking: THINK, content: 'Final Answer: 2' }; // wrong: kept as an instance
      },
    });
    try {
      const config = writeConfig('garbled', hub.url, server.url, {
        dataset: 'test/ot-garbled',
        revision: rev,
        only: 'teleqna',
        retries: 1,
      });
      const state = join(work, 'garbled', 'state');
      const first = await runCli(['run', 'resilience', '--config', config, '--state', state]);
      // not skipped, not exit 0: a failed item and the command that retries it
      expect(first.code, first.stderr).toBe(1);
      expect(first.stderr).toMatch(/^to resume: .* --retry-failed$/m);
      expect(asked).toEqual({ sdt: 2, harq: 2 }); // each garbled body was retried once
      const status = await runCli(['status', '--json', '--state', state]);
      expect(status.stdout).toContain('bad_response');
      expect(status.stdout).not.toMatch(/"skipped":\s*\{[^}]*bad_response/);

      harqBroken = false;
      const again = await runCli([
        'run',
        'resilience',
        '--config',
        config,
        '--state',
        state,
        '--retry-failed',
      ]);
      expect(again.code, again.stderr).toBe(0);
      expect(asked).toEqual({ sdt: 2, harq: 3 }); // only the failed item ran again
      const rows = readFileSync(join(state, 'resilience', 'instances', 'instances.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { sample_id: string }).sample_id)
        .sort();
      expect(rows).toEqual(['ot-lite:teleqna:0', 'ot-lite:teleqna:1']);
    } finally {
      await server.close();
    }
  });

  it('a reply that stops mid-sentence with empty content is counted as cut off, not kept as its retracted draft (issue 14, section 4)', async () => {
    const rev = hub.seedRepo({
      repo: 'test/ot-retracted',
      type: 'dataset',
      files: {
        'test_teleqna.json': JSON.stringify([
          { question: 'Which bearer carries SDT?', choices: ['SRB1', 'DRB', 'SRB2'], answer: 0 },
        ]),
      },
    });
    // the issue's reply: empty content, finish stop, usage 0, a draft taken back, then cut off
    const server = await startLlmServer({
      fallback: {
        thinking:
          'Option 2 fits.\nFinal Answer: 2\nWait, that is wrong ... so option 1 is better. Let me double-check the',
        content: '',
        doneReason: 'stop',
        promptEvalCount: 0,
        evalCount: 0,
      },
    });
    try {
      const config = writeConfig('retracted', hub.url, server.url, {
        dataset: 'test/ot-retracted',
        revision: rev,
        only: 'teleqna',
      });
      const state = join(work, 'retracted', 'state');
      const r = await runCli(['run', 'resilience', '--config', config, '--state', state]);
      expect(r.code, r.stderr).toBe(0);
      const dir = join(state, 'resilience', 'instances');
      expect(readFileSync(join(dir, 'instances.jsonl'), 'utf8').trim()).toBe('');
      const summary = JSON.parse(readFileSync(join(dir, 'construction.json'), 'utf8'));
      expect(summary.by_sub_benchmark.teleqna).toMatchObject({
        instances: 0,
        skipped: { reply_cut_off: 1 },
      });
    } finally {
      await server.close();
    }
  });

  it('paper profile: num_ctx 2048 and num_predict 4096; a prompt that cannot fit is refused and one at the limit is flagged, both counted', async () => {
    const rev = hub.seedRepo({
      repo: 'test/ot-paper',
      type: 'dataset',
      files: {
        'test_teleqna.json': JSON.stringify([
          {
            question: `Long table: ${'cell 12 dB; '.repeat(900)}Which row?`,
            choices: ['a', 'b'],
            answer: 0,
          },
          { question: 'At the edge of the window: which option?', choices: ['a', 'b'], answer: 0 },
          { question: 'Which timer guards RRC setup?', choices: ['T300', 'T301'], answer: 0 },
        ]),
      },
    });
    const config = writeConfig('paper', hub.url, llm.url, {
      dataset: 'test/ot-paper',
      revision: rev,
      profile: 'paper',
      only: 'teleqna',
    });
    const state = join(work, 'paper', 'state');
    const before = llm.chatRequests().length;
    const r = await runCli(['run', 'resilience', '--config', config, '--state', state]);
    expect(r.code).toBe(0);
    const sent = llm.chatRequests().slice(before);
    expect(sent).toHaveLength(2); // the long prompt is never sent
    for (const c of sent) {
      expect(c.body).toMatchObject({
        think: true,
        options: { num_ctx: 2048, num_predict: 4096, temperature: 0 },
      });
    }
    const summary = JSON.parse(
      readFileSync(join(state, 'resilience', 'instances', 'construction.json'), 'utf8'),
    );
    expect(summary.profile).toBe('paper');
    expect(summary.truncation).toEqual({
      prompt_too_long: 1,
      prompt_truncated: 1,
      budget_exhausted: 0,
    });
    const rows = readFileSync(join(state, 'resilience', 'instances', 'instances.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!)).toMatchObject({
      sample_id: 'ot-lite:teleqna:2',
      generator: { profile: 'paper', options: { num_ctx: 2048, num_predict: 4096 } },
    });
  });
});
