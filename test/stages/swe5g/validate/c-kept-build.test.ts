/**
 * A C repository with a registry `environment` through the pipeline's build and validation in
 * Docker (issue 21): a meson project that needs a C++ compiler (`project(..., 'c', 'cpp')`) and a
 * Debian library (libcrypto from `libssl-dev`), a `unit` suite and a `service` suite whose test
 * needs a database (excluded with the reason, never run). Its release tag is the environment
 * commit (the env layer's kept build and clean repository), the base is the commit after it, and
 * the fix adds a NULL guard for which Strategy B writes the f2p check. Validated with
 * FAIL_TO_PASS from the generated checks and PASS_TO_PASS `unit::core` and `unit::unit` (a program
 * linking every library, as Open5GS's `unit`: built once in the env layer, never compiled again
 * at the parent, relinked after the fix); the instance layer's
 * `.git` adds only the commit after the tag, and the image contract holds (checked by the build).
 * When a commit after the tag changes a `meson.build`, that commit is the environment commit and
 * the instance layer does not regenerate the kept build's files (with the tag as env commit it
 * would: build.ninja is rewritten).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { DockerExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { git } from '../../../../pipeline/providers/git/repo.js';
import { buildInstanceImages } from '../../../../stages/swe5g/build/build.js';
import { registrySelection, validateInstance } from '../../../../stages/swe5g/validate/validate.js';
import { registryEntrySchema } from '../../../../stages/swe5g/registry.js';
import { generateTestGen } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { SkipItem } from '../../../../pipeline/errors.js';
import { buildFixture } from '../../../fixtures/repos/builder.js';
import { ensureTestBase, resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';
import { inImage as probe } from '../../../fixtures/in-image.js';
import { gradePrediction } from '../../../../stages/swe5g/evaluate/grade.js';
import { stateInstance } from '../../../../stages/swe5g/evaluate/instances.js';

const docker = new DockerClient();
let root: string;

const meson = `project('nf', 'c', 'cpp')
crypto = dependency('libcrypto')
core = static_library('core', 'lib/core.c', 'lib/hash.cpp', dependencies: crypto)
amf = static_library('amf', 'src/amf/handler.c')
t_core = executable('t_core', 'tests/t_core.c', link_with: core)
t_unit = executable('t_unit', 'tests/t_unit.c', link_with: [core, amf])
t_db = executable('t_db', 'tests/t_db.c')
test('core', t_core, suite: 'unit')
test('unit', t_unit, suite: 'unit')
test('needs_db', t_db, suite: 'service')
`;

const handler = (fixed: boolean): string => `#include <stddef.h>
int amf_handle(int *ue)
{
${fixed ? '    if (!ue)\n        return -1;\n' : ''}    return *ue + 1;
}
`;

const entry = registryEntrySchema.parse({
  id: 'acme/nf',
  owner: 'acme',
  name: 'nf',
  language: 'c',
  nf: 'AMF',
  issues_repo: 'acme/nf',
  license: 'Apache-2.0',
  test: { command: 'meson test -C build', scope: 'repo' },
  image: 'c-meson',
  environment: {
    compilers: ['gcc', 'g++'],
    packages: ['libssl-dev'],
    suites: ['unit'],
    excluded: [{ suite: 'service', reason: 'needs a database' }],
  },
});

const baseFiles = {
  'meson.build': meson,
  'lib/core.c': 'int core_add(int a, int b) { return a + b; }\n',
  'lib/hash.cpp':
    '#include <openssl/crypto.h>\nextern "C" const char *core_ver(void) { return OpenSSL_version(0); }\n',
  'src/amf/handler.c': handler(false),
  'tests/t_core.c':
    'int core_add(int, int);\nint main(void) { return core_add(1, 2) == 3 ? 0 : 1; }\n',
  // Open5GS's `unit` program in small: it links every library (built once in the env layer)
  'tests/t_unit.c':
    'int core_add(int, int);\nint amf_handle(int *);\nint main(void) { int ue = 1; return core_add(1, 2) == 3 && amf_handle(&ue) == 2 ? 0 : 1; }\n',
  // a database client: it cannot reach one in a step (no network), so it must never run
  'tests/t_db.c': 'int main(void) { return 1; }\n',
};

/** `<mtime> <size>` of the kept build's meson-generated files in `image` (sh in the image). */
async function buildFilesStat(image: string): Promise<string> {
  const out = await probe(
    docker,
    image,
    'cd /testbed/.telebench/build && stat -c "%n %y %s" build.ninja compile_commands.json meson-info/intro-buildsystem_files.json',
    '',
  );
  return out.trim();
}

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-c-kept-'));
});

