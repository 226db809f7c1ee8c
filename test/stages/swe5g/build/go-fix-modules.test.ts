/**
 * A Go fix that bumps a dependency in go.mod (issue 21, free5GC `free5gc/util` bumps), through
 * resolve -> build -> validate in the real Docker engine: the env layer holds the modules of the
 * base and of the fix go.mod, so the fix validates instead of `f2p_fails_after_fix`; a version no
 * cache or proxy has is `dependency_unavailable` naming it, at build, before any test runs. The
 * modules come from a module cache this test writes with only `.mod` and `.zip` files (no `.info`,
 * as a cache filled by builds of exact versions holds them), read by `go_modules: host`; the
 * network proxy is off.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { DockerExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { TelebenchError } from '../../../../pipeline/errors.js';
import { envRecipe } from '../../../../pipeline/providers/docker/recipes.js';
import { hostModCache } from '../../../../stages/swe5g/build/build.js';
import { goDepFiles, goModuleFailure } from '../../../../stages/swe5g/build/go-modules.js';
import { mirrorPath } from '../../../../stages/swe5g/resolve/resolve.js';
import {
  ensureTestBase,
  resolveFixture,
  testSettings,
  validateFixture,
} from '../../../fixtures/repos/harness.js';
import {
  depModuleCache,
  goDepBumpFixture,
  DEP,
  DEPBUMP_F2P,
} from '../../../fixtures/repos/go-depbump.js';

const docker = new DockerClient();
const VARS = ['GOMODCACHE', 'GOPROXY', 'GOSUMDB', 'GOFLAGS', 'GONOSUMDB'];
const saved: Record<string, string | undefined> = {};
let root: string;

beforeAll(async () => {
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-depbump-'));
  for (const k of VARS) saved[k] = process.env[k];
});
afterEach(() => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The host's Go sees only `cache` and no network proxy. */
function hostGo(cache: string): void {
  process.env.GOMODCACHE = cache;
  process.env.GOPROXY = 'off';
  process.env.GOSUMDB = 'off';
  process.env.GOFLAGS = '';
}

