/**
 * verify in fresh containers on the real Docker engine (runs, never skips, when CI=true): the
 * released row of the Go fixture is rebuilt from its own fields and recipe (offline base image),
 * the gold patch resolves it 3 of 3 and the empty patch 0 of 3, each run in a fresh container,
 * recorded with the image's content id and the digest of every run's log (issue 32).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import { goFixture, GO_F2P, GO_P2P } from '../../fixtures/repos/go-nil.js';
import { ensureTestBase, resolveFixture, testSettings } from '../../fixtures/repos/harness.js';
import { swe5gVerifier } from '../../../stages/release/verifier.js';
import { swe5gRowOf } from '../../../stages/swe5g/dataset.js';
import type { Swe5gRow } from '../../../datasets/index.js';
import { BlobStore } from '../../../pipeline/store/blobs.js';
import { validatedFixture } from './rows.js';

const docker = new DockerClient();
let state: string;
let row: Swe5gRow;

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  const root = mkdtempSync(join(tmpdir(), 'verify-docker-'));
  state = join(root, 'state');
  const fx = goFixture(join(root, 'src'), 'good');
  const res = await resolveFixture(fx, state);
  row = swe5gRowOf(
    validatedFixture(res, fx.testgen, { FAIL_TO_PASS: [GO_F2P], PASS_TO_PASS: GO_P2P }),
    'git',
  )!;
  writeFileSync(join(root, 'config.yaml'), 'version: 1\n');
});

describe('verify with the Docker executor', () => {
  it('gold patch resolves, empty patch does not, in fresh containers', async () => {
    const verifier = swe5gVerifier(
      { swe5g: { environments: testSettings() } },
      { stateDir: state, configFile: join(state, '..', 'config.yaml') },
    );
    const { summary, reproduced } = await verifier([row]);
    expect(summary).toMatchObject({
      attempted: 1,
      gold_resolved: 1,
      rate: 1,
      empty_patch_resolved: 0,
      executor: 'docker',
      dropped: [],
    });
    expect(reproduced.has(row.instance_id)).toBe(true);
    // the re-proof record: 3 fresh containers each, the image by its content id, every log kept
    const [rec] = summary.records!;
    expect(summary.runs).toBe(3);
    expect(rec).toMatchObject({
      instance_id: row.instance_id,
      holds: true,
      gold: { runs: 3, resolved: 3 },
      empty: { runs: 3, failed: 3 },
      reason: '',
    });
    expect(rec!.image_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await docker.inspect(rec!.image))?.Id).toBe(rec!.image_id);
    const blobs = new BlobStore(join(state, 'blobs'));
    expect(new Set([...rec!.logs.gold, ...rec!.logs.empty]).size).toBe(6);
    for (const d of [...rec!.logs.gold, ...rec!.logs.empty]) expect(blobs.has(d)).toBe(true);
  });
});
