/**
 * Profiles of the evaluation (issue 10): `paper` continues with num_ctx 2048 and the context shift
 * allowed, an over-long prompt cut as Ollama cut it in the published run and flagged
 * (`prompt_truncated`, `context_shifted`), never refused and never silent; `default` fits every
 * prompt and never cuts. Against the scripted Ollama-protocol server and the embedded runtime on
 * the real SmolLM2-135M (node-llama-cpp in this process).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLlmServer, type LlmServer } from '../../servers/llm-server.js';
import { SMOLLM2_NAME, smollm2Path } from '../../fixtures/smollm2.js';
import { EmbeddedProvider } from '../../../pipeline/providers/llm/embedded.js';
import { ollamaCut } from '../../../pipeline/providers/llm/truncation.js';
import type { ChatRequest } from '../../../pipeline/providers/llm/types.js';
import { ROOT, runCli, runPipelineCli } from '../../fixtures/cli.js';
import { chatRequest, type FlatRequest } from '../../fixtures/chat-request.js';
import { hasWarning } from '../../../pipeline/providers/llm/types.js';

describe('ollamaCut (the published run: Ollama truncation, then its context shift)', () => {
  it('keeps the first 4 tokens and the tail, hand-computed', () => {
    // 3000 tokens in 2048: truncated to 4 + last 2044, then the shift drops floor(2044/2) = 1022
    // after the first 4: the tail starts at 3000 - 2044 + 1022 = 1978 (1022 tokens kept)
    expect(ollamaCut(3000, 2048)).toEqual({ head: 4, tailStart: 1978, cut: true, discard: 1022 });
    expect(ollamaCut(2048, 2048)).toMatchObject({ head: 4, tailStart: 1026, cut: true });
    expect(ollamaCut(2047, 2048)).toEqual({
      head: 2047,
      tailStart: 2047,
      cut: false,
      discard: 1022,
    });
  });
});

// ~700 SmolLM2 tokens: numbered sentences, the question at the end
const LONG = Array.from(
  { length: 70 },
  (_, i) => `Sentence ${i + 1} says the timer in the radio link is stable.`,
).join(' ');
const ask = (content: string, extra: Partial<FlatRequest> = {}): ChatRequest =>
  chatRequest({
    model: SMOLLM2_NAME,
    messages: [{ role: 'user', content }],
    temperature: 0,
    numCtx: 256,
    maxTokens: 24,
    ...extra,
  });

describe('embedded runtime (SmolLM2) honours both profiles', () => {
  let dir: string;
  let provider: EmbeddedProvider;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tb-eval-profiles-'));
    provider = new EmbeddedProvider({
      model: SMOLLM2_NAME,
      sources: [{ path: smollm2Path() }],
      baseDir: dir,
      modelsDir: join(dir, 'models'),
      threads: 1,
      gpu: false,
    });
  });
  afterAll(async () => {
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('default: an over-long prompt is refused (never cut); paper: cut as Ollama did, flagged', async () => {
    await expect(provider.chat(ask(`${LONG} What is stable?`))).rejects.toMatchObject({
      code: 'prompt_too_long',
    });
    const r = await provider.chat(
      ask(`${LONG} What is stable?`, { truncatePrompt: true, contextShift: true }),
    );
    expect(hasWarning(r, 'prompt-truncated')).toBe(true);
    expect(hasWarning(r, 'context-shifted')).toBe(true);
    expect(r.promptTokens).toBe(256); // what Ollama reported for a cut prompt: the window
    expect(r.outputTokens).toBeGreaterThan(0);
    expect(r.outputTokens).toBeLessThanOrEqual(24);
    expect(r.content.length).toBeGreaterThan(0);
    // a prompt that fits is not flagged as cut
    const short = await provider.chat(
      ask('What is 2 + 3?', { truncatePrompt: true, contextShift: true }),
    );
    expect(hasWarning(short, 'prompt-truncated')).toBe(false);
    expect(short.promptTokens).toBeLessThan(256);
  });

  it('paper with the shift: an answer that fills the window goes on after a shift, flagged', async () => {
    // 44 prompt tokens in a 96-token window and a 100-token budget: the window fills mid-answer
    const prompt = 'Count from 1 to 100, separated by commas.';
    const r = await provider.chat(
      ask(prompt, { numCtx: 96, maxTokens: 100, truncatePrompt: true, contextShift: true }),
    );
    expect(hasWarning(r, 'prompt-truncated')).toBe(false);
    expect(r.promptTokens! + r.outputTokens!).toBeGreaterThan(96);
    expect(hasWarning(r, 'context-shifted')).toBe(true);
    expect(r.content).toMatch(/^1, 2, 3, 4, 5/);
    // without the shift the answer stops at the window (length), never past it
    const stopped = await provider.chat(
      ask(prompt, { numCtx: 96, maxTokens: 100, truncatePrompt: true }),
    );
    expect(stopped.promptTokens! + stopped.outputTokens!).toBe(96);
    expect(stopped.doneReason).toBe('length');
    expect(hasWarning(stopped, 'context-shifted')).toBe(false);
  });
});

describe('resilience-eval paper and default profiles end to end (scripted server, SmolLM2)', () => {
  let llm: LlmServer;
  let dir: string;
  // > 2048 cl100k tokens: over the paper window
  const longTrace = Array.from(
    { length: 260 },
    (_, i) => `Step ${i + 1}: the AMF keeps the registration timer running.`,
  ).join(' ');
  const instances = [
    {
      sample_id: 'ot-lite:teleqna:1',
      sub_benchmark: 'teleqna',
      question: 'LONGQ Which NF?',
      choices: ['AMF', 'SMF', 'UDM'],
      correct_answer: 'AMF',
      incorrect_answer: 'SMF',
      half_reasoning_trace: longTrace,
    },
    {
      sample_id: 'ot-lite:teleqna:2',
      sub_benchmark: 'teleqna',
      question: 'SHORTQ Which NF?',
      choices: ['AMF', 'SMF', 'UDM'],
      correct_answer: 'AMF',
      incorrect_answer: 'SMF',
      half_reasoning_trace: 'The SMF handles it.',
    },
  ];
  beforeAll(async () => {
    llm = await startLlmServer({
      models: [{ name: 'target:1b', digest: 'sha256:t' }],
      rules: [{ match: 'Which NF', thinking: 'AMF.', content: 'Final Answer: 1' }],
    });
    dir = mkdtempSync(join(tmpdir(), 'telebench-eval-profiles-'));
    writeFileSync(join(dir, 'inst.jsonl'), instances.map((r) => JSON.stringify(r)).join('\n'));
    const embedded = `{ kind: embedded, model: ${SMOLLM2_NAME}, source: [{ path: ${smollm2Path()} }], threads: 1, gpu: false }`;
    writeFileSync(
      join(dir, 'config.yaml'),
      `version: 1
resilience:
  prompts_dir: ${join(ROOT, 'config/prompts/resilience')}
resilience_eval:
  input: { source: file, files: [inst.jsonl] }
  targets:
    - { name: scripted-paper, model: target:1b, profile: paper, llm: { endpoints: [{ kind: ollama, base_url: ${llm.url} }] } }
    - { name: scripted-default, model: target:1b, profile: default, num_predict: 256, llm: { endpoints: [{ kind: ollama, base_url: ${llm.url} }] } }
    - { name: smol-paper, model: ${SMOLLM2_NAME}, profile: paper, llm: { endpoints: [${embedded}] } }
`,
    );
  });
  afterAll(async () => {
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const show = async (state: string, key: string) => {
    const r = await runCli(['--state', state, 'show', 'resilience-eval.continue', key]);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };

  it('paper scores and flags the cut row; default fits every prompt and cuts none', async () => {
    const state = join(dir, 'state');
    const run = await runPipelineCli('run', 'resilience-eval', state, join(dir, 'config.yaml'));
    expect(run.code, run.stderr).toBe(0);
    const bodies = llm.chatRequests().map(
      (c) =>
        c.body as {
          truncate: boolean;
          shift: boolean;
          options: { num_ctx: number; num_predict: number };
          messages: { content: string }[];
        },
    );
    expect(bodies).toHaveLength(4);
    const paper = bodies.filter((b) => b.options.num_ctx === 2048);
    expect(paper).toHaveLength(2);
    for (const b of paper) expect(b).toMatchObject({ truncate: true, shift: true });
    for (const b of paper) expect(b.options.num_predict).toBe(512);
    const dflt = bodies.filter((b) => b.options.num_ctx !== 2048);
    expect(dflt).toHaveLength(2);
    for (const b of dflt) expect(b).toMatchObject({ truncate: false, shift: false });
    // default sized the window to the longest prompt plus the budget
    expect(dflt[0]!.options.num_ctx).toBeGreaterThan(2048);

    const flags = (out: string) =>
      JSON.parse(/"flags":\s*(\{[^}]*\})/.exec(out)![1]!) as Record<string, boolean>;
    const excluded = (out: string) => /"excluded":\s*(null|"[^"]*")/.exec(out)![1];
    // scripted, paper: the long prompt was sent (Ollama cut it), flagged, and scored
    const sp = await show(state, 'scripted-paper::ot-lite:teleqna:1');
    expect(flags(sp).prompt_truncated).toBe(true);
    expect(excluded(sp)).toBe('null');
    expect(sp).toMatch(/"strict":\s*"correct_flip"/);
    expect(flags(await show(state, 'scripted-paper::ot-lite:teleqna:2')).prompt_truncated).toBe(
      false,
    );
    // scripted, default: nothing cut
    const sd = await show(state, 'scripted-default::ot-lite:teleqna:1');
    expect(flags(sd)).toMatchObject({ prompt_truncated: false, context_shifted: false });
    expect(excluded(sd)).toBe('null');
    // SmolLM2, paper: the long prompt cut as Ollama did and flagged, the row kept
    const ep = await show(state, 'smol-paper::ot-lite:teleqna:1');
    expect(flags(ep)).toMatchObject({ prompt_truncated: true, context_shifted: true });
    expect(excluded(ep)).toBe('null');
    expect(ep).toMatch(/"prompt_tokens":\s*2048/);
    expect(flags(await show(state, 'smol-paper::ot-lite:teleqna:2')).prompt_truncated).toBe(false);

    const rep = await runPipelineCli('report', 'resilience-eval', state, join(dir, 'config.yaml'));
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout).toMatch(
      /scripted-paper \(target:1b, profile paper, num_ctx 2048\): 2 replies, 0 failed items;.*rows with a cut prompt, context shift or exhausted budget: 1\./,
    );
    expect(rep.stdout).toMatch(
      /scripted-default \(target:1b, profile default\): 2 replies, 0 failed items;.*exhausted budget: 0\./,
    );
  });
});
