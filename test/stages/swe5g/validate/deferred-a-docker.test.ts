/**
 * testgen's deferred Python Strategy A decided in the instance image, in the real Docker engine
 * (issue 30): the fixture's module imports `inflection`, which the host's python3 lacks and the
 * image installs from the registry entry's `environment.python` requirements. testgen's host check
 * stops at the import and defers the A test; validation runs it in the image that
 * `buildInstanceImages` made (never rebuilt: the test patches are applied at step time), where it
 * fails at the parent and passes with the gold patch, so the validated instance is Strategy A.
 * Graded through evaluate's grading entry point on that image: a no-op guard is not resolved, the
 * fix written as an early return instead of the gold's if/else is. The sibling whose input is no
 * crash at the parent keeps Strategy B, with the reason.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { DockerExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { SkipItem } from '../../../../pipeline/errors.js';
import { buildInstanceImages } from '../../../../stages/swe5g/build/build.js';
import { validateInstance } from '../../../../stages/swe5g/validate/validate.js';
import { generateTestGen } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { stateInstance } from '../../../../stages/swe5g/evaluate/instances.js';
import { gradePrediction } from '../../../../stages/swe5g/evaluate/grade.js';
import { ensureTestBase, resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';
import {
  NAMING,
  PY_DEFERRED_ENTRY,
  namingPatch,
  pyDeferredFixture,
} from '../../../fixtures/repos/py-deferred.js';

const docker = new DockerClient();
const registry = new Map([[PY_DEFERRED_ENTRY.id, PY_DEFERRED_ENTRY]]);
const settings = testSettings({ fix_runs: 1, test_repeats: 1, parent_reruns: 0 });
const A_ID = 'tests/test_f2p_call.py::test_f2p_call_session_label';
let root: string;

beforeAll(async () => {
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-deferred-a-docker-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** testgen on the host, the images, validation in Docker (a SkipItem fails the test). */
async function run(which: 'flips' | 'noCrash') {
  const fx = pyDeferredFixture(join(root, `src-${which}`), which, { withImportingTest: true });
  const stateDir = join(root, `state-${which}`);
  const res = await resolveFixture(fx, stateDir);
  const gen = await generateTestGen(fx.dir, res, testgenSchema.parse({ test_timeout_s: 120 }));
  expect(gen.testgen.strategy).toBe('B');
  expect(gen.testgen.deferred_a?.host_import_failure).toBe("No module named 'inflection'");
  const built = await buildInstanceImages(res, { docker, settings, stateDir, registry });
  const input = { resolved: res, testgen: gen.testgen, built };
  const logs = new Map<string, string>();
  const v = await validateInstance(input, {
    executor: new DockerExecutor(docker),
    settings,
    saveLog: (step, text) => {
      logs.set(step, text);
      return `digest-${step}`;
    },
  }).catch((e: unknown) => {
    if (e instanceof SkipItem) expect.fail(`${e.code}: ${e.message}`);
    throw e;
  });
  return { fx, res, gen, input, built, v, logs };
}

describe('deferred Python Strategy A in the instance image (Docker)', () => {
  it('flips in the image: the instance is Strategy A; a no-op is not resolved, an early return is', async () => {
    const { fx, res, input, built, v, logs } = await run('flips');
    expect(v.deferred_a?.used, v.deferred_a?.reason).toBe(true);
    expect(v.strategy).toBe('A');
    expect(v.FAIL_TO_PASS).toEqual([A_ID]);
    // the package test that imports inflection passes in the image: it has the package
    expect(v.PASS_TO_PASS).toEqual([
      'tests/test_naming.py::test_label',
      'tests/test_ok.py::test_ok',
    ]);
    expect(v.deferred_a?.reason).toContain('decided in the instance image');
    expect(logs.get('deferred_a_parent')).toMatch(/session_label crashed on session=None/);
    expect(v.test_patch).toContain('+++ b/tests/test_f2p_call.py');
    // the image validation used is the one the build made (test patches are step-time files)
    expect(v.images.instance).toBe(built.images.instance);
    const inst = stateInstance(v, input, PY_DEFERRED_ENTRY, settings);
    const grade = async (patch: string) =>
      (
        await gradePrediction(
          { instance: inst, model_patch: patch },
          { executor: new DockerExecutor(docker), settings, saveLog: () => 'log' },
        )
      ).grade;
    const noop = await grade(namingPatch(fx.dir, res.base_commit, NAMING.flips.noop));
    expect(noop.patch_applied).toBe(true);
    expect(noop.FAIL_TO_PASS).toEqual({ [A_ID]: 'fail' });
    expect(noop.resolved).toBe(false);
    const early = await grade(namingPatch(fx.dir, res.base_commit, NAMING.flips.earlyReturn));
    expect(early.FAIL_TO_PASS).toEqual({ [A_ID]: 'pass' });
    expect(early.resolved).toBe(true);
  });

  it('no crash at the parent in the image: B stays, with the reason', async () => {
    const { gen, v } = await run('noCrash');
    expect(v.strategy).toBe('B');
    expect(v.FAIL_TO_PASS).toEqual(gen.testgen.FAIL_TO_PASS);
    expect(v.deferred_a).toEqual({
      used: false,
      reason:
        'deferred Strategy A (session_label with suffix=None) not used: in the instance image it does not fail at the parent (test_f2p_call_session_label: pass)',
    });
    expect(v.PASS_TO_PASS).toContain('tests/test_naming.py::test_label');
  });
});
