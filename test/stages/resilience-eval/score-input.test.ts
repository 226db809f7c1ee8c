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
