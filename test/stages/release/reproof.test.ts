/**
 * Every release re-proven (issue 32): the rule (gold resolves N of N runs, the empty patch none)
 * rejects a flaky gold, an empty patch that resolves once and a gold that never ran, and accepts
 * a clean record; then two releases of real Go repositories the test builds (host Go, local
 * executor): both instances hold 3 of 3 in the first, with their log digests stored as blobs of
 * the state; the environment of one breaks (a file its PASS_TO_PASS test needs is removed) and
 * the next release drops it, naming the reason in the card, the manifest and the changelog.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goFixture, GO_ENV_P2P, GO_F2P, GO_P2P } from '../../fixtures/repos/go-nil.js';
import {
  repeatRuns,
  reproofRecord,
  summarizeReproof,
  type PatchRun,
} from '../../../stages/release/reproof.js';
import { swe5gEntry } from '../../../stages/swe5g/dataset.js';
import { datasetRegistry } from '../../../stages/release/entry.js';
import { releaseDataset } from '../../../stages/release/release.js';
import { readReleaseRows } from '../../../stages/release/assemble.js';
import { openState } from '../../../pipeline/state.js';
import { storeReader } from '../../../pipeline/runner.js';
import { BlobStore } from '../../../pipeline/store/blobs.js';
import type { Swe5gRow } from '../../../datasets/index.js';
import { fixtureRow, validated } from './rows.js';

const ok: PatchRun = { resolved: true, why: '', logs: ['a'] };
const no: PatchRun = { resolved: false, why: 'tests not passing: x', logs: ['b'] };

describe('the re-proof rule', () => {
  const rec = (gold: PatchRun[], empty: PatchRun[]) =>
    reproofRecord({
      instance_id: 'o__r-1',
      runs: 3,
      gold,
      empty,
      image: '',
      image_id: '',
      seconds: 1,
    });

  it('holds only for gold 3 of 3 and empty 0 of 3', () => {
    expect(rec([ok, ok, ok], [no, no, no])).toMatchObject({
      holds: true,
      gold: { runs: 3, resolved: 3 },
      empty: { runs: 3, failed: 3 },
      logs: { gold: ['a', 'a', 'a'], empty: ['b', 'b', 'b'] },
      reason: '',
    });
    // a flaky gold: passed twice, then failed
    expect(rec([ok, ok, no], [])).toMatchObject({
      holds: false,
      reason: 'gold patch resolved 2 of 3 run(s) (3 needed): tests not passing: x',
    });
    // the tests do not detect the bug in one run of three
    expect(rec([ok, ok, ok], [no, ok])).toMatchObject({
      holds: false,
      reason: expect.stringContaining('the empty patch resolved run 2 of 3'),
    });
    // fewer runs than asked is never a pass
    expect(rec([ok], [no])).toMatchObject({
      holds: false,
      reason: 'gold patch resolved 1 of 1 run(s) (3 needed)',
    });
  });

  it('stops at the first run that breaks the rule', async () => {
    const seq = [ok, no, ok];
    let made = 0;
    const runs = await repeatRuns(3, true, async (i) => (made++, seq[i]!));
    expect(runs).toEqual([ok, no]);
    expect(made).toBe(2);
    expect((await repeatRuns(3, false, async () => no)).length).toBe(3);
  });

  it('summarises: gold counted when it resolved every run, empty when it resolved any', () => {
    const s = summarizeReproof(
      [rec([ok, ok, ok], [no, no, no]), rec([ok, no], []), rec([ok, ok, ok], [ok])],
      'local',
      3,
    );
    expect(s).toMatchObject({ attempted: 3, gold_resolved: 2, empty_patch_resolved: 1, runs: 3 });
    expect(s.dropped).toHaveLength(2);
    expect(s.records).toHaveLength(3);
  });
});

describe('a release whose instance environment breaks (host Go, local executor)', () => {
  let state: string;
  let envFile: string;
  let good: Swe5gRow;
  let fragile: Swe5gRow;
  const config = {
    // fixture rows, never audited (the audit gate: test/datasets/swe5g-audit-gate.test.ts)
    swe5g: {
      environments: { executor: 'local', test_scope: 'touched' },
      audit: { release_unaudited: true },
    },
    release: { reproof_runs: 3 },
  };

  beforeAll(() => {
    state = mkdtempSync(join(tmpdir(), 'reproof-'));
    const root = join(state, 'fixtures');
    mkdirSync(root, { recursive: true });
    envFile = join(state, 'environment-ready');
    writeFileSync(envFile, 'up\n');
    good = fixtureRow(goFixture(root, 'good'), state, {
      FAIL_TO_PASS: [GO_F2P],
      PASS_TO_PASS: GO_P2P,
    });
    fragile = fixtureRow(
      goFixture(root, 'envfile', { counterFile: '/nonexistent', seed: 0, envFile }),
      state,
      { FAIL_TO_PASS: [GO_F2P], PASS_TO_PASS: [...GO_P2P, GO_ENV_P2P] },
    );
    writeFileSync(join(state, 'config.yaml'), 'version: 1\n');
    const st = openState(state);
    try {
      for (const row of [good, fragile]) {
        const input = JSON.stringify({ id: row.instance_id });
        st.store.planItem('swe5g.validate', row.instance_id, 1, input, input, false);
        st.store.startItem('swe5g.validate', row.instance_id, 'a', 'r');
        st.store.finishItem('swe5g.validate', row.instance_id, 'a', {
          state: 'done',
          output: validated(row.repo, Number(row.instance_id.split('-').at(-1)), {
            ...row,
            image_recipe: 'go',
          }),
        });
      }
    } finally {
      st.close();
    }
  });

  const release = async (version: string) => {
    const st = openState(state);
    try {
      const env = { stateDir: state, configFile: join(state, 'config.yaml') };
      return await releaseDataset({
        ctx: { store: storeReader(st.store, () => 1), config, stateDir: state, log: () => {} },
        wiring: {
          datasets: datasetRegistry([swe5gEntry]),
          pipelineStages: () => ['swe5g.validate'],
          stageVersion: () => 1,
        },
        entry: swe5gEntry,
        version,
        verifier: swe5gEntry.verify!.verifier(config, env),
      });
    } finally {
      st.close();
    }
  };

  it('release 1: both hold 3 of 3, each run in the manifest with a stored log', async () => {
    const out = await release('1.0.0');
    const v = out.manifest.verify!;
    expect(v).toMatchObject({ attempted: 2, gold_resolved: 2, empty_patch_resolved: 0, runs: 3 });
    expect(v.records!.map((r) => [r.instance_id, r.holds, r.gold, r.empty])).toEqual(
      [good, fragile]
        .map((r) => r.instance_id)
        .sort()
        .map((id) => [id, true, { runs: 3, resolved: 3 }, { runs: 3, failed: 3 }]),
    );
    const blobs = new BlobStore(join(state, 'blobs'));
    for (const r of v.records!) {
      expect(r.logs.gold).toHaveLength(3);
      expect(r.logs.empty).toHaveLength(3);
      for (const d of [...r.logs.gold, ...r.logs.empty]) expect(blobs.has(d)).toBe(true);
      // an empty-patch log shows the fail-to-pass test failing
      expect(blobs.get(r.logs.empty[0]!).toString()).toContain('TestHandleNGSetupRequestNilGNbId');
    }
    expect(readReleaseRows(out.dir)).toHaveLength(2);
    expect(readFileSync(join(out.dir, 'README.md'), 'utf8')).toContain(
      '3 times with the gold patch and 3 times with the empty patch',
    );
  });

  it('release 2, after the environment broke: the instance is dropped with the reason', async () => {
    rmSync(envFile);
    const out = await release('1.1.0');
    expect(readReleaseRows(out.dir).map((r) => r.instance_id)).toEqual([good.instance_id]);
    const v = out.manifest.verify!;
    const broke = v.records!.find((r) => r.instance_id === fragile.instance_id)!;
    // gold failed at its first run: no more runs, no empty runs
    expect(broke).toMatchObject({ holds: false, gold: { runs: 1, resolved: 0 } });
    expect(broke.empty.runs).toBe(0);
    expect(broke.reason).toContain(GO_ENV_P2P);
    expect(v.records!.find((r) => r.instance_id === good.instance_id)!.holds).toBe(true);
    const log = readFileSync(join(out.dir, 'CHANGELOG.md'), 'utf8');
    expect(log).toContain('Against 1.0.0: 2 -> 1 rows; 0 added, 1 removed, 0 changed.');
    expect(log).toContain(
      `- removed \`${fragile.instance_id}\`: did not hold at the re-proof of this release: gold patch resolved 0 of 1 run(s) (3 needed): tests not passing: ${GO_ENV_P2P}`,
    );
    expect(readFileSync(join(out.dir, 'README.md'), 'utf8')).toContain(
      `- \`${fragile.instance_id}\`: gold patch resolved 0 of 1 run(s)`,
    );
  });
});