describe('C with a registry environment (kept build, env tag, Debian library, C++)', () => {
  it('validates; the service suite is excluded, the instance .git holds only the commit after the tag', async () => {
    const fx = buildFixture(join(root, 'src'), {
      owner: 'acme',
      name: 'nf',
      language: 'c',
      pr: 7,
      base: baseFiles,
      afterTag: { 'lib/core.c': 'int core_add(int a, int b) { return b + a; }\n' },
      fix: { 'src/amf/handler.c': handler(true) },
    });
    const state = join(root, 'state');
    const res = await resolveFixture(fx, state);
    expect(res.version).toBe('v0.1.0');
    expect(res.environment_setup_commit).not.toBe(res.base_commit);
    const gen = await generateTestGen(
      fx.dir,
      res,
      testgenSchema.parse({ strategy_a: false, prefer_shipped: false }),
    );
    expect(gen.testgen.strategy).toBe('B');

    const settings = testSettings({ fix_runs: 1, test_repeats: 1, parent_reruns: 1 });
    const built = await buildInstanceImages(res, {
      docker,
      settings,
      stateDir: state,
      registry: new Map([[entry.id, entry]]),
    });
    expect(built.c_build?.env_commit).toBe(res.environment_setup_commit);
    expect(built.c_build?.delta).toEqual({ changed: 1, deleted: 0 });
    expect(built.c_build?.git?.commits).toBe(1);
    expect(built.sizes.instance_layer).toBeLessThan(built.sizes.env_layer);

    const logs = new Map<string, string>();
    let v;
    try {
      v = await validateInstance(
        { resolved: res, testgen: gen.testgen, built },
        {
          executor: new DockerExecutor(docker),
          settings,
          registrySelection: registrySelection(entry.environment!, res.patch),
          saveLog: (step, text) => {
            logs.set(step, text);
            return `digest-${step}`;
          },
        },
      );
    } catch (err) {
      if (err instanceof SkipItem) expect.fail(`${err.code}: ${err.message}`);
      throw err;
    }
    expect(v.FAIL_TO_PASS).toEqual(gen.testgen.FAIL_TO_PASS);
    expect(v.PASS_TO_PASS).toEqual(['unit::core', 'unit::unit']);
    // the whole suite's executables are in the env image; the parent step compiles none of them
    await probe(docker, built.images.env, 'test -x /testbed/.telebench/build/t_unit', '');
    expect(logs.get('parent_p2p')).not.toMatch(/tests_t_unit\.c\.o|tests_t_core\.c\.o/);
    expect(logs.get('fix_1')).toMatch(/Linking target t_unit/);
    expect(v.excluded_suites).toEqual([{ suite: 'service', reason: 'needs a database' }]);
    for (const text of logs.values()) expect(text).not.toMatch(/needs_db\s+(OK|FAIL)/);
    // the f2p registration regenerates the kept build: the step says so and still passes
    expect(logs.get('fix_1')).toMatch(/ninja -C \.telebench\/build build\.ninja/);

    // PASS_TO_PASS sees a regression (issue 30), through grading = validation's fix step: the
    // gold resolves; the gold plus a broken library (core_add) or a broken AMF path (seen only by
    // the `unit` program that links every library) passes FAIL_TO_PASS and is not resolved
    const inst = stateInstance(v, { resolved: res, testgen: gen.testgen, built }, entry, settings);
    const grade = async (patch: string) =>
      (
        await gradePrediction(
          { instance: inst, model_patch: patch },
          { executor: new DockerExecutor(docker), settings, saveLog: () => 'log' },
        )
      ).grade;
    const gold = await grade(res.patch);
    expect(gold.resolved).toBe(true);
    const core = `diff --git a/lib/core.c b/lib/core.c
--- a/lib/core.c
+++ b/lib/core.c
@@ -1 +1 @@
-int core_add(int a, int b) { return b + a; }
+int core_add(int a, int b) { return b - a; }
`;
    const brokenCore = await grade(`${res.patch}${core}`);
    expect(Object.values(brokenCore.FAIL_TO_PASS).every((s) => s === 'pass')).toBe(true);
    expect(brokenCore.PASS_TO_PASS).toEqual({ 'unit::core': 'fail', 'unit::unit': 'fail' });
    expect(brokenCore.resolved).toBe(false);
    // the guard added, and the good path changed: only `unit` (linking the AMF library) sees it
    const amf = `diff --git a/src/amf/handler.c b/src/amf/handler.c
--- a/src/amf/handler.c
+++ b/src/amf/handler.c
@@ -1,5 +1,7 @@
 #include <stddef.h>
 int amf_handle(int *ue)
 {
-    return *ue + 1;
+    if (!ue)
+        return -1;
+    return *ue + 2;
 }
`;
    const brokenAmf = await grade(amf);
    expect(brokenAmf.patch_applied).toBe(true);
    expect(Object.values(brokenAmf.FAIL_TO_PASS).every((s) => s === 'pass')).toBe(true);
    expect(brokenAmf.PASS_TO_PASS).toEqual({ 'unit::core': 'pass', 'unit::unit': 'fail' });
    expect(brokenAmf.resolved).toBe(false);
  });

  it('a meson.build changed after the tag: that commit is the env commit, the instance layer does not regenerate', async () => {
    const fx = buildFixture(join(root, 'src-configure'), {
      owner: 'acme',
      name: 'nf',
      language: 'c',
      pr: 8,
      base: baseFiles,
      afterTag: [
        {
          'meson.build': meson.replace(
            'crypto =',
            "add_project_arguments('-DNF_REL=2', language: 'c')\ncrypto =",
          ),
        },
        { 'lib/core.c': 'int core_add(int a, int b) { return b + a; }\n' },
      ],
      fix: { 'src/amf/handler.c': handler(true) },
    });
    const state = join(root, 'state-configure');
    const res = await resolveFixture(fx, state);
    const tag = (await git(fx.dir).raw(['rev-parse', 'v0.1.0^{commit}'])).trim();
    const mesonCommit = (await git(fx.dir).raw(['rev-parse', `${res.base_commit}~1`])).trim();
    expect(res.environment_setup_commit).toBe(mesonCommit);
    const settings = testSettings({ fix_runs: 1, test_repeats: 1, parent_reruns: 1 });
    const bc = { docker, settings, stateDir: state, registry: new Map([[entry.id, entry]]) };
    const built = await buildInstanceImages(res, bc);
    expect(built.c_build?.env_commit).toBe(mesonCommit);
    expect(built.c_build?.delta).toEqual({ changed: 1, deleted: 0 });
    expect(built.c_build?.git?.commits).toBe(1);
    expect(await buildFilesStat(built.images.instance)).toBe(
      await buildFilesStat(built.images.env),
    );
    // the same base over the tag's env layer (the choice before resolve v4): meson regenerates
    const overTag = await buildInstanceImages({ ...res, environment_setup_commit: tag }, bc);
    expect(overTag.c_build?.delta).toEqual({ changed: 2, deleted: 0 });
    expect(await buildFilesStat(overTag.images.instance)).not.toBe(
      await buildFilesStat(overTag.images.env),
    );
  });
});
