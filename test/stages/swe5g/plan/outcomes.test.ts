/**
 * What `telebench plan` reads of a sampled candidate (stages/swe5g/plan/outcomes.ts), from a real
 * SQLite store: the stages it finished, the first that dropped it, and at depth audit a weak test
 * read as the audit's loss `weak_f2p_test` (a default release leaves it out), a sound one as done.
 */
import { describe, it, expect } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState } from '../../../../pipeline/state.js';
import { storeReader } from '../../../../pipeline/runner.js';
import { sampledOutcome } from '../../../../stages/swe5g/plan/outcomes.js';
import { stagesOf } from '../../../../stages/swe5g/plan/estimate.js';

describe('sampledOutcome', () => {
  it('reads a weak audit as the loss weak_f2p_test, a sound one as done, a skip as its reason', () => {
    const st = openState(mkdtempSync(join(tmpdir(), 'plan-outcomes-')));
    try {
      const put = (stage: string, key: string, o: { output?: unknown; skip?: string }) => {
        const input = JSON.stringify({ id: key });
        st.store.planItem(`swe5g.${stage}`, key, 1, input, input, false);
        st.store.startItem(`swe5g.${stage}`, key, 'a', 'r');
        st.store.finishItem(
          `swe5g.${stage}`,
          key,
          'a',
          o.skip
            ? { state: 'skipped', reason: o.skip, detail: '' }
            : { state: 'done', output: o.output },
        );
      };
      for (const k of ['sound', 'weak', 'lost']) put('resolve', k, { output: {} });
      for (const k of ['sound', 'weak'])
        for (const s of ['testgen', 'validate']) put(s, k, { output: {} });
      put('testgen', 'lost', { skip: 'no_fix_pattern' });
      const built = { build_seconds: { env: 0, base: 0 }, images: {}, sizes: {} };
      for (const k of ['sound', 'weak']) put('build', k, { output: built });
      const audit = (weak: boolean) => ({ f2p_audit: { weak, mutants: [] }, seconds: 1 });
      put('audit', 'sound', { output: audit(false) });
      put('audit', 'weak', { output: audit(true) });
      const store = storeReader(st.store, () => 1);
      const stages = stagesOf('audit');
      expect(sampledOutcome(store, 'sound', stages)).toMatchObject({
        done: ['resolve', 'testgen', 'build', 'validate', 'audit'],
      });
      expect(sampledOutcome(store, 'sound', stages).lost).toBeUndefined();
      expect(sampledOutcome(store, 'weak', stages)).toMatchObject({
        done: ['resolve', 'testgen', 'build', 'validate'],
        lost: { stage: 'audit', reason: 'weak_f2p_test' },
      });
      expect(sampledOutcome(store, 'lost', stages)).toMatchObject({
        done: ['resolve'],
        lost: { stage: 'testgen', reason: 'no_fix_pattern' },
      });
      // through validation only, the weak one is simply validated
      expect(sampledOutcome(store, 'weak', stagesOf('validate')).lost).toBeUndefined();
    } finally {
      st.close();
    }
  });
});
