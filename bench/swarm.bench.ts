/**
 * bench/swarm: executor `swarm` against executor `docker` on the same machine, one run.
 * 1. Validation wall time (the three steps, five runs, of the C and Python fixtures) through
 *    `swarm` (single-node swarm of this engine, images from a local registry) over the same
 *    through `docker`, warm images, alternating per instance. Goal: <= 1.15 (the engine's cost).
 * 2. Registry pull time of an instance image relative to its size: an image made for the bench
 *    (a fresh 64 MiB layer on an instance image) is pushed, removed from the engine, and pulled
 *    back by digest; prints the pull rate relative to the image's size (MB/s), the rate of the new
 *    layer and how many of its layers the engine said it already held (not pulled again).
 *
 * 3. Optional, real instances: with `SWARM_BENCH_STATE=<state folder>` (and
 *    `SWARM_BENCH_CONFIG=<its config>`) of a swe5g run that validated instances (e.g.
 *    `config/examples/free5gc-nil-fixes.yaml`), the same one-at-a-time comparison on those
 *    instances (real free5GC Go packages: longer steps, so the engine's per-step cost weighs less).
 *
 * Run: `node --import tsx/esm bench/swarm.bench.ts` (not `npx tsx`: see scripts/bench.mjs; needs Docker, the offline base and Debian's
 * docker-registry: `node scripts/setup.mjs`; puts the engine in Swarm mode if it is not).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../pipeline/providers/docker/client.js';
import { DockerExecutor, type Executor } from '../pipeline/providers/docker/executor.js';
import { SwarmExecutor, swarmTasksPerNode } from '../pipeline/providers/docker/swarm.js';
import { pushImage } from '../pipeline/providers/docker/registry.js';
import { buildInstanceImages } from '../stages/swe5g/build/build.js';
import { validateInstance } from '../stages/swe5g/validate/validate.js';
import { cFixture } from '../test/fixtures/repos/c-null.js';
import { pyFixture } from '../test/fixtures/repos/py-none.js';
import { goFixture } from '../test/fixtures/repos/go-nil.js';
import type { Fixture } from '../test/fixtures/repos/builder.js';
import { ensureTestBase, resolveFixture, testSettings } from '../test/fixtures/repos/harness.js';
import { ensureSwarm, startRegistry } from '../test/fixtures/swarm.js';
import pLimit from 'p-limit';
import { openState } from '../pipeline/state.js';
import { loadConfigFile } from '../pipeline/config/load.js';
import { appConfigSchema } from '../stages/config.js';
import { swe5gSettings } from '../stages/swe5g/config.js';
import type { ValidateInput } from '../stages/swe5g/validate/validate.js';

const docker = new DockerClient();
await docker.ping();
await ensureTestBase(docker);
await ensureSwarm(docker);
const registry = await startRegistry(docker);
const root = mkdtempSync(join(tmpdir(), 'telebench-bench-swarm-'));
const state = join(root, 'state');
const settings = testSettings({ limits: { timeout_s: 120, memory_mib: 1024 } });

try {
  const fixtures: [string, Fixture][] = [
    ['c', cFixture(join(root, 'src'))],
    ['python', pyFixture(join(root, 'src'))],
    ['go', goFixture(join(root, 'src'), 'good')],
  ];
  const swarm = new SwarmExecutor(docker, { registry: registry.address });
  const dock = new DockerExecutor(docker);
  const limits = {
    cpus: settings.limits.cpus,
    memory: settings.limits.memory_mib * 2 ** 20,
  };
  type Ready = { name: string; validate: (ex: Executor) => Promise<number> };
  const ready: Ready[] = [];
  let instanceImage = '';
  for (const [name, fx] of fixtures) {
    const res = await resolveFixture(fx, state);
    const built = await buildInstanceImages(res, { docker, settings, stateDir: state });
    instanceImage = built.images.instance;
    await pushImage(docker, built.images.instance, registry.address); // warm, like a built instance
    ready.push({
      name,
      validate: async (ex) => {
        const t0 = performance.now();
        const v = await validateInstance(
          { resolved: res, testgen: fx.testgen, built },
          { executor: ex, settings, saveLog: (s) => s },
        );
        if (v.FAIL_TO_PASS.length === 0) throw new Error(`${name}: no FAIL_TO_PASS`);
        return performance.now() - t0;
      },
    });
  }

  // 1a. one instance at a time: the latency of a step, which the engine's task start adds to
  let tDocker = 0;
  let tSwarm = 0;
  for (const r of ready) {
    await r.validate(dock); // warm-up of the engine's caches for both
    const d = await r.validate(dock);
    const s = await r.validate(swarm);
    tDocker += d;
    tSwarm += s;
    console.log(
      `${r.name}: validation docker ${(d / 1000).toFixed(1)} s, swarm ${(s / 1000).toFixed(1)} s (${((s - d) / 5000).toFixed(2)} s more a step)`,
    );
  }
  console.log(
    `one instance at a time, swarm/docker: ${(tSwarm / tDocker).toFixed(2)} (${(tSwarm / 1000).toFixed(1)} s vs ${(tDocker / 1000).toFixed(1)} s, ${ready.map((r) => r.name).join(' + ')}, 5 steps each)`,
  );

  // 1a'. real instances of a swe5g state folder, one at a time, alternating which goes first
  if (process.env.SWARM_BENCH_STATE) {
    const realState = openState(process.env.SWARM_BENCH_STATE, { mode: 'read' });
    const realSettings = swe5gSettings(
      process.env.SWARM_BENCH_CONFIG
        ? loadConfigFile(process.env.SWARM_BENCH_CONFIG, appConfigSchema)
        : {},
    ).environments;
    const inputs = [...realState.store.items('swe5g.validate')]
      .filter((i) => i.state === 'done')
      .map((i) => [i.key, i.input as ValidateInput] as const);
    realState.close();
    if (inputs.length === 0)
      throw new Error(`no validated swe5g instance in ${process.env.SWARM_BENCH_STATE}`);
    let rDocker = 0;
    let rSwarm = 0;
    let steps = 0;
    for (const [i, [key, input]] of inputs.entries()) {
      await pushImage(docker, input.built.images.instance, registry.address);
      const once = async (ex: Executor): Promise<[number, number]> => {
        const t0 = performance.now();
        const v = await validateInstance(input, {
          executor: ex,
          settings: realSettings,
          saveLog: (x) => x,
        });
        if (v.FAIL_TO_PASS.length === 0) throw new Error(`${key}: no FAIL_TO_PASS`);
        return [performance.now() - t0, Object.keys(v.step_logs).length];
      };
      await once(dock); // warm-up
      const pair: [string, Executor][] = [
        ['docker', dock],
        ['swarm', swarm],
      ];
      if (i % 2 === 1) pair.reverse();
      const ms: Record<string, number> = {};
      let n = 0;
      for (const [name, ex] of pair) [ms[name], n] = await once(ex);
      const d = ms.docker!;
      const sw = ms.swarm!;
      rDocker += d;
      rSwarm += sw;
      steps += n;
      console.log(
        `${key}: validation docker ${(d / 1000).toFixed(1)} s, swarm ${(sw / 1000).toFixed(1)} s (${n} steps, ${((sw - d) / n / 1000).toFixed(2)} s more a step)`,
      );
    }
    console.log(
      `real instances (${inputs.length}, ${steps} steps), one at a time, swarm/docker: ${(rSwarm / rDocker).toFixed(2)} (goal <= 1.15; ${(rSwarm / 1000).toFixed(1)} s vs ${(rDocker / 1000).toFixed(1)} s)`,
    );
  }

  // 1b. the validate stage: every instance, twice, at the concurrency the stage uses under swarm
  // (the cluster's task budget for these limits), the same concurrency for docker; alternating
  // which executor goes first.
  const { budget } = await swarmTasksPerNode(docker, limits);
  const concurrency = Math.max(1, budget);
  const stage = async (ex: Executor): Promise<number> => {
    const limit = pLimit(concurrency);
    const t0 = performance.now();
    await Promise.all([...ready, ...ready].map((r) => limit(() => r.validate(ex))));
    return performance.now() - t0;
  };
  let sDocker = 0;
  let sSwarm = 0;
  for (const first of ['docker', 'swarm'] as const) {
    for (const ex of first === 'docker' ? [dock, swarm] : [swarm, dock]) {
      const t = await stage(ex);
      if (ex === dock) sDocker += t;
      else sSwarm += t;
    }
  }
  console.log(
    `validate stage (${ready.length * 2} validations, concurrency ${concurrency} = the swarm's task budget for ${limits.cpus} CPU / ${settings.limits.memory_mib} MiB steps), swarm/docker: ${(sSwarm / sDocker).toFixed(2)} (goal <= 1.15; ${(sSwarm / 2000).toFixed(1)} s vs ${(sDocker / 2000).toFixed(1)} s a pass, mean of 2)`,
  );

  // 1c. where a step's extra time goes: a trivial step through each executor, and the same
  // one-task service with no network at all (not an isolation the executor may use: a task with no
  // network is on the default bridge, with a route out), best of 5, alternating.
  const trivial = {
    step: 'bench',
    instance: { image: instanceImage, workdir: '/', sourceDir: root },
    files: {},
    command: 'echo hi',
    collect: [],
    limits: { memory: 256 * 2 ** 20, cpus: 1, pids: 64, timeoutMs: 60_000 },
  };
  const pushed = await pushImage(docker, instanceImage, registry.address);
  const bareService = async (): Promise<void> => {
    const svc = await docker.docker.createService({
      Name: `telebench-bench-${Date.now()}`,
      Labels: { 'telebench.bench': 'swarm' },
      TaskTemplate: {
        ContainerSpec: { Image: pushed, Command: ['/bin/sh', '-c', 'echo hi'] },
        RestartPolicy: { Condition: 'none' },
      },
      Mode: { Replicated: { Replicas: 1 } },
    } as never);
    try {
      for (;;) {
        const [t] = (await docker.docker.listTasks({ filters: { service: [svc.id] } })) as {
          Status?: { State?: string; Err?: string };
        }[];
        const st = t?.Status?.State;
        if (st === 'complete') return;
        if (st === 'failed' || st === 'rejected')
          throw new Error(`bare task ${st}: ${t?.Status?.Err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await docker.docker.getService(svc.id).remove();
    }
  };
  const best: Record<string, number> = { docker: Infinity, swarm: Infinity, bare: Infinity };
  for (let i = 0; i < 5; i++) {
    for (const [k, f] of [
      ['docker', () => dock.run(trivial)],
      ['swarm', () => swarm.run(trivial)],
      ['bare', bareService],
    ] as const) {
      const t0 = performance.now();
      await f();
      best[k] = Math.min(best[k]!, performance.now() - t0);
    }
  }
  console.log(
    `a trivial step (best of 5): docker ${best.docker!.toFixed(0)} ms, swarm ${best.swarm!.toFixed(0)} ms (${(best.swarm! / best.docker!).toFixed(2)}x); a bare one-task service with no network ${best.bare!.toFixed(0)} ms: the executor's own internal overlay network, result frame and clean-up cost ~${(best.swarm! - best.bare!).toFixed(0)} ms of the ${(best.swarm! - best.docker!).toFixed(0)} ms more`,
  );

  // 2. pull time of an instance image with one new 64 MiB layer
  const ctx = mkdtempSync(join(tmpdir(), 'telebench-bench-pull-'));
  writeFileSync(
    join(ctx, 'Dockerfile'),
    `FROM ${instanceImage}\nRUN head -c 67108864 /dev/urandom > /bench-layer\n`,
  );
  const tag = `telebench-bench-pull:${Date.now()}`;
  await docker.build(ctx, tag, { 'telebench.bench': 'swarm' });
  const size = (await docker.size(tag)) ?? 0;
  const ref = await pushImage(docker, tag, registry.address);
  await docker.docker.getImage(tag).remove();
  await docker.docker.getImage(ref.split('@')[0]!).remove();
  let already = 0;
  let pulled = 0;
  const t0 = performance.now();
  const stream = await docker.docker.pull(ref);
  await new Promise<void>((res, rej) =>
    docker.docker.modem.followProgress(
      stream,
      (err: Error | null) => (err ? rej(err) : res()),
      (ev: { status?: string }) => {
        if (ev.status === 'Already exists') already++;
        if (ev.status === 'Pull complete') pulled++;
      },
    ),
  );
  const ms = performance.now() - t0;
  const newBytes = 64 * 2 ** 20;
  const secs = ms / 1000;
  console.log(
    `registry pull of ${ref.split('@')[0]}: ${secs.toFixed(2)} s for an image of ${(size / 1e6).toFixed(0)} MB: ${(size / 1e6 / secs).toFixed(0)} MB/s relative to the image size; ${pulled} layer(s) pulled, ${(newBytes / 1e6 / secs).toFixed(0)} MB/s of the new ${(newBytes / 1e6).toFixed(0)} MB layer; ${already} layer(s) already held (not pulled again)`,
  );
  await docker.docker
    .getImage(ref)
    .remove()
    .catch(() => undefined);
} finally {
  await registry.stop();
}
