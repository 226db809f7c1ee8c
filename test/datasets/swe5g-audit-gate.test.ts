/**
 * The release's audit gate (issue 30): a validated instance reaches a SWE-Bench 5G snapshot only
 * with an audit record that is not weak, unless the configuration says otherwise, and the card
 * names what was left out or released without one. Collected from a real SQLite store holding
 * `swe5g.validate` and `swe5g.audit` outputs, as the release stage reads them.
 */
import { describe, it, expect } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { swe5gEntry } from '../../stages/swe5g/dataset.js';
import { openState } from '../../pipeline/state.js';
import { storeReader } from '../../pipeline/runner.js';
import type { AuditedMutant, F2pAudit } from '../../stages/swe5g/types.js';
import { validated } from '../stages/release/rows.js';

const graded = (
  kind: AuditedMutant['kind'],
  expectation: AuditedMutant['expectation'],
  resolved: boolean,
): AuditedMutant => ({
  kind,
  expectation,
  status: 'graded',
  resolved,
  ok: resolved === (expectation === 'resolve'),
});

/** A sound test: the no-op rejected, the rewrite through a local resolved. */
const SOUND: F2pAudit = {
  mutants: [graded('noop', 'reject', false), graded('via_local', 'resolve', true)],
  weak: false,
  strict: false,
  failed_kinds: [],
  sites: ['a.go:1 F x'],
};
/** A weak test: the no-op resolved. */
const WEAK: F2pAudit = {
  mutants: [graded('noop', 'reject', true), graded('via_local', 'resolve', true)],
  weak: true,
  strict: false,
  failed_kinds: ['noop'],
  sites: ['a.go:1 F x'],
};

/**
 * Collects rows from a state holding three validated free5gc/amf instances: 1 audited sound,
 * 2 audited weak, 3 with no audit record (its audit failed).
 */
function collect(audit: Record<string, unknown>) {
  const state = mkdtempSync(join(tmpdir(), 'audit-gate-'));
  const st = openState(state);
  try {
    const put = (stage: string, key: string, output: unknown, done = true) => {
      const input = JSON.stringify({ id: key });
      st.store.planItem(stage, key, 1, input, input, false);
      st.store.startItem(stage, key, 'a', 'r');
      st.store.finishItem(
        stage,
        key,
        'a',
        done
          ? { state: 'done', output }
          : { state: 'failed', error: { message: 'docker: engine gone' } },
      );
    };
    const [sound, weak, none] = [1, 2, 3].map((n) => validated('free5gc/amf', n));
    for (const v of [sound!, weak!, none!]) put('swe5g.validate', v.instance_id, v);
    put('swe5g.audit', sound!.instance_id, { f2p_audit: SOUND, seconds: 1 });
    put('swe5g.audit', weak!.instance_id, { f2p_audit: WEAK, seconds: 1 });
    put('swe5g.audit', none!.instance_id, null, false);
    const store = storeReader(st.store, () => 1);
    return swe5gEntry.collect([...store.outputsNamed('swe5g.validate')], {
      store,
      config: { swe5g: { audit } },
      stateDir: state,
      log: () => undefined,
    });
  } finally {
    st.close();
  }
}

const ids = (rows: readonly Record<string, unknown>[]) =>
  rows.map((r) => String(r.instance_id)).sort();

describe('the release keeps only audited instances by default', () => {
  it('default: the weak and the unaudited are left out, each with its reason and hint', () => {
    const got = collect({});
    expect(ids(got.rows)).toEqual(['free5gc__amf-1']);
    expect(got.leftOut).toEqual({ incomplete_left_out: 0, weak_f2p_test: 1, not_audited: 1 });
    expect(got.leftOutKeys).toMatchObject({
      weak_f2p_test: ['free5gc__amf-2'],
      not_audited: ['free5gc__amf-3'],
    });
    expect(got.leftOutHints!.not_audited).toMatch(/release_unaudited: true/);
    const card = got.notes!.join('\n');
    expect(card).toMatch(/left out because the audit has no record of them .*free5gc__amf-3/);
    expect(card).toMatch(/left out because their test accepts .*free5gc__amf-2 \(noop resolved\)/);
  });

  it('release_unaudited: the unaudited row is released and the card names it', () => {
    const got = collect({ release_unaudited: true });
    expect(ids(got.rows)).toEqual(['free5gc__amf-1', 'free5gc__amf-3']);
    expect(got.leftOut).toEqual({ incomplete_left_out: 0, weak_f2p_test: 1 });
    expect(got.notes!.join('\n')).toMatch(/released without an audit record .*free5gc__amf-3/);
    // the weak one stays out: release_unaudited does not release a test the audit fooled
    expect(ids(got.rows)).not.toContain('free5gc__amf-2');
  });

  it('release_weak and release_unaudited together: all three, the card saying so of each', () => {
    const got = collect({ release_weak: true, release_unaudited: true });
    expect(ids(got.rows)).toHaveLength(3);
    const card = got.notes!.join('\n');
    expect(card).toMatch(/released although their test accepts .*free5gc__amf-2/);
    expect(card).toMatch(/released without an audit record .*free5gc__amf-3/);
  });

  it('the audit off: rows without a record are released, the card says so; a weak record made earlier still counts', () => {
    const got = collect({ enabled: false });
    expect(ids(got.rows)).toEqual(['free5gc__amf-1', 'free5gc__amf-3']);
    expect(got.notes!.join('\n')).toMatch(
      /released without an audit record \(the audit is off: swe5g\.audit\.enabled: false\): free5gc__amf-3/,
    );
  });
});
