/**
 * A dependency the environment cannot supply is a failure to retry, not a verdict on the instance
 * (found on free5gc__udm-94 with `executor: local`: `module lookup disabled by GOPROXY=off` was
 * stored as the skip `build_failed_at_parent`). Real parts, no Docker: a real git repository made
 * here whose parent's go.mod requires `example.com/absentdep`, the host's Go through the local
 * executor (GOPROXY=off, pinned by it), and a module cache of this test's own (GOMODCACHE stubbed
 * for this file's worker only): empty, or filled from a `file://` module proxy the test writes.
 * No network: GOPROXY is `off` in every step, `file://` when the cache is filled. Grading and the
 * release check (the same classifier) are checked on the control's validated instance, so their
 * tests run after it.
 * The last block: the audit counts a mutant that does not build as not_applicable (it shares the
 * validated fixture and the local executor).
 */
import { describe, it, expect, afterAll, afterEach, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { buildInstanceImages } from '../../../../stages/swe5g/build/build.js';
import {
  selectTestDirs,
  validateInstance,
  type Validated,
} from '../../../../stages/swe5g/validate/validate.js';
import { gradePrediction, type EvalInstance } from '../../../../stages/swe5g/evaluate/grade.js';
import { verifyRow } from '../../../../stages/release/verifier.js';
import { gradeMutant } from '../../../../stages/swe5g/audit/audit.js';
import { swe5gRowOf } from '../../../../stages/swe5g/dataset.js';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { SkipItem, TelebenchError } from '../../../../pipeline/errors.js';
import { buildFixture, type Fixture } from '../../../fixtures/repos/builder.js';
import { resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';

const MODULE = 'example.com/envdep';
const DEP = 'example.com/absentdep';
const F2P = `${MODULE}/nf::TestNameOfNil`;

const root = mkdtempSync(join(tmpdir(), 'telebench-envdep-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

/** The go command with only the given Go variables (the test's own, never the process's). */
function go(cwd: string, args: string[], env: Record<string, string>): string {
  const r = spawnSync('go', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, GOTOOLCHAIN: 'local', ...env },
  });
  if (r.status !== 0) throw new Error(`go ${args.join(' ')} in ${cwd}: ${r.stderr}`);
  return r.stdout;
}

/** A `file://` module proxy serving DEP v1.0.0 (its zip written by Go's own archive/zip). */
function moduleProxy(): string {
  const proxy = join(root, 'proxy');
  const at = join(proxy, DEP, '@v');
  mkdirSync(at, { recursive: true });
  const gomod = `module ${DEP}\n\ngo 1.20\n`;
  writeFileSync(join(at, 'v1.0.0.mod'), gomod);
  writeFileSync(join(at, 'list'), 'v1.0.0\n');
  writeFileSync(join(at, 'v1.0.0.info'), '{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}\n');
  const zipper = join(root, 'zipper');
  mkdirSync(zipper, { recursive: true });
  writeFileSync(join(zipper, 'go.mod'), 'module zipper\n\ngo 1.20\n');
  writeFileSync(
    join(zipper, 'main.go'),
    `package main

import (
\t"archive/zip"
\t"os"
)

func main() {
\tf, _ := os.Create(os.Args[1])
\tz := zip.NewWriter(f)
\tfor _, e := range [][2]string{
\t\t{"${DEP}@v1.0.0/go.mod", ${JSON.stringify(gomod)}},
\t\t{"${DEP}@v1.0.0/dep/dep.go", "package dep\\n\\n// Name is the dependency's name.\\nfunc Name() string { return \\"dep\\" }\\n"},
\t} {
\t\tw, _ := z.Create(e[0])
\t\tw.Write([]byte(e[1]))
\t}
\tif err := z.Close(); err != nil {
\t\tpanic(err)
\t}
\tf.Close()
}
`,
  );
  go(zipper, ['run', '.', join(at, 'v1.0.0.zip')], {
    GOPROXY: 'off',
    GOCACHE: join(root, 'gocache'),
  });
  return proxy;
}

/** An empty module cache, or one filled with DEP from the test's proxy. */
function modCache(name: string, filled: boolean, src?: Fixture): string {
  const cache = join(root, name);
  mkdirSync(cache, { recursive: true });
  if (filled && src) {
    go(src.dir, ['mod', 'download', DEP], {
      GOMODCACHE: cache,
      GOPROXY: `file://${moduleProxy()}`,
      GOFLAGS: '-mod=mod -modcacherw',
      GONOSUMDB: '*',
      GOSUMDB: 'off',
      GOCACHE: join(root, 'gocache'),
    });
  }
  return cache;
}

/** The fixture: a parent whose package imports DEP; `broken`: its code also does not compile. */
function fixture(name: string, broken: boolean): Fixture {
  const nf = (fixed: boolean) => `package nf

import "example.com/absentdep/dep"

// Req is a request with an optional name.
type Req struct{ Name *string }

// NameOf returns the request's name, or the dependency's.
func NameOf(r *Req) string {
${fixed ? '\tif r.Name == nil {\n\t\treturn dep.Name()\n\t}\n' : ''}\treturn *r.Name + dep.Name()${broken && !fixed ? ' + undefinedName' : ''}
}
`;
  return buildFixture(join(root, 'src'), {
    owner: 'fixture',
    name,
    language: 'go',
    pr: 7,
    base: {
      'go.mod': `module ${MODULE}\n\ngo 1.20\n\nrequire ${DEP} v1.0.0\n`,
      'nf/nf.go': nf(false),
      'nf/nf_test.go':
        'package nf\n\nimport "testing"\n\nfunc TestNameOf(t *testing.T) {\n\ts := "a"\n\tif NameOf(&Req{Name: &s}) != "adep" {\n\t\tt.Fatal("name")\n\t}\n}\n',
    },
    fix: {
      'nf/nf.go': nf(true),
      'nf/nil_test.go':
        'package nf\n\nimport "testing"\n\nfunc TestNameOfNil(t *testing.T) {\n\tif NameOf(&Req{}) != "dep" {\n\t\tt.Fatal("nil name")\n\t}\n}\n',
    },
    FAIL_TO_PASS: [F2P],
  });
}

/** The control's validated instance, for grading (set by the control test). */
let validated: { v: Validated; cache: string; inst: EvalInstance } | undefined;

/** The grading view of a validated instance (as the evaluate stages make it). */
function evalInstance(
  v: Validated,
  sourceDir: string,
  moduleDir: string,
  testDirs: string[],
): EvalInstance {
  return {
    ...v,
    image: v.images.instance,
    image_recipe: 'go',
    source_dir: sourceDir,
    module_dir: moduleDir,
    test_dirs: selectTestDirs({
      recipe: 'go',
      scope: 'touched',
      moduleDir,
      sourceDirs: testDirs,
      testPatches: [v.test_patch],
    }),
  };
}

/** Resolve, build (local: the clean tree) and validate with the local executor and `cache`. */
async function validateWith(fx: Fixture, cache: string, state: string) {
  vi.stubEnv('GOMODCACHE', cache);
  const settings = testSettings({
    executor: 'local',
    test_scope: 'touched',
    test_repeats: 1,
    fix_runs: 1,
  });
  const res = await resolveFixture(fx, state);
  const built = await buildInstanceImages(res, {
    docker: new DockerClient(),
    settings,
    stateDir: state,
  });
  const logs = new Map<string, string>();
  try {
    const v = await validateInstance(
      { resolved: res, testgen: fx.testgen, built },
      {
        executor: new LocalExecutor(),
        settings,
        saveLog: (step, text) => (logs.set(step, text), step),
      },
    );
    return { v, logs, built, res };
  } catch (err) {
    return { err, logs, built, res };
  }
}

describe('a dependency the environment cannot supply at the parent', () => {
  it('fails the item dependency_unavailable (retried), quoting the module lookup line, not a build_failed_at_parent verdict', async () => {
    const fx = fixture('depmissing', false);
    const { err } = await validateWith(fx, modCache('empty-cache', false), join(root, 'st1'));
    expect(err).toBeInstanceOf(TelebenchError);
    expect(err).not.toBeInstanceOf(SkipItem);
    const e = err as TelebenchError;
    expect(e.code).toBe('dependency_unavailable');
    expect(e.tier).toBe('infra');
    expect(e.message).toContain('fixture__depmissing-7');
    expect(e.message).toContain('step parent_bare');
    expect(e.message).toMatch(/module lookup disabled by GOPROXY=off/);
    expect(e.message).not.toContain('go: downloading');
    expect(e.message).not.toContain('{"');
  });

  it('control: the same fixture with the module in the cache validates (the fixture is sound)', async () => {
    const fx = fixture('depfilled', false);
    const cache = modCache('filled-cache', true, fx);
    const { v, err, built, res } = await validateWith(fx, cache, join(root, 'st2'));
    validated = {
      v: v!,
      cache,
      inst: evalInstance(v!, built.source_dir, built.module_dir, res.test_dirs),
    };
    expect((err as Error | undefined)?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([F2P]);
    expect(v!.PASS_TO_PASS).toEqual([`${MODULE}/nf::TestNameOf`]);
  });

  it('a genuine compile error at the parent (the module in the cache) stays the skip build_failed_at_parent, quoting the error', async () => {
    const fx = fixture('depbroken', true);
    const cache = modCache('filled-cache-2', true, fx);
    const { err } = await validateWith(fx, cache, join(root, 'st3'));
    expect(err).toBeInstanceOf(SkipItem);
    const e = err as SkipItem;
    expect(e.code).toBe('build_failed_at_parent');
    expect(e.message).toContain('undefined: undefinedName');
    expect(e.message).not.toContain('{"');
  });
});

describe('grading when the environment cannot supply a dependency', () => {
  const settings = testSettings({ executor: 'local', test_scope: 'touched' });
  const deps = { executor: new LocalExecutor(), settings, saveLog: (step: string) => step };
  /** The gold patch plus a go.mod line: a patch that changes a dependency manifest. */
  const withGoMod = (gold: string) =>
    `${gold}diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -3,3 +3,5 @@ go 1.20
 
 require ${DEP} v1.0.0
+
+// the model's note
`;

  it('control: the gold patch with the module in the cache is resolved', async () => {
    vi.stubEnv('GOMODCACHE', validated!.cache);
    const { grade } = await gradePrediction(
      { instance: validated!.inst, model_patch: validated!.v.patch },
      deps,
    );
    expect(grade.resolved).toBe(true);
  });

  it('the gold patch with an empty cache fails dependency_unavailable, not a grade of the patch', async () => {
    vi.stubEnv('GOMODCACHE', modCache('empty-cache-grade', false));
    const err = await gradePrediction(
      { instance: validated!.inst, model_patch: validated!.v.patch },
      deps,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('dependency_unavailable');
    expect((err as TelebenchError).message).toMatch(/module lookup disabled by GOPROXY=off/);
  });

  it('the release check (verifyRow, local) with an empty cache fails dependency_unavailable, not a finding on the row', async () => {
    vi.stubEnv('GOMODCACHE', modCache('empty-cache-verify', false));
    const row = swe5gRowOf(validated!.v, 'git')!;
    const verifyDeps = {
      executor: new LocalExecutor(),
      docker: null,
      settings,
      stateDir: join(root, 'st2'),
      entry: undefined,
    };
    const err = await verifyRow(row, verifyDeps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('dependency_unavailable');
    expect((err as TelebenchError).message).toContain('step verify_gold_1');
    // control: with the module in the cache the same row reproduces
    vi.stubEnv('GOMODCACHE', validated!.cache);
    const ok = await verifyRow(row, verifyDeps);
    expect(ok.holds).toBe(true);
    expect(ok.gold.resolved).toBe(ok.gold.runs);
  });

  it('a patch that changes go.mod owns what it then lacks: graded not resolved, a build failure', async () => {
    vi.stubEnv('GOMODCACHE', modCache('empty-cache-grade-2', false));
    const { grade } = await gradePrediction(
      { instance: validated!.inst, model_patch: withGoMod(validated!.v.patch) },
      deps,
    );
    expect(grade.patch_applied).toBe(true);
    expect(grade.resolved).toBe(false);
    expect(grade.build_failures.length).toBeGreaterThan(0);
  });
});

describe('the audit: a mutant that does not build is no probe of the test', () => {
  const settings = testSettings({ executor: 'local', test_scope: 'touched' });
  const deps = {
    executor: new LocalExecutor(),
    settings,
    saveLog: (step: string) => step,
    savePatch: (name: string) => name,
  };
  /** A new Go file in the gold's first package that does not compile. */
  const broken = (gold: string): string => {
    const dir = /^\+\+\+ b\/(.*)\/[^/]+$/m.exec(gold)![1]!;
    return `${gold}diff --git a/${dir}/audit_broken.go b/${dir}/audit_broken.go
new file mode 100644
--- /dev/null
+++ b/${dir}/audit_broken.go
@@ -0,0 +1,3 @@
+package nf
+
+var _ = undefinedAuditName
`;
  };

  it('a must-reject mutant that does not build is not_applicable (not a rejection); one that builds is graded', async () => {
    // found on real Open5GS 2805 and 2809: the fix's statement put in dead code at the parent
    // named symbols the parent lacks; "not resolved" was counted as the test rejecting a no-op
    vi.stubEnv('GOMODCACHE', validated!.cache);
    const gold = validated!.v.patch;
    const m = (patch: string) => ({
      kind: 'dead_code' as const,
      expectation: 'reject' as const,
      patch,
      files: [],
    });
    const bad = await gradeMutant(validated!.inst, m(broken(gold)), deps);
    expect(bad.status).toBe('not_applicable');
    expect(bad.why).toMatch(/does not build .*proves nothing/);
    expect(bad.resolved).toBeUndefined();
    // control: the same kind that builds (here the gold itself) is graded, and it resolves
    const good = await gradeMutant(validated!.inst, m(gold), deps);
    expect(good).toMatchObject({ status: 'graded', resolved: true, ok: false });
  });
});
