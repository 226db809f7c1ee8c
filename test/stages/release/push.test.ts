/**
 * `release --push` / `publish --push` (stages/release/push.ts) against Debian's `docker-registry`
 * on a loopback port and the real engine: a row's local instance image is pushed and named by
 * digest; a row already naming that digest pushes again to the same digest; a local image rebuilt
 * since (same name, other bytes) is refused; rows without an image, or whose image the engine
 * lacks, are named before anything is pushed. `ensureLocalImage` pulls a digest reference the
 * engine lacks.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import { TelebenchError } from '../../../pipeline/errors.js';
import { ensureLocalImage, parseDigestRef } from '../../../pipeline/providers/docker/registry.js';
import { localImageOf, pushRowImages } from '../../../stages/release/push.js';
import { swe5gRowOf } from '../../../stages/swe5g/dataset.js';
import type { Swe5gRow } from '../../../datasets/index.js';
import { ensureTestBase, testSettings } from '../../fixtures/repos/harness.js';
import { startRegistry, type LocalRegistry } from '../../fixtures/swarm.js';
import { validated } from './rows.js';

const docker = new DockerClient();
let registry: LocalRegistry;
const tag = `telebench-push-test:${process.pid}`;

/** Builds a one-label image over the offline rootfs under `name` (bytes differ by `mark`). */
async function tiny(name: string, mark: string): Promise<void> {
  const ctx = mkdtempSync(join(tmpdir(), 'telebench-push-'));
  writeFileSync(
    join(ctx, 'Dockerfile'),
    `FROM ${testSettings().offline.rootfs_image}\nRUN echo ${mark} > /mark\n`,
  );
  await docker.build(ctx, name, { 'telebench.test': 'push' });
}

const rowWith = (image: string): Swe5gRow => ({
  ...swe5gRowOf(validated('free5gc/amf', 161), 'api')!,
  image_name: image,
});

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  registry = await startRegistry(docker);
  await tiny(tag, 'one');
});

afterAll(async () => {
  await registry?.stop();
  await docker.docker
    .getImage(tag)
    .remove({ force: true })
    .catch(() => undefined);
});

describe('pushRowImages', () => {
  it('pushes a local image and names it by digest; the same digest again is accepted', async () => {
    const recorded: [string, string][] = [];
    const [row] = await pushRowImages(
      [rowWith(tag)],
      registry.address,
      docker,
      'release --push',
      undefined,
      (l, r) => recorded.push([l, r]),
    );
    const ref = parseDigestRef(row!.image_name);
    expect(ref).toMatchObject({ registry: registry.address, repo: 'telebench-push-test' });
    expect(ref!.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(recorded).toEqual([[tag, row!.image_name]]);
    expect(localImageOf(row!.image_name)).toBe(tag);
    const [again] = await pushRowImages([row!], registry.address, docker, 'publish --push');
    expect(again!.image_name).toBe(row!.image_name);

    // the registry holds it: with every local name of it gone, it is pulled by digest
    await tiny(tag, 'two'); // the local name now holds other bytes
    // the pushed image's last name: removing it removes the image (this test's own)
    await docker.docker.getImage(`${registry.address}/${tag}`).remove();
    expect(await docker.hasImage(ref!.pullName)).toBe(false);
    expect(await ensureLocalImage(docker, row!.image_name)).toBe(ref!.pullName);
    expect(await docker.hasImage(ref!.pullName)).toBe(true);

    // a local image rebuilt since the release: refused, not silently renamed
    const err = await pushRowImages([row!], registry.address, docker, 'publish --push').catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('release_image_changed');
  });

  it('names rows without an image, or whose image the engine lacks, before pushing anything', async () => {
    const err = await pushRowImages(
      [
        rowWith(''),
        { ...rowWith('telebench-instance:0000000000000000'), instance_id: 'free5gc__amf-9' },
      ],
      registry.address,
      docker,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('release_image_missing');
    expect((err as TelebenchError).message).toContain('free5gc__amf-161');
    expect((err as TelebenchError).message).toContain(
      'free5gc__amf-9 (telebench-instance:0000000000000000)',
    );
  });

  it('ensureLocalImage says why a plain name the engine lacks cannot be pulled', async () => {
    const err = await ensureLocalImage(docker, 'telebench-instance:0000000000000000').catch(
      (e: unknown) => e,
    );
    expect((err as TelebenchError).code).toBe('image_missing');
    expect(parseDigestRef('telebench-instance:abc')).toBeNull();
    expect(
      parseDigestRef(`127.0.0.1:5000/telebench-instance:abc@sha256:${'a'.repeat(64)}`),
    ).toMatchObject({
      registry: '127.0.0.1:5000',
      repo: 'telebench-instance',
      tag: 'abc',
      pullName: `127.0.0.1:5000/telebench-instance@sha256:${'a'.repeat(64)}`,
    });
  });
});
