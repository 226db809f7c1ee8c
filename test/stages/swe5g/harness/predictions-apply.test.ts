/**
 * Prediction patches through SWE-bench's chain of apply methods (issue 22), on a real Go
 * repository the test builds (the nil GNbId bug of free5gc/amf PR 161), validated and graded with
 * the host's Go through the local executor:
 * - the gold patch with CRLF line endings applies (normalised) and resolves the instance;
 * - the gold patch with a stale context line is refused by `git apply` and applied by
 *   `patch --fuzz=5`, and resolves it; the method is recorded;
 * - an empty patch is not applied (`empty`), never graded as applied;
 * - a grade rebuilt from the stored log alone (no container) is the same verdict.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { buildInstanceImages } from '../../../../stages/swe5g/build/build.js';
import { validateInstance, type Validated } from '../../../../stages/swe5g/validate/validate.js';
import { gradePrediction, type EvalInstance } from '../../../../stages/swe5g/evaluate/grade.js';
import { gradeStoredLogs } from '../../../../stages/swe5g/harness/grading.js';
import { selectTestDirs, testSpec } from '../../../../stages/swe5g/harness/spec.js';
import { goFixture, GO_F2P } from '../../../fixtures/repos/go-nil.js';
import { resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';
import type { Resolved } from '../../../../stages/swe5g/types.js';

const root = mkdtempSync(join(tmpdir(), 'telebench-pred-apply-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const settings = testSettings({
  executor: 'local',
  test_scope: 'touched',
  test_repeats: 1,
  fix_runs: 1,
});
const logs = new Map<string, string>();
const deps = {
  executor: new LocalExecutor(),
  settings,
  saveLog: (name: string, text: string): string => {
    logs.set(name, text);
    return name;
  },
};
let res: Resolved;
let v: Validated;
let inst: EvalInstance;

beforeAll(async () => {
  const fx = goFixture(join(root, 'src'), 'good');
  const state = join(root, 'state');
  res = await resolveFixture(fx, state);
  const built = await buildInstanceImages(res, {
    docker: new DockerClient(),
    settings,
    stateDir: state,
  });
  v = await validateInstance(
    { resolved: res, testgen: fx.testgen, built },
    { ...deps, saveLog: () => 'x' },
  );
  inst = {
    ...v,
    image: v.images.instance,
    image_recipe: 'go',
    source_dir: built.source_dir,
    module_dir: built.module_dir,
    test_dirs: selectTestDirs({
      recipe: 'go',
      scope: 'touched',
      moduleDir: built.module_dir,
      sourceDirs: res.test_dirs,
      testPatches: [v.test_patch],
    }),
  };
});

describe('prediction patches through the SWE-bench chain', () => {
  it('the gold patch as given: `git apply --verbose`, resolved', async () => {
    const { grade } = await gradePrediction(
      { instance: inst, model_patch: v.patch, step: 'gold' },
      deps,
    );
    expect(grade).toMatchObject({
      patch_applied: true,
      patch_method: 'git apply --verbose',
      resolved: true,
    });
    expect(grade.FAIL_TO_PASS).toEqual({ [GO_F2P]: 'pass' });
  });

  it('a CRLF model_patch (line endings only) applies and is graded: resolved', async () => {
    const crlf = v.patch.replaceAll('\n', '\r\n');
    const { grade } = await gradePrediction(
      { instance: inst, model_patch: crlf, step: 'crlf' },
      deps,
    );
    expect(grade.apply_error).toBe('');
    expect(grade).toMatchObject({
      patch_applied: true,
      line_endings_normalised: true,
      resolved: true,
    });
  });

  it('a model_patch with a stale context line: git apply refuses it, patch --fuzz=5 applies it, resolved', async () => {
    const stale = v.patch.replace(
      ' // HandleNGSetupRequest returns the gNB id of the request.',
      ' // HandleNGSetupRequest returns the id (an older comment).',
    );
    expect(stale).not.toBe(v.patch);
    const { grade } = await gradePrediction(
      { instance: inst, model_patch: stale, step: 'stale' },
      deps,
    );
    expect(grade.patch_method).toBe('patch --batch --forward --fuzz=5 -p1 -i');
    expect(grade).toMatchObject({ patch_applied: true, resolved: true });
    expect(grade.PASS_TO_PASS).toEqual(Object.fromEntries(v.PASS_TO_PASS.map((t) => [t, 'pass'])));
  });

  it('an empty model_patch is recorded as not applied (`empty`), nothing runs', async () => {
    const { grade, result } = await gradePrediction(
      { instance: inst, model_patch: '  \n', step: 'empty' },
      deps,
    );
    expect(grade).toMatchObject({
      patch_applied: false,
      patch_method: 'empty',
      resolved: false,
      log: '',
    });
    expect(result).toBeNull();
  });

  it('a patch no method applies: `failed`, with every method named in the error', async () => {
    // a change to a file the tree does not have: nothing to fuzz against
    const bad = v.patch.replaceAll('ngap/handler.go', 'ngap/missing.go');
    const { grade } = await gradePrediction(
      { instance: inst, model_patch: bad, step: 'bad' },
      deps,
    );
    expect(grade).toMatchObject({ patch_applied: false, patch_method: 'failed', resolved: false });
    expect(grade.apply_error).toContain('git apply --verbose --reject');
    expect(grade.apply_error).toContain('patch --batch --forward --fuzz=5 -p1 -i');
  });

  it('the grade rebuilt from the stored log alone (no container) is the same verdict', async () => {
    const { grade } = await gradePrediction(
      { instance: inst, model_patch: v.patch, step: 'regrade' },
      deps,
    );
    const spec = testSpec({ recipe: 'go', dirs: inst.test_dirs, moduleDir: '', settings });
    const again = gradeStoredLogs(spec, [logs.get('regrade')!], inst);
    expect(again.resolved).toBe(grade.resolved);
    expect(again.FAIL_TO_PASS).toEqual(grade.FAIL_TO_PASS);
    expect(again.PASS_TO_PASS).toEqual(grade.PASS_TO_PASS);
    // and a log whose test line was edited to fail regrades as not resolved
    const edited = logs
      .get('regrade')!
      .replace(
        /"Action":"pass","Package":"example.com\/amfmini\/ngap","Test":"TestHandleNGSetupRequestNilGNbId"/,
        '"Action":"fail","Package":"example.com/amfmini/ngap","Test":"TestHandleNGSetupRequestNilGNbId"',
      );
    expect(edited).not.toBe(logs.get('regrade'));
    expect(gradeStoredLogs(spec, [edited], inst).resolved).toBe(false);
  });
});
