/**
 * The audit's table per project and kind of test (stages/swe5g/audit/by-test.ts) on a real SQLite
 * store holding validate, testgen and audit records: the kind comes from the validated strategy
 * and, for Strategy B, testgen's `f2p_strength` (text when absent); no-op and rewrite rates count
 * graded mutants only; a weak instance is withheld; a validation that was skipped is not counted;
 * behavioural = Strategy A and shipped tests. A Python instance whose deferred Strategy A test
 * validation used in the image (testgen's record B, the validated one A) counts as A, here and in
 * the report's testgen table.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../../pipeline/store/store.js';
import { storeReader } from '../../../../pipeline/runner.js';
import { auditStage } from '../../../../stages/swe5g/audit/audit.js';
import { testgenStage } from '../../../../stages/swe5g/testgen/testgen.js';
import { validateStage } from '../../../../stages/swe5g/validate/validate.js';
import { testgenMarkdown, testgenRows } from '../../../../stages/swe5g/testgen/report.js';
import {
  auditByTestKind,
  auditByTestKindMarkdown,
} from '../../../../stages/swe5g/audit/by-test.js';

type M = [kind: string, expectation: 'reject' | 'resolve', resolved: boolean | null];
const dirs: string[] = [];
const STAGES = [auditStage, testgenStage, validateStage];
const reader = (store: Store) =>
  storeReader(store, (name) => STAGES.find((s) => s.name === name)?.version);
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function put(
  store: Store,
  stage: { name: string; version: number },
  key: string,
  output: unknown,
  skip?: string,
): void {
  store.planItem(stage.name, key, stage.version, `h-${stage.name}-${key}`, '{}', false);
  store.startItem(stage.name, key, `a-${key}`, 'run');
  store.finishItem(
    stage.name,
    key,
    `a-${key}`,
    skip ? { state: 'skipped', reason: skip, detail: skip } : { state: 'done', output },
  );
}

function audit(key: string, ms: M[]) {
  const mutants = ms.map(([kind, expectation, resolved]) =>
    resolved === null
      ? { kind, expectation, status: 'not_applicable', why: 'n/a' }
      : {
          kind,
          expectation,
          status: 'graded',
          resolved,
          ok: resolved === (expectation === 'resolve'),
        },
  );
  const bad = mutants.filter((m) => m.status === 'graded' && !m.ok);
  return {
    instance_id: key,
    f2p_audit: {
      mutants,
      weak: bad.some((m) => m.expectation === 'reject'),
      strict: bad.some((m) => m.expectation === 'resolve'),
      failed_kinds: bad.map((m) => m.kind),
      sites: [],
    },
    seconds: 1,
  };
}

function state(): Store {
  const d = mkdtempSync(join(tmpdir(), 'telebench-audit-by-test-'));
  dirs.push(d);
  const store = new Store(join(d, 'state.db'));
  const inst: [key: string, strategy: string, strength: string | undefined, ms: M[] | null][] = [
    // Open5GS: a control test that rejects its no-op and accepts its rewrite
    [
      'open5gs__open5gs-1',
      'B',
      'control',
      [
        ['noop', 'reject', false],
        ['inverted', 'resolve', true],
      ],
    ],
    // a text test the no-op resolves (weak) and that rejects a rewrite
    [
      'open5gs__open5gs-2',
      'B',
      'text',
      [
        ['noop', 'reject', true],
        ['dead_code', 'reject', true],
        ['via_local', 'resolve', false],
        ['inverted', 'resolve', true],
      ],
    ],
    // a text test whose no-op is not applicable, dead code rejected
    [
      'open5gs__open5gs-3',
      'B',
      'text',
      [
        ['noop', 'reject', null],
        ['dead_code', 'reject', false],
      ],
    ],
    // free5GC: a behavioural test, and a shipped one not audited yet
    [
      'free5gc__amf-1',
      'A',
      undefined,
      [
        ['noop', 'reject', false],
        ['via_local', 'resolve', true],
      ],
    ],
    ['free5gc__udm-2', 'shipped', undefined, null],
    // Magma: B with no strength recorded (testgen before version 6) reads as text
    ['magma__magma-3', 'B', undefined, [['empty_body', 'reject', false]]],
  ];
  for (const [key, strategy, strength, ms] of inst) {
    put(store, testgenStage, key, {
      instance_id: key,
      strategy,
      ...(strength ? { f2p_strength: strength } : {}),
    });
    put(store, validateStage, key, { instance_id: key, strategy });
    if (ms) put(store, auditStage, key, audit(key, ms));
  }
  // Magma: testgen fell back to B (control) with a deferred A test, which validation used
  put(store, testgenStage, 'magma__magma-4', {
    instance_id: 'magma__magma-4',
    strategy: 'B',
    f2p_strength: 'control',
    bug_category: 'nil_pointer',
    deferred_a: { function: 'encrypt_str', inputs: 'mac=None' },
  });
  put(store, validateStage, 'magma__magma-4', {
    instance_id: 'magma__magma-4',
    strategy: 'A',
    deferred_a: { used: true, reason: 'A: ... decided in the instance image' },
  });
  put(store, auditStage, 'magma__magma-4', audit('magma__magma-4', [['noop', 'reject', false]]));
  // and one whose deferred A test validation did not use: B stays
  put(store, testgenStage, 'magma__magma-5', {
    instance_id: 'magma__magma-5',
    strategy: 'B',
    f2p_strength: 'control',
    bug_category: 'nil_pointer',
    deferred_a: { function: 'tune_datapath', inputs: 'config_dict without key "dp_irq"' },
  });
  put(store, validateStage, 'magma__magma-5', {
    instance_id: 'magma__magma-5',
    strategy: 'B',
    deferred_a: { used: false, reason: 'not used: ... does not fail at the parent' },
  });
  // a validation that was skipped is no validated instance
  put(store, testgenStage, 'open5gs__open5gs-4', {
    instance_id: 'open5gs__open5gs-4',
    strategy: 'A',
  });
  put(store, validateStage, 'open5gs__open5gs-4', undefined, 'f2p_passes_at_parent');
  return store;
}

describe('audit per project and test kind', () => {
  it('counts validated, audited, no-op and rewrite rates, withheld and behavioural share', () => {
    const store = state();
    try {
      const rows = auditByTestKind({ store: reader(store) });
      const at = (p: string, t: string) => rows.find((r) => r.project === p && r.test === t);
      expect(rows.map((r) => `${r.project}/${r.test}`)).toEqual([
        'free5gc/A',
        'free5gc/shipped',
        'free5gc/all',
        'magma/A',
        'magma/B control',
        'magma/B text',
        'magma/all',
        'open5gs/B control',
        'open5gs/B text',
        'open5gs/all',
      ]);
      expect(at('open5gs', 'B text')).toMatchObject({
        validated: 2,
        audited: 2,
        noopAccepted: { k: 1, n: 1 },
        rejectAccepted: { k: 2, n: 3 },
        rewritesAccepted: { k: 1, n: 2 },
        weak: 1,
        released: 1,
      });
      expect(at('open5gs', 'all')).toMatchObject({
        validated: 3,
        noopAccepted: { k: 1, n: 2 },
        rewritesAccepted: { k: 2, n: 3 },
        released: 2,
        behavioural: { k: 0, n: 3 },
      });
      expect(at('free5gc', 'all')).toMatchObject({
        validated: 2,
        audited: 1,
        released: 2,
        behavioural: { k: 2, n: 2 },
      });
      expect(at('magma', 'B text')).toMatchObject({ validated: 1, audited: 1, weak: 0 });
      expect(at('magma', 'A')).toMatchObject({ validated: 1, audited: 1, weak: 0 });
      expect(at('magma', 'B control')).toMatchObject({ validated: 1, audited: 0 });
      expect(at('magma', 'all')).toMatchObject({ validated: 3, behavioural: { k: 1, n: 3 } });
      const md = auditByTestKindMarkdown({ store: reader(store) });
      expect(md).toContain(
        '| open5gs | B text | 2 | 2 | 1 of 1 | 2 of 3 | 1 of 2 (50%) | 1 | 1 |  |',
      );
      expect(md).toContain(
        '| open5gs | all | 3 | 3 | 1 of 2 | 2 of 4 | 2 of 3 (67%) | 1 | 2 | 0 of 3 (0%) |',
      );
      expect(md).toContain('| free5gc | shipped | 1 | 0 | - | - | - | 0 | 1 |  |');
    } finally {
      store.close();
    }
  });
});

describe("the report's testgen table reads the strategy validation used", () => {
  it('a deferred A test validation used counts as A; the column gives used of deferred', () => {
    const store = state();
    try {
      const magma = testgenRows({ store: reader(store) }).find((r) => r.repo === 'magma/magma');
      expect(magma).toMatchObject({ A: 1, B: 2, deferred: { used: 1, tried: 2 } });
      expect(testgenMarkdown({ store: reader(store) })).toMatch(
        /\| magma\/magma \| 1 \| 2 \| 0 \| .* \| 1 of 2 \|/,
      );
    } finally {
      store.close();
    }
  });
});
