/**
 * Release folders from hand-built rows: the card's YAML parses and carries the Hub keys, the
 * Parquet files read back equal to the JSON Lines, a version is immutable (same content: no-op;
 * different content: refused and nothing on disk changes), and the changelog names the changes.
 */
import { describe, it, expect } from 'vitest';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  swe5gDataset,
  resilienceDataset,
  type DatasetDefinition,
} from '../../../datasets/index.js';
import {
  planRelease,
  writeRelease,
  readReleaseRows,
  type ReleaseInput,
} from '../../../stages/release/assemble.js';
import { parquetToRows } from '../../../stages/release/parquet.js';
import { releaseFiles } from '../../../stages/release/publish.js';
import { swe5gRowOf } from '../../../stages/swe5g/dataset.js';
import { resilienceRowOf } from '../../../stages/resilience/dataset.js';
import { resilienceInstanceSchema } from '../../../stages/resilience/instance.js';
import { swe5gInstances, resilienceInstance } from './rows.js';
import { TelebenchError } from '../../../pipeline/errors.js';

function input(
  dataset: DatasetDefinition,
  rows: unknown[],
  version: string,
  previous: ReleaseInput['previous'] = null,
): ReleaseInput {
  return {
    dataset,
    version,
    rows,
    createdAt: '2026-11-29T18:00:00.000Z',
    provenance: {
      gitSha: 'abc',
      configHash: 'f'.repeat(64),
      stageVersions: { 'swe5g.validate': 1 },
      inputHashes: { 'swe5g.validate': 'e'.repeat(64) },
      settings: {},
      profile: dataset.id === 'teleresiliencebench' ? 'default' : null,
      provenanceNotes: [],
      sample: null,
      models: { generator: [], targets: [] },
    },
    funnel: [
      {
        stage: 'swe5g.validate',
        done: 5,
        skipped: 2,
        failed: 0,
        reasons: { flaky: 1, timeout: 1 },
      },
    ],
    licenseEvidence: () => 'test evidence',
    verify: null,
    snapshotLimitations: [],
    previous,
  };
}

const swe5gRows = () =>
  swe5gInstances()
    .map((v) => swe5gRowOf(v, 'api'))
    .filter((r) => r !== null);
const resilienceRows = () =>
  [
    resilienceInstance('teleqna', 4),
    resilienceInstance('teleqna', 9),
    resilienceInstance('3gpp_tsg', 1),
    resilienceInstance('telemath', 1),
    resilienceInstance('oranbench', 3, {
      source: 'oran-bench-13k',
      sample_id: 'oran-bench-13k:oranbench:3',
      role: 'extra',
    }),
  ].map((i) => resilienceRowOf(resilienceInstanceSchema.parse(i)));

function frontMatterOf(card: string): Record<string, unknown> {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(card);
  expect(m).not.toBeNull();
  return parse(m![1]!) as Record<string, unknown>;
}

