/**
 * verify on real repositories the test builds (test/fixtures/repos, a Go module with the nil
 * GNbId bug of free5gc/amf PR 161) with the host's Go through the local executor: the gold patch
 * resolves the good instance and the empty patch does not; a "fix" that does not fix is dropped and
 * listed; a release with the verifier writes only what reproduced and puts the rate in the card.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goFixture, GO_F2P, GO_P2P } from '../../fixtures/repos/go-nil.js';
import type { Fixture } from '../../fixtures/repos/builder.js';
import {
  swe5gVerifier,
  gradeRun,
  registryEntryOf,
  rowTestDirs,
} from '../../../stages/release/verifier.js';
import { selectTestDirs } from '../../../stages/swe5g/validate/validate.js';
import { swe5gEntry, swe5gRowOf } from '../../../stages/swe5g/dataset.js';
import { datasetRegistry } from '../../../stages/release/entry.js';
import { planRelease, writeRelease, readReleaseRows } from '../../../stages/release/assemble.js';
import { verifyRelease } from '../../../stages/release/verify.js';
import { swe5gDataset, type Swe5gRow } from '../../../datasets/index.js';
import { fixtureRow, validated } from './rows.js';
import { openState } from '../../../pipeline/state.js';
import { releaseDataset } from '../../../stages/release/release.js';
import type { ValidatedInstance } from '../../../stages/swe5g/types.js';
import { storeReader } from '../../../pipeline/runner.js';

/** The validated instance of a fixture as swe5g.validate stores it. */
function instanceOf(fx: Fixture, row: Swe5gRow): ValidatedInstance {
  return validated(fx.candidate.repo, fx.candidate.pr_number, { ...row, image_recipe: 'go' });
}

/** The released row of a fixture (its mirror cloned into `state`). */
const rowOf = (fx: Fixture, state: string): Swe5gRow =>
  fixtureRow(fx, state, { FAIL_TO_PASS: [GO_F2P], PASS_TO_PASS: GO_P2P });

