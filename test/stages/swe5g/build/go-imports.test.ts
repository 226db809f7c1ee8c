/**
 * Issue 31, "environments that build for the history": two 2019 Magma Go folders failed validation
 * on modules the env layer's module cache lacked under `GOPROXY=off` (`github.com/davecgh/go-spew`,
 * testify's own requirement; `github.com/lib/pq`, `golang.org/x/sys`). The bare `go mod download`
 * with `-mod=mod` first writes the toolchain's `go` line into a go.mod that has none, after which
 * it downloads only the explicit requirements. The import check lists what the folder's packages
 * and tests import, as the test steps load them, and fetches what is missing.
 *
 * A real repository built here, in the pre-1.17 shapes of Magma's folders (no `go` line, indirect
 * requirements not listed), with real modules from the module proxy (through the host's module
 * cache first, as `go_modules: host` reads it): the old download misses each module, the cache with
 * the import check holds it. The env layer's script (`go_modules: container`) runs here on the
 * host, as the build would run it. A module no proxy serves (a host cache without its `.zip`,
 * written by the test) is `dependency_unavailable` naming it; an import no module of the go.mod
 * provides is a warning on the record, and nothing is looked up for it.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { rmSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  fillHostModCache,
  goDepFiles,
  hostModCache,
} from '../../../../stages/swe5g/build/go-modules.js';
import {
  GO_IMPORTS_SCRIPT,
  readGoList,
} from '../../../../pipeline/providers/docker/go-imports-step.js';
import { envRecipe } from '../../../../pipeline/providers/docker/recipes.js';
import { TelebenchError } from '../../../../pipeline/errors.js';
import { goJsonFailure } from '../../../../stages/swe5g/build/go-host-download.js';
import { commit, git } from '../../../fixtures/git-repo.js';

const VARS = ['GOMODCACHE', 'GOPROXY', 'GOSUMDB', 'GOFLAGS', 'GONOSUMDB'];
const saved: Record<string, string | undefined> = {};
let root: string;
let repo: string;
let env: string;

const TESTIFY = 'github.com/stretchr/testify';

/** The repository: one module folder per shape, each go.mod without a `go` line (2019). */
const FILES: Record<string, string> = {
  // a test-only import: testify/assert imports go-spew, which only testify's go.mod requires
  'spew/go.mod': `module example.com/spew\n\nrequire ${TESTIFY} v1.4.0\n`,
  'spew/sum.go': 'package spew\n\n// Sum adds.\nfunc Sum(a, b int) int { return a + b }\n',
  'spew/sum_test.go': `package spew\n\nimport (\n\t"testing"\n\n\t"${TESTIFY}/assert"\n)\n\nfunc TestSum(t *testing.T) { assert.Equal(t, 3, Sum(1, 2)) }\n`,
  // an indirect requirement the old go.mod does not list: go-multierror imports errwrap
  'multi/go.mod': 'module example.com/multi\n\nrequire github.com/hashicorp/go-multierror v1.0.0\n',
  'multi/multi.go':
    'package multi\n\nimport "github.com/hashicorp/go-multierror"\n\n// Join joins errors.\nfunc Join(errs ...error) error { return multierror.Append(nil, errs...) }\n',
  // a local replace target's own requirement (Magma's `magma/orc8r/lib/go => ../../orc8r/lib/go`)
  'cloud/svc/go.mod':
    'module example.com/svc\n\nreplace example.com/lib => ../../lib/go\n\nrequire example.com/lib v0.0.0\n',
  'cloud/svc/svc.go':
    'package svc\n\nimport "example.com/lib"\n\n// ID is a new id.\nfunc ID() string { return lib.New() }\n',
  'lib/go/go.mod': 'module example.com/lib\n\nrequire github.com/google/uuid v1.1.1\n',
  'lib/go/lib.go':
    'package lib\n\nimport "github.com/google/uuid"\n\n// New is a new id.\nfunc New() string { return uuid.New().String() }\n',
  // an import no module of the go.mod provides
  'bare/go.mod': 'module example.com/bare\n',
  'bare/bare.go': 'package bare\n',
  'bare/bare_test.go':
    'package bare\n\nimport (\n\t"testing"\n\n\t"github.com/google/uuid"\n)\n\nfunc TestID(t *testing.T) { _ = uuid.New() }\n',
  // a dependency whose source no proxy serves (the host cache below holds only its .mod)
  'gone/go.mod': 'module example.com/gone\n\nrequire example.com/a v1.0.0\n',
  'gone/gone.go': 'package gone\n\nimport "example.com/a"\n\nvar _ = a.V\n',
};

