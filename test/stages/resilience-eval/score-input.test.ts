/**
 * `telebench score` refuses bad input clearly (issue 23): exit 1, the file, line and column named,
 * never a stack trace; duplicated sample_ids name both places unless --on-duplicate says which
 * wins; a UTF-8 BOM is read everywhere; an empty file is an error.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'telebench-score-input-'));
const BOM = '\ufeff';

const inst = (id: string, gold = 'a', extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    sample_id: id,
    sub_benchmark: 'teleqna',
    question: 'q?',
    choices: ['a', 'b', 'c'],
    correct_answer: gold,
    incorrect_answer: 'b',
    half_reasoning_trace: 'We think.',
    ...extra,
  });
const pred = (id: string, output: string) => JSON.stringify({ sample_id: id, model: 'm', output });

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
function score(...args: string[]) {
  const r = spawnSync('node', [join(ROOT, 'bin/telebench.js'), 'score', ...args], {
    encoding: 'utf8',
    cwd: dir,
  });
  expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
  return r;
}

const INST = file(
  'inst.jsonl',
  [inst('ot-lite:teleqna:1'), inst('ot-lite:teleqna:2', 'c')].join('\n'),
);

describe('telebench score: bad input', () => {
  it('a duplicated sample_id in the predictions names both lines; --on-duplicate says which wins', () => {
    const p = file(
      'dup.jsonl',
      [
        pred('ot-lite:teleqna:1', 'Final Answer: 1'),
        pred('ot-lite:teleqna:2', 'Final Answer: 3'),
        pred('ot-lite:teleqna:1', 'Final Answer: 2'),
      ].join('\n'),
    );
    const r = score(p, '--instances', INST);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`sample_id ot-lite:teleqna:1 occurs twice: ${p}:1 and ${p}:3`);
    // first wins: 2 of 2 correct; last wins: 1 of 2
    expect(score(p, '--instances', INST, '--on-duplicate', 'first')).toMatchObject({ status: 0 });
    expect(score(p, '--instances', INST, '--on-duplicate', 'first').stdout).toContain(
      '2 rows scored',
    );
    const last = score(p, '--instances', INST, '--on-duplicate', 'last');
    expect(last.status).toBe(0);
    expect(last.stdout).toMatch(/\| m \| 50\.0 \/ 50\.0 \/ 0\.0 \|/);
    expect(score(p, '--on-duplicate', 'newest').status).toBe(2);
  });

  it('a duplicated instance names both places', () => {
    const i2 = file('inst2.jsonl', inst('ot-lite:teleqna:1', 'c'));
    const p = file('one.jsonl', pred('ot-lite:teleqna:1', 'Final Answer: 1'));
    const r = score(p, '--instances', INST, i2);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`sample_id ot-lite:teleqna:1 occurs twice: ${INST}:1 and ${i2}:1`);
  });

  it('reads a UTF-8 BOM in predictions and instances (the first row is not lost)', () => {
    const i = file('bom-inst.jsonl', BOM + inst('ot-lite:teleqna:1'));
    const p = file('bom.jsonl', BOM + [pred('ot-lite:teleqna:1', 'Final Answer: 1')].join('\n'));
    const r = score(p, '--instances', i);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('1 rows scored, 0 malformed');
    const csv = file(
      'bom.csv',
      `${BOM}sample_id,sub_benchmark,question,choices,correct_answer,incorrect_answer,half_reasoning_trace\not-lite:teleqna:1,teleqna,q?,"[""a"",""b""]",a,b,We think.\n`,
    );
    expect(score(p, '--instances', csv).status).toBe(0);
  });

  it('a truncated row names file, line and column; a malformed JSON array is named', () => {
    const i = file(
      'trunc.jsonl',
      `${inst('ot-lite:teleqna:1')}\n{"sample_id": "ot-lite:teleqna:2", "sub_b`,
    );
    const p = file('p1.jsonl', pred('ot-lite:teleqna:1', 'Final Answer: 1'));
    const r = score(p, '--instances', i);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${i.replace(/[.]/g, '\\.')}:2:\\d+: not JSON`));
    const arr = file('arr.json', `[${inst('ot-lite:teleqna:1')},\n{"sample_id": `);
    const a = score(p, '--instances', arr);
    expect(a.status).toBe(1);
    expect(a.stderr).toMatch(/arr\.json:2:\d+: not a JSON array/);
    const tp = file(
      'tp.jsonl',
      `${pred('ot-lite:teleqna:1', 'Final Answer: 1')}\n{"sample_id": "x`,
    );
    const t = score(tp, '--instances', INST);
    expect(t.status).toBe(1);
    expect(t.stderr).toMatch(/tp\.jsonl:2:\d+: not JSON/);
  });

  it('a CSV without a column, or with a missing or empty cell, names the file, line and column', () => {
    const p = file('p2.jsonl', pred('ot-lite:teleqna:1', 'Final Answer: 1'));
    const noCol = file(
      'nocol.csv',
      'sample_id,sub_benchmark,question,choices,correct_answer,incorrect_answer\not-lite:teleqna:1,teleqna,q,"[""a"",""b""]",a,b\n',
    );
    const a = score(p, '--instances', noCol);
    expect(a.status).toBe(1);
    expect(a.stderr).toContain('nocol.csv:1: the header has no column half_reasoning_trace');
    const head =
      'sample_id,sub_benchmark,question,choices,correct_answer,incorrect_answer,half_reasoning_trace\n';
    const short = file(
      'short.csv',
      `${head}ot-lite:teleqna:1,teleqna,"multi\nline q","[""a"",""b""]",a,b\n`,
    );
    const b = score(p, '--instances', short);
    expect(b.status).toBe(1);
    // the record starts on line 2 (it ends on 3)
    expect(b.stderr).toContain(
      'short.csv:2 row 0: 6 fields, the header has 7 (no cell for column half_reasoning_trace, column 7)',
    );
    const empty = file(
      'empty-cell.csv',
      `${head}ot-lite:teleqna:1,teleqna,q,"[""a"",""b""]",a,,We think.\n`,
    );
    const c = score(p, '--instances', empty);
    expect(c.status).toBe(1);
    expect(c.stderr).toContain(
      'empty-cell.csv:2: empty cell in column incorrect_answer (column 6)',
    );
  });

  it('a prediction row without a column names it', () => {
    const p = file('nocol.jsonl', JSON.stringify({ model: 'm', output: 'Final Answer: 1' }));
    const r = score(p, '--instances', INST);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/nocol\.jsonl:1:sample_id: column sample_id: .*missing/);
  });

  it('an empty predictions or instances file exits 1', () => {
    const e = file('empty.jsonl', '\n  \n');
    const r = score(e);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('empty.jsonl: empty file: no predictions in it');
    const p = file('p3.jsonl', pred('ot-lite:teleqna:1', 'Final Answer: 1'));
    const i = score(p, '--instances', file('empty-inst.jsonl', BOM));
    expect(i.status).toBe(1);
    expect(i.stderr).toContain('empty-inst.jsonl: empty file: no instances in it');
  });
});

/** A row of the published experiment files (the authors' `main.jsonl`). */
const pubRow = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    sample_id: id,
    sub_benchmark: id.split(':')[1],
    task_kind: 'mc',
    model: 'gemma4:31b',
    continuation_raw: 'Final Answer: 2',
    continuation_pred_index: 1,
    continuation_pred_float: null,
    gold_index: 1,
    gold_float: null,
    prompt_tokens: 900,
    output_tokens: 5,
    error: null,
    ...extra,
  });

