/**
 * The evaluation branch end to end through the real CLI: published-schema instances (a local
 * file) -> `telebench run resilience-eval` against the scripted Ollama-protocol server
 * (test/servers/llm-server.ts) -> `telebench report resilience-eval` -> the HTML page opened in
 * headless Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLlmServer, type LlmServer } from '../../servers/llm-server.js';
import { checkPage } from '../../fixtures/chromium-page.js';
import { ROOT, runPipelineCli } from '../../fixtures/cli.js';

const half = 'Thinking Process: the timer looks like T301. That suggests option 2.';
// Published schema: gold and the generator's wrong answer as option texts / numbers.
const instances = [
  {
    sample_id: 'ot-lite:teleqna:1',
    sub_benchmark: 'teleqna',
    question: 'Q1 correct?',
    choices: ['T300', 'T301', 'T310'],
    correct_answer: 'T300',
    incorrect_answer: 'T301',
    half_reasoning_trace: half,
  },
  {
    sample_id: 'ot-lite:teleqna:2',
    sub_benchmark: 'teleqna',
    question: 'Q2 noflip?',
    choices: ['A', 'B', 'C'],
    correct_answer: 'A',
    incorrect_answer: 'B',
    half_reasoning_trace: half,
  },
  {
    sample_id: 'ot-lite:teleqna:3',
    sub_benchmark: 'teleqna',
    question: 'Q3 hedge?',
    choices: ['A', 'B', 'C', 'D'],
    correct_answer: 'A',
    incorrect_answer: 'B',
    half_reasoning_trace: half,
  },
  {
    sample_id: 'ot-lite:oranbench:4',
    sub_benchmark: 'ORANBench',
    question: 'Q4 retracted?',
    choices: ['A', 'B', 'C'],
    correct_answer: 'A',
    incorrect_answer: 'B',
    half_reasoning_trace: half,
    difficulty: 'hard',
  },
  {
    sample_id: 'ot-lite:oranbench:5',
    sub_benchmark: 'ORANBench',
    question: 'Q5 wrongflip?',
    choices: ['A', 'B', 'C'],
    correct_answer: 'A',
    incorrect_answer: 'B',
    half_reasoning_trace: half,
    difficulty: 'easy',
  },
  {
    sample_id: 'ot-lite:telemath:6',
    sub_benchmark: 'telemath',
    question: 'Q6 math?',
    correct_answer: '293.0',
    incorrect_answer: '256.0',
    half_reasoning_trace: half,
  },
];

describe('resilience-eval end to end (scripted server)', () => {
  let llm: LlmServer;
  let dir: string;
  beforeAll(async () => {
    llm = await startLlmServer({
      models: [{ name: 'target:1b', digest: 'sha256:t', sizeVram: 3 * 2 ** 30 }],
      rules: [
        {
          match: 'Q1 correct',
          thinking: 'Reconsider: T300 guards setup.',
          content: 'Final Answer: 1',
        },
        { match: 'Q2 noflip', thinking: 'The trace is right.', content: 'Final Answer: 2' },
        { match: 'Q3 hedge', thinking: 'Hmm.', content: 'Final Answer: 4 ... or 2' },
        {
          match: 'Q4 retracted',
          thinking:
            'Option 2 fits.\nFinal Answer: 2\nWait, that is wrong ... so option 1 is better. Let me double-check the',
          content: '',
        },
        { match: 'Q5 wrongflip', thinking: 'No, C.', content: 'Final Answer: $3$' },
        { match: 'Q6 math', thinking: 'Add them.', content: 'Final Answer: 256+37 = 293' },
      ],
    });
    dir = mkdtempSync(join(tmpdir(), 'telebench-eval-'));
    writeFileSync(join(dir, 'published.jsonl'), instances.map((r) => JSON.stringify(r)).join('\n'));
    writeFileSync(
      join(dir, 'config.yaml'),
      `version: 1
resilience:
  prompts_dir: ${join(ROOT, 'config/prompts/resilience')}
resilience_eval:
  input: { source: file, files: [published.jsonl] }
  targets:
    - model: target:1b
      profile: default
      num_predict: 512
      llm:
        endpoints: [{ kind: ollama, base_url: ${llm.url}, concurrency: 2 }]
`,
    );
  });
  afterAll(async () => {
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('continues every instance with the paper template, scores three modes, and reports', async () => {
    const state = join(dir, 'state');
    const run = await runPipelineCli('run', 'resilience-eval', state, join(dir, 'config.yaml'));
    expect(run.code, run.stderr).toBe(0);
    const chats = llm.chatRequests();
    expect(chats).toHaveLength(6);
    const prompt = (chats[0]!.body as { messages: { content: string }[] }).messages[0]!.content;
    expect(prompt).toContain('Partial reasoning (incomplete — continue from here):\n' + half);
    expect(prompt).toMatch(/\nUse the model's thinking stream to extend this partial trace\./);

    // a second run repeats nothing
    const again = await runPipelineCli('run', 'resilience-eval', state, join(dir, 'config.yaml'));
    expect(again.code).toBe(0);
    expect(llm.chatRequests()).toHaveLength(6);

    const rep = await runPipelineCli('report', 'resilience-eval', state, join(dir, 'config.yaml'));
    expect(rep.code, rep.stderr).toBe(0);
    const md = rep.stdout;
    // lenient: teleqna 1 correct, 1 no flip, 1 ambiguous of 3; oranbench: retracted/cut + wrong flip
    expect(md).toMatch(
      /## Table I, lenient parse[\s\S]*?\| target:1b \| 33\.3 \/ 33\.3 \/ 0\.0 \| 0\.0 \/ 0\.0 \/ 50\.0 \|/,
    );
    // published (the authors' scorer) reads the retracted draft (2 = the generator's answer) and
    // the hedge's last digit (2, the generator's answer again)
    expect(md).toMatch(
      /## Table I, published parse[\s\S]*?\| target:1b \| 33\.3 \/ 66\.7 \/ 0\.0 \| 0\.0 \/ 50\.0 \/ 50\.0 \|/,
    );
    // lenient reads the concluded value 293; the published scorer reads 256 (its defect)
    expect(md).toMatch(/## Table I, lenient parse[\s\S]*?TeleMath CR%: target:1b 100\.0/);
    expect(md).toMatch(/## Table I, published parse[\s\S]*?TeleMath CR%: target:1b 0\.0/);
    expect(md).toMatch(/VRAM 3\.00 GiB \(ollama-allocated/);

    const html = join(state, 'reports', 'resilience-eval.html');
    expect(readFileSync(html, 'utf8')).toContain('<figure data-figure="cfr-by-subset">');
    const seen = await checkPage(html);
    expect(seen.consoleErrors).toEqual([]);
    expect(seen.textLength).toBeGreaterThan(200);
    expect(seen.figures['cfr-by-subset']!.marks).toBe(2); // teleqna and oranbench, one model
    // one model: its point and the point's label (Figs. 4 and 5 label their points)
    expect(seen.figures['cfr-vs-tokens']!.marks).toBe(2);
    expect(seen.figures['cfr-vs-vram']!.marks).toBe(2);
    expect(seen.figures['cfr-by-difficulty']!.marks).toBe(2); // easy, hard
  });
});
