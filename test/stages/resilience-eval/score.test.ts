import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { scoreFiles } from '../../../stages/resilience-eval/score.js';
import { readEvalInstances } from '../../../stages/resilience-eval/eval-instance.js';
import { DISCRETE_SUBSETS } from '../../../stages/resilience-eval/metrics.js';
import { realDataRoot } from '../../fixtures/real-data.js';

// The published experiment files and instances (real data found like the product finds it, never
// copied: test/fixtures/real-data.ts).
const MODELS = ['gemma4_31b', 'nemotron-3-nano_4b'];
const DATA = join(
  await realDataRoot(
    'teleresiliencebench/AuxiliaryBenchmark.json',
    ...MODELS.flatMap((m) =>
      ['main', 'aux'].map((f) => `teleresiliencebench/experiments/${m}/${f}.jsonl`),
    ),
  ),
  'teleresiliencebench',
);
const EXP = join(DATA, 'experiments');
const ROOT = resolve(import.meta.dirname, '../../..');

// The paper's Table I and the data's README: published per-subset and macro CFR (Table I), TeleMath CR%.
const PUBLISHED = {
  'gemma4:31b': {
    teleqna: 32.9,
    teletables: 18.4,
    telelogs: 19.8,
    '3gpp_tsg': 16.7,
    oranbench: 31.7,
    srsranbench: 44.7,
    sixg_bench: 39.2,
    macro: 29.1,
  },
  'nemotron-3-nano:4b': {
    teleqna: 34.0,
    teletables: 26.3,
    telelogs: 5.8,
    '3gpp_tsg': 11.1,
    oranbench: 39.7,
    srsranbench: 46.8,
    sixg_bench: 28.9,
    macro: 27.5,
  },
} as const;

describe('telebench score on the published experiment files', () => {
  const aux = new Map(
    readEvalInstances(join(DATA, 'AuxiliaryBenchmark.json')).map((i) => [i.sample_id, i]),
  );
  const results = scoreFiles(
    ['gemma4_31b', 'nemotron-3-nano_4b'].flatMap((m) => [
      join(EXP, m, 'main.jsonl'),
      join(EXP, m, 'aux.jsonl'),
    ]),
    aux,
  );
  const by = new Map(results.map((r) => [r.s.model, r]));

  it('reads every row, one summary per model (main + aux)', () => {
    expect([...by.keys()].sort()).toEqual(['gemma4:31b', 'nemotron-3-nano:4b']);
    for (const r of results) {
      expect(r.s.rows).toBe(895);
      expect(r.s.errors).toEqual([]);
    }
    expect(by.get('gemma4:31b')!.s.prompts_at_limit).toBe(595);
  });

  it('the recorded predictions give the published CFR per subset and macro to 0.1 points', () => {
    for (const [model, want] of Object.entries(PUBLISHED)) {
      const m = by.get(model)!.s.modes.recorded!;
      for (const s of DISCRETE_SUBSETS)
        expect(Math.abs(m.by_subset[s]!.cfr! - want[s]), `${model} ${s}`).toBeLessThan(0.05 + 1e-9);
      expect(Math.abs(m.macro.cfr! - want.macro), `${model} macro`).toBeLessThanOrEqual(0.1);
    }
    expect(by.get('nemotron-3-nano:4b')!.s.modes.recorded!.telemath!.cfr).toBeCloseTo(23.38, 1);
  });

  it('published mode (their scorer) reproduces every recorded answer but the rows the file cannot decide', () => {
    const g = by.get('gemma4:31b')!.s.reproduction!;
    const n = by.get('nemotron-3-nano:4b')!.s.reproduction!;
    // TeleLogs' options (C1..C8) are known, so its option-text rows are decided; TeleMath all
    expect([g.reproduced, g.compared]).toEqual([853, 895]);
    expect([n.reproduced, n.compared]).toEqual([883, 895]);
    expect([g.lacking_option_texts, g.lacking_option_count]).toEqual([39, 3]);
    expect([n.lacking_option_texts, n.lacking_option_count]).toEqual([12, 0]);
    for (const r of [g, n])
      // every row not reproduced is one of the two: nothing else differs
      expect(r.compared - r.reproduced).toBe(r.lacking_option_texts + r.lacking_option_count);
    const t = (id: string) => by.get(id)!.scores.filter((s) => s.subset === 'telemath');
    expect(t('gemma4:31b').every((s) => s.reproduced)).toBe(true);
    expect(t('nemotron-3-nano:4b').every((s) => s.reproduced)).toBe(true);
    // TeleMath: NFR is available from the published instances' incorrect_answer
    expect(by.get('gemma4:31b')!.s.modes.published!.telemath!.nfr).not.toBeNull();
    // the main rows have no generator answer: NFR/WFR unavailable, never 0
    expect(by.get('gemma4:31b')!.s.modes.published!.macro.nfr).toBeNull();
  });

  it('strict and lenient give their own, different tables', () => {
    const s = by.get('nemotron-3-nano:4b')!.s;
    expect(s.modes.strict!.macro.cfr).not.toBeCloseTo(s.modes.published!.macro.cfr!, 1);
    expect(s.modes.lenient!.macro.cfr).not.toBeNull();
  });
});

