/**
 * The audit part of the `swe5g` report (stages/swe5g/audit/report.ts) on a real SQLite store: an
 * instance whose gold patch gave no must-reject mutant (every no-op, emptied guard and dead-code
 * kind `not_applicable`) is not counted as audited, even when an equivalent rewrite was graded;
 * one graded must-reject mutant makes it audited, a resolved one makes it weak.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../../pipeline/store/store.js';
import { storeReader } from '../../../../pipeline/runner.js';
import { auditStage } from '../../../../stages/swe5g/audit/audit.js';
import { auditCounts, auditMarkdown } from '../../../../stages/swe5g/audit/report.js';

type Mutant = {
  kind: string;
  expectation: 'reject' | 'resolve';
  status: 'graded' | 'not_applicable';
  resolved?: boolean;
  ok?: boolean;
  why?: string;
};
const na = (kind: string, expectation: Mutant['expectation']): Mutant => ({
  kind,
  expectation,
  status: 'not_applicable',
  why: 'no fix site in an if',
});
const graded = (kind: string, expectation: Mutant['expectation'], resolved: boolean): Mutant => ({
  kind,
  expectation,
  status: 'graded',
  resolved,
  ok: resolved === (expectation === 'resolve'),
});

const reader = (store: Store) => storeReader(store, () => auditStage.version);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function storeOf(items: { key: string; mutants?: Mutant[]; skip?: string }[]): Store {
  const d = mkdtempSync(join(tmpdir(), 'telebench-audit-report-'));
  dirs.push(d);
  const store = new Store(join(d, 'state.db'));
  for (const it of items) {
    store.planItem(auditStage.name, it.key, auditStage.version, `h-${it.key}`, '{}', false);
    store.startItem(auditStage.name, it.key, `a-${it.key}`, 'run');
    if (it.skip) {
      store.finishItem(auditStage.name, it.key, `a-${it.key}`, {
        state: 'skipped',
        reason: it.skip,
        detail: it.skip,
      });
      continue;
    }
    const mutants = it.mutants!;
    const failed = mutants.filter((m) => m.status === 'graded' && !m.ok);
    store.finishItem(auditStage.name, it.key, `a-${it.key}`, {
      state: 'done',
      output: {
        instance_id: it.key,
        f2p_audit: {
          mutants,
          weak: failed.some((m) => m.expectation === 'reject'),
          strict: failed.some((m) => m.expectation === 'resolve'),
          failed_kinds: failed.map((m) => m.kind),
          sites: [],
        },
        seconds: 1,
      },
    });
  }
  return store;
}

describe('audit report', () => {
  it('counts an instance without a must-reject mutant apart from the audited ones', () => {
    const store = storeOf([
      // a const-ification: no guard, every must-reject kind not applicable, a rewrite graded
      {
        key: 'open5gs__open5gs-2809',
        mutants: [
          na('noop', 'reject'),
          na('empty_body', 'reject'),
          na('dead_code', 'reject'),
          graded('inverted', 'resolve', true),
        ],
      },
      // a sound test: the no-op rejected
      {
        key: 'open5gs__open5gs-2805',
        mutants: [graded('noop', 'reject', false), na('empty_body', 'reject')],
      },
      // a weak test: the no-op resolved
      {
        key: 'free5gc__udm-62',
        mutants: [graded('noop', 'reject', true), graded('via_local', 'resolve', false)],
      },
      { key: 'open5gs__open5gs-2821', skip: 'no_gold_patch' },
    ]);
    try {
      const { repos, kinds } = auditCounts({ store: reader(store) });
      const byRepo = Object.fromEntries(repos.map((r) => [r.repo, r]));
      expect(byRepo['open5gs/open5gs']).toMatchObject({
        audited: 1,
        noMutant: 1,
        weak: 0,
        notAudited: { no_gold_patch: 1 },
      });
      expect(byRepo['free5gc/udm']).toMatchObject({ audited: 1, noMutant: 0, weak: 1, strict: 1 });
      expect(byRepo.total).toMatchObject({ audited: 2, noMutant: 1, weak: 1, strict: 1 });
      expect(kinds.find((k) => k.kind === 'noop')).toMatchObject({
        graded: 2,
        resolved: 1,
        ok: 1,
        notApplicable: 1,
      });
      const md = auditMarkdown({ store: reader(store) });
      expect(md).toContain(
        '| repository | audited | weak | strict | no mutant applies | not audited |',
      );
      expect(md).toContain('| open5gs/open5gs | 1 | 0 | 0 | 1 | no_gold_patch 1 |');
      expect(md).toContain('| total | 2 | 1 | 1 | 1 |');
    } finally {
      store.close();
    }
  });
});
