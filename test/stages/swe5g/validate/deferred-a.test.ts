/**
 * testgen's deferred Python Strategy A decided by validation (validate/deferred-a.ts), on the
 * host's LocalExecutor (no Docker; the Docker case is deferred-a-docker.test.ts): the fixtures'
 * module imports `inflection`, which the host lacks. As the host is, the A test does not import
 * even in validation's run and the B test stays; with a stand-in `inflection.py` in the instance's
 * tree (what the image would install), the A test flips and becomes the instance's test, which a
 * no-op guard does not resolve and an early-return fix does; the sibling whose input is no crash
 * at the parent keeps B. Plus the pure readings of a run.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { exportCleanRepo } from '../../../../pipeline/providers/git/repo.js';
import type { Built } from '../../../../stages/swe5g/build/build.js';
import { environmentsSchema } from '../../../../stages/swe5g/environments-config.js';
import { generateTestGen } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { validateInstance } from '../../../../stages/swe5g/validate/validate.js';
import {
  fixReading,
  parentReading,
  reportedId,
  type ImageRun,
} from '../../../../stages/swe5g/validate/deferred-a.js';
import { stateInstance } from '../../../../stages/swe5g/evaluate/instances.js';
import { gradePrediction } from '../../../../stages/swe5g/evaluate/grade.js';
import { resolveFixture } from '../../../fixtures/repos/harness.js';
import { buildRepo, resolvedOf } from '../testgen/repos.js';
import { NAMING, namingPatch, pyDeferredFixture } from '../../../fixtures/repos/py-deferred.js';

const A_ID = 'tests/test_f2p_call.py::test_f2p_call_session_label';
const settings = environmentsSchema.parse({
  executor: 'local',
  test_scope: 'touched',
  fix_runs: 1,
  test_repeats: 1,
  parent_reruns: 0,
  limits: { timeout_s: 300 },
});
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-deferred-a-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A stand-in of the package the image would install (enough for the fixtures' module). */
const INFLECTION_STUB = `def titleize(word):
    return " ".join(w.capitalize() for w in str(word).replace("_", " ").split())
`;

/** testgen on the host, then validation on the LocalExecutor over the tree at base_commit. */
async function run(name: string, which: 'flips' | 'noCrash', stub: boolean) {
  const fx = pyDeferredFixture(join(root, `src-${name}`), which);
  const res = await resolveFixture(fx, join(root, `state-${name}`));
  const gen = await generateTestGen(fx.dir, res, testgenSchema.parse({ test_timeout_s: 120 }));
  expect(gen.testgen.deferred_a?.FAIL_TO_PASS).toEqual([A_ID]);
  const source_dir = join(root, `testbed-${name}`);
  await exportCleanRepo(fx.dir, res.base_commit, source_dir);
  if (stub) writeFileSync(join(source_dir, 'inflection.py'), INFLECTION_STUB);
  const built: Built = {
    instance_id: res.instance_id,
    image_recipe: 'python',
    images: { base: 'local', env: 'local', instance: 'local' },
    base_from: 'host',
    toolchain: 'host',
    sizes: { base: 0, env_layer: 0, instance_layer: 0, instance_total: 0 },
    source_dir,
    module_dir: '',
    build_seconds: { base: 0, env: 0, instance: 0 },
  };
  const logs: Record<string, string> = {};
  const input = { resolved: res, testgen: gen.testgen, built };
  const v = await validateInstance(input, {
    executor: new LocalExecutor(),
    settings,
    saveLog: (step, text) => {
      logs[step] = text;
      return step;
    },
  });
  return { fx, res, gen, input, v, logs };
}

