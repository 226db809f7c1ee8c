/**
 * A Python monorepo folder (registry `environment.python`, as Magma's gateway Python) through
 * resolve -> build -> validate in the real Docker engine: the env layer pip-installs the
 * `setup.py`'s `install_requires` from PyPI and grpcio-tools apart, the instance layer compiles
 * the base commit's `.proto` into the generated-code folder, and the two package roots are on
 * the path, so the folder's tests import and the fix validates. The same fixture without the
 * block stops at the parent: its test module does not import.
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
import { PY_GEN_DIR } from '../../../../pipeline/providers/docker/recipes.js';
import { ensureTestBase, resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';
import { PY_MONO_ENTRY, PY_MONO_ID, pyMonoFixture } from '../../../fixtures/repos/py-mono.js';
import { inImage as probe } from '../../../fixtures/in-image.js';

const docker = new DockerClient();
let root: string;

beforeAll(async () => {
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-pymono-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const settings = testSettings({ fix_runs: 1, test_repeats: 1, parent_reruns: 1 });

describe('Python monorepo folder with environment.python', () => {
  it('imports through both roots and the generated protos, and validates the fix', async () => {
    const fx = pyMonoFixture(join(root, 'src'));
    const stateDir = join(root, 'state');
    const res = await resolveFixture(fx, stateDir);
    const registry = new Map([[PY_MONO_ID, PY_MONO_ENTRY]]);
    const built = await buildInstanceImages(res, { docker, settings, stateDir, registry });
    expect(built.module_dir).toBe('app/python/fxlib/ping');
    // the era (issue 31): a 2024 commit naming no Python gets Debian stable's then (bookworm),
    // and its pins are PyPI's at the setup.py commit
    expect(built.python_env).toMatchObject({
      requirements: 1,
      overrides: [],
      interpreter: { suite: 'bookworm', python: '3.11', evidence: [{ source: 'date' }] },
      exclude_newer: '2024-05-01T10:00:00Z',
    });

    // in the image: the installed runtime, the generated module from the base commit's proto,
    // both roots of the namespace package, and a clean /testbed (generated code lives outside)
    const stdout = await probe(
      docker,
      built.images.instance,
      [
        `ls ${PY_GEN_DIR}/protos/fx`,
        `python3 -c 'import google.protobuf, fxlib.common, fxlib.ping.handler; from protos.fx.ping_pb2 import Ping; print("protobuf", google.protobuf.__version__, Ping(id="x").id)'`,
        'git status --porcelain --untracked-files=all | wc -l',
      ].join(' && '),
    );
    expect(stdout).toContain('ping_pb2.py');
    expect(stdout).toContain('ping_pb2_grpc.py');
    expect(stdout).toContain('protobuf 3.20.3 x');
    expect(stdout.trim().split('\n').at(-1)).toBe('0');

    const v = await validateInstance(
      { resolved: res, testgen: fx.testgen, built },
      {
        executor: new DockerExecutor(docker),
        settings,
        saveLog: (step) => `digest-${step}`,
      },
    );
    expect(v.FAIL_TO_PASS).toHaveLength(1);
    expect(v.FAIL_TO_PASS[0]).toMatch(/test_handler\.py::test_none$/);
    expect(v.PASS_TO_PASS).toHaveLength(1);
    expect(v.PASS_TO_PASS[0]).toMatch(/test_handler\.py::test_ok$/);
  });

  it('without the block the test module does not import at the parent', async () => {
    const fx = pyMonoFixture(join(root, 'src-plain'));
    const stateDir = join(root, 'state-plain');
    const res = await resolveFixture(fx, stateDir);
    const built = await buildInstanceImages(res, { docker, settings, stateDir });
    expect(built.python_env).toBeUndefined();
    const err = await validateInstance(
      { resolved: res, testgen: fx.testgen, built },
      { executor: new DockerExecutor(docker), settings, saveLog: (step) => `digest-${step}` },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SkipItem);
    // the existing test module fails to import (No module named 'fxlib' / 'protos')
    expect((err as SkipItem).code).toBe('p2p_fails_at_parent');
    expect((err as Error).message).toMatch(/test_handler/);
  });
});
