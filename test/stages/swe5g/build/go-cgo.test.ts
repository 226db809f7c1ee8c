/**
 * cgo for Go registry entries that need it (issue 21: Magma's `orc8r/cloud/go` tests use the cgo
 * SQLite driver; magma_pr13752 stopped `build_failed_at_parent` on `undefined: sqlite3.Error`).
 * The recipe text: `environment.cgo` gives `CGO_ENABLED=1` with the compiler and libc6-dev, and
 * without it the Go base recipe keeps the name of the images already built. In the real Docker
 * engine, a Go module built here whose package has `import "C"` goes through build and
 * validation: validated with cgo, `build_failed_at_parent` (the first error lines quoted) without.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { DockerExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { baseRecipe } from '../../../../pipeline/providers/docker/recipes.js';
import { registryEntrySchema, type RegistryEntry } from '../../../../stages/swe5g/registry.js';
import { ensureTestBase, testSettings, validateFixture } from '../../../fixtures/repos/harness.js';
import { goCgoFixture, CGO_F2P, CGO_P2P, CGO_REPO } from '../../../fixtures/repos/go-cgo.js';
import { inImage as probe } from '../../../fixtures/in-image.js';

const docker = new DockerClient();
let root: string;

/** The fixture's registry entry, `environment` as given (none: the plain Go recipe). */
function registry(environment?: Record<string, unknown>): Map<string, RegistryEntry> {
  const entry = registryEntrySchema.parse({
    id: CGO_REPO,
    owner: 'acme',
    name: 'cgocalc',
    language: 'go',
    nf: 'library',
    issues_repo: CGO_REPO,
    license: 'Apache-2.0',
    test: { command: 'go test ./...' },
    image: 'go',
    ...(environment ? { environment } : {}),
  });
  return new Map([[entry.id, entry]]);
}

describe('Go base recipe with and without cgo', () => {
  it('without cgo the recipe is unchanged: the name of the base image built before cgo existed', () => {
    const plain = baseRecipe('telebench', 'go', 'telebench-go:go1.26.8');
    // the base image of the Magma and free5GC states built before this change (docs/results/magma.md)
    expect(plain.name).toBe('telebench-base:4ceae196e1cb4cf3');
    expect(plain.dockerfile).toContain('ENV GOTOOLCHAIN=local CGO_ENABLED=0 TZ=UTC\n');
    expect(plain.dockerfile).not.toMatch(/gcc|libc6-dev/);
    expect(baseRecipe('telebench', 'go', 'telebench-go:go1.26.8', [], { cgo: false })).toEqual(
      plain,
    );
  });

  it('with cgo: CGO_ENABLED=1, the compiler and the C headers installed, another image name', () => {
    const cgo = baseRecipe('telebench', 'go', 'telebench-go:go1.26.8', ['gcc'], { cgo: true });
    expect(cgo.dockerfile).toContain(
      'apt-get install -y --no-install-recommends bash git patch libc6-dev gcc &&',
    );
    expect(cgo.dockerfile).toContain('ENV GOTOOLCHAIN=local CGO_ENABLED=1 TZ=UTC\n');
    expect(cgo.dockerfile).not.toContain('CGO_ENABLED=0');
    expect(cgo.name).not.toBe(baseRecipe('telebench', 'go', 'telebench-go:go1.26.8').name);
  });

  it('the registry takes cgo on a Go entry (compilers default gcc) and refuses it elsewhere', () => {
    const e = registry({ cgo: true }).get(CGO_REPO)!;
    expect(e.environment).toMatchObject({ cgo: true, compilers: ['gcc'] });
    expect(registry({ packages: ['jq'] }).get(CGO_REPO)!.environment!.cgo).toBe(false);
    const c = registryEntrySchema.safeParse({
      ...e,
      language: 'c',
      image: 'c-meson',
      environment: { cgo: true },
    });
    expect(c.success).toBe(false);
    expect(c.error?.issues[0]).toMatchObject({
      path: ['environment', 'cgo'],
      message: expect.stringContaining('image: c-meson'),
    });
  });
});

describe('a Go package with import "C" through build and validation (Docker)', () => {
  beforeAll(async () => {
    await ensureTestBase(docker);
    root = mkdtempSync(join(tmpdir(), 'telebench-cgo-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('environment.cgo: the image compiles the C code, the fix validates', async () => {
    const { v, skip, logs } = await validateFixture(goCgoFixture(join(root, 'src')), {
      docker,
      stateDir: join(root, 'state'),
      settings: testSettings({ fix_runs: 1, test_repeats: 1, parent_reruns: 1 }),
      executor: new DockerExecutor(docker),
      registry: registry({ compilers: ['gcc'], cgo: true }),
    });
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([CGO_F2P]);
    expect(v!.PASS_TO_PASS).toEqual(CGO_P2P);
    expect(logs.get('parent_p2p')).toContain('Clamp(15, 0, 10) = 15, want 10');
    const env = await probe(docker, v!.images.instance, 'go env CGO_ENABLED CC');
    expect(env.trim().split('\n')).toEqual(['1', 'gcc']);
  });

  it('without it (CGO_ENABLED=0, no compiler): build_failed_at_parent quoting the error', async () => {
    const { v, skip } = await validateFixture(goCgoFixture(join(root, 'src-off')), {
      docker,
      stateDir: join(root, 'state-off'),
      settings: testSettings({ fix_runs: 1, test_repeats: 1, parent_reruns: 1 }),
      executor: new DockerExecutor(docker),
      registry: registry(),
    });
    expect(v).toBeUndefined();
    expect(skip?.code).toBe('build_failed_at_parent');
    expect(JSON.stringify(skip?.context)).toContain('undefined: Add');
  });
});
