import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline, storeReader } from '../../../../pipeline/runner.js';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { EventBus } from '../../../../pipeline/events.js';
import type { Pipeline } from '../../../../pipeline/stage.js';
import type { Resolved } from '../../../../stages/swe5g/types.js';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { resolveStage } from '../../../../stages/swe5g/resolve/resolve.js';
import { buildStage } from '../../../../stages/swe5g/build/build.js';
import {
  validateStage,
  type Validated,
  type ValidateInput,
} from '../../../../stages/swe5g/validate/validate.js';
import { goFixture, GO_F2P, GO_TEXT_F2P } from '../../../fixtures/repos/go-nil.js';
import { auditStage, type AuditOutput } from '../../../../stages/swe5g/audit/audit.js';
import { stateInstance } from '../../../../stages/swe5g/evaluate/instances.js';
import { gradePrediction } from '../../../../stages/swe5g/evaluate/grade.js';
import { swe5gEntry } from '../../../../stages/swe5g/dataset.js';
import { DockerExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { environmentsSchema } from '../../../../stages/swe5g/environments-config.js';
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
  fixtures = [
    goFixture(join(root, 'src'), 'good'),
    goFixture(join(root, 'src'), 'badfix'),
    goFixture(join(root, 'src'), 'textcount'),
  ];
});
afterAll(() => state.close());

describe('swe5g pipeline: filter -> resolve -> testgen -> build -> validate -> audit', () => {
  it('validates the good fix, skips the bad one with its reason, stores step logs', async () => {
    const pipeline: Pipeline = {
      name: 'swe5g-test',
      description: 'test',
      stages: [
        'swe5g.filter',
        'swe5g.resolve',
        'swe5g.testgen',
        'swe5g.build',
        'swe5g.validate',
        'swe5g.audit',
      ],
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
        // CI time: one must-reject and one must-resolve kind (each is a grading run)
        audit: { kinds: ['noop', 'via_local'] },
      }),
    };
    const result = await runPipeline({
      pipeline,
      registry: new Map<string, never>(
        [filterFixture, resolveStage, testgenFixture, buildStage, validateStage, auditStage].map(
          (s) => [s.name, s as never],
        ),
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

  it('audit: a text-counting test accepts the no-op (not released), a behaviour test rejects it', async () => {
    const audit = (id: string) =>
      (state.store.item('swe5g.audit', id)!.output as AuditOutput).f2p_audit;
    const text = audit('fixture__amfmini-textcount-175');
    const good = audit('fixture__amfmini-good-161');
    const kind = (a: typeof text, k: string) => a.mutants.find((m) => m.kind === k)!;
    expect(text.sites.map((s) => s.split(' ').at(-1)).sort()).toEqual([
      'req.GlobalRANNodeID',
      'req.GlobalRANNodeID.GNbId',
    ]);
    // the no-op `if ... GNbId == nil {}` passes a test that counts the guard's text: caught
    expect(kind(text, 'noop')).toMatchObject({ status: 'graded', resolved: true, ok: false });
    expect(text.weak).toBe(true);
    // the behaviour test (nil GNbId must return ErrMissingGNbID) rejects it
    expect(kind(good, 'noop')).toMatchObject({ status: 'graded', resolved: false, ok: true });
    expect(good.weak).toBe(false);
    // an equivalent rewrite (the tested value through a local) resolves under both
    for (const a of [text, good])
      expect(kind(a, 'via_local')).toMatchObject({ status: 'graded', resolved: true, ok: true });
    expect(kind(good, 'inverted')).toMatchObject({
      status: 'not_applicable',
      why: 'kind not in swe5g.audit.kinds',
    });

    // the recorded verdict is an actual grade: the stored no-op graded again through gradePrediction
    const rec = state.store.item('swe5g.validate', 'fixture__amfmini-textcount-175')!;
    const inst = stateInstance(rec.output as Validated, rec.input as ValidateInput, undefined, {
      test_scope: 'touched',
    });
    expect(inst.FAIL_TO_PASS).toEqual([GO_TEXT_F2P]);
    const noopPatch = state.blobs.get(kind(text, 'noop').patch_blob!).toString();
    expect(noopPatch).toContain(
      '+\tif req.GlobalRANNodeID == nil || req.GlobalRANNodeID.GNbId == nil {',
    );
    const again = await gradePrediction(
      { instance: inst, model_patch: noopPatch, step: 'regrade_noop' },
      {
        executor: new DockerExecutor(new DockerClient()),
        settings: environmentsSchema.parse({ limits: { timeout_s: 900 } }),
        saveLog: (_name, t) => state.blobs.put(Buffer.from(t)),
      },
    );
    expect(again.grade.resolved).toBe(kind(text, 'noop').resolved);

    // release: an instance whose must-reject mutant resolved is left out, with the reason
    const versions = new Map([validateStage, auditStage].map((s) => [s.name, s.version]));
    const reader = storeReader(state.store, (n) => versions.get(n), 'bug');
    const outputs = [...reader.outputs(validateStage)];
    const collected = swe5gEntry.collect(outputs, {
      store: reader,
      config: {},
      stateDir: state.dir,
      log: () => {},
    });
    const released = collected.rows.map((r) => r.instance_id);
    for (const o of reader.outputs(auditStage))
      expect(released.includes(o.key)).toBe(!o.output.f2p_audit.weak);
    expect(released).toContain('fixture__amfmini-good-161');
    expect(collected.leftOut.weak_f2p_test).toBe(1);
    expect(collected.notes?.join('\n')).toMatch(/fixture__amfmini-textcount-175 \(noop resolved\)/);
    const kept = swe5gEntry.collect(outputs, {
      store: reader,
      config: { swe5g: { audit: { release_weak: true } } },
      stateDir: state.dir,
      log: () => {},
    });
    expect(kept.rows.map((r) => r.instance_id)).toContain('fixture__amfmini-textcount-175');
  });
});
