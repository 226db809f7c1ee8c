/**
 * Flaky PASS_TO_PASS after the fix (issue 16): an existing test that fails about one run in three
 * must not reach PASS_TO_PASS. Each test run repeats every test `test_repeats` times in steps 1
 * and 3 (three fresh `go test -count=1` processes, issue 21), so such a test escapes only by passing 3 x (1 + 3) = 12 runs in a
 * row, (2/3)^12 = 0.77%. The one-in-three test is seeded (a counter file on the host and a fixed
 * seed per fresh run), so this test is deterministic: the same seeds give the same runs.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { buildInstanceImages } from '../../../../stages/swe5g/build/build.js';
import { validateInstance, type Validated } from '../../../../stages/swe5g/validate/validate.js';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { SkipItem } from '../../../../pipeline/errors.js';
import {
  goFixture,
  GO_F2P,
  GO_GLOBAL_STATE,
  GO_P2P,
  GO_SOMETIMES,
} from '../../../fixtures/repos/go-nil.js';
import { resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** One fresh run: a new repository, state folder and counter, the given seed. */
async function freshRun(
  seed: number,
  over: Record<string, unknown> = {},
): Promise<{ v?: Validated; skip?: SkipItem; runs: number }> {
  const root = mkdtempSync(join(tmpdir(), 'telebench-flaky-'));
  roots.push(root);
  const counterFile = join(root, 'counter');
  writeFileSync(counterFile, '0');
  const fx = goFixture(join(root, 'src'), 'p2pseeded', { counterFile, seed });
  const state = join(root, 'state');
  const settings = testSettings({ executor: 'local', test_scope: 'touched', ...over });
  const res = await resolveFixture(fx, state);
  const built = await buildInstanceImages(res, {
    docker: new DockerClient(),
    settings,
    stateDir: state,
  });
  try {
    const v = await validateInstance(
      { resolved: res, testgen: fx.testgen, built },
      { executor: new LocalExecutor(), settings, saveLog: (step) => step },
    );
    return { v, runs: Number(readFileSync(counterFile, 'utf8')) };
  } catch (err) {
    if (err instanceof SkipItem) return { skip: err, runs: 0 };
    throw err;
  }
}

describe('a PASS_TO_PASS test that fails one run in three', () => {
  it.each([1, 2, 3, 4, 5, 6])(
    'fresh run with seed %i: validated, the test dropped and listed as flaky',
    async (seed) => {
      const { v, skip, runs } = await freshRun(seed);
      expect(skip?.message).toBeUndefined();
      expect(v!.FAIL_TO_PASS).toEqual([GO_F2P]);
      expect(v!.dropped_flaky).toContain(GO_SOMETIMES);
      expect(v!.PASS_TO_PASS).not.toContain(GO_SOMETIMES);
      expect(v!.PASS_TO_PASS).toEqual(expect.arrayContaining(GO_P2P));
      // step 1 and the 3 fix runs ran it 3 times each (go test -count=3); in step 2 the F2P
      // test's nil-pointer panic ends the package's test binary first
      expect(runs).toBe(3 + 3 * 3);
    },
  );

  it('control: with one run per step (test_repeats 1, the old behaviour) seed 2 escapes into PASS_TO_PASS', async () => {
    // seed 2 passes its first 7 runs (1 at the parent, 1 in step 2, 3 after the fix): the
    // one-in-three flake escapes, as 19.8% of fresh runs did before test_repeats
    const { v, skip } = await freshRun(2, { test_repeats: 1 });
    expect(skip?.message).toBeUndefined();
    expect(v!.PASS_TO_PASS).toContain(GO_SOMETIMES);
    expect(v!.dropped_flaky).not.toContain(GO_SOMETIMES);
  });
});

describe('repeats are fresh processes (issue 21)', () => {
  it('a test that fails only on a second iteration inside one process stays in PASS_TO_PASS', async () => {
    const root = mkdtempSync(join(tmpdir(), 'telebench-globalstate-'));
    roots.push(root);
    const fx = goFixture(join(root, 'src'), 'globalstate');
    // control: the test really has in-process global state (two iterations in one process fail)
    const inOne = spawnSync('go', ['test', '-count=2', '-run', '^TestRegisterOnce$', './ngap'], {
      cwd: fx.dir,
      encoding: 'utf8',
    });
    expect(inOne.status).not.toBe(0);
    expect(inOne.stdout).toContain('already registered');
    const state = join(root, 'state');
    const settings = testSettings({ executor: 'local', test_scope: 'touched', test_repeats: 3 });
    const res = await resolveFixture(fx, state);
    const built = await buildInstanceImages(res, {
      docker: new DockerClient(),
      settings,
      stateDir: state,
    });
    const logs = new Map<string, string>();
    const v = await validateInstance(
      { resolved: res, testgen: fx.testgen, built },
      {
        executor: new LocalExecutor(),
        settings,
        saveLog: (step, text) => {
          logs.set(step, text);
          return step;
        },
      },
    );
    expect(v.PASS_TO_PASS).toContain(GO_GLOBAL_STATE);
    expect(v.dropped_flaky).not.toContain(GO_GLOBAL_STATE);
    // step 1 and every fix step ran three separate `go test -count=1` processes
    for (const step of ['parent_p2p', 'fix_1', 'fix_2', 'fix_3']) {
      const log = logs.get(step)!;
      expect(log, step).toContain('go test -json -count=1');
      expect(log, step).not.toContain('-count=3');
      // the parent run carries the test patches (SWE-bench's convention): its FAIL_TO_PASS test
      // fails there, so only the fix steps exit 0
      const exits =
        step === 'parent_p2p' ? /^telebench-run \d exit \d+$/gm : /^telebench-run \d exit 0$/gm;
      expect(log.match(exits), step).toHaveLength(3);
    }
  });
});