describe('release folder', () => {
  it('leaves incomplete SWE-Bench 5G candidates out and the schema refuses them', () => {
    const all = swe5gInstances();
    expect(all.map((v) => swe5gRowOf(v, 'api')).filter((r) => r === null)).toHaveLength(1);
    const bad = { ...swe5gRowOf(all[0]!, 'api')!, problem_statement: '' };
    expect(() => planRelease(input(swe5gDataset as never, [bad], '1.0.0'))).toThrow(
      /problem_statement is empty/,
    );
  });

  it('writes a card whose YAML carries the Hub keys, one config per project', () => {
    const state = mkdtempSync(join(tmpdir(), 'rel-'));
    const out = writeRelease(
      state,
      planRelease(input(swe5gDataset as never, swe5gRows(), '1.0.0')),
    );
    expect(out.status).toBe('written');
    const card = readFileSync(join(out.dir, 'README.md'), 'utf8');
    const fm = frontMatterOf(card);
    expect(fm.pretty_name).toBe('SWE-Bench 5G');
    expect(fm.license).toEqual(['agpl-3.0', 'apache-2.0', 'bsd-3-clause']);
    expect(fm.task_categories).toEqual(['text-generation']);
    expect(fm.size_categories).toEqual(['n<1K']);
    const configs = fm.configs as {
      config_name: string;
      default?: boolean;
      data_files: { split: string; path: string | string[] }[];
    }[];
    // the project configs, then one config per date window (every hand-built row: 2024 Q1)
    expect(configs.map((c) => c.config_name)).toEqual([
      'all',
      'free5gc',
      'magma',
      'open5gs',
      '2024-Q1',
    ]);
    expect(configs[0]!.default).toBe(true);
    expect(configs[0]!.data_files[0]!.path).toHaveLength(3);
    expect(configs[1]!.data_files).toEqual([{ split: 'test', path: 'data/free5gc/test.parquet' }]);
    expect(configs[4]!.data_files).toEqual([
      { split: 'test', path: 'windows/2024-Q1/test.parquet' },
    ]);
    for (const c of configs.slice(1)) statSync(join(out.dir, c.data_files[0]!.path as string));
    // the window file holds the rows again in Parquet only: the JSON Lines are read once
    expect(readReleaseRows(out.dir)).toHaveLength(4);
    expect(card).toContain('## Construction funnel');
    expect(card).toContain('| swe5g.validate | 5 | 2 | 0 | flaky 1, timeout 1 |');
    expect(card).toContain('`FAIL_TO_PASS`');
    const manifest = JSON.parse(readFileSync(join(out.dir, 'manifest.json'), 'utf8'));
    expect(manifest.counts).toMatchObject({
      rows: 4,
      by_config: { free5gc: 2, open5gs: 1, magma: 1 },
    });
    expect(manifest.counts.by_license).toEqual({
      'Apache-2.0': 2,
      'AGPL-3.0': 1,
      'BSD-3-Clause': 1,
    });
    expect(manifest.git_sha).toBe('abc');
  });

  it('TeleResilienceBench: one config per subset, main aggregate without the auxiliary and extra rows, profile note', () => {
    const plan = planRelease(input(resilienceDataset as never, resilienceRows(), '0.1.0'));
    const card = new TextDecoder().decode(plan.files.find((f) => f.path === 'README.md')!.bytes);
    const fm = frontMatterOf(card);
    const configs = fm.configs as {
      config_name: string;
      data_files: { path: string | string[] }[];
    }[];
    expect(configs.map((c) => c.config_name)).toEqual([
      'main',
      '3gpp_tsg',
      'oranbench-oran-bench-13k',
      'telemath',
      'teleqna',
    ]);
    expect(configs[0]!.data_files[0]!.path).toEqual([
      'data/3gpp_tsg/test.parquet',
      'data/teleqna/test.parquet',
    ]);
    expect(fm.license).toBe('mit');
    expect(card).toContain('generation profile: `default`');
    expect(card).toContain(
      'Instances made without context truncation differ from the published ones',
    );
    const row = plan.rows.find((r) => r.sample_id === 'ot-lite:teleqna:4')!;
    expect(row.choices).toEqual(['alpha', 'beta', 'gamma', 'alpha']);
    expect(row.correct_index).toBe(0);
    expect((row.provenance as { generator: { model: string } }).generator.model).toBe('qwen3.5:2b');
    expect(plan.rows.find((r) => r.sub_benchmark === 'telemath')!.choices).toBeNull();
  });

  it('Parquet reads back equal to the JSON Lines, for both datasets', async () => {
    for (const [ds, rows] of [
      [swe5gDataset, swe5gRows()],
      [resilienceDataset, resilienceRows()],
    ] as const) {
      const plan = planRelease(input(ds as never, rows, '1.0.0'));
      const jsonl = plan.files.filter((f) => f.path.endsWith('.jsonl'));
      expect(jsonl.length).toBeGreaterThan(1);
      for (const j of jsonl) {
        const pq = plan.files.find((f) => f.path === j.path.replace(/\.jsonl$/, '.parquet'))!;
        const fromJsonl = new TextDecoder()
          .decode(j.bytes)
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        expect(await parquetToRows(pq.bytes, ds.fields)).toEqual(fromJsonl);
      }
    }
  });

  it('is immutable: same content is a no-op, different content is refused and nothing changes', () => {
    const state = mkdtempSync(join(tmpdir(), 'rel-'));
    const first = writeRelease(
      state,
      planRelease(input(swe5gDataset as never, swe5gRows(), '1.0.0')),
    );
    const before = readFileSync(join(first.dir, 'manifest.json'), 'utf8');
    const again = writeRelease(
      state,
      planRelease({
        ...input(swe5gDataset as never, swe5gRows(), '1.0.0'),
        createdAt: '2030-01-01T00:00:00Z',
      }),
    );
    expect(again.status).toBe('unchanged');
    const changed = swe5gRows();
    changed[0] = { ...changed[0]!, hints_text: 'a new hint' };
    let err: unknown;
    try {
      writeRelease(state, planRelease(input(swe5gDataset as never, changed, '1.0.0')));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('release_version_exists');
    expect((err as TelebenchError).message).toMatch(
      /already released with different content \(.*data\/free5gc\/test\.jsonl/,
    );
    expect(readFileSync(join(first.dir, 'manifest.json'), 'utf8')).toBe(before);
    expect(readReleaseRows(first.dir).map((r) => r.hints_text)).not.toContain('a new hint');
    expect(readdirSync(join(state, 'releases', 'swe-bench-5g'))).toEqual(['1.0.0']);
  });

  it('writes a changelog against the previous version', () => {
    const state = mkdtempSync(join(tmpdir(), 'rel-'));
    const v1 = writeRelease(state, planRelease(input(swe5gDataset as never, swe5gRows(), '1.0.0')));
    const rows = swe5gRows().filter((r) => r.repo !== 'magma/magma');
    rows[0] = { ...rows[0]!, FAIL_TO_PASS: ['x::TestY'] };
    const plan = planRelease(
      input(swe5gDataset as never, rows, '1.1.0', {
        version: '1.0.0',
        rows: readReleaseRows(v1.dir),
      }),
    );
    const log = new TextDecoder().decode(plan.files.find((f) => f.path === 'CHANGELOG.md')!.bytes);
    expect(log).toContain('Against 1.0.0: 4 -> 3 rows; 0 added, 1 removed, 1 changed.');
    expect(log).toContain('- removed: `magma__magma-12001`');
    expect(log).toContain('- changed `free5gc__amf-161`: FAIL_TO_PASS');
    expect(plan.manifest.previous_version).toBe('1.0.0');
  });

  it('refuses a version that is not a folder name', () => {
    expect(() => planRelease(input(swe5gDataset as never, swe5gRows(), '../x'))).toThrow(
      /not usable as a folder name/,
    );
  });

  it('refuses to publish a release whose files changed after it was written', () => {
    const state = mkdtempSync(join(tmpdir(), 'rel-'));
    const out = writeRelease(
      state,
      planRelease(input(swe5gDataset as never, swe5gRows(), '1.0.0')),
    );
    expect(releaseFiles(state, 'swe-bench-5g', '1.0.0').map((f) => f.path)).toContain(
      'manifest.json',
    );
    appendFileSync(join(out.dir, 'data/magma/test.jsonl'), '{"instance_id":"smuggled"}\n');
    expect(() => releaseFiles(state, 'swe-bench-5g', '1.0.0')).toThrow(/changed after release/);
  });

  it('refuses to write into a version folder that telebench did not write', () => {
    const state = mkdtempSync(join(tmpdir(), 'rel-'));
    mkdirSync(join(state, 'releases', 'swe-bench-5g', '1.0.0'), { recursive: true });
    expect(() =>
      writeRelease(state, planRelease(input(swe5gDataset as never, swe5gRows(), '1.0.0'))),
    ).toThrow(/exists but holds no manifest\.json/);
  });
});