describe('validation decides the deferred Python Strategy A (LocalExecutor)', () => {
  it('where the module does not import even in the steps, B stays with the reason', async () => {
    const { v, gen, logs } = await run('no-import', 'flips', false);
    expect(v.strategy).toBe('B');
    expect(v.FAIL_TO_PASS).toEqual(gen.testgen.FAIL_TO_PASS);
    expect(v.deferred_a).toEqual({
      used: false,
      reason:
        "deferred Strategy A (session_label with session=None) not used: in the instance image it does not import even here (No module named 'inflection')",
    });
    expect(v.f2p_test_patch).toBeUndefined();
    expect(v.test_patch).not.toContain('test_f2p_call.py');
    // the parent's import failure is a failure: the gold patch's run decides (it fails the same)
    expect(Object.keys(v.step_logs)).toEqual(
      expect.arrayContaining(['deferred_a_parent', 'deferred_a_fix']),
    );
    expect(logs.deferred_a_fix).toContain("No module named 'inflection'");
  });

  it('where it imports, the A test flips and is the instance test; grading reads it', async () => {
    const { fx, res, input, v } = await run('flips', 'flips', true);
    expect(v.strategy).toBe('A');
    expect(v.FAIL_TO_PASS).toEqual([A_ID]);
    expect(v.deferred_a?.used).toBe(true);
    expect(v.deferred_a?.reason).toMatch(
      /^A: session_label called with session=None crashes at base_commit and not after the fix, decided in the instance image \(testgen's host could not import it: No module named 'inflection'\)$/,
    );
    expect(v.f2p_test_patch).toBe(input.testgen.deferred_a!.f2p_test_patch);
    expect(v.test_patch).toContain('+++ b/tests/test_f2p_call.py');
    expect(v.test_patch).not.toContain('test_f2p_intent.py');
    expect(v.step_seconds).toHaveProperty('deferred_a_fix');
    // grading (evaluate's entry point, the audit's too) runs the A test the steps ran
    const inst = stateInstance(v, input, undefined, settings);
    const grade = async (patch: string) =>
      (
        await gradePrediction(
          { instance: inst, model_patch: patch },
          { executor: new LocalExecutor(), settings, saveLog: () => 'log' },
        )
      ).grade;
    const gold = await grade(res.patch);
    expect(gold.resolved).toBe(true);
    const noop = await grade(namingPatch(fx.dir, res.base_commit, NAMING.flips.noop));
    expect(noop.patch_applied).toBe(true);
    expect(noop.FAIL_TO_PASS).toEqual({ [A_ID]: 'fail' });
    expect(noop.resolved).toBe(false);
    const early = await grade(namingPatch(fx.dir, res.base_commit, NAMING.flips.earlyReturn));
    expect(early.FAIL_TO_PASS).toEqual({ [A_ID]: 'pass' });
    expect(early.resolved).toBe(true);
  });

  it('where the input is no crash at the parent, B stays with the reason', async () => {
    const { v, gen } = await run('no-crash', 'noCrash', true);
    expect(v.strategy).toBe('B');
    expect(v.FAIL_TO_PASS).toEqual(gen.testgen.FAIL_TO_PASS);
    expect(v.deferred_a).toEqual({
      used: false,
      reason:
        'deferred Strategy A (session_label with suffix=None) not used: in the instance image it does not fail at the parent (test_f2p_call_session_label: pass)',
    });
  });
});

describe('a monorepo folder under a pytest.ini (Magma: lte/gateway/pytest.ini)', () => {
  it("validation finds testgen's repository ids among the ids pytest roots at the ini", async () => {
    const repo = buildRepo({
      'lte/gateway/pytest.ini': '[pytest]\n',
      'lte/gateway/python/smf/__init__.py': '',
      'lte/gateway/python/smf/pdu.py': 'def pdu_type(session):\n    return session.upper()\n',
      'lte/gateway/python/smf/test_ok.py': 'def test_ok():\n    assert True\n',
    });
    try {
      const fix = repo.commit(
        {
          'lte/gateway/python/smf/pdu.py':
            'def pdu_type(session):\n    if session is None:\n        return ""\n    return session.upper()\n',
        },
        'fix',
      );
      const res = resolvedOf(repo, fix, 'python');
      const gen = await generateTestGen(repo.dir, res, testgenSchema.parse({}), undefined, {
        pythonRoots: ['lte/gateway/python'],
        moduleDir: 'lte/gateway/python/smf',
      });
      expect(gen.testgen.FAIL_TO_PASS).toEqual([
        'lte/gateway/python/smf/test_f2p_call.py::test_f2p_call_pdu_type',
      ]);
      const source_dir = join(root, 'testbed-ini');
      await exportCleanRepo(repo.dir, res.base_commit, source_dir);
      const v = await validateInstance(
        {
          resolved: res,
          testgen: gen.testgen,
          built: {
            instance_id: res.instance_id,
            image_recipe: 'python',
            images: { base: 'local', env: 'local', instance: 'local' },
            base_from: 'host',
            toolchain: 'host',
            sizes: { base: 0, env_layer: 0, instance_layer: 0, instance_total: 0 },
            source_dir,
            module_dir: 'lte/gateway/python/smf',
            build_seconds: { base: 0, env: 0, instance: 0 },
          },
        },
        { executor: new LocalExecutor(), settings, saveLog: (step) => step },
      );
      expect(v.FAIL_TO_PASS).toEqual(['python/smf/test_f2p_call.py::test_f2p_call_pdu_type']);
      expect(v.PASS_TO_PASS).toEqual(['python/smf/test_ok.py::test_ok']);
    } finally {
      repo.cleanup();
    }
  });
});

describe('the readings of a deferred A run', () => {
  const r = (statuses: ImageRun['statuses'], log = '', over: Partial<ImageRun> = {}): ImageRun => ({
    statuses,
    log,
    timedOut: false,
    ambiguous: '',
    collectionErrors: [],
    ...over,
  });
  it('at the parent: must fail (an import inside the test fails it too), and must run', () => {
    expect(parentReading(r({ [A_ID]: 'fail' }, 'crashed on x=None: AttributeError'))).toBeNull();
    // a module new in the fix (or importing only after it): the run with the gold patch decides
    expect(
      parentReading(r({ [A_ID]: 'fail' }, "ModuleNotFoundError: No module named 'lte.x'")),
    ).toBeNull();
    expect(parentReading(r({ [A_ID]: 'pass' }))).toBe(
      'does not fail at the parent (test_f2p_call_session_label: pass)',
    );
    // not collected because a conftest or package import failed
    expect(
      parentReading(r({ [A_ID]: 'absent' }, "ModuleNotFoundError: No module named 'lte'")),
    ).toBe("does not import even here (No module named 'lte')");
    expect(parentReading(r({ [A_ID]: 'absent' }, '', { collectionErrors: ['tests'] }))).toBe(
      'does not run at the parent (collection errors in tests)',
    );
    expect(parentReading(r({ [A_ID]: 'fail' }, '', { timedOut: true }))).toBe(
      'timed out at the parent',
    );
  });
  it('at the fix: must pass', () => {
    expect(fixReading(r({ [A_ID]: 'pass' }))).toBeNull();
    expect(fixReading(r({ [A_ID]: 'fail' }, 'crashed'))).toBe(
      'does not pass at the fix (test_f2p_call_session_label: fail)',
    );
    expect(fixReading(r({ [A_ID]: 'fail' }, "ImportError: cannot import name 'X' from 'y'"))).toBe(
      "does not import even here (cannot import name 'X' from 'y')",
    );
  });
  it('ids rooted elsewhere by pytest are matched by test name and path suffix', () => {
    const id = 'lte/gateway/python/magma/mobilityd/tests/test_f2p_call.py::test_f2p_call_f';
    expect(reportedId(id, [id])).toBe(id);
    expect(reportedId(id, ['python/magma/mobilityd/tests/test_f2p_call.py::test_f2p_call_f'])).toBe(
      'python/magma/mobilityd/tests/test_f2p_call.py::test_f2p_call_f',
    );
    expect(reportedId(id, ['other/test_f2p_call.py::test_f2p_call_f'])).toBeNull();
    expect(reportedId(id, ['tests/test_f2p_call.py::test_f2p_call_g'])).toBeNull();
  });
});
