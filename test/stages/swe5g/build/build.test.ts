import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import tarFs from 'tar-fs';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import {
  buildInstanceImages,
  compareVersions,
  type Built,
} from '../../../../stages/swe5g/build/build.js';
import { SkipItem } from '../../../../pipeline/errors.js';
import { layerTable, localTag } from '../../../../stages/swe5g/build/images-command.js';
import { goFixture } from '../../../fixtures/repos/go-nil.js';
import { ensureTestBase, resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import type { Resolved } from '../../../../stages/swe5g/types.js';

const docker = new DockerClient();
let root: string;
let state: string;
let fx: Fixture;
let res: Resolved;
let built: Built;

/** Copies `path` out of an image (container created, never started) into a host folder. */
async function extractFromImage(image: string, path: string, dest: string): Promise<void> {
  const c = await docker.docker.createContainer({
    Image: image,
    Cmd: ['true'],
    NetworkDisabled: true,
  });
  try {
    const stream = await c.getArchive({ path });
    await streamPipeline(stream as unknown as Readable, tarFs.extract(dest));
  } finally {
    await c.remove({ force: true });
  }
}

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-build-'));
  state = join(root, 'state');
  fx = goFixture(join(root, 'src'), 'good');
  res = await resolveFixture(fx, state);
  built = await buildInstanceImages(res, { docker, settings: testSettings(), stateDir: state });
});

describe('swe5g.build', () => {
  it('builds three layers named from recipe hashes and records the toolchain and sizes', async () => {
    expect(built.images.base).toMatch(/^telebench-base:[0-9a-f]{16}$/);
    expect(built.images.env).toMatch(/^telebench-env:[0-9a-f]{16}$/);
    expect(built.images.instance).toMatch(/^telebench-instance:[0-9a-f]{16}$/);
    expect(built.toolchain).toMatch(/^go1\.\d+/);
    expect(built.sizes.base).toBeGreaterThan(100 * 2 ** 20);
    expect(built.sizes.instance_layer).toBeGreaterThan(0);
    const labels = (await docker.inspect(built.images.instance))?.Config.Labels ?? {};
    expect(labels['telebench.layer']).toBe('instance');
    expect(labels['telebench.instance_id']).toBe(res.instance_id);
  });

  it('the instance image holds no object or ref after the base commit', async () => {
    const out = mkdtempSync(join(tmpdir(), 'telebench-leak-'));
    await extractFromImage(built.images.instance, '/testbed/.git', out);
    const gitDir = join(out, '.git');
    expect(existsSync(join(gitDir, 'HEAD'))).toBe(true);
    const g = (...a: string[]): string =>
      execFileSync('git', ['--git-dir', gitDir, ...a], { encoding: 'utf8' }).trim();
    expect(g('rev-parse', 'HEAD')).toBe(res.base_commit);
    expect(g('rev-list', '--all')).toBe(res.base_commit);
    expect(g('for-each-ref', '--format=%(refname)')).toBe('refs/heads/main');
    expect(g('tag', '--list')).toBe('');
    // the mirror has the fix and the PR ref; the image has neither
    const mirrorHas = execFileSync('git', ['-C', fx.dir, 'cat-file', '-t', fx.fixCommit], {
      encoding: 'utf8',
    }).trim();
    expect(mirrorHas).toBe('commit');
    for (const sha of [fx.fixCommit, fx.prHead]) expect(() => g('cat-file', '-e', sha)).toThrow();
  });

  it('reuses the env layer for an instance of the same environment commit, the base layer for any', async () => {
    // same environment commit (the commit that last set go.mod/go.sum): the env layer, which
    // holds that commit's module cache and build cache, is shared
    const same = { ...res, instance_id: `${res.instance_id}-again` };
    const b1 = await buildInstanceImages(same, {
      docker,
      settings: testSettings(),
      stateDir: state,
    });
    expect(b1.images.base).toBe(built.images.base);
    expect(b1.images.env).toBe(built.images.env);
    expect(b1.build_seconds.env).toBe(0);
    // another fixture repository with the same go.mod: the base layer is shared; the env layer
    // is keyed by repository and environment commit, since its build cache is of that tree
    // (docs/go-environments.md)
    const other = goFixture(join(root, 'src'), 'shipped');
    const r2 = await resolveFixture(other, state);
    const b2 = await buildInstanceImages(r2, { docker, settings: testSettings(), stateDir: state });
    expect(b2.images.base).toBe(built.images.base);
    expect(b2.build_seconds.base).toBe(0);
    expect(b2.images.env).not.toBe(built.images.env);
    expect(b2.images.instance).not.toBe(built.images.instance);
  });

  it('skips a repository that asks for a newer Go than the toolchain as toolchain_mismatch', async () => {
    const err = await buildInstanceImages(
      { ...res, version: '99.1' },
      { docker, settings: testSettings(), stateDir: state },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SkipItem);
    expect((err as SkipItem).code).toBe('toolchain_mismatch');
    expect((err as SkipItem).context).toMatchObject({ required: '99.1' });
  });

  it('`images ls` reports the size each layer adds over its parent, under the local tag of a pushed image', async () => {
    // a push to a registry (release push, swarm) adds `<host>/<name>` to the same image; tests
    // in other files push this fixture's instance, so its RepoTags may list that name first
    const [repo, tag] = built.images.instance.split(':') as [string, string];
    const pushed = `localhost:5999/${repo}`;
    await docker.docker.getImage(built.images.instance).tag({ repo: pushed, tag });
    try {
      const rows = await layerTable(docker);
      const inst = rows.find((r) => r.tags.includes(built.images.instance));
      expect(inst?.tags).toContain(`${pushed}:${tag}`);
      expect(inst?.name).toBe(built.images.instance);
      expect(inst?.layer).toBe('instance');
      expect(inst?.instance).toBe(res.instance_id);
      expect(inst?.own).toBe(built.sizes.instance_layer);
      expect(inst!.own).toBeLessThan(inst!.size);
    } finally {
      await docker.docker.getImage(`${pushed}:${tag}`).remove();
    }
  });

  it('names an image by the tag without a registry host', () => {
    expect(localTag(['localhost:5000/telebench-instance:ab', 'telebench-instance:ab'])).toBe(
      'telebench-instance:ab',
    );
    expect(localTag(['ghcr.io/org/telebench-env:1', 'org/telebench-env:1'])).toBe(
      'org/telebench-env:1',
    );
    expect(localTag(['registry.example:5000/x:1'])).toBe('registry.example:5000/x:1');
    expect(localTag([])).toBeUndefined();
  });

  it('compares versions numerically', () => {
    expect(compareVersions('go1.26.8', '1.21')).toBeGreaterThan(0);
    expect(compareVersions('go1.9', '1.21')).toBeLessThan(0);
    expect(compareVersions('go1.21.0', '1.21')).toBe(0);
  });
});
