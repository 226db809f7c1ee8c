/**
 * `telebench release --push REGISTRY` and `publish --push REGISTRY`: the instance images of a
 * SWE-Bench 5G release in an image registry, named by digest in the rows' `image_name`
 * (`REGISTRY/telebench-instance:<tag>@sha256:<digest>`), so anyone with the rows can pull the
 * exact image an instance was validated in (docs/images.md, docs/outside-agents.md).
 */
import { TelebenchError } from '../../pipeline/errors.js';
import type { DockerClient } from '../../pipeline/providers/docker/client.js';
import { parseDigestRef, pushImage } from '../../pipeline/providers/docker/registry.js';
import type { Swe5gRow } from '../../datasets/index.js';

/** The local name a row's image has in the engine: `image_name` without `REGISTRY/` and digest. */
export function localImageOf(imageName: string): string {
  const ref = parseDigestRef(imageName);
  return ref ? `${ref.repo}${ref.tag ? `:${ref.tag}` : ''}` : imageName;
}

/**
 * Pushes every row's instance image to `registry` and returns the rows with `image_name` set to
 * the pushed digest reference. A row already naming a digest in `registry` is pushed again from
 * the local image of the same name (the registry answers with the digest it holds) and must come
 * back with the same digest.
 * @param flag how the registry was given, for errors (`release --push`)
 * @param record receives each local image name and the digest reference it was pushed as (the
 *   release command keeps them in the state's kv, `PUSHED_IMAGES_KV`, for `evaluate`)
 * @throws TelebenchError `release_image_missing` (tier config) naming the rows that have no image
 *   (validated with the local executor) or whose image the engine lacks; `registry_push_failed`
 *   (tier infra) from the push; `release_image_changed` (tier config) when a row's digest differs
 *   from what the local image pushes as
 */
export async function pushRowImages(
  rows: readonly Swe5gRow[],
  registry: string,
  docker: DockerClient,
  flag = 'release --push',
  log: (m: string) => void = () => undefined,
  record?: (local: string, ref: string) => void,
): Promise<Swe5gRow[]> {
  const noImage = rows.filter((r) => r.image_name === '').map((r) => r.instance_id);
  const missing: string[] = [];
  for (const r of rows)
    if (r.image_name && !(await docker.hasImage(localImageOf(r.image_name))))
      missing.push(`${r.instance_id} (${localImageOf(r.image_name)})`);
  if (noImage.length || missing.length) {
    const parts = [
      noImage.length
        ? `${noImage.length} row(s) have no instance image (validated with executor local): ${noImage.slice(0, 5).join(', ')}`
        : '',
      missing.length
        ? `the engine lacks the image of ${missing.length} row(s): ${missing.slice(0, 5).join(', ')}`
        : '',
    ].filter(Boolean);
    throw new TelebenchError(
      'release_image_missing',
      `${flag} ${registry}: ${parts.join('; ')}; build them with the Docker executor (telebench run swe5g) first`,
      { tier: 'config', context: { registry, no_image: noImage, missing } },
    );
  }
  const out: Swe5gRow[] = [];
  for (const r of rows) {
    const local = localImageOf(r.image_name);
    const ref = await pushImage(docker, local, registry, flag);
    const before = parseDigestRef(r.image_name);
    const after = parseDigestRef(ref)!;
    if (before && before.registry === registry && before.digest !== after.digest) {
      throw new TelebenchError(
        'release_image_changed',
        `${r.instance_id}: the row names ${r.image_name}, but the engine's ${local} pushes as ${after.digest}: the local image was rebuilt since the release; release a new version`,
        { tier: 'config', context: { instance_id: r.instance_id, row: r.image_name, pushed: ref } },
      );
    }
    log(`${r.instance_id}: ${ref}`);
    record?.(local, ref);
    out.push({ ...r, image_name: ref });
  }
  return out;
}
