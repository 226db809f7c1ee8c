import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readRows, normaliseRows } from '../../../stages/resilience/adapters.js';
import {
  resolveEntry,
  subsetEntrySchema,
  subsetRegistrySchema,
  type ResolvedSubset,
} from '../../../stages/resilience/subsets.js';
import { buildSubset, baseTemplates } from '../../../stages/resilience/load.js';
import { renderOptions } from '../../../stages/resilience/prompts.js';
import { resilienceConfigSchema } from '../../../stages/resilience/config.js';
import { parseConfigText } from '../../../pipeline/config/load.js';
import { ConfigError } from '../../../pipeline/errors.js';
import { realDataRoot } from '../../fixtures/real-data.js';

const CONFIG = resolve(import.meta.dirname, '../../../config/default.yaml');

/** An entry resolved under `root` (the real data root, or a folder nobody reads for inline rows). */
function subset(entry: Record<string, unknown>, root = resolve(CONFIG, '..')): ResolvedSubset {
  return resolveEntry(subsetEntrySchema.parse(entry), root, 'test_{subset}.json');
}

function run(entry: Record<string, unknown>, text: string, file = 'f.json') {
  const s = subset(entry);
  const read = readRows(text, s.format, file);
  const n = normaliseRows(s, read.rows, file);
  return { items: n.items, rejected: [...read.rejected, ...n.rejected] };
}

