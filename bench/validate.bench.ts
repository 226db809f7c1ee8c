/**
 * bench/validate: with warm images, the wall time of the validation steps as the pipeline runs
 * them (patches applied on the host, fresh limited container per step, log blob, parse, the
 * agreement check) over the wall time of the same test commands run bare in the same containers
 * (dockerode create/start/wait with the same files and the same fresh runs, nothing else). Goal:
 * at most 1.1 (issue 22). Also prints each layer's size (instance layer against env layer).
 *
 * Run: `npx tsx bench/validate.bench.ts` (needs Docker and the offline base: `node scripts/setup.mjs`).
 * `BENCH_ROUNDS` (default 2): interleaved rounds per instance; `BENCH_REPEATS` (default 2) fresh
 * runs of parent_p2p and the fix steps, `BENCH_FIX_RUNS` (default 1) fix steps.
 */
import { validateInstance } from '../stages/swe5g/validate/validate.js';
import { overlayFor } from '../stages/swe5g/harness/apply.js';
import { selectTestDirs, stepCommand, testSpec } from '../stages/swe5g/harness/spec.js';
import type { Overlay } from '../pipeline/providers/docker/overlay.js';
import { benchSetup, bestOfInterleaved, type BenchInstance } from './harness-setup.js';

const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
// the pipeline's defaults are 3 fresh runs and 3 fix runs (13 containers per C instance): at a
// load of 30 a meson container takes ~27 s, so the bench ran for over an hour and was cut short
// before printing a ratio; 2 fresh runs and 1 fix run keep every kind of step (fresh processes,
// fresh containers) at 5 containers per C instance (`BENCH_REPEATS`, `BENCH_FIX_RUNS`)
const setup = await benchSetup('validate', {
  test_repeats: Math.max(1, Number(process.env.BENCH_REPEATS ?? 2)),
  fix_runs: Math.max(1, Number(process.env.BENCH_FIX_RUNS ?? 1)),
});
const { settings, executor } = setup;

/**
 * The same steps, bare: parent_p2p and the fix runs with `test_repeats` fresh runs (processes in
 * one container for Go, containers otherwise), parent_f2p once. Returns the wall time in ms.
 */
async function bare({ res, testgen: tg, built }: BenchInstance): Promise<number> {
  const spec = testSpec({
    recipe: built.image_recipe,
    dirs: selectTestDirs({
      recipe: built.image_recipe,
      scope: 'touched',
      moduleDir: built.module_dir,
      sourceDirs: res.test_dirs,
      testPatches: [res.test_patch, tg.f2p_test_patch],
    }),
    moduleDir: built.module_dir,
    settings,
  });
  const withTests = await overlayFor(built.source_dir, [
    ['test_patch', res.test_patch],
    ['f2p_test_patch', tg.f2p_test_patch],
  ]);
  const withFix = await overlayFor(built.source_dir, [
    ['patch', res.patch],
    ['test_patch', res.test_patch],
    ['f2p_test_patch', tg.f2p_test_patch],
  ]);
  const steps: [Overlay, number][] = [
    [{}, settings.test_repeats],
    [withTests, 1],
    ...Array.from({ length: settings.fix_runs }, (): [Overlay, number] => [
      withFix,
      settings.test_repeats,
    ]),
  ];
  const t0 = performance.now();
  for (const [files, runs] of steps) {
    const command = stepCommand(spec, spec.fresh === 'process' ? runs : 1);
    for (let i = 0; i < (spec.fresh === 'container' ? runs : 1); i++)
      await setup.bareRun(built.images.instance, command, files);
  }
  return performance.now() - t0;
}

/** The pipeline's validation of one instance; returns the wall time in ms. */
async function pipeline(inst: BenchInstance): Promise<number> {
  const t0 = performance.now();
  await validateInstance(
    { resolved: inst.res, testgen: inst.testgen, built: inst.built },
    { executor, settings, saveLog: () => 'x' },
  );
  return performance.now() - t0;
}

const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;
const rows: string[] = [];
let sumPipe = 0;
let sumBare = 0;
for (const inst of setup.instances) {
  await bare(inst); // warm-up (page cache, container start paths)
  const best = await bestOfInterleaved(
    rounds,
    () => pipeline(inst),
    () => bare(inst),
  );
  sumPipe += best.a;
  sumBare += best.b;
  const s = inst.built.sizes;
  const envRatio =
    s.env_layer >= 2 ** 20
      ? (s.instance_layer / s.env_layer).toFixed(3)
      : 'n/a (env layer under 1 MiB)';
  const line = `${inst.name.padEnd(8)} pipeline ${(best.a / 1000).toFixed(2)} s  bare ${(best.b / 1000).toFixed(2)} s  ratio ${(best.a / best.b).toFixed(3)}  | base ${mib(s.base)}  env layer ${mib(s.env_layer)}  instance layer ${mib(s.instance_layer)}  instance/env ${envRatio}`;
  console.log(line); // as it comes: a run cut short still shows the instances measured
  rows.push(line);
}
console.log(
  `bench/validate: ${2 + settings.fix_runs} steps (parent_p2p, parent_f2p, fix_1..${settings.fix_runs}) per instance, ${settings.test_repeats} fresh runs in parent_p2p and the fix steps, warm images, best of ${rounds} interleaved runs, same container limits`,
);
for (const r of rows) console.log(r);
console.log(`overall ratio pipeline/bare ${(sumPipe / sumBare).toFixed(3)} (goal <= 1.1)`);
setup.cleanup();
