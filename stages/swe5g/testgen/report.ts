/**
 * The fail-to-pass part of the `swe5g` report: per repository, how many instances got a Strategy
 * A, B or shipped test and why the others got none (the paper's Table II gives the distribution of
 * strategies), plus bug categories.
 */
import type { StageContext } from '../../../pipeline/stage.js';
import type { TestGen } from '../types.js';

/** Counts of one repository (or `total`). */
export interface TestgenRow {
  repo: string;
  A: number;
  B: number;
  shipped: number;
  skipped: Record<string, number>;
  failed: number;
  categories: Record<string, number>;
}

const inc = (m: Record<string, number>, k: string): void => {
  m[k] = (m[k] ?? 0) + 1;
};

/**
 * Per-repository strategy counts from the `swe5g.testgen` records in the store (any state);
 * the repository is the instance_id without its `-<PR>` suffix (`free5gc__amf`).
 */
export function testgenRows(ctx: Pick<StageContext, 'store'>): TestgenRow[] {
  const rows = new Map<string, TestgenRow>();
  const total: TestgenRow = {
    repo: 'total',
    A: 0,
    B: 0,
    shipped: 0,
    skipped: {},
    failed: 0,
    categories: {},
  };
  for (const rec of ctx.store.items('swe5g.testgen')) {
    const repo = rec.key.replace(/-\d+$/, '').replace('__', '/');
    let r = rows.get(repo);
    if (!r) {
      r = { repo, A: 0, B: 0, shipped: 0, skipped: {}, failed: 0, categories: {} };
      rows.set(repo, r);
    }
    for (const row of [r, total]) {
      if (rec.state === 'done') {
        const tg = rec.output as TestGen;
        row[tg.strategy]++;
        inc(row.categories, tg.bug_category);
      } else if (rec.state === 'skipped') inc(row.skipped, rec.skipReason ?? 'unknown');
      else if (rec.state === 'failed') row.failed++;
    }
  }
  return [...[...rows.values()].sort((a, b) => a.repo.localeCompare(b.repo)), total];
}

const fmt = (m: Record<string, number>): string =>
  Object.entries(m)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/** Markdown table of {@link testgenRows} ('' when the stage has no records). */
export function testgenMarkdown(ctx: Pick<StageContext, 'store'>): string {
  const rows = testgenRows(ctx);
  if (rows.length === 1) return '';
  return [
    '## SWE-Bench 5G fail-to-pass tests (swe5g.testgen)',
    '',
    '| repository | Strategy A | Strategy B | shipped | no test (reason) | failed | bug categories |',
    '|---|---:|---:|---:|---|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.repo} | ${r.A} | ${r.B} | ${r.shipped} | ${fmt(r.skipped)} | ${r.failed} | ${fmt(r.categories)} |`,
    ),
    '',
  ].join('\n');
}