describe('ot-lite shapes', () => {
  it('teleqna / oranbench / srsranbench / sixg_bench: choices and a 0-based answer', () => {
    const rows = [
      { question: 'Q0?', choices: ['a', 'b', 'c'], answer: 2, subject: 'x', explaination: 'e' },
      { question: 'Q1?', choices: ['a', 'a'], answer: 1, difficulty: 'Very Hard' },
      { question: '  ', choices: ['a', 'b'], answer: 0 },
      { question: 'Q3?', choices: [], answer: 0 },
      { question: 'Q4?', choices: ['a', 'b'], answer: 2 },
      { question: 'Q5?', choices: ['a', 'b'], answer: 'one' },
    ];
    const { items, rejected } = run(
      { name: 'teleqna', source: 'ot-lite', adapter: 'ot-lite-mc', role: 'main' },
      JSON.stringify(rows),
    );
    expect(items.map((i) => i.sample_id)).toEqual(['ot-lite:teleqna:0', 'ot-lite:teleqna:1']);
    expect(items[0]).toMatchObject({
      kind: 'mc',
      gold_index: 2,
      correct_answer: 'c',
      difficulty: null,
      sub_benchmark: 'teleqna',
      role: 'main',
      row: 0,
    });
    // repeated option texts are kept; the gold is the index
    expect(items[1]).toMatchObject({ choices: ['a', 'a'], gold_index: 1, difficulty: 'very hard' });
    expect(rejected.map((r) => [r.row, r.reason])).toEqual([
      [2, 'empty_question'],
      [3, 'no_options'],
      [4, 'gold_out_of_range'],
      [5, 'bad_gold'],
    ]);
  });

  it('teletables: boolean `difficult` becomes hard/easy; JSON Lines files are read too', () => {
    const text = [
      JSON.stringify({
        question: 'T0',
        choices: ['1 dB', '2 dB'],
        answer: 0,
        explanation: '',
        difficult: true,
        table_id: 't',
      }),
      JSON.stringify({
        question: 'T1',
        choices: ['1 dB', '2 dB'],
        answer: 1,
        explanation: '',
        difficult: false,
        table_id: 't',
      }),
      '',
    ].join('\n');
    const { items } = run(
      { name: 'teletables', source: 'ot-lite', adapter: 'ot-lite-mc', role: 'main' },
      text,
    );
    expect(items.map((i) => i.difficulty)).toEqual(['hard', 'easy']);
  });

  it('telelogs: gold C1..C8 becomes choices C1..C8', () => {
    const { items, rejected } = run(
      { name: 'telelogs', source: 'ot-lite', adapter: 'ot-lite-telelogs', role: 'main' },
      JSON.stringify([
        { question: 'Why?', answer: 'C3' },
        { question: 'Why?', answer: 'c8' },
        { question: 'Why?', answer: 'C9' },
        { question: 'Why?', answer: '3' },
      ]),
    );
    expect(items[0]!.choices).toEqual(['C1', 'C2', 'C3', 'C4', 'C5', 'C6', 'C7', 'C8']);
    expect(items.map((i) => i.gold_index)).toEqual([2, 7]);
    expect(items[0]!.correct_answer).toBe('C3');
    expect(rejected.map((r) => r.reason)).toEqual(['gold_out_of_range', 'bad_gold']);
  });

  it('3gpp_tsg: the choices are the sorted distinct labels of the whole split', () => {
    const { items, rejected } = run(
      { name: '3gpp_tsg', source: 'ot-lite', adapter: 'ot-lite-labels', role: 'main' },
      JSON.stringify([
        { question: 'doc a', answer: 'SA5' },
        { question: 'doc b', answer: 'CT1' },
        { question: 'doc c', answer: 'RAN2 ' },
        { question: 'doc d', answer: 'SA5' },
        { question: 'doc e', answer: '' },
      ]),
    );
    expect(items[0]!.choices).toEqual(['CT1', 'RAN2', 'SA5']);
    expect(items.map((i) => i.gold_index)).toEqual([2, 0, 1, 2]);
    expect(items.map((i) => i.sample_id)).toEqual([
      'ot-lite:3gpp_tsg:0',
      'ot-lite:3gpp_tsg:1',
      'ot-lite:3gpp_tsg:2',
      'ot-lite:3gpp_tsg:3',
    ]);
    expect(rejected).toMatchObject([{ row: 4, reason: 'bad_gold' }]);
  });

  it('telemath: numeric gold printed as the authors print it', () => {
    const { items, rejected } = run(
      { name: 'telemath', source: 'ot-lite', adapter: 'ot-lite-numeric', role: 'auxiliary' },
      JSON.stringify([
        { question: 'P?', answer: 0.033 },
        { question: 'P?', answer: 2 },
        { question: 'P?', answer: '1e-5' },
        { question: 'P?', answer: 'about 3' },
      ]),
    );
    expect(items.map((i) => [i.gold_value, i.correct_answer, i.choices.length])).toEqual([
      [0.033, '0.033', 0],
      [2, '2.0', 0],
      [1e-5, '1e-05', 0],
    ]);
    expect(rejected).toMatchObject([{ row: 3, reason: 'bad_gold' }]);
  });
});