describe('telebench score: gold and record numbers (issue 33)', () => {
  it('refuses a gold index outside the options with file:line:gold_index, exit 1', () => {
    // teleqna has at most 5 options (0..4), 3gpp_tsg 16 (0..15), srsranbench 4 (0..3)
    for (const [id, gold] of [
      ['ot-lite:teleqna:1', 42],
      ['ot-lite:teleqna:1', -1],
      ['ot-lite:teleqna:1', 5],
      ['ot-lite:3gpp_tsg:1', 16],
      ['ot-lite:srsranbench:1', 4],
    ] as const) {
      const p = file(
        `gold-${id.split(':')[1]}-${gold}.jsonl`,
        [pubRow('ot-lite:teleqna:9'), pubRow(id, { gold_index: gold })].join('\n'),
      );
      const r = score(p);
      expect(r.status, `${id} gold ${gold}`).toBe(1);
      expect(r.stderr).toContain(`${p}:2:gold_index: column gold_index: ${gold} is outside`);
      // the good row is still scored
      expect(r.stdout).toContain('1 rows scored, 1 malformed');
    }
  });

  it('accepts a gold index at the last option of each subset', () => {
    const p = file(
      'gold-edge.jsonl',
      [
        pubRow('ot-lite:teleqna:1', { gold_index: 4, continuation_raw: 'Final Answer: 5' }),
        pubRow('ot-lite:3gpp_tsg:1', { gold_index: 15, continuation_pred_index: 0 }),
        pubRow('ot-lite:srsranbench:1', { gold_index: 0, continuation_pred_index: 0 }),
      ].join('\n'),
    );
    const r = score(p);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('3 rows scored, 0 malformed');
  });

  it('refuses an out-of-range recorded answer and an instance whose correct_index is outside', () => {
    const p = file('pred-range.jsonl', pubRow('ot-lite:teleqna:1', { continuation_pred_index: 7 }));
    const r = score(p);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `${p}:1:continuation_pred_index: column continuation_pred_index: 7 is outside`,
    );
    // an instance of our own schema whose correct_index is past its three choices
    const own = (correct: number) =>
      JSON.stringify({
        sample_id: 'ot-lite:teleqna:1',
        sub_benchmark: 'teleqna',
        question: 'q?',
        choices: ['a', 'b', 'c'],
        correct_answer: 'a',
        incorrect_answer: 'b',
        half_reasoning_trace: 'We think.',
        source: 'ot-lite',
        subset: 'teleqna',
        row: 1,
        role: 'main',
        kind: 'mc',
        difficulty: null,
        correct_index: correct,
        incorrect_index: 1,
        correct_value: null,
        incorrect_value: null,
        generator: {
          model: 'g',
          model_digest: null,
          server_version: null,
          provider: 'ollama',
          profile: 'default',
          options: { think: null, num_ctx: null, num_predict: null, temperature: 0, seed: null },
        },
        prompt_template: 't',
        prompt_version: '1',
        parse_rule: 'final-answer',
        tokens: {
          prompt_server: null,
          prompt_local: null,
          output: null,
          reasoning_full: 10,
          reasoning_half: 5,
          midpoint: 5,
        },
        half_trace: { tokenizer: 'cl100k_base', boundary: 'reference', cut: 'sentence' },
      });
    const ok = pred('ot-lite:teleqna:1', 'Final Answer: 1');
    const good = score(file('own-ok.jsonl', ok), '--instances', file('own-inst-ok.jsonl', own(0)));
    expect(good.status, good.stderr).toBe(0);
    const bad = file('own-inst.jsonl', own(3));
    const b = score(file('own-p.jsonl', ok), '--instances', bad);
    expect(b.status).toBe(1);
    expect(b.stderr).toContain(`${bad}:1: ot-lite:teleqna:1: column correct_index: 3 is outside`);
  });

  it('a published row without continuation_raw is told that column is missing', () => {
    for (const [name, drop] of [
      ['no-raw', 'continuation_raw'],
      ['no-raw-2', 'continuation_raw'],
    ] as const) {
      const row = JSON.parse(pubRow('ot-lite:teleqna:1')) as Record<string, unknown>;
      delete row[drop];
      if (name === 'no-raw-2') delete row.continuation_pred_index;
      const p = file(`${name}.jsonl`, JSON.stringify(row));
      const r = score(p);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(
        /:1:continuation_raw: published experiment row: column continuation_raw: .*missing/,
      );
      expect(r.stderr).not.toContain('needs a raw output');
    }
    // our own format without an output is still told what it needs
    const own = file(
      'own-noout.jsonl',
      JSON.stringify({ sample_id: 'ot-lite:teleqna:1', model: 'm' }),
    );
    expect(score(own, '--instances', INST).stderr).toContain('needs a raw output');
  });

  it('a duplicate in a JSON-array instances file names records counted from 1', () => {
    const arr = file(
      'dup-arr.json',
      `[${[inst('ot-lite:teleqna:1'), inst('ot-lite:teleqna:2'), inst('ot-lite:teleqna:3'), inst('ot-lite:teleqna:2')].join(',\n')}]`,
    );
    const p = file('p-arr.jsonl', pred('ot-lite:teleqna:1', 'Final Answer: 1'));
    const r = score(p, '--instances', arr);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`occurs twice: ${arr} record 2 and ${arr} record 4`);
  });

  it('refuses index columns outside the choices in an instances row of either schema (exit 1)', () => {
    const ok = pred('ot-lite:teleqna:1', 'Final Answer: 1');
    // a published-schema row carrying telebench's index columns (4 choices: 0..3)
    const four = (extra: Record<string, unknown>) =>
      inst('ot-lite:teleqna:1', 'a', { choices: ['a', 'b', 'c', 'd'], ...extra });
    for (const [col, v] of [
      ['correct_index', 9],
      ['correct_index', 4],
      ['incorrect_index', -1],
      ['incorrect_index', 1.5],
    ] as const) {
      const i = file(`idx-${col}-${v}.jsonl`, four({ [col]: v }));
      const r = score(file(`idx-p-${col}-${v}.jsonl`, ok), '--instances', i);
      expect(r.status, `${col} ${v}: ${r.stdout}`).toBe(1);
      expect(r.stderr).toContain(`${i}:1: ot-lite:teleqna:1: column ${col}: ${v} is outside`);
    }
    // in range (the last option, and null) is read
    const good = file('idx-ok.jsonl', four({ correct_index: 0, incorrect_index: 3 }));
    expect(score(file('idx-p-ok.jsonl', ok), '--instances', good).status).toBe(0);
    const nul = file('idx-null.jsonl', four({ correct_index: null }));
    expect(score(file('idx-p-null.jsonl', ok), '--instances', nul).status).toBe(0);
  });

  it('refuses an own-format answer outside the options with file:line:column, exit 1', () => {
    const row = (extra: Record<string, unknown>) =>
      JSON.stringify({ sample_id: 'ot-lite:teleqna:1', model: 'm', ...extra });
    // INST rows have three choices: answer_index 0..2, answer (option number) 1..3
    for (const [col, v] of [
      ['answer_index', 7],
      ['answer_index', 3],
      ['answer', 4],
      ['answer', 0],
      ['answer', '9'],
    ] as const) {
      const p = file(`ans-${col}-${v}.jsonl`, row({ [col]: v }));
      const r = score(p, '--instances', INST);
      expect(r.status, `${col} ${v}: ${r.stdout}`).toBe(1);
      expect(r.stderr).toContain(`${p}:1:${col}: column ${col}: ${Number(v)} is`);
    }
    // the last option, given either way, is scored
    for (const extra of [{ answer_index: 2 }, { answer: 3 }, { answer: '3' }]) {
      const p = file(`ans-ok-${JSON.stringify(extra).replace(/\W/g, '')}.jsonl`, row(extra));
      const r = score(p, '--instances', INST);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('1 rows scored, 0 malformed');
    }
  });
});
