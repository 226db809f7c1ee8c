/**
 * bench/layers: instance layer / env layer size of real SWE-Bench 5G images (issue 21 goal: median
 * <= 0.10), read from the `swe5g.build` records of one or more state folders (a run of
 * `telebench run swe5g` on real history: free5GC, Open5GS). Sizes are Docker's own (`docker
 * image inspect` Size, recorded by swe5g.build as layer deltas). Printed per project: instances,
 * env layers (distinct), median / min / max of instance_layer / env_layer, median instance layer,
 * median env layer, and for C kept builds the median delta (files the instance layer writes).
 *
 *   npx tsx bench/layers.bench.ts STATE_DIR [STATE_DIR ...]
 *   (or TELEBENCH_BENCH_STATES=dir1:dir2 npx tsx bench/layers.bench.ts)
 * Without any state folder (`make bench` on a clean clone) it says nothing was measured, exit 0.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

interface BuiltRow {
  instance_id: string;
  images: { env: string };
  sizes: { env_layer: number; instance_layer: number };
  c_build?: { delta: { changed: number } };
}

const dirs = process.argv.slice(2).length
  ? process.argv.slice(2)
  : (process.env.TELEBENCH_BENCH_STATES ?? '').split(':').filter(Boolean);
if (dirs.length === 0) {
  // `make bench` on a clean clone has no real run to read: say so and let the other benches run
  // (bench/validate prints the fixture instances' layer sizes)
  console.log(
    'bench/layers: no state folder given (STATE_DIR arguments or TELEBENCH_BENCH_STATES): nothing measured. usage: npx tsx bench/layers.bench.ts STATE_DIR [STATE_DIR ...]',
  );
  process.exit(0);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const mb = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;

const byProject = new Map<string, BuiltRow[]>();
for (const dir of dirs) {
  const file = join(dir, 'state.db');
  if (!existsSync(file)) {
    console.error(`${dir}: no state.db (not a telebench state folder)`);
    process.exit(2);
  }
  const db = new Database(file, { readonly: true });
  const rows = db
    .prepare("SELECT output FROM items WHERE stage = 'swe5g.build' AND state = 'done'")
    .all() as { output: string }[];
  db.close();
  for (const r of rows) {
    const b = JSON.parse(r.output) as BuiltRow;
    const project = b.instance_id.split('__')[0]!;
    byProject.set(project, [...(byProject.get(project) ?? []), b]);
  }
}

console.log(
  '| project | instances | env layers | instance/env median | min | max | instance layer (median) | env layer (median) | C delta files (median) |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const [project, rows] of [...byProject].sort()) {
  const ok = rows.filter((r) => r.sizes.env_layer > 0);
  const ratios = ok.map((r) => r.sizes.instance_layer / r.sizes.env_layer);
  const deltas = rows.flatMap((r) => (r.c_build ? [r.c_build.delta.changed] : []));
  console.log(
    `| ${project} | ${rows.length} | ${new Set(rows.map((r) => r.images.env)).size} | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(3)} | ${Math.max(...ratios).toFixed(3)} | ${mb(median(ok.map((r) => r.sizes.instance_layer)))} | ${mb(median(ok.map((r) => r.sizes.env_layer)))} | ${deltas.length ? median(deltas) : '-'} |`,
  );
}