describe('Go env layer: the modules of the fix go.mod', () => {
  it('reads go.mod at the environment commit and, changed by the fix, after it', async () => {
    const fx = goDepBumpFixture(join(root, 'src-files'));
    const res = await resolveFixture(fx, join(root, 'state-files'));
    const files = await goDepFiles(mirrorPath(join(root, 'state-files'), res.repo), res, '');
    expect(files['go.mod']).toContain(`require ${DEP} v1.0.0`);
    expect(files['fix.go.mod']).toContain(`require ${DEP} v1.1.0`);
  });

  it('a host cache with .mod and .zip but no .info serves both versions (go_modules: host)', async () => {
    hostGo(depModuleCache(join(root, 'hostcache-noinfo'), ['v1.0.0', 'v1.1.0']));
    const mod = await hostModCache(join(root, 'state-noinfo'), {
      'go.mod': `module m\n\ngo 1.21\n\nrequire ${DEP} v1.0.0\n`,
      'fix.go.mod': `module m\n\ngo 1.21\n\nrequire ${DEP} v1.1.0\n`,
    });
    expect(existsSync(join(mod, `${DEP}@v1.0.0`, 'dep.go'))).toBe(true);
    expect(existsSync(join(mod, `${DEP}@v1.1.0`, 'dep.go'))).toBe(true);
    // the host's own cache is only read
    expect(
      existsSync(join(root, 'hostcache-noinfo', 'cache', 'download', DEP, '@v', 'v1.0.0.info')),
    ).toBe(false);
  });

  it('validates the fix that bumps go.mod, FAIL_TO_PASS and PASS_TO_PASS kept', async () => {
    hostGo(depModuleCache(join(root, 'hostcache'), ['v1.0.0', 'v1.1.0']));
    const fx = goDepBumpFixture(join(root, 'src'));
    const { v, skip, logs } = await validateFixture(fx, {
      docker,
      stateDir: join(root, 'state'),
      settings: testSettings({ go_modules: 'host' }),
      executor: new DockerExecutor(docker),
    });
    expect(skip?.message ?? '').toBe('');
    expect(v!.FAIL_TO_PASS).toEqual([DEPBUMP_F2P]);
    expect(v!.PASS_TO_PASS).toContain('example.com/amfdep/ngap::TestHandleOK');
    expect([...logs.keys()].some((k) => k.startsWith('fix'))).toBe(true);
  });

  it('a fix version no cache holds is dependency_unavailable with module@version, at build, before any test', async () => {
    hostGo(depModuleCache(join(root, 'hostcache-old'), ['v1.0.0']));
    const fx = goDepBumpFixture(join(root, 'src-old'));
    const err = await validateFixture(fx, {
      docker,
      stateDir: join(root, 'state-old'),
      settings: testSettings({ go_modules: 'host' }),
      executor: new DockerExecutor(docker),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    const e = err as TelebenchError;
    expect(e.code).toBe('dependency_unavailable');
    expect(e.context).toMatchObject({
      module: `${DEP}@v1.1.0`,
      go_mod: 'fix.go.mod',
      host_cache_files: [],
    });
    expect(e.message).toContain("the fix's go.mod");
    expect(e.message).toContain('does not hold it');
  });
});

describe('envRecipe (go_modules: container)', () => {
  it("downloads the fix's go.mod into the same module cache, and leaves a fix without one as before", () => {
    const base = { 'go.mod': 'module m\n', 'go.sum': '' };
    const plain = envRecipe('t', 'go', 'b', base);
    expect(plain.dockerfile).not.toContain('deps-fix');
    expect(plain.inline['fix.go.mod']).toBeUndefined();
    const bump = envRecipe('t', 'go', 'b', {
      ...base,
      'fix.go.mod': 'module m\n// bump\n',
      'fix.go.sum': '',
    });
    expect(bump.dockerfile).toContain('COPY fix.go.mod /tmp/deps-fix/go.mod');
    expect(bump.dockerfile).toMatch(
      /cd \/tmp\/deps && .*go mod download && cd \/tmp\/deps-fix && .*go mod download/,
    );
    expect(bump.name).not.toBe(plain.name);
    // go_modules: host: the copied cache holds the fix's modules, so they name the image too
    const hostPlain = envRecipe('t', 'go', 'b', base, { goModCache: '/cache' });
    const hostBump = envRecipe(
      't',
      'go',
      'b',
      { ...base, 'fix.go.mod': 'module m\n// bump\n' },
      { goModCache: '/cache' },
    );
    expect(hostBump.name).not.toBe(hostPlain.name);
    expect(hostPlain.name).toBe(envRecipe('t', 'go', 'b', base, { goModCache: '/other' }).name);
  });
});

describe('goModuleFailure reads go output', () => {
  it('names module@version, the URL and status, and whether retrying can help', () => {
    expect(
      goModuleFailure(
        'go: downloading github.com/free5gc/util v1.0.7-0.20260527\ngo: github.com/free5gc/util@v1.0.7-0.20260527083313-a8ae4d06d4b9: reading https://proxy.golang.org/github.com/free5gc/util/@v/v1.0.7-0.20260527083313-a8ae4d06d4b9.info: 403 Forbidden\n',
      ),
    ).toEqual({
      module: 'github.com/free5gc/util@v1.0.7-0.20260527083313-a8ae4d06d4b9',
      reason:
        'reading https://proxy.golang.org/github.com/free5gc/util/@v/v1.0.7-0.20260527083313-a8ae4d06d4b9.info: 403 Forbidden',
      url: 'https://proxy.golang.org/github.com/free5gc/util/@v/v1.0.7-0.20260527083313-a8ae4d06d4b9.info',
      status: 403,
      permanent: true,
    });
    expect(
      goModuleFailure('go: example.com/x@v1.2.3: Get "https://proxy/x": dial tcp: i/o timeout'),
    ).toMatchObject({ module: 'example.com/x@v1.2.3', permanent: false });
    expect(goModuleFailure('go: downloading example.com/x v1.2.3\n')).toBeNull();
  });
});
