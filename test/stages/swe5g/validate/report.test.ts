import { describe, it, expect, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../../pipeline/store/store.js';
import {
  median,
  validationMarkdown,
  validationRows,
} from '../../../../stages/swe5g/validate/report.js';
import type { StageContext } from '../../../../pipeline/stage.js';
import { storeReader } from '../../../../pipeline/runner.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function storeWith(
  records: [stage: string, key: string, end: Parameters<Store['finishItem']>[3]][],
) {
  const d = mkdtempSync(join(tmpdir(), 'telebench-vreport-'));
  dirs.push(d);
  const store = new Store(join(d, 'state.db'));
  for (const [stage, key, end] of records) {
    store.planItem(stage, key, 1, 'h', '{}', false);
    store.startItem(stage, key, `a-${key}`, 'run');
    store.finishItem(stage, key, `a-${key}`, end);
  }
  const ctx: Pick<StageContext, 'store'> = {
    store: storeReader(store, () => undefined),
  };
  return { store, ctx };
}

describe('swe5g validation report', () => {
  it('median is the true median (mean of the two middle values for an even count)', () => {
    expect(median([])).toBeNull();
    expect(median([3, 1, 2])).toBe(2);
    expect(median([10, 1, 4, 2])).toBe(3);
    expect(median([5, 7])).toBe(6);
  });

  it('counts built, validated and rejected instances per repository with reasons and median times', () => {
    const { store, ctx } = storeWith([
      ['swe5g.build', 'free5gc__amf-161', { state: 'done', output: {} }],
      [
        'swe5g.build',
        'free5gc__amf-200',
        { state: 'skipped', reason: 'dependency_unavailable', detail: 'x' },
      ],
      ['swe5g.build', 'free5gc__pcf-65', { state: 'done', output: {} }],
      ['swe5g.build', 'free5gc__pcf-66', { state: 'done', output: {} }],
      [
        'swe5g.validate',
        'free5gc__amf-161',
        { state: 'done', output: { step_seconds: { a: 10, b: 5 } } },
      ],
      ['swe5g.validate', 'free5gc__pcf-65', { state: 'done', output: { step_seconds: { a: 3 } } }],
      [
        'swe5g.validate',
        'free5gc__pcf-66',
        { state: 'skipped', reason: 'f2p_does_not_fail_at_parent', detail: 'x' },
      ],
    ]);
    const rows = validationRows(ctx);
    expect(rows.map((r) => r.repo)).toEqual(['free5gc/amf', 'free5gc/pcf', 'total']);
    expect(rows[0]).toMatchObject({
      built: 1,
      buildRejected: { dependency_unavailable: 1 },
      validated: 1,
      medianStepSeconds: 15,
    });
    expect(rows[1]).toMatchObject({
      built: 2,
      validated: 1,
      rejected: { f2p_does_not_fail_at_parent: 1 },
      medianStepSeconds: 3,
    });
    expect(rows[2]).toMatchObject({ built: 3, validated: 2, medianStepSeconds: 9 }); // (3 + 15) / 2, not the upper middle;
    const md = validationMarkdown(ctx);
    expect(md).toContain('| free5gc/pcf | 2 |  | 1 | f2p_does_not_fail_at_parent 1 | 0 | 3.0 |');
    store.close();
  });
  it('is empty before anything was built', () => {
    const { store, ctx } = storeWith([]);
    expect(validationMarkdown(ctx)).toBe('');
    store.close();
  });
});
