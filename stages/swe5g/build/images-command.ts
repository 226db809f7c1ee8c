/**
 * `telebench images`: the image store of SWE-Bench 5G.
 * - `images base`  builds the offline base images (debootstrap minbase rootfs from the host's apt
 *   mirror, plus the host Go toolchain copied from its GOROOT) for hosts with no image registry;
 * - `images ls`    lists telebench images with each layer's own size (image size minus parent's);
 * - `images prune` removes telebench images that no pending or validated, unreleased instance needs
 *   (a released instance's images are rebuilt from its row's recipe by `telebench verify`)
 *   (rejected instances and stale recipes), and reports the total against the disk budget.
 */
import { listReleases, readReleaseRows, releaseDir } from '../../release/assemble.js';
import type { Command } from 'commander';
import { loadConfigFile } from '../../../pipeline/config/load.js';
import { openState, resolveStateDir } from '../../../pipeline/state.js';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import { ensureOfflineBase } from '../../../pipeline/providers/docker/offline-base.js';
import { appConfigSchema } from '../../config.js';
import { swe5gSettings } from '../config.js';
import { environmentsDefaults, type EnvironmentsSettings } from '../environments-config.js';
import { buildStage, type Built } from './build.js';
import { validateStage } from '../validate/validate.js';
import { swe5gDataset } from '../../../datasets/index.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const GiB = 2 ** 30;
const fmt = (bytes: number): string =>
  bytes >= GiB ? `${(bytes / GiB).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * The environments settings of the configuration file. `images base` runs from `scripts/setup.mjs`
 * before anything else, so a configuration error there is reported and the defaults are used
 * (`lenient`); the other subcommands stop on it.
 * @throws ConfigError when the file is invalid and `lenient` is false
 */
function settingsOf(configFlag: string | undefined, lenient = false): EnvironmentsSettings {
  const file = configFlag ?? 'config/default.yaml';
  try {
    return swe5gSettings(loadConfigFile(file, appConfigSchema)).environments;
  } catch (err) {
    if (!lenient) throw err;
    console.warn(
      `images: ${file} is not usable (${(err as Error).message}); using the default settings`,
    );
    return environmentsDefaults;
  }
}

/**
 * instance_ids of every written SWE-Bench 5G release under `<stateDir>/releases/swe-bench-5g/`.
 * @throws TelebenchError (tier config) when a release's manifest or rows are unreadable
 */
export function releasedInstanceIds(stateDir: string): Set<string> {
  const ids = new Set<string>();
  for (const m of listReleases(stateDir, swe5gDataset.id)) {
    for (const row of readReleaseRows(releaseDir(stateDir, swe5gDataset.id, m.version))) {
      if (typeof row.instance_id === 'string') ids.add(row.instance_id);
    }
  }
  return ids;
}

/**
 * Images still needed: every image of a `swe5g.build` item whose instance is not rejected by
 * `swe5g.validate` (pending or validated instances).
 */
export function neededImages(stateDir: string): Set<string> {
  const released = releasedInstanceIds(stateDir);
  const st = openState(stateDir);
  try {
    const keep = new Set<string>();
    for (const rec of st.store.items(buildStage.name)) {
      if (rec.state !== 'done' || !rec.output) continue;
      const v = st.store.item(validateStage.name, rec.key);
      if (v?.state === 'skipped') continue;
      // a released instance is rebuilt from its row's recipe by `telebench verify` when needed
      if (released.has(rec.key)) continue;
      const b = rec.output as Built;
      for (const n of [b.images.base, b.images.env, b.images.instance]) if (n) keep.add(n);
    }
    return keep;
  } finally {
    st.close();
  }
}

/**
 * Every image name a `swe5g.build` item of the state folder `stateDir` recorded (base, env and
 * instance; any item state), so that `images ls` shows this state's images only. A state folder
 * without a store yields an empty set.
 */
export function stateImages(stateDir: string): Set<string> {
  const names = new Set<string>();
  if (!existsSync(join(stateDir, 'state.db'))) return names;
  const st = openState(stateDir);
  try {
    for (const rec of st.store.items(buildStage.name)) {
      const b = rec.output as Partial<Built> | null;
      for (const n of [b?.images?.base, b?.images?.env, b?.images?.instance]) if (n) names.add(n);
    }
    return names;
  } finally {
    st.close();
  }
}

/** One row of `telebench images ls`: sizes in bytes; `own` is what the layer adds over its parent. */
export interface LayerRow {
  /** The image's local tag ({@link localTag}), or its id's first 19 characters when untagged. */
  name: string;
  /** All its tags: a pushed image also carries `<registry>/<name>`. */
  tags: string[];
  layer: string;
  size: number;
  own: number;
  instance?: string;
}

/**
 * The tag of `tags` that names no registry host (Docker's rule: a first path component holding a
 * `.` or `:`, or `localhost`), else the first tag; undefined for an untagged image.
 */
export function localTag(tags: string[]): string | undefined {
  const hosted = (t: string): boolean => {
    const slash = t.indexOf('/');
    if (slash < 0) return false;
    const first = t.slice(0, slash);
    return first === 'localhost' || first.includes('.') || first.includes(':');
  };
  return tags.find((t) => !hosted(t)) ?? tags[0];
}

/**
 * Layer sizes: each telebench image's size minus the size of its parent: the image its
 * `telebench.parent` label names (the FROM image, as the build measured the layer) when the engine
 * has it, else the image whose filesystem layers (`RootFS.Layers`) are the longest strict prefix
 * of its own (images built before the label existed have none).
 */
export async function layerTable(docker: DockerClient): Promise<LayerRow[]> {
  const list = await docker.listTelebenchImages();
  const all = await docker.docker.listImages();
  const layersOf = new Map<string, { layers: string[]; size: number }>();
  for (const img of all) {
    const info = await docker.inspect(img.Id);
    if (info) layersOf.set(img.Id, { layers: info.RootFS.Layers ?? [], size: info.Size });
  }
  const rows = [];
  for (const img of list) {
    const mine = layersOf.get(img.id)?.layers ?? [];
    let parentSize = 0;
    let best = 0;
    // the FROM image the build labelled, when the engine still has it (as the build measured it)
    const labelled = img.labels['telebench.parent'];
    const from = labelled ? await docker.inspect(labelled) : undefined;
    if (from) best = Number.POSITIVE_INFINITY;
    if (from) parentSize = from.Size;
    for (const [id, other] of layersOf) {
      if (id === img.id || other.layers.length >= mine.length || other.layers.length <= best)
        continue;
      if (other.layers.every((l, k) => mine[k] === l)) {
        best = other.layers.length;
        parentSize = other.size;
      }
    }
    rows.push({
      name: localTag(img.tags) ?? img.id.slice(0, 19),
      tags: img.tags,
      layer: img.layer,
      size: img.size,
      own: img.size - parentSize,
      ...(img.labels['telebench.instance_id']
        ? { instance: img.labels['telebench.instance_id'] }
        : {}),
    });
  }
  return rows;
}

/** `telebench images base`: builds the offline base images when missing (or with `force`). */
export async function imagesBase(opts: { config?: string; force?: boolean }): Promise<void> {
  const s = settingsOf(opts.config, true);
  const docker = new DockerClient();
  await docker.ping();
  const t0 = Date.now();
  const r = await ensureOfflineBase(docker, {
    rootfsImage: s.offline.rootfs_image,
    goImage: s.offline.go_image,
    rootfsDir: s.offline.rootfs_dir,
    suite: s.offline.suite,
    force: opts.force ?? false,
    log: (l) => console.log(l),
  });
  for (const n of [r.rootfs, r.go]) {
    console.log(
      `${n}\t${fmt((await docker.size(n)) ?? 0)}\t${r.built.includes(n) ? 'built' : 'present'}`,
    );
  }
  console.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s (host ${r.go_version})`);
}

