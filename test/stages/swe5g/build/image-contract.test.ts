/**
 * The image contract (docs/images.md) for every recipe — Go, C with meson, C with make, Python —
 * on the offline base and on a registry base (a local Debian `docker-registry` serving the base
 * images, pulled by the build): bash, git and patch present, /testbed the working directory at
 * base_commit with a clean `git status`, and neither the fix commit nor any later object or ref in
 * the image's git. Checked here with commands of its own in the built image, not only through
 * `checkImageContract`, and a deliberately broken image shows that the check names each violation.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import {
  checkImageContract,
  contractViolations,
} from '../../../../pipeline/providers/docker/contract.js';
import { TelebenchError } from '../../../../pipeline/errors.js';
import { buildInstanceImages, type Built } from '../../../../stages/swe5g/build/build.js';
import { hostGo } from '../../../../pipeline/providers/docker/offline-base.js';
import { goFixture } from '../../../fixtures/repos/go-nil.js';
import { cFixture } from '../../../fixtures/repos/c-null.js';
import { cMakeFixture } from '../../../fixtures/repos/c-make.js';
import { pyFixture } from '../../../fixtures/repos/py-none.js';
import { ensureTestBase, resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';
import { startRegistry, type LocalRegistry } from '../../../fixtures/swarm.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import { inImage as probe } from '../../../fixtures/in-image.js';

const docker = new DockerClient();
let root: string;
let registry: LocalRegistry;
/** Images this file made that no other test uses: removed at the end. */
const mine: string[] = [];
const REGISTRY_PORT = 47391;

const FIXTURES: [string, (dir: string) => Fixture][] = [
  ['go', (d) => goFixture(d, 'good')],
  ['c meson', cFixture],
  ['c make', cMakeFixture],
  ['python', pyFixture],
];

/** Runs `command` (sh) in `image` without overriding its working directory. */
async function inImage(image: string, command: string): Promise<string> {
  return probe(docker, image, command, '');
}

/** The contract, asserted with plain commands in the image. */
async function assertContract(built: Built, fx: Fixture): Promise<void> {
  const image = built.images.instance;
  const out = await inImage(
    image,
    [
      'echo "pwd=$(pwd)"',
      // one name per `command -v` (dash takes only the first)
      'echo "tools=$(for t in bash git patch; do command -v $t; done | tr "\\n" " ")"',
      'echo "head=$(git rev-parse HEAD)"',
      'echo "status=$(git status --porcelain --untracked-files=all | wc -l)"',
      'echo "commits=$(git rev-list --all | tr "\\n" " ")"',
      `git cat-file -e ${fx.fixCommit} 2>/dev/null && echo fix=present || echo fix=absent`,
      `git cat-file -e ${fx.prHead} 2>/dev/null && echo prhead=present || echo prhead=absent`,
      'echo "tags=$(git tag --list | wc -l)"',
    ].join('\n'),
  );
  const kv = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1).trim()]),
  );
  expect(kv.pwd).toBe('/testbed');
  expect(kv.tools?.split(' ').map((p) => p.split('/').pop())).toEqual(['bash', 'git', 'patch']);
  expect(kv.head).toBe(fx.candidate.base_commit);
  expect(kv.status).toBe('0');
  expect(kv.commits).toBe(fx.candidate.base_commit);
  expect(kv.fix).toBe('absent');
  expect(kv.prhead).toBe('absent');
  expect(kv.tags).toBe('0');
  // and the product's own check agrees
  await checkImageContract(docker, image, fx.candidate.base_commit);
}