/** The folders of module `path` in a module cache (`<path>@<version>`). */
function versionsIn(mod: string, path: string): string[] {
  const parent = join(mod, ...path.split('/').slice(0, -1));
  const base = path.split('/').pop()!;
  if (!existsSync(parent)) return [];
  return readdirSync(parent).filter((n) => n.startsWith(`${base}@`));
}

/** Writes module `path` `v1.0.0` into `<cache>/cache/download` (`.zip` only with `zip`). */
function fakeModule(cache: string, path: string, goMod: string, src: string, zip: boolean): void {
  const dl = join(cache, 'cache', 'download', path, '@v');
  mkdirSync(dl, { recursive: true });
  writeFileSync(join(dl, 'v1.0.0.info'), '{"Version":"v1.0.0","Time":"2019-01-01T00:00:00Z"}');
  writeFileSync(join(dl, 'v1.0.0.mod'), goMod);
  if (!zip) return;
  const tree = join(cache, 'zipsrc');
  const dir = join(tree, `${path}@v1.0.0`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'go.mod'), goMod);
  writeFileSync(join(dir, 'a.go'), src);
  execFileSync('zip', ['-qrD', join(dl, 'v1.0.0.zip'), `${path}@v1.0.0`], { cwd: tree });
  rmSync(tree, { recursive: true, force: true });
}