/** `telebench images ls`: this state folder's telebench images (or `--all`) with layer sizes. */
export async function imagesLs(cmd: Command): Promise<void> {
  // `telebench --state X images ls` and `telebench images ls --state X` both name the state
  const opts = cmd.optsWithGlobals<{ state?: string; all?: boolean }>();
  const docker = new DockerClient();
  await docker.ping();
  const mine = opts.all ? undefined : stateImages(resolveStateDir(opts.state));
  const rows = (await layerTable(docker)).filter((r) => !mine || r.tags.some((t) => mine.has(t)));
  if (rows.length === 0 && mine) {
    console.error(
      `no telebench image recorded in the state ${resolveStateDir(opts.state)} (its swe5g.build items name them); \`telebench images ls --all\` lists every telebench image of the engine`,
    );
  }
  console.log('image\tlayer\tlayer size\ttotal\tinstance');
  for (const r of rows) {
    // the name this state recorded, when the image also carries a registry tag
    const name = (mine && r.tags.find((t) => mine.has(t))) ?? r.name;
    console.log(`${name}\t${r.layer}\t${fmt(r.own)}\t${fmt(r.size)}\t${r.instance ?? ''}`);
  }
}

/** `telebench images prune`: removes telebench images no pending or validated instance needs. */
export async function imagesPrune(opts: {
  config?: string;
  state?: string;
  dryRun?: boolean;
}): Promise<void> {
  const s = settingsOf(opts.config);
  const docker = new DockerClient();
  await docker.ping();
  const keep = neededImages(resolveStateDir(opts.state));
  const list = await docker.listTelebenchImages();
  // instances first, then env, then base: a parent is only removable after its children
  const order = ['instance', 'env', 'base'];
  const candidates = list
    .filter((i) => order.includes(i.layer) && !i.tags.some((t) => keep.has(t)))
    .sort((a, b) => order.indexOf(a.layer) - order.indexOf(b.layer));
  let freed = 0;
  for (const img of candidates) {
    const name = localTag(img.tags) ?? img.id;
    if (opts.dryRun) {
      console.log(`would remove ${name}`);
      continue;
    }
    // every tag (a pushed image also carries its registry name): removing one tag of several
    // only untags, and the last removal deletes the image
    let r: { removed: boolean; error?: string } = { removed: false, error: 'no tag' };
    for (const t of img.tags.length > 0 ? img.tags : [img.id]) {
      r = await docker.remove(t);
      if (!r.removed) break;
    }
    console.log(r.removed ? `removed ${name}` : `kept ${name}: ${r.error}`);
  }
  const after = await docker.listTelebenchImages();
  const total = after.reduce((a, i) => a + i.size, 0);
  freed = list.reduce((a, i) => a + i.size, 0) - total;
  console.log(
    `kept ${keep.size} needed image(s); telebench images ${fmt(total)} (sum of image sizes, shared layers counted once per image) against a budget of ${s.disk_budget_gib} GiB; freed ${fmt(freed)}`,
  );
  if (total > s.disk_budget_gib * GiB)
    console.log('over budget: remaining images are needed by pending or validated instances');
}