describe('telebench score on our own predictions', () => {
  it('scores good rows and names each malformed row by its line (exit 1)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-score-'));
    const inst = join(dir, 'inst.jsonl');
    const base = { question: 'q?', half_reasoning_trace: 'We think.', sub_benchmark: 'TeleQnA' };
    writeFileSync(
      inst,
      [
        {
          ...base,
          sample_id: 'ot-lite:teleqna:1',
          choices: ['a', 'b', 'c'],
          correct_answer: 'b',
          incorrect_answer: 'a',
        },
        {
          ...base,
          sample_id: 'ot-lite:teleqna:2',
          choices: ['a', 'b', 'c'],
          correct_answer: 'c',
          incorrect_answer: 'a',
        },
        {
          ...base,
          sample_id: 'ot-lite:telemath:3',
          sub_benchmark: 'telemath',
          correct_answer: '0.5',
          incorrect_answer: '2.0',
        },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const preds = join(dir, 'preds.jsonl');
    writeFileSync(
      preds,
      [
        JSON.stringify({ sample_id: 'ot-lite:teleqna:1', model: 'm', output: 'Final Answer: 2' }),
        '{not json',
        JSON.stringify({ sample_id: 'ot-lite:teleqna:2', model: 'm', answer: 1 }),
        JSON.stringify({ sample_id: 'ot-lite:teleqna:9', model: 'm', answer: 1 }),
        JSON.stringify({
          sample_id: 'ot-lite:telemath:3',
          model: 'm',
          content: 'Final Answer: $0.5$',
        }),
      ].join('\n'),
    );
    const r = spawnSync(
      'node',
      [join(ROOT, 'bin/telebench.js'), 'score', preds, '--instances', inst],
      {
        encoding: 'utf8',
        cwd: dir,
      },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/preds\.jsonl:2:2: not JSON/);
    expect(r.stderr).toMatch(/preds\.jsonl:4: ot-lite:teleqna:9: not in the instances/);
    expect(r.stdout).toContain('3 rows scored, 2 malformed');
    // teleqna: 1 correct of 2, 1 no flip (answer 1 = generator's 'a')
    expect(r.stdout).toMatch(/\| m \| 50\.0 \/ 50\.0 \/ 0\.0 \|/);
    expect(r.stdout).toContain('TeleMath CR%: m 100.0');
    expect(
      execFileSync('node', [join(ROOT, 'bin/telebench.js'), 'score', '--help'], {
        encoding: 'utf8',
      }),
    ).toContain('--instances');
  });
});

describe('telebench score: rows decided by option texts', () => {
  it('decides them when the instances carry choices, and counts them as lacking option texts when not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-score-text-'));
    const row = (id: string, response: string, rec: number) =>
      JSON.stringify({
        sample_id: id,
        sub_benchmark: 'teleqna',
        task_kind: 'mc',
        model: 'm',
        continuation_raw: response,
        continuation_thinking: null,
        continuation_response: response,
        continuation_pred_index: rec,
        continuation_pred_float: null,
        gold_index: 2,
        gold_float: null,
        prompt_tokens: 2048,
        output_tokens: 40,
        error: null,
      });
    const preds = join(dir, 'main.jsonl');
    writeFileSync(
      preds,
      [
        row('ot-lite:teleqna:114', 'The UDM invokes these services.\nFinal Answer: UDM', 2),
        row('ot-lite:teleqna:115', 'Option 2 or 4? Step 4 says SMF.\nFinal Answer: "SMF"', 1),
        row('ot-lite:teleqna:116', 'Final Answer: 3', 2),
      ].join('\n'),
    );
    const inst = join(dir, 'inst.jsonl');
    const choices = ['AMF', 'SMF', 'UDM', 'UDR'];
    writeFileSync(
      inst,
      ['114', '115', '116']
        .map((n) =>
          JSON.stringify({
            sample_id: `ot-lite:teleqna:${n}`,
            sub_benchmark: 'teleqna',
            question: 'Which NF?',
            choices,
            correct_answer: 'UDM',
            incorrect_answer: 'AMF',
            half_reasoning_trace: 'We think.',
          }),
        )
        .join('\n'),
    );
    const without = scoreFiles([preds]);
    // 115: `Option 2` in the text reads the recorded answer even without its texts
    expect(without[0]!.s.reproduction).toMatchObject({
      compared: 3,
      reproduced: 2,
      lacking_option_texts: 1,
    });
    expect(Object.keys(without[0]!.s.reproduction!.reasons)).toEqual([
      'lacks option texts: the Final Answer payload names no option number, so their option-text rule on it decided',
    ]);
    const withTexts = scoreFiles(
      [preds],
      new Map(readEvalInstances(inst).map((i) => [i.sample_id, i])),
    );
    expect(withTexts[0]!.s.reproduction).toMatchObject({
      compared: 3,
      reproduced: 3,
      lacking_option_texts: 0,
    });
    expect(withTexts[0]!.scores.map((s) => s.parses.published.rule)).toEqual([
      'published:payload:option-text',
      'published:payload:option-text',
      'published:payload:trailing-digit',
    ]);
    // the CLI says how many rows could not be decided and why
    const r = spawnSync('node', [join(ROOT, 'bin/telebench.js'), 'score', preds], {
      encoding: 'utf8',
      cwd: dir,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('published mode reproduces 2 of 3 recorded predictions');
    expect(r.stdout).toContain('1 row cannot be decided without the option texts');
  });
});
