/**
 * Dataset definitions: names, licences per source, the published field order, size categories.
 */
import { describe, it, expect } from 'vitest';
import { swe5gDataset, resilienceDataset } from '../../datasets/index.js';
import { DATASET_ENTRIES } from '../../stages/index.js';
import { datasetRegistry } from '../../stages/release/entry.js';
import { swe5gEntry } from '../../stages/swe5g/dataset.js';
import { TelebenchError } from '../../pipeline/errors.js';
import { sizeCategory } from '../../datasets/definition.js';
import { repositoryLicense, subsetLicense, hubLicenseId } from '../../datasets/licenses.js';
import { ConfigError } from '../../pipeline/errors.js';

describe('datasets', () => {
  it('finds datasets by id and alias, and names the known ones otherwise', () => {
    const byName = (n: string) => DATASET_ENTRIES.byName(n).definition.id;
    expect(byName('swe5g')).toBe('swe-bench-5g');
    expect(byName('Resilience')).toBe('teleresiliencebench');
    expect(() => byName('glue')).toThrow(ConfigError);
    expect(() => byName('glue')).toThrow(/swe-bench-5g .*teleresiliencebench/);
  });

  it('refuses two entries that share a name, and gives every dataset its own release stage', () => {
    expect(() => datasetRegistry([swe5gEntry, swe5gEntry])).toThrow(TelebenchError);
    expect(() =>
      datasetRegistry([
        swe5gEntry,
        { ...swe5gEntry, definition: { ...swe5gEntry.definition, id: 'x' } },
      ]),
    ).toThrow(/both use the name "swe5g"/);
    expect(DATASET_ENTRIES.entries.map((e) => e.releaseStage)).toEqual([
      'release.swe5g',
      'release.resilience',
    ]);
  });

  it('puts SWE-bench field names first and the published TeleResilienceBench fields first', () => {
    expect(swe5gDataset.fields.slice(0, 12).map((f) => f.name)).toEqual([
      'instance_id',
      'repo',
      'base_commit',
      'patch',
      'test_patch',
      'problem_statement',
      'hints_text',
      'created_at',
      'version',
      'environment_setup_commit',
      'FAIL_TO_PASS',
      'PASS_TO_PASS',
    ]);
    expect(resilienceDataset.fields.slice(0, 7).map((f) => f.name)).toEqual([
      'sample_id',
      'sub_benchmark',
      'question',
      'choices',
      'correct_answer',
      'incorrect_answer',
      'half_reasoning_trace',
    ]);
    for (const d of [swe5gDataset, resilienceDataset]) {
      const shape = Object.keys(
        (d.rowSchema as unknown as { shape: Record<string, unknown> }).shape,
      );
      expect(d.fields.map((f) => f.name).sort()).toEqual(shape.sort());
    }
  });

  it('gives every source its licence', () => {
    expect(repositoryLicense('free5gc/amf')).toBe('Apache-2.0');
    expect(repositoryLicense('open5gs/open5gs')).toBe('AGPL-3.0');
    expect(repositoryLicense('magma/magma')).toBe('BSD-3-Clause');
    expect(repositoryLicense('someone/else')).toBe('unknown');
    expect(repositoryLicense('someone/else', 'MIT')).toBe('MIT');
    expect(subsetLicense('ot-lite', 'teleqna').spdx).toBe('MIT');
    expect(subsetLicense('oran-bench-13k', 'oranbench').spdx).toBe('MIT');
    expect(subsetLicense('my-lab', 'x')).toMatchObject({ spdx: 'unknown' });
    expect(hubLicenseId('BSD-3-Clause')).toBe('bsd-3-clause');
  });

  it('maps row counts to Hub size categories', () => {
    expect(sizeCategory(210)).toBe('n<1K');
    expect(sizeCategory(1850)).toBe('1K<n<10K');
    expect(sizeCategory(13952)).toBe('10K<n<100K');
  });
});
