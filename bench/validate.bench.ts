/**
 * bench/validate: with warm images, the wall time of the three validation steps as the pipeline
 * runs them (patches applied on the host, fresh limited container per step, log parsing, the
 * agreement check) over the wall time of the same test commands run bare in the same containers
 * (dockerode create/start/wait with the same files, nothing else). Goal: under 1.2. Also prints
 * each layer's size (instance layer against env layer).
 *
 * Run: `npx tsx bench/validate.bench.ts` (needs Docker and the offline base: `node scripts/setup.mjs`).
 */
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import tarFs from 'tar-fs';
import { DockerClient } from '../pipeline/providers/docker/client.js';
import { DockerExecutor } from '../pipeline/providers/docker/executor.js';
import { PINNED_ENV } from '../pipeline/providers/docker/recipes.js';
import { buildInstanceImages, type Built } from '../stages/swe5g/build/build.js';
import { overlayFor, testCommand, validateInstance } from '../stages/swe5g/validate/validate.js';
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

/** The same commands, bare: create, copy files, start, wait, remove. */
async function bare(res: Resolved, tg: TestGen, built: Built): Promise<number> {
  const dirs = built.image_recipe === 'go' ? res.test_dirs : 'all';
  const { command } = testCommand(
    built.image_recipe,
    built.image_recipe === 'python' ? ['tests'] : dirs,
    60,
    '',
  );
  const withTests = await overlayFor(built.source_dir, [
    ['test_patch', res.test_patch],
    ['f2p_test_patch', tg.f2p_test_patch],
  ]);
  const withFix = await overlayFor(built.source_dir, [
    ['patch', res.patch],
    ['test_patch', res.test_patch],
    ['f2p_test_patch', tg.f2p_test_patch],
  ]);
  const t0 = performance.now();
  for (const files of [{}, withTests, withFix, withFix, withFix] as Record<
    string,
    string | null
  >[]) {
    const c = await docker.docker.createContainer({
      Image: built.images.instance,
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
      for (const [rel, content] of Object.entries(files)) {
        if (content === null) continue;
        mkdirSync(dirname(join(dir, rel)), { recursive: true });
        writeFileSync(join(dir, rel), content);
      }
      await c.putArchive(tarFs.pack(dir) as unknown as NodeJS.ReadableStream, { path: '/testbed' });
      rmSync(dir, { recursive: true, force: true });
    }
    await c.start();
    await c.wait();
    await c.remove({ force: true });
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
  'bench/validate: 5 steps (parent_p2p, parent_f2p, fix_1..3) per instance, warm images, best of 3 interleaved runs, same container limits',
);
for (const r of rows) console.log(r);
console.log(`overall ratio pipeline/bare ${(sumPipe / sumBare).toFixed(3)} (goal < 1.2)`);
rmSync(root, { recursive: true, force: true });
