/**
 * Predictions in every shape SWE-bench's harness reads (`get_predictions_from_file`): JSON Lines,
 * a JSON list, and the JSON object keyed by instance_id that mini-swe-agent's `update_preds_file`
 * writes (indent 2, `model_name_or_path` / `instance_id` / `model_patch` per key). The same rows
 * come out of each; bad rows are named by line, entry or key. Through the real CLI: a file with
 * no usable row exits 1 before anything runs, naming each row; a file whose rows are all unknown
 * instances exits 1 too, and the closing line counts that file's rows only, not an earlier file's.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  readPredictions,
  noUsableRow,
  UNNAMED_MODEL,
} from '../../../../stages/swe5g/evaluate/predictions.js';
import { runCli, ROOT } from '../../../fixtures/cli.js';

const PATCH = 'diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n';
const PREDS = [
  { instance_id: 'free5gc__amf-161', model_name_or_path: 'openai/m', model_patch: PATCH },
  { instance_id: 'free5gc__smf-77', model_name_or_path: 'openai/m', model_patch: '' },
];

let root: string;
const file = (name: string, text: string): string => {
  const p = join(root, name);
  writeFileSync(p, text);
  return p;
};
const plain = (rows: { instance_id: string; model_name_or_path: string; model_patch: string }[]) =>
  rows.map((r) => ({
    instance_id: r.instance_id,
    model_name_or_path: r.model_name_or_path,
    model_patch: r.model_patch,
  }));

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-pred-shapes-'));
});

describe('readPredictions', () => {
  it('reads JSON Lines, a JSON list and a dict keyed by instance_id into the same rows', () => {
    const jsonl = readPredictions(
      file('p.jsonl', PREDS.map((p) => JSON.stringify(p)).join('\n') + '\n'),
    );
    const list = readPredictions(file('p-list.json', JSON.stringify(PREDS, null, 2)));
    // mini-swe-agent's preds.json: json.dumps(output_data, indent=2), keyed by instance_id
    const dict = readPredictions(
      file(
        'preds.json',
        JSON.stringify(Object.fromEntries(PREDS.map((p) => [p.instance_id, p])), null, 2),
      ),
    );
    expect([jsonl.shape, list.shape, dict.shape]).toEqual(['jsonl', 'list', 'dict']);
    for (const r of [jsonl, list, dict]) {
      expect(r.bad).toEqual([]);
      expect(plain(r.rows)).toEqual(PREDS);
    }
    expect(dict.rows.map((r) => r.where)).toEqual([
      'key "free5gc__amf-161"',
      'key "free5gc__smf-77"',
    ]);
    expect(list.rows.map((r) => r.where)).toEqual(['entry [0]', 'entry [1]']);
  });

  it('a one-line JSON Lines file is one prediction, not a dict', () => {
    const r = readPredictions(file('one.jsonl', `${JSON.stringify(PREDS[0])}\n`));
    expect(r.shape).toBe('jsonl');
    expect(plain(r.rows)).toEqual([PREDS[0]]);
  });

  it('names each bad row by its key, entry or line, and keeps the good ones', () => {
    const dict = readPredictions(
      file(
        'bad-dict.json',
        JSON.stringify({
          'a__b-1': { model_name_or_path: 'm', model_patch: PATCH }, // id from the key
          'a__b-2': { instance_id: 'a__b-3', model_name_or_path: 'm', model_patch: '' },
          'a__b-4': { instance_id: 'a__b-4', model_name_or_path: 'm' },
          'a__b-5': 'not an object',
        }),
      ),
    );
    expect(plain(dict.rows)).toEqual([
      { instance_id: 'a__b-1', model_name_or_path: 'm', model_patch: PATCH },
    ]);
    expect(dict.bad.map((b) => [b.where, b.reason])).toEqual([
      ['key "a__b-2"', 'instance_id "a__b-3" differs from its key'],
      ['key "a__b-4"', expect.stringMatching(/^model_patch: /)],
      ['key "a__b-5"', expect.stringMatching(/^\(row\): /)],
    ]);
    const list = readPredictions(
      file('bad-list.json', JSON.stringify([PREDS[0], { model_patch: '' }, PREDS[0]])),
    );
    expect(list.bad.map((b) => [b.where, b.reason])).toEqual([
      ['entry [1]', expect.stringMatching(/^instance_id: /)],
      ['entry [2]', 'repeats free5gc__amf-161 of openai/m (first at entry [0])'],
    ]);
    const jsonl = readPredictions(file('bad.jsonl', `${JSON.stringify(PREDS[0])}\n{oops\n`));
    expect(jsonl.bad.map((b) => b.where)).toEqual(['line 2']);
  });

  it('a row without model_name_or_path is model None, as in SWE-bench', () => {
    const r = readPredictions(
      file('nomodel.jsonl', JSON.stringify({ instance_id: 'a__b-1', model_patch: null })),
    );
    expect(plain(r.rows)).toEqual([
      { instance_id: 'a__b-1', model_name_or_path: UNNAMED_MODEL, model_patch: '' },
    ]);
  });

  it('says why a file has nothing to grade', () => {
    const empty = file('empty.json', '{}');
    expect(noUsableRow(empty, readPredictions(empty))).toMatch(/has no usable prediction/);
    const blank = file('blank.jsonl', '\n\n');
    expect(noUsableRow(blank, readPredictions(blank))).toMatch(/holds no prediction/);
  });
});

describe('telebench evaluate --predictions', () => {
  let config: string;
  let state: string;
  beforeAll(() => {
    state = join(root, 'state');
    config = file(
      'config.yaml',
      `version: 1\nswe5g:\n  registry: ${join(ROOT, 'config', 'repos.yaml')}\n  environments:\n    executor: local\n`,
    );
  });

  it('exits 1 before running when no row is usable, naming each row', async () => {
    const bad = file(
      'bad-preds.json',
      JSON.stringify({ 'a__b-1': { model_patch: 3 }, 'a__b-2': { instance_id: 'x' } }, null, 2),
    );
    const r = await runCli([
      '--state',
      state,
      'evaluate',
      '--predictions',
      bad,
      '--config',
      config,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('a JSON object keyed by instance_id');
    expect(r.stderr).toMatch(/key "a__b-1": model_patch: /);
    expect(r.stderr).toContain('key "a__b-2": instance_id "x" differs from its key');
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
  });

  it("counts this file's rows, not an earlier file's, and exits 1 when none was graded", async () => {
    const first = file(
      'first.jsonl',
      [1, 2, 3]
        .map((n) =>
          JSON.stringify({ instance_id: `zz__q-${n}`, model_name_or_path: 'm', model_patch: '' }),
        )
        .join('\n'),
    );
    const r1 = await runCli([
      '--state',
      state,
      'evaluate',
      '--predictions',
      first,
      '--config',
      config,
    ]);
    expect(r1.stderr).toMatch(
      /: 3 rows of this file — 0 resolved, 0 not resolved, 3 skipped \(unknown_instance: 3\)/,
    );
    expect(r1.code).toBe(1);
    const second = file('preds.json', JSON.stringify({ 'zz__q-9': { model_patch: PATCH } }));
    const r2 = await runCli([
      '--state',
      state,
      'evaluate',
      '--predictions',
      second,
      '--config',
      config,
    ]);
    expect(r2.stderr).toMatch(
      /preds\.json \(JSON object keyed by instance_id, sha256 [0-9a-f]{12}\): 1 rows of this file — 0 resolved, 0 not resolved, 1 skipped \(unknown_instance: 1\); no row of this file was graded/,
    );
    expect(r2.code).toBe(1);
  });
});
