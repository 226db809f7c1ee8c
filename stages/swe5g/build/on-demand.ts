/**
 * An instance image rebuilt on demand (issue 31): a stage that needs an instance image the engine
 * no longer holds (evicted under `swe5g.environments.image_budget_gib`, `eviction.ts`, or removed
 * by hand) rebuilds base, env and instance from their recipes instead of failing. Image names are
 * content keys of the recipes, so the rebuilt image has the name the stored records hold.
 */
import { TelebenchError } from '../../../pipeline/errors.js';
import type { StageContext } from '../../../pipeline/stage.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import type { Resolved } from '../types.js';
import { buildInstanceImages, type BuildSubject } from './build.js';
import { buildContextOf } from './build-context.js';
import { touchImage } from './eviction.js';

/**
 * Makes sure the engine holds `image`, the instance image of `subject`, and records its use
 * (the eviction's least-recently-used order). Nothing to do for the local executor.
 * @param subject the instance's resolved record; undefined: looked up in `swe5g.resolve` by key
 * @throws TelebenchError `image_missing` (infra) when the image is absent and no resolved record
 *   says how to build it; `image_rebuild_mismatch` (infra) when the rebuilt recipe names another
 *   image (the mirror or registry changed since the build); the build's own errors
 */
export async function ensureInstanceImage(
  ctx: StageContext<HasSwe5g>,
  key: string,
  image: string,
  subject?: BuildSubject,
): Promise<void> {
  const settings = swe5gSettings(ctx.config).environments;
  if (settings.executor === 'local' || !image) return;
  const bc = buildContextOf(ctx, (m) => ctx.log(`${key}: ${m}`));
  if (!(await bc.docker.hasImage(image))) {
    const res = subject ?? (ctx.store.item('swe5g.resolve', key)?.output as Resolved | undefined);
    if (!res)
      throw new TelebenchError(
        'image_missing',
        `${key}: the instance image ${image} is not in the engine and no resolved record of ${key} says how to rebuild it`,
        { tier: 'infra', context: { image, key } },
      );
    ctx.log(`${key}: instance image ${image} is not in the engine (evicted?); rebuilding it`, {
      rebuilt: image,
    });
    const built = await buildInstanceImages(res, bc);
    if (built.images.instance !== image)
      throw new TelebenchError(
        'image_rebuild_mismatch',
        `${key}: rebuilding ${image} from its recipe gave ${built.images.instance} (the mirror, registry or settings changed since the build); rerun swe5g.build for it`,
        { tier: 'infra', context: { image, rebuilt: built.images.instance, key } },
      );
  }
  touchImage(ctx.kv, image);
}
