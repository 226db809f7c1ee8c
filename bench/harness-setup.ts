/**
 * The set-up bench/validate and bench/grade share (duplicates report D2): the Docker client and
 * the offline base, a scratch state folder, the bench settings (small limits: the step timeout
 * only catches hangs), the three fixture instances (Go, C meson, Python) resolved and built
 * (warm images), and the bare container run both benches compare the harness against.
 *
 * Not a benchmark itself (scripts/bench.mjs runs `bench/*.bench.ts` only).
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
import type { EnvironmentsSettings } from '../stages/swe5g/environments-config.js';
import type { Resolved, TestGen } from '../stages/swe5g/types.js';
import { goFixture } from '../test/fixtures/repos/go-nil.js';
import { cFixture } from '../test/fixtures/repos/c-null.js';
import { pyFixture } from '../test/fixtures/repos/py-none.js';
import { ensureTestBase, resolveFixture, testSettings } from '../test/fixtures/repos/harness.js';

/** One fixture instance, resolved and built. */
export interface BenchInstance {
  /** `go`, `c-meson` or `python`. */
  name: string;
  res: Resolved;
  testgen: TestGen;
  built: Built;
}

/** What both benches work with. */
export interface BenchSetup {
  docker: DockerClient;
  executor: DockerExecutor;
  settings: EnvironmentsSettings;
  /** Scratch root (removed by {@link BenchSetup.cleanup}); `state` is the state folder in it. */
  root: string;
  state: string;
  instances: BenchInstance[];
  /**
   * One container, bare: created with the pipeline's limits, `files` copied in (the one overlay
   * writer), started, waited for, removed. No log blob, no parse.
   */
  bareRun: (image: string, command: string, files: Overlay) => Promise<void>;
  cleanup: () => void;
}

/**
 * Builds the offline base when missing, resolves and builds the three fixture instances.
 * @param name scratch folder prefix (`validate`, `grade`)
 * @param over settings over {@link testSettings} (limits: 60 s step timeout, 1 GiB)
 * @throws what Docker and the image build throw (no engine, build failure)
 */
export async function benchSetup(
  name: string,
  over: Record<string, unknown> = {},
): Promise<BenchSetup> {
  const docker = new DockerClient();
  await docker.ping();
  await ensureTestBase(docker);
  const root = mkdtempSync(join(tmpdir(), `telebench-bench-${name}-`));
  const state = join(root, 'state');
  const settings = testSettings({ limits: { timeout_s: 60, memory_mib: 1024 }, ...over });
  const instances: BenchInstance[] = [];
  for (const [label, fx] of [
    ['go', goFixture(join(root, 'src-go'), 'good')],
    ['c-meson', cFixture(join(root, 'src-c'))],
    ['python', pyFixture(join(root, 'src-py'))],
  ] as const) {
    const res = await resolveFixture(fx, state);
    const built = await buildInstanceImages(res, { docker, settings, stateDir: state });
    instances.push({ name: label, res, testgen: fx.testgen, built });
  }
  const bareRun = async (image: string, command: string, files: Overlay): Promise<void> => {
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
      await c.putArchive(tarFs.pack(dir) as unknown as NodeJS.ReadableStream, {
        path: '/testbed',
      });
      rmSync(dir, { recursive: true, force: true });
    }
    await c.start();
    await c.wait();
    await c.remove({ force: true });
  };
  return {
    docker,
    executor: new DockerExecutor(docker),
    settings,
    root,
    state,
    instances,
    bareRun,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * Runs `a` and `b` `rounds` times interleaved, the order alternating (the machine is shared:
 * minima are stabler than means), and returns each one's best wall time in ms.
 */
export async function bestOfInterleaved(
  rounds: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<{ a: number; b: number }> {
  let bestA = Infinity;
  let bestB = Infinity;
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      bestA = Math.min(bestA, await a());
      bestB = Math.min(bestB, await b());
    } else {
      bestB = Math.min(bestB, await b());
      bestA = Math.min(bestA, await a());
    }
  }
  return { a: bestA, b: bestB };
}
