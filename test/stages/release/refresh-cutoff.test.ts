/**
 * Issue 32, found on a real free5gc/udm refresh (docs/results/refresh.md): one candidate whose
 * environment cannot build must not stop the dataset moving. The cutoff a release records is the
 * latest `merged_at` mined, held back to the earliest candidate with a failed item after the
 * filter, so the next refresh mines that PR again and retries it. A real SQLite store.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState } from '../../../pipeline/state.js';
import { storeReader } from '../../../pipeline/runner.js';
import { earliestFailed, earliestIncomplete, swe5gCutoff } from '../../../stages/swe5g/refresh.js';

const root = mkdtempSync(join(tmpdir(), 'telebench-cutoff-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A state whose mining saw PRs 90 (July), 94 (August, +08:00) and 96 (September). */
function stateWith(
  failed: { stage: string; key: string }[],
  skipped: string[] = [],
  validated: { key: string; problem_statement: string }[] = [],
) {
  const st = openState(join(root, `s${Math.random().toString(36).slice(2)}`));
  const put = (
    stage: string,
    key: string,
    result: 'done' | 'failed' | 'skipped',
    output: unknown,
  ) => {
    const input = JSON.stringify({ id: key });
    st.store.planItem(stage, key, 1, input, input, false);
    st.store.startItem(stage, key, 'a', 'r');
    st.store.finishItem(
      stage,
      key,
      'a',
      result === 'done'
        ? { state: 'done', output }
        : result === 'failed'
          ? { state: 'failed', error: { code: 'dependency_unavailable', message: 'refused' } }
          : { state: 'skipped', reason: 'f2p_fails_after_fix', detail: '' },
    );
  };
  const prs = [
    ['free5gc__udm-90', '2026-07-10T10:00:00Z'],
    ['free5gc__udm-94', '2026-08-20T16:36:08+08:00'],
    ['free5gc__udm-96', '2026-09-01T00:00:00Z'],
  ] as const;
  put('swe5g.mine', 'free5gc/udm', 'done', { prs: prs.map(([, m]) => ({ merged_at: m })) });
  // the candidate's issue text is what a validated instance's statement is read from
  const statement = (id: string) =>
    validated.find((v) => v.key === id)?.problem_statement ?? 'a linked issue';
  for (const [id, merged_at] of prs)
    put('swe5g.filter', id, 'done', {
      instance_id: id,
      merged_at,
      problem_statement: statement(id),
      hints_text: '',
      incomplete: statement(id) === '',
    });
  for (const f of failed) put(f.stage, f.key, 'failed', null);
  for (const k of skipped) put('swe5g.validate', k, 'skipped', null);
  for (const v of validated)
    put('swe5g.validate', v.key, 'done', {
      instance_id: v.key,
      problem_statement: v.problem_statement,
      incomplete: v.problem_statement === '',
    });
  return { st, store: storeReader(st.store, () => 1) };
}

describe('the cutoff of a SWE-Bench 5G release', () => {
  it('is the latest merged_at mined when nothing failed (a skip is a verdict, not a failure)', () => {
    const { st, store } = stateWith([], ['free5gc__udm-90']);
    expect(earliestFailed(store)).toBeNull();
    expect(swe5gCutoff(store)).toBe('2026-09-01T00:00:00.000Z');
    st.close();
  });

  it('is held at the earliest candidate with a failed item, in UTC, so the next refresh retries it', () => {
    const { st, store } = stateWith([
      { stage: 'swe5g.build', key: 'free5gc__udm-94' },
      { stage: 'swe5g.validate', key: 'free5gc__udm-96' },
    ]);
    expect(earliestFailed(store)).toBe('2026-08-20T08:36:08.000Z');
    expect(swe5gCutoff(store)).toBe('2026-08-20T08:36:08.000Z');
    st.close();
  });

  it('is held at a candidate whose validation failed dependency_unavailable (an environment fault), not at one skipped build_failed_at_parent (a verdict)', () => {
    // udm-94 as the newcomer's trial met it, now recorded as validate raises it: failed, retried
    const held = stateWith(
      [{ stage: 'swe5g.validate', key: 'free5gc__udm-94' }],
      ['free5gc__udm-90'],
    );
    expect(earliestFailed(held.store)).toBe('2026-08-20T08:36:08.000Z');
    expect(swe5gCutoff(held.store)).toBe('2026-08-20T08:36:08.000Z');
    held.st.close();
    // the old record of the same fault, a skip, held nothing: the PR was lost once 96 was released
    const lost = stateWith([], ['free5gc__udm-90', 'free5gc__udm-94']);
    expect(swe5gCutoff(lost.store)).toBe('2026-09-01T00:00:00.000Z');
    lost.st.close();
  });

  it('is held at the earliest validated candidate without a problem statement, so a refresh completes it once its issue is known', () => {
    const complete = { key: 'free5gc__udm-90', problem_statement: 'UDM panics on a nil SUPI' };
    const { st, store } = stateWith(
      [],
      [],
      [complete, { key: 'free5gc__udm-94', problem_statement: '' }],
    );
    expect(earliestIncomplete(store)).toBe('2026-08-20T08:36:08.000Z');
    expect(swe5gCutoff(store)).toBe('2026-08-20T08:36:08.000Z');
    st.close();
    // complete ones (a statement, whatever its words) hold nothing
    const other = stateWith([], [], [complete, { ...complete, key: 'free5gc__udm-96' }]);
    expect(earliestIncomplete(other.store)).toBeNull();
    expect(swe5gCutoff(other.store)).toBe('2026-09-01T00:00:00.000Z');
    other.st.close();
  });

  it('ignores a failed item of a key the filter never kept (no date to hold at)', () => {
    const { st, store } = stateWith([{ stage: 'swe5g.build', key: 'free5gc__amf-1' }]);
    expect(swe5gCutoff(store)).toBe('2026-09-01T00:00:00.000Z');
    st.close();
  });
});
