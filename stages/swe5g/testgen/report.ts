/**
 * The fail-to-pass part of the `swe5g` report: per repository, how many instances got a Strategy
 * A, B or shipped test and why the others got none (the paper's Table II gives the distribution of
 * strategies), plus bug categories.
 */
import type { StageContext } from '../../../pipeline/stage.js';
import type { TestGen } from '../types.js';
import { countInto, formatCounts, repoOfInstance } from '../report-counts.js';
import { testgenStage } from './testgen.js';

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
  for (const rec of ctx.store.items(testgenStage)) {
    const repo = repoOfInstance(rec.key);
    let r = rows.get(repo);
    if (!r) {
      r = { repo, A: 0, B: 0, shipped: 0, skipped: {}, failed: 0, categories: {} };
      rows.set(repo, r);
    }
    for (const row of [r, total]) {
      if (rec.state === 'done') {
        const tg = rec.output as TestGen;
        row[tg.strategy]++;
        countInto(row.categories, tg.bug_category);
      } else if (rec.state === 'skipped') countInto(row.skipped, rec.skipReason ?? 'unknown');
      else if (rec.state === 'failed') row.failed++;
    }
  }
  return [...[...rows.values()].sort((a, b) => a.repo.localeCompare(b.repo)), total];
}

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
        `| ${r.repo} | ${r.A} | ${r.B} | ${r.shipped} | ${formatCounts(r.skipped)} | ${r.failed} | ${formatCounts(r.categories)} |`,
    ),
    '',
  ].join('\n');
}
