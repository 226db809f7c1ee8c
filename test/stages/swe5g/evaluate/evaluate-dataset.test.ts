/**
 * `telebench evaluate --dataset PATH --predictions FILE` on bad input, through the CLI with a
 * fresh state folder (no state of the build): every bad row of the dataset is named with
 * `file:line` and the field before anything runs (exit 2, no stack trace, nothing graded); an
 * instance_id given twice names both lines; a release folder is read through its manifest and a
 * folder without one through its `*.jsonl` files; a row without `image_name` is refused naming
 * it; a prediction for an instance the dataset lacks is skipped naming the predictions file's
 * line and the field, and the file counts as not graded (exit 1). The graded case (images pulled
 * by image_name from Debian's docker-registry) is in mini-swe-agent.test.ts.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { swe5gRowOf } from '../../../../stages/swe5g/dataset.js';
import { readDatasetRows } from '../../../../stages/swe5g/evaluate/dataset.js';
import { ConfigError } from '../../../../pipeline/errors.js';
import { runCli } from '../../../fixtures/cli.js';
import { validated } from '../../release/rows.js';

let root: string;
const row = (pr: number, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...swe5gRowOf(validated('free5gc/amf', pr), 'api')!,
  image_name: `127.0.0.1:5000/telebench-instance:x@sha256:${'b'.repeat(64)}`,
  ...over,
});
const jsonl = (rows: unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-eval-dataset-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `telebench evaluate --dataset <dataset> --predictions <preds>` in a fresh state folder. */
function evaluate(dataset: string, preds: string, env: Record<string, string> = {}) {
  return runCli(
    [
      '--state',
      mkdtempSync(join(root, 'state-')),
      'evaluate',
      '--dataset',
      dataset,
      '--predictions',
      preds,
    ],
    env,
  );
}

describe('evaluate --dataset on bad input', () => {
  it('names every bad row with file:line and the field, before anything runs (exit 2)', async () => {
    const file = join(root, 'bad.jsonl');
    writeFileSync(
      file,
      jsonl([
        row(1),
        row(2, { base_commit: 'abc' }),
        row(3, { FAIL_TO_PASS: [] }),
        { ...row(4), surprise: 1 },
        row(1),
      ]) + '{not json\n',
    );
    const preds = join(root, 'preds.jsonl');
    writeFileSync(
      preds,
      jsonl([{ instance_id: 'free5gc__amf-1', model_name_or_path: 'm', model_patch: '' }]),
    );
    const r = await evaluate(file, preds);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${file}:2: field base_commit: base_commit must be a 40-hex`);
    expect(r.stderr).toContain(`${file}:3: field FAIL_TO_PASS: FAIL_TO_PASS is empty`);
    expect(r.stderr).toContain(`${file}:4: field surprise:`);
    expect(r.stderr).toContain(
      `${file}:5: field instance_id: free5gc__amf-1 is given twice (also ${file}:1)`,
    );
    expect(r.stderr).toContain(`${file}:6: not JSON`);
    expect(r.stderr).not.toMatch(/\n\s+at .+\.(ts|js):\d+/); // no stack trace
    expect(r.stderr).not.toContain('swe5g.eval.grade');
  });

  it('reads a release folder by its manifest, a plain folder by its .jsonl files', () => {
    const rel = join(root, 'release');
    mkdirSync(join(rel, 'data'), { recursive: true });
    writeFileSync(join(rel, 'data', 'test.jsonl'), jsonl([row(7), row(8)]));
    writeFileSync(join(rel, 'data', 'stray.jsonl'), jsonl([row(9)]));
    writeFileSync(
      join(rel, 'manifest.json'),
      JSON.stringify({ files: { 'data/test.jsonl': {}, 'README.md': {} } }),
    );
    expect(readDatasetRows(rel).map((d) => [d.row.instance_id, d.line])).toEqual([
      ['free5gc__amf-7', 1],
      ['free5gc__amf-8', 2],
    ]);
    rmSync(join(rel, 'manifest.json'));
    expect(readDatasetRows(rel).map((d) => d.row.instance_id)).toEqual([
      'free5gc__amf-9',
      'free5gc__amf-7',
      'free5gc__amf-8',
    ]);
    const empty = join(root, 'empty');
    mkdirSync(empty);
    expect(() => readDatasetRows(empty)).toThrow(ConfigError);
    expect(() => readDatasetRows(join(root, 'nowhere'))).toThrow(/--dataset: not found/);
  });

  it('refuses a row without image_name, naming file:line and the field', async () => {
    const file = join(root, 'noimage.jsonl');
    writeFileSync(file, jsonl([row(11), row(12, { image_name: '' })]));
    const preds = join(root, 'p-noimage.jsonl');
    writeFileSync(
      preds,
      jsonl([{ instance_id: 'free5gc__amf-11', model_name_or_path: 'm', model_patch: '' }]),
    );
    const r = await evaluate(file, preds);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:2: field image_name: empty`);
  });

  it('a prediction for an instance the dataset lacks is skipped naming its line and the field (exit 1)', async () => {
    const file = join(root, 'one.jsonl');
    writeFileSync(file, jsonl([row(21)]));
    const preds = join(root, 'p-unknown.jsonl');
    writeFileSync(
      preds,
      jsonl([{ instance_id: 'free5gc__amf-99', model_name_or_path: 'm', model_patch: 'x' }]),
    );
    const r = await evaluate(file, preds);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr + r.stdout).toContain(
      `${preds} line 1: field instance_id: free5gc__amf-99 is not a row of the dataset ${file}`,
    );
    expect(r.stderr).toMatch(/evaluate: .*0 resolved, 0 not resolved/);
  });
});