beforeAll(() => {
  for (const k of VARS) saved[k] = process.env[k];
  root = mkdtempSync(join(tmpdir(), 'telebench-goimports-'));
  repo = join(root, 'mono');
  git(root, 'init', '-q', '--initial-branch=master', repo);
  env = commit(repo, FILES, '2019: the folders');
});
afterEach(() => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The old cache (go.mod download only) and the new one (with the import check) of `dir`. */
async function bothCaches(dir: string) {
  // the module proxy as the user has it (through the host's module cache); no checksum database
  process.env.GOSUMDB = 'off';
  const files = await goDepFiles(repo, { environment_setup_commit: env }, dir);
  const old = await hostModCache(join(root, `old-${dir.replace(/\//g, '-')}`), files, dir);
  const now = await fillHostModCache(join(root, `new-${dir.replace(/\//g, '-')}`), files, dir, '', {
    mirror: repo,
    commit: env,
  });
  return { old, now, files };
}

describe('the import check (go_modules: host)', () => {
  it('a test-only import: the test file imports testify, whose go.mod alone requires go-spew', async () => {
    const { old, now } = await bothCaches('spew');
    expect(versionsIn(old, TESTIFY)).toEqual(['testify@v1.4.0']);
    expect(versionsIn(old, 'github.com/davecgh/go-spew')).toEqual([]);
    expect(versionsIn(now.dir, 'github.com/davecgh/go-spew')).toEqual(['go-spew@v1.1.0']);
    expect(versionsIn(now.dir, 'github.com/pmezard/go-difflib')).toEqual(['go-difflib@v1.0.0']);
    expect(now.imports!.fetched).toContain('github.com/davecgh/go-spew@v1.1.0');
    expect(now.imports!.unresolved).toEqual([]);
    // the tree the tests see is not exported into the cache, and nothing of it is left
    expect(existsSync(join(now.dir, '..', 'src'))).toBe(false);
  });

  it('an indirect requirement missing from an old go.mod: go-multierror imports errwrap', async () => {
    const { old, now } = await bothCaches('multi');
    expect(versionsIn(old, 'github.com/hashicorp/errwrap')).toEqual([]);
    expect(versionsIn(now.dir, 'github.com/hashicorp/errwrap')).toEqual(['errwrap@v1.0.0']);
  });

  it("a local replace target's own requirement: the sibling folder's go.mod requires uuid", async () => {
    const { old, now, files } = await bothCaches('cloud/svc');
    expect(Object.keys(files)).toContain('_local/lib/go/go.mod');
    expect(versionsIn(old, 'github.com/google/uuid')).toEqual([]);
    expect(versionsIn(now.dir, 'github.com/google/uuid')).toEqual(['uuid@v1.1.1']);
  });

  it('an import no module of the go.mod provides is a warning on the record; nothing is looked up', async () => {
    const { now } = await bothCaches('bare');
    expect(now.imports!.unresolved.map((u) => u.package)).toEqual(['github.com/google/uuid']);
    expect(now.imports!.unresolved[0]!.detail).toContain('cannot find module providing package');
    expect(versionsIn(now.dir, 'github.com/google/uuid')).toEqual([]);
  });

  it('a module the folder imports that nothing serves is dependency_unavailable naming it', async () => {
    const host = join(root, 'gone-hostcache');
    fakeModule(
      host,
      'example.com/a',
      'module example.com/a\n\nrequire example.com/b v1.0.0\n',
      'package a\n\nimport "example.com/b"\n\n// V is b.\nvar V = b.V\n',
      true,
    );
    fakeModule(
      host,
      'example.com/b',
      'module example.com/b\n',
      'package b\n\n// V is one.\nconst V = 1\n',
      false,
    );
    process.env.GOMODCACHE = host;
    process.env.GOPROXY = 'off';
    process.env.GOSUMDB = 'off';
    const files = await goDepFiles(repo, { environment_setup_commit: env }, 'gone');
    // the old download has what it asks for: the explicit requirement and b's go.mod
    const old = await hostModCache(join(root, 'old-gone'), files, 'gone');
    expect(versionsIn(old, 'example.com/a')).toEqual(['a@v1.0.0']);
    const err = await fillHostModCache(join(root, 'new-gone'), files, 'gone', '', {
      mirror: repo,
      commit: env,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    const e = err as TelebenchError;
    expect(e.code).toBe('dependency_unavailable');
    expect(e.context).toMatchObject({ module: 'example.com/b@v1.0.0', go_mod: 'go.mod' });
    expect(e.message).toContain("what the folder's packages and tests import");
  });
});

describe('the import check of the env layer (go_modules: container), run on the host', () => {
  it('fetches what the old download missed and reports the unresolved imports', async () => {
    process.env.GOSUMDB = 'off';
    const tree = join(root, 'container-tree');
    mkdirSync(tree);
    execFileSync('sh', ['-c', `git -C ${repo} archive ${env} | tar -x -C ${tree}`]);
    const deps = join(root, 'container-deps');
    mkdirSync(deps);
    cpSync(join(tree, 'cloud/svc/go.mod'), join(deps, 'go.mod'));
    const files = await goDepFiles(repo, { environment_setup_commit: env }, 'cloud/svc');
    const cache = join(root, 'container-cache');
    cpSync(await hostModCache(join(root, 'old-container'), files, 'cloud/svc'), cache, {
      recursive: true,
    });
    const script = join(root, 'go_imports.sh');
    writeFileSync(script, GO_IMPORTS_SCRIPT);
    const report = join(root, 'report', 'go-imports.txt');
    const hostCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
    const run = spawnSync('sh', [script, join(tree, 'cloud/svc'), report, deps], {
      encoding: 'utf8',
      env: {
        ...process.env,
        GOMODCACHE: cache,
        TELEBENCH_GOPROXY: `file://${hostCache}/cache/download,https://proxy.golang.org,direct`,
      },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(versionsIn(cache, 'github.com/google/uuid')).toEqual(['uuid@v1.1.1']);
    expect(readGoList(readFileSync(report, 'utf8'))).toEqual({ missing: [], unresolved: [] });
    // the tree's go.mod is the commit's own
    expect(readFileSync(join(tree, 'cloud/svc/go.mod'), 'utf8')).toBe(FILES['cloud/svc/go.mod']);
  });

  it('the env recipe runs it over the env tree, with both go.mod files, before the warm-up', () => {
    const deps = { 'go.mod': 'module m\n', 'go.sum': '', 'fix.go.mod': 'module m\n// bump\n' };
    const goWarm = { source: '/src', moduleDir: 'lte/cloud/go', key: 'r@c:lte/cloud/go' };
    for (const goModCache of [undefined, '/cache']) {
      const r = envRecipe('t', 'go', 'b', deps, { goWarm, ...(goModCache ? { goModCache } : {}) });
      const lines = r.dockerfile.split('\n');
      const check = lines.findIndex((l) => l.includes('go_imports.sh /testbed/lte/cloud/go'));
      expect(lines[check]).toContain('/etc/telebench/go-imports.txt /tmp/deps /tmp/deps-fix');
      expect(check).toBeGreaterThan(lines.indexOf('COPY envsrc/ /testbed/'));
      expect(check).toBeLessThan(
        lines.findIndex((l) => l.startsWith('RUN cd /testbed/lte/cloud/go')),
      );
      expect(r.inline['go_imports.sh']).toBe(GO_IMPORTS_SCRIPT);
      // without the env tree there is nothing to check: the recipe is as before
      const bare = envRecipe('t', 'go', 'b', deps, goModCache ? { goModCache } : {});
      expect(bare.dockerfile).not.toContain('go_imports.sh');
    }
  });
});

describe('readGoList', () => {
  it('reads the missing module versions and the unresolved imports of a round', () => {
    const out = [
      '',
      '@@ github.com/davecgh/go-spew/spew /m/testify@v1.4.0/assert/assertions.go:18:2: module lookup disabled by GOPROXY=off',
      '@@ github.com/google/uuid bare_test.go:6:2: cannot find module providing package github.com/google/uuid: module lookup disabled by GOPROXY=off',
      '@@ example.com/x/gen x.go:3:2: package example.com/x/gen is not in std',
    ].join('\n');
    const err = [
      'go: downloading github.com/davecgh/go-spew v1.1.0',
      'go: finding module for package github.com/google/uuid',
      'go: example.com/b@v1.0.0: module lookup disabled by GOPROXY=off',
    ].join('\n');
    expect(readGoList(out, err)).toEqual({
      missing: ['example.com/b@v1.0.0', 'github.com/davecgh/go-spew@v1.1.0'],
      unresolved: [
        {
          package: 'github.com/google/uuid',
          detail:
            'bare_test.go:6:2: cannot find module providing package github.com/google/uuid: module lookup disabled by GOPROXY=off',
        },
      ],
    });
  });

  it('goJsonFailure names the module of a `go mod download -json` error that does not', () => {
    const ok =
      '{\n\t"Path": "example.com/a",\n\t"Version": "v1.0.0",\n\t"Origin": {\n\t\t"VCS": "git"\n\t}\n}\n';
    const bad =
      '{\n\t"Path": "example.com/b",\n\t"Version": "v1.0.0",\n\t"Error": "module lookup disabled by GOPROXY=off"\n}\n';
    expect(goJsonFailure(ok)).toBeNull();
    expect(goJsonFailure(ok + bad)).toMatchObject({
      module: 'example.com/b@v1.0.0',
      reason: 'module lookup disabled by GOPROXY=off',
    });
    const named =
      '{\n\t"Path": "x.org/c",\n\t"Version": "v2.0.0",\n\t"Error": "x.org/c@v2.0.0: reading https://p/x.org/c/@v/v2.0.0.zip: 410 Gone"\n}\n';
    expect(goJsonFailure(named)).toMatchObject({
      module: 'x.org/c@v2.0.0',
      status: 410,
      permanent: true,
    });
  });
});
