import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline } from '../../../../pipeline/runner.js';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { EventBus } from '../../../../pipeline/events.js';
import type { Pipeline } from '../../../../pipeline/stage.js';
import type { Resolved } from '../../../../stages/swe5g/types.js';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { resolveStage } from '../../../../stages/swe5g/resolve/resolve.js';
import { buildStage } from '../../../../stages/swe5g/build/build.js';
import { validateStage, type Validated } from '../../../../stages/swe5g/validate/validate.js';
import { goFixture, GO_F2P } from '../../../fixtures/repos/go-nil.js';
import { ensureTestBase } from '../../../fixtures/repos/harness.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import { standInStages } from '../../../fixtures/swe5g-stand-ins.js';

let root: string;
let state: OpenState;
let fixtures: Fixture[];

// Stand-ins for the mining and fail-to-pass stages: they emit what the contract says those
// stages output, for repositories this test built (the contract allows hand-made Candidates).
const [filterFixture, testgenFixture] = standInStages(() => fixtures);

beforeAll(async () => {
  await ensureTestBase(new DockerClient());
  root = mkdtempSync(join(tmpdir(), 'telebench-swe5g-pipe-'));
  state = openState(join(root, 'state'));
  fixtures = [goFixture(join(root, 'src'), 'good'), goFixture(join(root, 'src'), 'badfix')];
});
afterAll(() => state.close());

describe('swe5g pipeline: filter -> resolve -> testgen -> build -> validate', () => {
  it('validates the good fix, skips the bad one with its reason, stores step logs', async () => {
    const pipeline: Pipeline = {
      name: 'swe5g-test',
      description: 'test',
      stages: ['swe5g.filter', 'swe5g.resolve', 'swe5g.testgen', 'swe5g.build', 'swe5g.validate'],
    };
    const config = {
      version: 1,
      stages: {},
      swe5g: swe5gConfigSchema.parse({
        environments: {
          git_url_base: join(root, 'src'),
          base_source: 'offline',
          limits: { timeout_s: 900, memory_mib: 1024 },
        },
      }),
    };
    const result = await runPipeline({
      pipeline,
      registry: new Map<string, never>(
        [filterFixture, resolveStage, testgenFixture, buildStage, validateStage].map((s) => [
          s.name,
          s as never,
        ]),
      ),
      config,
      configFile: join(root, 'config.yaml'),
      stateDir: state.dir,
      store: state.store,
      blobs: state.blobs,
      bus: new EventBus(),
      signal: new AbortController().signal,
    });
    expect(result.exitCode).toBe(0);
    const good = state.store.item('swe5g.validate', 'fixture__amfmini-good-161');
    expect(good?.state).toBe('done');
    const v = good!.output as Validated;
    expect(v.FAIL_TO_PASS).toEqual([GO_F2P]);
    expect(v.executor).toBe('docker');
    const log = state.blobs.get(v.step_logs.parent_p2p!).toString();
    expect(log).toContain('# step parent_p2p executor docker exit 1');
    const bad = state.store.item('swe5g.validate', 'fixture__amfmini-badfix-163');
    expect(bad?.state).toBe('skipped');
    expect(bad?.skipReason).toBe('f2p_fails_after_fix');
    const resolved = state.store.item('swe5g.resolve', 'fixture__amfmini-good-161')!
      .output as Resolved;
    expect(resolved.version).toBe('1.21');
    expect(resolved.test_dirs).toEqual(['ngap']);
  });
});
