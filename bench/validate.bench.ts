/**
 * bench/validate: with warm images, the wall time of the three validation steps as the pipeline
 * runs them (patches applied on the host, fresh limited container per step, log parsing, the
 * agreement check) over the wall time of the same test commands run bare in the same containers
 * (dockerode create/start/wait with the same files and the same fresh runs, nothing else). Goal:
 * at most 1.1 (issue 22). Also prints each layer's size (instance layer against env layer).
 *
 * Run: `npx tsx bench/validate.bench.ts` (needs Docker and the offline base: `node scripts/setup.mjs`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tarFs from 'tar-fs';
import { DockerClient } from '../pipeline/providers/docker/client.js';
import { DockerExecutor } from '../pipeline/providers/docker/executor.js';
import { writeOverlay, type Overlay } from '../pipeline/providers/docker/overlay.js';
import { PINNED_ENV } from '../pipeline/providers/docker/recipes.js';
import { buildInstanceImages, type Built } from '../stages/swe5g/build/build.js';
import { validateInstance } from '../stages/swe5g/validate/validate.js';
import { overlayFor } from '../stages/swe5g/harness/apply.js';
import {
  selectTestDirs,
  stepCommand,
  testSpec,
  type TestSpec,
} from '../stages/swe5g/harness/spec.js';
import type { Resolved, TestGen } from '../stages/swe5g/types.js';
import { goFixture } from '../test/fixtures/repos/go-nil.js';
import { cFixture } from '../test/fixtures/repos/c-null.js';
import { pyFixture } from '../test/fixtures/repos/py-none.js';
import { ensureTestBase, resolveFixture, testSettings } from '../test/fixtures/repos/harness.js';

const docker = new DockerClient();
await docker.ping();
await ensureTestBase(docker);
const root = mkdtempSync(join(tmpdir(), 'telebench-bench-validate-'));
const state = join(root, 'state');
const settings = testSettings({ limits: { timeout_s: 60, memory_mib: 1024 } });

/**
 * One container, bare: create with the same limits, copy the files in (the one overlay writer),
 * start, wait, remove. Nothing else: no log blob, no parse.
 */
async function bareRun(image: string, command: string, files: Overlay): Promise<void> {
  const c = await docker.docker.createContainer({
    Image: image,
    Cmd: ['/bin/sh', '-c', command],
    WorkingDir: '/testbed',
    Env: Object.entries(PINNED_ENV).map(([k, v]) => `${k}=${v}`),
    NetworkDisabled: true,
    // the same limits as the pipeline's containers: only the harness work differs
    HostConfig: {
      NetworkMode: 'none',
      Memory: settings.limits.memory_mib * 2 ** 20,
      NanoCpus: Math.round(settings.limits.cpus * 1e9),
      PidsLimit: settings.limits.pids,
    },
  });
  if (Object.keys(files).length) {
    const dir = mkdtempSync(join(tmpdir(), 'bare-'));
    writeOverlay(dir, files);
    await c.putArchive(tarFs.pack(dir) as unknown as NodeJS.ReadableStream, { path: '/testbed' });
    rmSync(dir, { recursive: true, force: true });
  }
  await c.start();
  await c.wait();
  await c.remove({ force: true });
}

/** The harness's spec of a fixture instance (the same command validation runs). */
function specOf(res: Resolved, tg: TestGen, built: Built): TestSpec {
  return testSpec({
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
}

/**
 * The same steps, bare: parent_p2p and the fix runs with `test_repeats` fresh runs (processes in
 * one container for Go, containers otherwise), parent_f2p once.
 */
async function bare(res: Resolved, tg: TestGen, built: Built): Promise<number> {
  const spec = specOf(res, tg, built);
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
      await bareRun(built.images.instance, command, files);
  }
  return performance.now() - t0;
}

const fixtures = [
  ['go', goFixture(join(root, 'src'), 'good')],
  ['c-meson', cFixture(join(root, 'src'))],
  ['python', pyFixture(join(root, 'src'))],
] as const;
const rows: string[] = [];
let sumPipe = 0;
let sumBare = 0;
for (const [name, fx] of fixtures) {
  const res = await resolveFixture(fx, state);
  const built = await buildInstanceImages(res, { docker, settings, stateDir: state });
  // warm-up run of both (page cache, container start paths), then measured runs side by side
  await bare(res, fx.testgen, built);
  // interleaved, alternating order, best of 3 each (the machine is shared: minima are stabler)
  let pipe = Infinity;
  let b = Infinity;
  const runPipe = async (): Promise<void> => {
    const t0 = performance.now();
    await validateInstance(
      { resolved: res, testgen: fx.testgen, built },
      { executor: new DockerExecutor(docker), settings, saveLog: () => 'x' },
    );
    pipe = Math.min(pipe, performance.now() - t0);
  };
  const runBare = async (): Promise<void> => {
    b = Math.min(b, await bare(res, fx.testgen, built));
  };
  for (let i = 0; i < 3; i++) {
    if (i % 2 === 0) {
      await runPipe();
      await runBare();
    } else {
      await runBare();
      await runPipe();
    }
  }
  sumPipe += pipe;
  sumBare += b;
  const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;
  rows.push(
    `${name.padEnd(8)} pipeline ${(pipe / 1000).toFixed(2)} s  bare ${(b / 1000).toFixed(2)} s  ratio ${(pipe / b).toFixed(3)}  | base ${mib(built.sizes.base)}  env layer ${mib(built.sizes.env_layer)}  instance layer ${mib(built.sizes.instance_layer)}  instance/env ${built.sizes.env_layer >= 2 ** 20 ? (built.sizes.instance_layer / built.sizes.env_layer).toFixed(3) : 'n/a (empty env layer)'}`,
  );
}
console.log(
  `bench/validate: 5 steps (parent_p2p, parent_f2p, fix_1..3) per instance, ${settings.test_repeats} fresh runs in steps 1 and 3, warm images, best of 3 interleaved runs, same container limits`,
);
for (const r of rows) console.log(r);
console.log(`overall ratio pipeline/bare ${(sumPipe / sumBare).toFixed(3)} (goal <= 1.1)`);
rmSync(root, { recursive: true, force: true });