describe('verify with the local executor', () => {
  let state: string;
  let config: {
    swe5g: {
      environments: { executor: 'local'; test_scope: 'touched' };
      audit: { release_unaudited: true };
    };
  };
  let configFile: string;
  let good: Swe5gRow;
  let bad: Swe5gRow;
  let fixtures: Fixture[];
  beforeAll(() => {
    state = mkdtempSync(join(tmpdir(), 'verify-'));
    const root = join(state, 'fixtures');
    mkdirSync(root, { recursive: true });
    fixtures = [goFixture(root, 'good'), goFixture(root, 'badfix')];
    good = rowOf(fixtures[0]!, state);
    bad = rowOf(fixtures[1]!, state);
    // fixture rows, never audited (the audit gate: test/datasets/swe5g-audit-gate.test.ts)
    config = {
      swe5g: {
        environments: { executor: 'local', test_scope: 'touched' },
        audit: { release_unaudited: true },
      },
    } as never;
    configFile = join(state, 'config.yaml');
    writeFileSync(configFile, 'version: 1\n');
  });

  it('grades a run by every FAIL_TO_PASS and PASS_TO_PASS test', () => {
    expect(
      gradeRun({ a: 'pass', b: 'pass' }, { FAIL_TO_PASS: ['a'], PASS_TO_PASS: ['b'] }).resolved,
    ).toBe(true);
    expect(gradeRun({ a: 'pass' }, { FAIL_TO_PASS: ['a'], PASS_TO_PASS: ['b'] })).toEqual({
      resolved: false,
      notPassing: ['b'],
    });
    expect(
      gradeRun({ a: 'fail', b: 'pass' }, { FAIL_TO_PASS: ['a'], PASS_TO_PASS: ['b'] }).resolved,
    ).toBe(false);
    // a test the log reported twice is not a pass, whatever its last status (issue 14, section 2)
    expect(
      gradeRun({ a: 'pass', b: 'pass' }, { FAIL_TO_PASS: ['a'], PASS_TO_PASS: ['b'] }, ['a']),
    ).toEqual({ resolved: false, notPassing: ['a'] });
  });

  it('finds the registry entry of a monorepo folder from the patch paths', () => {
    const entry = (id: string, path?: string) =>
      ({
        id,
        owner: 'magma',
        name: 'magma',
        path,
        language: 'go',
        default_branch: 'master',
        nf: 'library',
        issues_repo: 'magma/magma',
        license: 'BSD-3-Clause',
        test: { scope: 'touched' },
        image: 'go',
      }) as never;
    const entries = [
      entry('magma/magma:lte/gateway/go', 'lte/gateway/go'),
      entry('magma/magma:feg/gateway', 'feg/gateway'),
    ];
    expect(
      registryEntryOf({ repo: 'magma/magma', patch: '+++ b/feg/gateway/x.go\n' }, entries),
    ).toBe(entries[1]);
    expect(
      registryEntryOf({ repo: 'free5gc/amf', patch: '+++ b/x.go\n' }, entries),
    ).toBeUndefined();
  });

  it('runs the test directories validation ran (fix dirs incl. deleted files, test_patch, f2p_test_patch)', () => {
    const diff = (path: string, deleted = false): string =>
      `diff --git a/${path} b/${path}\n--- a/${path}\n+++ ${deleted ? '/dev/null' : `b/${path}`}\n@@ -1 +1 @@\n-a\n+b\n`;
    const patch = diff('lte/gateway/go/ngap/handler.go') + diff('lte/gateway/go/old/gone.go', true);
    const test_patch = diff('lte/gateway/go/ngap/handler_test.go');
    const f2p_test_patch = diff('lte/gateway/go/context/ctx_nil_test.go');
    const entry = {
      id: 'magma/magma:lte/gateway/go',
      owner: 'magma',
      name: 'magma',
      path: 'lte/gateway/go',
      language: 'go',
      default_branch: 'master',
      nf: 'library',
      issues_repo: 'magma/magma',
      license: 'BSD-3-Clause',
      test: { scope: 'touched' },
      image: 'go',
    } as never;
    // what swe5g.validate selects: Resolved.test_dirs (dirs of every file the fix names) + the
    // test files of test_patch and f2p_test_patch, relative to the module folder
    const validation = selectTestDirs({
      recipe: 'go',
      scope: 'touched',
      moduleDir: 'lte/gateway/go',
      sourceDirs: ['lte/gateway/go/ngap', 'lte/gateway/go/old'],
      testPatches: [test_patch, f2p_test_patch],
    });
    expect(validation).toEqual(['context', 'ngap', 'old']);
    const row = swe5gRowOf(
      validated('magma/magma', 12001, {
        patch,
        test_patch: [test_patch, f2p_test_patch].join(''),
        image_recipe: 'go',
      }),
      'git',
    )!;
    expect(rowTestDirs(row, entry, { test_scope: 'registry' })).toEqual(validation);
    expect(rowTestDirs(row, entry, { test_scope: 'repo' })).toBe('all');
  });

  it('the gold patch resolves the good instance, the empty patch does not; a non-fix is dropped', async () => {
    const verifier = swe5gVerifier(config, { stateDir: state, configFile });
    const { summary, reproduced } = await verifier([good, bad]);
    expect(summary.attempted).toBe(2);
    expect(summary.gold_resolved).toBe(1);
    expect(summary.rate).toBe(0.5);
    expect(summary.empty_patch_resolved).toBe(0);
    expect(summary.executor).toBe('local');
    expect([...reproduced]).toEqual([good.instance_id]);
    expect(summary.dropped).toEqual([
      { instance_id: bad.instance_id, reason: expect.stringContaining(GO_F2P) },
    ]);
  });

  it('verify of a written release re-runs it from its own rows', async () => {
    const plan = planRelease({
      dataset: swe5gDataset as never,
      version: '1.0.0',
      rows: [good],
      createdAt: '2026-11-29T18:00:00Z',
      provenance: {
        gitSha: null,
        configHash: 'c',
        stageVersions: {},
        inputHashes: {},
        settings: {},
        profile: null,
        provenanceNotes: [],
        sample: null,
        models: { generator: [], targets: [] },
      },
      funnel: [],
      licenseEvidence: () => 'e',
      verify: null,
      // what releaseDataset adds for a dataset with a verifier released without it
      snapshotLimitations: [swe5gEntry.verify!.unverifiedLimitation],
      previous: null,
    });
    const dir = writeRelease(state, plan).dir;
    expect(readReleaseRows(dir)).toHaveLength(1);
    const summary = await verifyRelease({
      stateDir: state,
      entry: swe5gEntry,
      version: '1.0.0',
      config,
      env: { stateDir: state, configFile },
    });
    expect(summary).toMatchObject({ attempted: 1, gold_resolved: 1, empty_patch_resolved: 0 });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain(
      'were not re-run before release',
    );
  });

  it('release re-runs the rows first: the non-fix is dropped, listed, and the rate is in the card', async () => {
    const st = openState(state);
    for (const [fx, row] of [
      [fixtures[0]!, good],
      [fixtures[1]!, bad],
    ] as const) {
      const input = JSON.stringify({ id: row.instance_id });
      st.store.planItem('swe5g.validate', row.instance_id, 1, input, input, false);
      st.store.startItem('swe5g.validate', row.instance_id, 'a', 'r');
      st.store.finishItem('swe5g.validate', row.instance_id, 'a', {
        state: 'done',
        output: instanceOf(fx, row),
      });
    }
    try {
      const out = await releaseDataset({
        ctx: {
          store: storeReader(st.store, () => 1),
          config,
          stateDir: state,
          log: () => undefined,
        },
        wiring: {
          datasets: datasetRegistry([swe5gEntry]),
          pipelineStages: () => ['swe5g.validate'],
          stageVersion: () => 1,
        },
        entry: swe5gEntry,
        version: '2.0.0',
        verifier: swe5gEntry.verify!.verifier(config, { stateDir: state, configFile }),
      });
      expect(out.status).toBe('written');
      expect(readReleaseRows(out.dir).map((r) => r.instance_id)).toEqual([good.instance_id]);
      const card = readFileSync(join(out.dir, 'README.md'), 'utf8');
      expect(card).toContain(
        'The gold patch resolved all 3 runs in 1 of 2 instances (**50.00%** before dropping',
      );
      expect(card).toContain(
        `- \`${bad.instance_id}\`: gold patch resolved 0 of 1 run(s) (3 needed): tests not passing: ${GO_F2P}`,
      );
      expect(out.manifest.verify).toMatchObject({
        attempted: 2,
        gold_resolved: 1,
        empty_patch_resolved: 0,
      });
    } finally {
      st.close();
    }
  });
});