describe('local sources: the published ORAN-Bench-13K and srsRANBench files', () => {
  // found like the product finds them (test/fixtures/real-data.ts)
  let DATA = '';
  beforeAll(async () => {
    DATA = await realDataRoot(
      ...['fin_E', 'fin_M', 'fin_H'].map((f) => `oran-bench-13k/${f}.json`),
      'srsranbench/srsRANBench.json',
    );
  });
  const entry = (file: string, difficulty?: string) => ({
    name: file
      .toLowerCase()
      .replace(/\.json$/, '')
      .replace(/^.*\//, ''),
    source: 'oran-bench-13k',
    adapter: 'gajjar-jsonl',
    file: `oran-bench-13k/${file}`,
    sub_benchmark: 'oran-bench-13k',
    ...(difficulty ? { difficulty } : {}),
  });

  it('ORAN-Bench-13K: every row normalised or rejected with file and row; the 45 rows without options are rejected', () => {
    let items = 0;
    const reasons: Record<string, number> = {};
    for (const [file, difficulty, rows] of [
      ['fin_E.json', 'easy', 1139],
      ['fin_M.json', 'medium', 9570],
      ['fin_H.json', 'hard', 3243],
    ] as const) {
      const s = subset(entry(file, difficulty), DATA);
      const path = resolve(DATA, 'oran-bench-13k', file);
      const read = readRows(readFileSync(path, 'utf8'), 'auto', path);
      expect(read.rows).toHaveLength(rows);
      const n = normaliseRows(s, read.rows, path);
      expect(n.items.length + n.rejected.length).toBe(rows);
      items += n.items.length;
      for (const r of n.rejected) {
        reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
        expect(r.file).toBe(path);
        expect(r.line).toBe(r.row! + 1);
        expect(r.detail).toContain(`${path}:${r.line} row ${r.row}`);
      }
      for (const it of n.items) {
        expect(it.sample_id).toMatch(new RegExp(`^oran-bench-13k:${s.name}:\\d+$`));
        expect(it.difficulty).toBe(difficulty);
        expect(it.question.trim()).not.toBe('');
        expect(it.gold_index).toBeGreaterThanOrEqual(0);
        expect(it.gold_index).toBeLessThan(it.choices.length);
      }
    }
    expect(reasons).toEqual({ no_options: 45, empty_question: 88 });
    expect(items).toBe(1139 + 9570 + 3243 - 133);
  });

  it('a known bad row is reported with its file and row number', () => {
    const path = resolve(DATA, 'oran-bench-13k/fin_H.json');
    const s = subset(entry('fin_H.json', 'hard'), DATA);
    const n = normaliseRows(s, readRows(readFileSync(path, 'utf8'), 'auto', path).rows, path);
    expect(n.rejected.find((r) => r.row === 411)).toMatchObject({
      reason: 'no_options',
      line: 412,
      detail: `${path}:412 row 411: the row has no options`,
    });
    // the 1-based gold "k" becomes a 0-based index; the option keeps its "1. " prefix as published
    const first = n.items[0]!;
    expect(first.choices[first.gold_index!]).toBe(first.correct_answer);
    expect(first.choices[0]).toMatch(/^1\. /);
  });

  it('srsRANBench (GitHub, 1502 rows) keeps its own source name, never ot-lite', () => {
    const s = subset(
      {
        name: 'srsranbench',
        source: 'srsranbench',
        adapter: 'gajjar-jsonl',
        file: 'srsranbench/srsRANBench.json',
        sub_benchmark: 'srsranbench-github',
      },
      DATA,
    );
    const path = s.path!;
    const out = buildSubset(
      s,
      readFileSync(path, 'utf8'),
      path,
      baseTemplates(CONFIG, resilienceConfigSchema.parse({})),
    );
    expect(out.items).toHaveLength(1502);
    expect(out.rejected).toHaveLength(0);
    expect(out.items[5]!.sample_id).toBe('srsranbench:srsranbench:5');
    expect(out.sub_benchmark).toBe('srsranbench-github');
    const gold = out.items.map((i) => i.gold_index);
    expect(gold.filter((g) => g === 0).length / gold.length).toBeCloseTo(0.76, 2);
    // prompts are rendered and counted
    const p = out.items[0]!;
    expect(p.prompt).toContain('Solve this multiple-choice question.\n\nQuestion:\n' + p.question);
    // srsRANBench's options carry their own numbers: listed as published, never `1. 1. ...`
    expect(p.choices[0]).toMatch(/^1\. /);
    expect(p.prompt).toContain(`Options:\n${p.choices.join('\n')}\n\n`);
    expect(p.prompt).not.toMatch(/^\d+\. \d+\. /m);
    expect(p.prompt).toContain('option number from 1 to 4 (integer only)');
    expect(p.prompt_version).toBe('tele_resilience_base_mc_v1_reconstructed');
    expect(p.prompt_tokens_cl100k).toBeGreaterThan(50);
  });
});

describe('generic fields adapter (CSV and JSON)', () => {
  it('reads a CSV with one column per option and a letter answer', () => {
    const csv = 'q,A,B,C,ans,level\n"What, exactly?",x,y,z,B,Easy\nWhy,x,y,,D,\n,x,y,z,A,\n';
    const { items, rejected } = run(
      {
        name: 'quiz',
        source: 'local-quiz',
        adapter: 'fields',
        file: 'quiz.csv',
        answer_format: 'letter',
        fields: { question: 'q', choices: ['A', 'B', 'C'], answer: 'ans', difficulty: 'level' },
      },
      csv,
      'quiz.csv',
    );
    expect(items).toEqual([
      expect.objectContaining({
        sample_id: 'local-quiz:quiz:0',
        question: 'What, exactly?',
        choices: ['x', 'y', 'z'],
        gold_index: 1,
        difficulty: 'easy',
        sub_benchmark: 'local-quiz',
      }),
    ]);
    expect(rejected.map((r) => [r.row, r.line, r.reason])).toEqual([
      [1, 3, 'gold_out_of_range'],
      [2, 4, 'empty_question'],
    ]);
  });

  it('a text answer naming a repeated option is ambiguous and rejected, not guessed', () => {
    const { items, rejected } = run(
      {
        name: 'txt',
        source: 'local-txt',
        adapter: 'fields',
        file: 't.jsonl',
        answer_format: 'text',
        fields: { question: 'q', choices: 'opts', answer: 'a' },
      },
      '{"q":"A?","opts":["x","y","x"],"a":"x"}\n{"q":"B?","opts":"[\\"x\\",\\"y\\"]","a":"y"}\n',
      't.jsonl',
    );
    expect(rejected).toMatchObject([{ row: 0, reason: 'ambiguous_gold' }]);
    expect(items).toMatchObject([
      { sample_id: 'local-txt:txt:1', choices: ['x', 'y'], gold_index: 1 },
    ]);
  });

  it('reads JSON objects with a text answer and a numeric field', () => {
    const { items } = run(
      {
        name: 'calc',
        source: 'local-calc',
        adapter: 'fields',
        file: 'c.jsonl',
        answer_format: 'number',
        fields: { question: 'problem', answer: 'value' },
      },
      '{"problem":"2+2?","value":"4"}\n{"problem":"x","value":1.5e-3}\n',
      'c.jsonl',
    );
    expect(items.map((i) => [i.kind, i.gold_value])).toEqual([
      ['numeric', 4],
      ['numeric', 0.0015],
    ]);
  });
});

describe('unreadable files', () => {
  it('a file that is neither a JSON array nor JSON Lines is an error naming the file', () => {
    expect(() => readRows('{"a": 1,\n not json', 'auto', 'broken.json')).toThrow(
      /broken\.json: neither a JSON array .* nor JSON Lines/,
    );
    // one bad line among good ones is a per-row rejection with its line number
    const r = readRows('["q", ["1. a", "2. b"], "1"]\n{oops\n', 'auto', 'mixed.json');
    expect(r.rows).toHaveLength(1);
    expect(r.rejected).toMatchObject([{ row: 1, line: 2, reason: 'unparseable_row' }]);
    // the rejection names the file and the line, as every other rejection does
    expect(r.rejected[0]!.file).toBe('mixed.json');
    expect(r.rejected[0]!.detail).toMatch(/^mixed\.json:2 row 1: not JSON: /);
  });

  it('a CSV file with one short row and one long row loads the other rows and rejects those two with file and line', () => {
    const csv = 'question,a,b,answer\nq1,x,y,1\nq2,x\nq3,"x,y",z,2\nq4,x,y,2,extra\n';
    const r = readRows(csv, 'auto', '/data/sub/s.csv');
    expect(
      r.rows.map((x) => [x.row, x.line, (x.value as Record<string, string>).question]),
    ).toEqual([
      [0, 2, 'q1'],
      [2, 4, 'q3'],
    ]);
    expect((r.rows[1]!.value as Record<string, string>).a).toBe('x,y');
    expect(r.rejected.map((x) => [x.file, x.row, x.line, x.reason])).toEqual([
      ['/data/sub/s.csv', 1, 3, 'unparseable_row'],
      ['/data/sub/s.csv', 3, 5, 'unparseable_row'],
    ]);
    expect(r.rejected[0]!.detail).toBe(
      '/data/sub/s.csv:3 row 1: 2 fields, the header has 4 (no cell for column b, answer, column 3 to 4)',
    );
  });

  it('a CSV record the parser gives up on (a quote never closed) is rejected with its line, not the whole file', () => {
    const r = readRows('question,answer\nq1,1\nq2,"2\n', 'csv', 'q.csv');
    expect(r.rows).toHaveLength(1);
    expect(r.rejected).toHaveLength(1);
    expect(r.rejected[0]).toMatchObject({ file: 'q.csv', reason: 'unparseable_row', line: 3 });
    expect(r.rejected[0]!.detail).toMatch(/^q\.csv:3: not a CSV record: Quote Not Closed/);
  });
});

describe('registry validation', () => {
  it('rejects a local source posing as a main subset and a duplicate entry, naming the path', () => {
    const text = `version: 1
subsets:
  - { name: oranbench, source: oran-bench-13k, adapter: gajjar-jsonl, file: x.json, role: main }
  - { name: teleqna, source: ot-lite, adapter: ot-lite-mc, role: main }
  - { name: teleqna, source: ot-lite, adapter: ot-lite-mc, role: main }
`;
    let err: unknown;
    try {
      parseConfigText(text, 'subsets.yaml', subsetRegistrySchema);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('subsets[0].role');
    expect(msg).toContain('a local source cannot be a main subset');
    expect(msg).toContain('subsets[2].name');
    expect(msg).toContain('duplicate subset ot-lite:teleqna');
  });

  it('the shipped registry has the seven main subsets and TeleMath from ot-lite, and local sources under their own names', () => {
    const reg = parseConfigText(
      readFileSync(resolve(import.meta.dirname, '../../../config/subsets.yaml'), 'utf8'),
      'subsets.yaml',
      subsetRegistrySchema,
    );
    const main = reg.subsets.filter((s) => s.role === 'main').map((s) => `${s.source}:${s.name}`);
    expect(main).toEqual([
      'ot-lite:teleqna',
      'ot-lite:teletables',
      'ot-lite:telelogs',
      'ot-lite:3gpp_tsg',
      'ot-lite:oranbench',
      'ot-lite:srsranbench',
      'ot-lite:sixg_bench',
    ]);
    expect(reg.subsets.filter((s) => s.role === 'auxiliary').map((s) => s.name)).toEqual([
      'telemath',
    ]);
    for (const s of reg.subsets.filter((x) => x.source !== 'ot-lite')) {
      expect(s.role).toBe('extra');
      expect(s.sub_benchmark).not.toMatch(/^(oranbench|srsranbench)$/);
    }
  });
});

describe('option lists in prompts', () => {
  it('numbers plain options and lists self-numbered ones as published (never `1. 1. x`)', () => {
    expect(renderOptions(['AMF', 'SMF'])).toBe('1. AMF\n2. SMF');
    expect(renderOptions(['1. O-RAN.WG3', '2. O-RAN.WG4'])).toBe('1. O-RAN.WG3\n2. O-RAN.WG4');
    // numbering that does not follow the positions is text of the option: numbered as usual
    expect(renderOptions(['2. x', '1. y'])).toBe('1. 2. x\n2. 1. y');
    expect(renderOptions(['1. x', 'y'])).toBe('1. 1. x\n2. y');
    expect(renderOptions(['1.5 GHz', '2.4 GHz'])).toBe('1. 1.5 GHz\n2. 2.4 GHz');
  });
});
