import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { scoreFiles } from '../../../stages/resilience-eval/score.js';
import { readEvalInstances } from '../../../stages/resilience-eval/eval-instance.js';
import { DISCRETE_SUBSETS } from '../../../stages/resilience-eval/metrics.js';

// The published experiment files and instances (real data, read from ../shared/data, never copied).
const DATA = resolve(import.meta.dirname, '../../../../shared/data/teleresiliencebench');
const EXP = join(DATA, 'experiments');
const ROOT = resolve(import.meta.dirname, '../../..');

// ../shared/data/README.md: published per-subset and macro CFR (Table I), TeleMath CR%.
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

  it('published mode reproduces the recorded answer of every row decided by digits; the rest need option texts', () => {
    const g = by.get('gemma4:31b')!.s.reproduction!;
    const n = by.get('nemotron-3-nano:4b')!.s.reproduction!;
    expect(g.reproduced).toBe(827);
    expect(n.reproduced).toBe(869);
    for (const r of [g, n]) {
      const optionText = Object.entries(r.reasons)
        .filter(([k]) => k.startsWith('needs option texts'))
        .reduce((a, [, v]) => a + v, 0);
      expect(optionText).toBeGreaterThan(0);
      expect(r.compared - r.reproduced - optionText).toBeLessThanOrEqual(3);
    }
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
    expect(r.stderr).toContain('line 2:');
    expect(r.stderr).toMatch(/line 4: .*ot-lite:teleqna:9: not in the instances/);
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
