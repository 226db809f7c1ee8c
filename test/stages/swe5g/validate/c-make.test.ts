/**
 * C repositories built with make (issue 16): the registry's `test.command` and `test.build` are
 * read by validation; a Makefile-only repository validates end to end in Docker with the
 * Strategy B test swe5g.testgen generates (a `make f2p_<fn>` target); without registry commands
 * the meson recipe runs and fails, and every step log keeps the tool's own error output.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { DockerExecutor } from '../../../../pipeline/providers/docker/executor.js';
import type { RegistryCommands } from '../../../../stages/swe5g/validate/validate.js';
import { generateTestGen } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { cMakeFixture, CMAKE_P2P } from '../../../fixtures/repos/c-make.js';
import {
  ensureTestBase,
  resolveFixture,
  testSettings,
  validateFixture,
} from '../../../fixtures/repos/harness.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import type { TestGen } from '../../../../stages/swe5g/types.js';

const docker = new DockerClient();
let root: string;
let state: string;
let fx: Fixture;
let testgen: TestGen;

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-c-make-'));
  state = join(root, 'state');
  fx = cMakeFixture(join(root, 'src'));
  const res = await resolveFixture(fx, state);
  // the real test generation: Strategy B registers its check as a make target
  testgen = (
    await generateTestGen(
      fx.dir,
      res,
      testgenSchema.parse({ strategy_a: false, prefer_shipped: false }),
    )
  ).testgen;
});

function validate(commands: RegistryCommands | undefined) {
  return validateFixture(fx, {
    docker,
    stateDir: state,
    settings: testSettings({ executor: 'docker' }),
    executor: new DockerExecutor(docker),
    testgen,
    registryCommands: commands,
  });
}

describe('a Makefile-only C repository in Docker', () => {
  it('testgen registers its fail-to-pass check as a make target', () => {
    expect(testgen.strategy).toBe('B');
    expect(testgen.FAIL_TO_PASS.length).toBeGreaterThan(0);
    expect(testgen.FAIL_TO_PASS.every((id) => /^make::f2p_/.test(id))).toBe(true);
  });

  it('with the registry commands (make all, make check): validated, FAIL_TO_PASS and PASS_TO_PASS right', async () => {
    const { v, skip, logs } = await validate({ test: 'make check', build: 'make all' });
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual(testgen.FAIL_TO_PASS);
    expect(v!.PASS_TO_PASS).toEqual([CMAKE_P2P]);
    expect(v!.dropped_flaky).toEqual([]);
    expect(v!.test_commands).toEqual({ test: 'make check', build: 'make all' });
    // the compiler ran inside the container, and the f2p check failed at the parent with its
    // own message in the log
    expect(logs.get('parent_p2p')).toMatch(/-o test_ngap/);
    expect(logs.get('parent_p2p')).toMatch(/does not contain the expected fix/);
    // the make step's results file: 3 runs of make::check in step 1 (test_repeats), each in a
    // fresh container with its own log (issue 21: fresh runs)
    for (const step of ['parent_p2p', 'parent_p2p_run2', 'parent_p2p_run3'])
      expect(logs.get(step), step).toMatch(/\n0 make::check\n/);
  });

  it("a build command that fails: build_failed_at_parent, with make's own error in the step log", async () => {
    const { skip, logs } = await validate({ test: 'make check', build: 'make no-such-target' });
    expect(skip?.code).toBe('build_failed_at_parent');
    expect(logs.get('parent_p2p')).toMatch(/No rule to make target .?no-such-target/);
    expect(logs.get('parent_p2p')).toMatch(/the build command failed \(exit 2/);
  });

  it("without registry commands the meson recipe runs: build_failed_at_parent, meson's own error kept", async () => {
    const { skip, logs } = await validate(undefined);
    expect(skip?.code).toBe('build_failed_at_parent');
    // meson's message (not sent to /dev/null) and ours
    expect(logs.get('parent_p2p')).toMatch(/meson\.build/);
    expect(logs.get('parent_p2p')).toMatch(/meson setup\/compile failed \(exit 97\)/);
  });
});