/** Tags `local` as `<registry>/<name>`, pushes it and drops the local tag (so the build pulls it). */
async function serve(local: string, name: string): Promise<void> {
  const [repo, tag] = name.split(':') as [string, string];
  const target = `${registry.address}/${repo}`;
  await docker.docker.getImage(local).tag({ repo: target, tag });
  const stream = await docker.docker.getImage(`${target}:${tag}`).push({ tag, authconfig: {} });
  await new Promise<void>((res, rej) =>
    docker.docker.modem.followProgress(
      stream,
      (err: Error | null) => (err ? rej(err) : res()),
      (ev: { error?: string }) => (ev.error ? rej(new Error(ev.error)) : undefined),
    ),
  );
  await docker.docker.getImage(`${target}:${tag}`).remove();
}

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-contract-'));
  // a fixed port when free: the registry-based images are named from their FROM line (which holds
  // the port), so a second run of this file reuses them instead of rebuilding three bases
  registry = await startRegistry(docker, REGISTRY_PORT).catch(() => startRegistry(docker));
  const s = testSettings();
  const hg = await hostGo();
  if (!hg.found) throw new Error(`the Go base needs the host's Go: ${hg.reason}`);
  // the registry's "golang" and "debian" are the offline images (no git, no patch) served by a
  // real registry: the recipes must add what the contract needs whatever the base holds
  await serve(s.offline.go_image.replace('{go}', hg.version), 'golang:1.21-bookworm');
  await serve(s.offline.rootfs_image, 'debian:bookworm');
});

afterAll(async () => {
  for (const name of mine.reverse()) await docker.remove(name);
  await registry?.stop();
});

describe.each(['offline', 'registry'] as const)('image contract, %s base', (source) => {
  it.each(FIXTURES)('%s instance image', async (label, make) => {
    const fx = make(join(root, source, label.replace(' ', '-')));
    const state = join(root, source, 'state');
    const res = await resolveFixture(fx, state);
    const settings =
      source === 'offline'
        ? testSettings()
        : testSettings({
            base_source: 'registry',
            base_images: {
              go: `${registry.address}/golang:{version}-bookworm`,
              'c-meson': `${registry.address}/debian:bookworm`,
              python: `${registry.address}/debian:bookworm`,
            },
          });
    const built = await buildInstanceImages(res, { docker, settings, stateDir: state });
    if (source === 'registry') {
      expect(built.base_from.startsWith(`${registry.address}/`)).toBe(true);
    } else {
      expect(built.base_from).toMatch(/^telebench-(go|rootfs):/);
    }
    await assertContract(built, fx);
  });
});

describe('image contract violations', () => {
  it('names each broken rule of an image', async () => {
    const fx = goFixture(join(root, 'bad'), 'good');
    const state = join(root, 'bad', 'state');
    const res = await resolveFixture(fx, state);
    const built = await buildInstanceImages(res, {
      docker,
      settings: testSettings(),
      stateDir: state,
    });
    const ctx = mkdtempSync(join(tmpdir(), 'telebench-contract-bad-'));
    const g = 'git -c user.name=t -c user.email=t@localhost';
    writeFileSync(
      join(ctx, 'Dockerfile'),
      [
        `FROM ${built.images.instance}`,
        `RUN rm /usr/bin/patch && cd /testbed && echo later >> README.md && ${g} commit -qam later && ${g} tag future && git reset -q --soft HEAD~1 && git restore --staged . && echo loose | git hash-object -w --stdin`,
        'WORKDIR /',
        '',
      ].join('\n'),
    );
    const bad = `telebench-contract-bad:${res.base_commit.slice(0, 12)}`;
    await docker.build(ctx, bad, { 'telebench.test': 'image-contract' });
    mine.push(bad);
    const err = await checkImageContract(docker, bad, res.base_commit).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('image_contract_failed');
    const v = (err as TelebenchError).context.violations as string[];
    expect(v).toContain('patch is not on the PATH');
    expect(v).toContain('the working directory is /, not /testbed');
    expect(v.find((x) => x.startsWith('/testbed has changes'))).toMatch(/M README\.md/);
    expect(v.find((x) => x.startsWith('ref refs/tags/future'))).toBeDefined();
    expect(v).toContain("1 git object(s) are not reachable from base_commit's refs");
  });

  it('reads a clean probe as no violation and a wrong HEAD as one', () => {
    const base = 'a'.repeat(40);
    const ok = `pwd /testbed\nhead ${base}\nref refs/heads/main ${base} ancestor\nobjects 5 5\n`;
    expect(contractViolations(ok, base)).toEqual([]);
    expect(contractViolations(ok.replace(`head ${base}`, `head ${'b'.repeat(40)}`), base)).toEqual([
      `/testbed is at ${'b'.repeat(40)}, not base_commit ${base}`,
    ]);
    expect(contractViolations('missing git\npwd /testbed\n', base)).toEqual([
      'git is not on the PATH',
    ]);
  });
});
