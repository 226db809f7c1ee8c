/**
 * `telebench score` on Inspect AI logs (stages/resilience-eval/inspect-log.ts): real logs written
 * by Inspect itself (inspect-ai from cache/inspect-venv) for the shipped task, whose solver is
 * given each reply (test/fixtures/inspect/canned_replies.py: no model). The reader takes the
 * reply, the reasoning parts, the stop reason and a sample's error from the `.eval` zip
 * (Zstandard), its `.json` form and an older deflated zip alike; the task's own scorer and
 * `telebench score`'s strict mode agree on every reply (the task reading the instances as the
 * Hub's CSV, telebench as JSON Lines), a reply stopped by the budget excluded by both, as
 * telebench's default profile does; plausible wrong answers (a hedge, an option
 * out of range, the generator's answer) are not correct flips, and a correct answer written
 * otherwise (spaces, a thousands comma) is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TelebenchError } from '../../../pipeline/errors.js';
import { indexInstances } from '../../../stages/resilience-eval/eval-instance.js';
import { isInspectLog, readInspectLog } from '../../../stages/resilience-eval/inspect-log.js';
import { readPredictionInputs, scoreFiles } from '../../../stages/resilience-eval/score.js';
import { ROOT } from '../../fixtures/cli.js';
import { INSPECT_BIN } from '../../fixtures/inspect-ai.js';

const PYTHON = join(INSPECT_BIN, '../python');
const mc = (id: number) => ({
  sample_id: `ot-lite:teleqna:${id}`,
  sub_benchmark: 'teleqna',
  question: 'Which timer supervises RRC connection establishment?',
  choices: ['T300', 'T301', 'T310'],
  correct_answer: 'T300',
  incorrect_answer: 'T301',
  half_reasoning_trace: 'The procedure looks like re-establishment.\nThat suggests T301.',
});
const num = (id: number) => ({
  sample_id: `ot-lite:telemath:${id}`,
  sub_benchmark: 'telemath',
  question: 'A 20 MHz carrier at 61.725 bit/s/Hz: throughput in Mbit/s?',
  correct_answer: '1234.5',
  incorrect_answer: '1000.0',
  half_reasoning_trace: 'The bandwidth is 20 MHz. The efficiency is about 50 bit/s/Hz.',
});
// reply per sample, and the outcome the task's scorer must give (telebench strict mode)
const CASES: [unknown, Record<string, unknown> | null, string][] = [
  [mc(1), { content: 'Going back over it, T300 fits.\nFinal Answer: 1' }, 'correct_flip'],
  [mc(2), { content: 'Final Answer: 2' }, 'no_flip'],
  [mc(3), { content: 'Final Answer: 3' }, 'wrong_flip'],
  [mc(4), { content: 'Final Answer: 4' }, 'parse_failure'],
  [mc(5), { content: 'Final Answer: 1 or 2' }, 'parse_failure'],
  [
    mc(6),
    { content: 'Final Answer:   1  ', reasoning: 'So it is T300 after all.' },
    'correct_flip',
  ],
  [mc(7), { content: 'Final Answer: 1', stop_reason: 'max_tokens' }, 'excluded'],
  [mc(8), null, 'error'],
  [num(9), { content: 'Final Answer: 1,234.5' }, 'correct_flip'],
  [num(10), { content: 'Final Answer: 1000' }, 'no_flip'],
  [num(11), { content: 'The throughput is 1234.5 Mbit/s.' }, 'parse_failure'],
];

let dir: string;
let instancesFile: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tb-inspect-log-'));
  instancesFile = join(dir, 'instances.jsonl');
  writeFileSync(instancesFile, CASES.map(([i]) => JSON.stringify(i)).join('\n') + '\n');
  // the task reads the same instances as the Hub's CSV has them: choices as a Python list literal
  const cols = ['sample_id', 'sub_benchmark', 'question', 'choices', 'correct_answer'];
  cols.push('incorrect_answer', 'half_reasoning_trace');
  const cell = (v: unknown) =>
    `"${(Array.isArray(v) ? `[${v.map((c) => `'${String(c)}'`).join(', ')}]` : String(v ?? '')).replaceAll('"', '""')}"`;
  writeFileSync(
    join(dir, 'instances.csv'),
    [
      cols.join(','),
      ...CASES.map(([i]) => cols.map((c) => cell((i as Record<string, unknown>)[c])).join(',')),
    ].join('\n') + '\n',
  );
  const replies = Object.fromEntries(
    CASES.map(([i, r]) => [(i as { sample_id: string }).sample_id, r]),
  );
  writeFileSync(join(dir, 'replies.json'), JSON.stringify(replies));
  await promisify(execFile)(
    PYTHON,
    [
      join(ROOT, 'test/fixtures/inspect/canned_replies.py'),
      join(ROOT, 'inspect/teleresiliencebench'),
      join(dir, 'instances.csv'),
      join(dir, 'replies.json'),
      dir,
    ],
    { cwd: dir },
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const strictById = async (file: string) => {
  const instances = indexInstances([instancesFile]);
  const [res] = scoreFiles(await readPredictionInputs([file], instances), instances);
  return Object.fromEntries(res!.scores.map((s) => [s.sample_id, s.outcomes.strict]));
};

describe('Inspect logs as telebench score input', () => {
  it('reads reply, reasoning, stop reason and error of each sample from every log form', async () => {
    const forms = ['canned.eval', 'canned.json', 'deflate.eval'].map((f) => join(dir, f));
    for (const f of forms) expect(isInspectLog(f)).toBe(true);
    expect(isInspectLog(instancesFile)).toBe(false);
    const [zstd, json, deflate] = await Promise.all(forms.map((f) => readInspectLog(f)));
    expect(zstd!.errors).toEqual([]);
    // the same rows whatever the form (a zip keeps the order samples finished in)
    const sorted = (l: typeof zstd) => l!.rows.map((r) => JSON.stringify(r.json)).sort();
    expect(sorted(json)).toEqual(sorted(zstd));
    expect(sorted(deflate)).toEqual(sorted(zstd));
    const byId = new Map(
      zstd!.rows.map((r) => [(r.json as { sample_id: string }).sample_id, r.json]),
    );
    expect(byId.size).toBe(CASES.length);
    expect(byId.get('ot-lite:teleqna:6')).toMatchObject({
      model: 'mockllm/model',
      content: 'Final Answer:   1  ',
      thinking: 'So it is T300 after all.',
      done_reason: 'stop',
    });
    expect(byId.get('ot-lite:teleqna:7')).toMatchObject({
      done_reason: 'length',
      budget_exhausted: true,
    });
    // only the sample stopped by max_tokens is marked
    const marked = [...byId.values()].filter(
      (r) => (r as Record<string, unknown>).budget_exhausted,
    );
    expect(marked).toHaveLength(1);
    expect(byId.get('ot-lite:teleqna:8')).toMatchObject({
      error: expect.stringContaining('the provider failed'),
    });
  });

  it("the task's scorer and telebench score's strict mode give the same outcome on every reply", async () => {
    const strict = await strictById(join(dir, 'canned.eval'));
    const log = (await import('node:fs').then((fs) =>
      JSON.parse(fs.readFileSync(join(dir, 'canned.json'), 'utf8').replace(/\bNaN\b/g, 'null')),
    )) as { samples: { id: string; scores?: Record<string, { metadata: { outcome: string } }> }[] };
    const task = Object.fromEntries(
      log.samples.map((s) => [s.id, s.scores?.resilience_scorer?.metadata.outcome ?? 'error']),
    );
    for (const [inst, , outcome] of CASES) {
      const id = (inst as { sample_id: string }).sample_id;
      expect(task[id], `${id} task scorer`).toBe(outcome);
      // telebench score: a sample's error is excluded; a reply the budget stopped is excluded
      // too, as by the task's scorer (its 'Final Answer: 1' would otherwise be a correct flip)
      const want = outcome === 'error' ? 'excluded' : outcome;
      expect(strict[id], `${id} telebench score`).toBe(want);
    }
  });

  it('refuses a second epoch of a sample, and a file that is not an Inspect log, naming them', async () => {
    const epochs = await readInspectLog(join(dir, 'epochs.json'));
    expect(epochs.rows).toHaveLength(1);
    expect(epochs.errors[0]!.message).toMatch(/sample 2: .*epoch 2.*--epochs 1/);
    const notZip = join(dir, 'broken.eval');
    writeFileSync(notZip, '{"eval": {}, "samples": []}');
    const err = await readInspectLog(notZip).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect(err).toMatchObject({ code: 'input_missing' });
    expect((err as Error).message).toContain(notZip);
  });
});
