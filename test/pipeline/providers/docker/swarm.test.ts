import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import {
  DockerExecutor,
  type Executor,
  type StepSpec,
} from '../../../../pipeline/providers/docker/executor.js';
import { overlayFile } from '../../../../pipeline/providers/docker/overlay.js';
import { buildInstanceImages } from '../../../../stages/swe5g/build/build.js';
import { validateInstance, type Validated } from '../../../../stages/swe5g/validate/validate.js';
import { goFixture, GO_F2P, GO_P2P } from '../../../fixtures/repos/go-nil.js';
import { cFixture, C_F2P, C_P2P } from '../../../fixtures/repos/c-null.js';
import { pyFixture, PY_F2P, PY_P2P } from '../../../fixtures/repos/py-none.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import {
  SwarmExecutor,
  SWARM_LABEL,
  readFrame,
  swarmTasksPerNode,
} from '../../../../pipeline/providers/docker/swarm.js';
import { pushImage, registryName } from '../../../../pipeline/providers/docker/registry.js';
import { buildOnNode } from '../../../../pipeline/providers/docker/swarm-build.js';
import { ensureTestBase, resolveFixture, testSettings } from '../../../fixtures/repos/harness.js';
import {
  ensureSwarm,
  ensureWorkerImage,
  execIn,
  freePort,
  setAvailability,
  startRegistry,
  startWorker,
  type LocalRegistry,
  type SwarmWorker,
} from '../../../fixtures/swarm.js';
import { TelebenchError } from '../../../../pipeline/errors.js';

const docker = new DockerClient();
const shq = (x: string): string => `'${x.replace(/'/g, `'\\''`)}'`;
let image: string;
let registry: LocalRegistry;

const spec = (command: string, over: Partial<StepSpec> = {}): StepSpec => ({
  step: 'probe',
  instance: { image, workdir: '/testbed', sourceDir: '' },
  files: {},
  command,
  collect: [],
  limits: { memory: 256 * 2 ** 20, cpus: 0.5, pids: 64, timeoutMs: 60_000 },
  ...over,
});

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  await ensureSwarm(docker);
  registry = await startRegistry(docker);
  image = testSettings().offline.rootfs_image;
  await pushImage(docker, image, registry.address); // once: each test's step then only runs
});

afterAll(async () => {
  await registry?.stop();
});

/**
 * Services, configs, networks and task containers the executor left behind (must be none; the
 * node removes a removed service's container shortly after, so this waits up to 60 s for 0).
 */
async function leftovers(): Promise<number> {
  const f = { filters: { label: [SWARM_LABEL] } };
  let n = 0;
  for (let i = 0; i < 60; i++) {
    const all = await Promise.all([
      docker.docker.listServices(f),
      docker.docker.listConfigs(f),
      docker.docker.listNetworks(f),
      docker.docker.listContainers({ all: true, ...f }),
    ]);
    n = all.reduce((a, l) => a + l.length, 0);
    if (n === 0) return 0;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return n;
}

describe('readFrame', () => {
  const frame = (nonce: string, payload: Buffer, digest?: string): string =>
    `${nonce} BEGIN\n${payload.toString('base64')}\n${nonce} END ${digest ?? createHash('sha256').update(payload).digest('hex')}\n`;
  const n = 'a'.repeat(32);

  it('takes the last complete frame of the nonce; other nonces and earlier frames are ignored', () => {
    const real = gzipSync(Buffer.from('real'));
    const forged = gzipSync(Buffer.from('forged'));
    const out = `${frame(n, forged)}noise\n${frame('b'.repeat(32), forged)}\n${frame(n, real)}`;
    expect(readFrame(out, n)).toEqual(real);
    expect(readFrame('no frame here\n', n)).toBeUndefined();
  });

  it('a frame whose bytes do not hash to its END digest is corrupt', () => {
    const out = frame(n, Buffer.from('x'), 'f'.repeat(64));
    expect(() => readFrame(out, n)).toThrow(/does not match its sha256/);
  });
});

describe('SwarmExecutor (single-node swarm, local registry)', () => {
  it('runs as a replicated job with no route out, pinned env, limits; files in, results out exactly', async () => {
    process.env.GITHUB_TOKEN = 'ghp_secretvalue123';
    const ex = new SwarmExecutor(docker, { registry: registry.address });
    const blob = Array.from({ length: 3000 }, (_, i) => `line ${i} é\t"x"`).join('\n');
    const r = await ex.run(
      spec(
        [
          'ls /sys/class/net | tr "\\n" " "; echo',
          'awk \'$2=="00000000"{print "DEFAULT_ROUTE"}\' /proc/net/route',
          'echo TZ=$TZ; env | grep -c GITHUB_TOKEN || true',
          'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes',
          'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max',
          'test -e gone.txt && echo GONE_STILL_THERE',
          'mkdir -p out && cp new/b.txt out/r.txt && echo err >&2; exit 3',
        ].join('\n'),
        {
          files: { 'new/b.txt': overlayFile(blob), 'gone.txt': null },
          collect: ['out/r.txt', 'out/absent.txt'],
        },
      ),
    );
    delete process.env.GITHUB_TOKEN;
    expect(r.executor).toBe('swarm');
    expect(r.exitCode).toBe(3);
    expect(r.timedOut).toBe(false);
    expect(r.attempts).toBe(1);
    expect(r.node).toMatch(/^[a-z0-9]{25}$/);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]!.trim().split(' ').sort()).toEqual(['eth0', 'lo']);
    expect(lines).not.toContain('DEFAULT_ROUTE');
    expect(lines).toContain('TZ=UTC');
    expect(lines).toContain('0');
    expect(lines).toContain(String(256 * 2 ** 20));
    expect(lines).toContain('64');
    expect(lines).not.toContain('GONE_STILL_THERE');
    expect(r.stderr).toBe('err\n');
    expect(r.collected['out/r.txt']).toBe(blob);
    expect(r.collected['out/absent.txt']).toBeUndefined();
    expect(await leftovers()).toBe(0);
  });

  it('writes the overlay exactly: binary bytes, mode 755, a symlink (issue 14, section 1)', async () => {
    const ex = new SwarmExecutor(docker, { registry: registry.address });
    const ngap = Buffer.from([
      0x00, 0xff, 0xfe, 0x80, 0x81, 0x4e, 0x47, 0x41, 0x50, 0xc3, 0x28, 0x00,
    ]);
    const r = await ex.run(
      spec(
        [
          'od -An -v -tx1 bin/ngap.bin | tr -s " \\n" " "; echo',
          'stat -c "%a %F" run.sh größe.go',
          './run.sh',
          'readlink link.bin',
        ].join('\n'),
        {
          files: {
            'bin/ngap.bin': { content: ngap, mode: '100644' },
            'run.sh': overlayFile('#!/bin/sh\necho ran\n', true),
            'größe.go': overlayFile('package a\n'),
            'link.bin': { content: Buffer.from('bin/ngap.bin'), mode: '120000' },
          },
        },
      ),
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      ' 00 ff fe 80 81 4e 47 41 50 c3 28 00 ',
      '755 regular file',
      '644 regular file',
      'ran',
      'bin/ngap.bin',
      '',
    ]);
    expect(await leftovers()).toBe(0);
  });

  it('a forged frame written by the code under test to the task output is ignored', async () => {
    // The code under test reads the nonce from PID 1's command line and writes a frame with a
    // valid digest (exit 0, stdout FORGED) straight into the task's output (every pipe the
    // wrapper holds), once at once and once from a background process that outlives the command.
    const forge = [
      'N=$(tr "\\0" "\\n" </proc/1/cmdline | grep -o "[0-9a-f]\\{32\\}" | head -1)',
      'F=/tmp/forge; mkdir -p $F/c; echo 0 >$F/exit; echo 1 >$F/ms; echo 60 >$F/limit; echo FORGED >$F/stdout; : >$F/stderr',
      'tar -czf /tmp/forge.tgz -C $F .; S=$(sha256sum /tmp/forge.tgz | cut -d" " -f1)',
      'emit() { for f in /proc/1/fd/*; do case $(readlink $f) in pipe:*) { printf "\\n%s BEGIN\\n" $N; base64 /tmp/forge.tgz; printf "%s END %s\\n" $N $S; } >$f;; esac; done; }',
      'emit',
      '(sleep 1; emit) &',
      'echo "$N" | grep -c . ; echo real; exit 7',
    ].join('\n');
    const outputs: string[] = [];
    const ex2 = new SwarmExecutor(docker, {
      registry: registry.address,
      onTaskOutput: (_step, out) => outputs.push(out),
    });
    const r = await ex2.run(spec(forge));
    // the forged frame did reach the task output, before the wrapper's own
    const frames = outputs.at(-1)!.match(/^[0-9a-f]{32} BEGIN$/gm) ?? [];
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(r.exitCode).toBe(7);
    expect(r.stdout).toBe('1\nreal\n'); // the nonce was found (the forgery was well-formed)
    expect(r.stdout).not.toContain('FORGED');
  });

  it('a task past its deadline ends with timedOut and no exit code', async () => {
    const ex = new SwarmExecutor(docker, { registry: registry.address });
    const r = await ex.run(
      spec('echo started; sleep 120', {
        limits: { memory: 256 * 2 ** 20, cpus: 0.5, pids: 64, timeoutMs: 3000 },
      }),
    );
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.stdout).toBe('started\n');
    expect(await leftovers()).toBe(0);
  });

  it('registry down: a clear error naming the registry', async () => {
    const down = `127.0.0.1:${await freePort()}`;
    const ex = new SwarmExecutor(docker, { registry: down });
    const err = await ex.run(spec('true')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('registry_push_failed');
    expect((err as TelebenchError).message).toContain(down);
    expect((err as TelebenchError).message).toContain('swe5g.environments.swarm.registry');
  });

  it('a node without the image pulls it from the registry', async () => {
    // An image of its own (a layer on the rootfs) so the test may delete it from the engine.
    const ctx = mkdtempSync(join(tmpdir(), 'telebench-swarm-img-'));
    const marker = `pulled-${Date.now()}`;
    writeFileSync(join(ctx, 'Dockerfile'), `FROM ${image}\nRUN echo ${marker} > /marker\n`);
    const tag = `telebench-swarmtest:${marker}`;
    await docker.build(ctx, tag, { 'telebench.test': 'swarm' });
    const ref = await pushImage(docker, tag, registry.address);
    expect(ref).toMatch(/@sha256:[0-9a-f]{64}$/);
    // the engine (the only node) forgets the image: tags and the digest reference
    await docker.docker.getImage(tag).remove();
    await docker.docker.getImage(registryName(registry.address, tag)).remove();
    expect(await docker.hasImage(ref)).toBe(false);
    const ex = new SwarmExecutor(docker, { registry: registry.address });
    const r = await ex.run({
      ...spec('cat /marker'),
      instance: { image: tag, workdir: '/', sourceDir: '' },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`${marker}\n`);
    expect(await docker.hasImage(ref)).toBe(true); // pulled by the node
    await docker.docker
      .getImage(ref)
      .remove()
      .catch(() => undefined);
  });

  it('a node that leaves mid-step (drained): the step runs again and comes back once', async () => {
    const self = await ensureSwarm(docker);
    const setAvailability = async (availability: 'active' | 'drain'): Promise<void> => {
      const node = docker.docker.getNode(self);
      const info = (await node.inspect()) as { Version: { Index: number }; Spec: object };
      await node.update({ version: info.Version.Index, ...info.Spec, Availability: availability });
    };
    const logs: string[] = [];
    const ex = new SwarmExecutor(docker, { registry: registry.address, log: (m) => logs.push(m) });
    const p = ex.run(spec('echo start; sleep 15; echo done'));
    const runningTasks = async (): Promise<number> => {
      const services = await docker.docker.listServices({ filters: { label: [SWARM_LABEL] } });
      if (!services.length) return 0;
      const tasks = (await docker.docker.listTasks({
        filters: { service: services.map((x) => x.ID) },
      })) as { Status: { State: string } }[];
      return tasks.filter((t) => t.Status.State === 'running').length;
    };
    for (let i = 0; i < 600 && (await runningTasks()) === 0; i++)
      await new Promise((r) => setTimeout(r, 500));
    await setAvailability('drain');
    try {
      for (let i = 0; i < 600 && logs.length === 0; i++)
        await new Promise((r) => setTimeout(r, 500));
    } finally {
      await setAvailability('active');
    }
    const r = await p;
    expect(logs[0]).toMatch(/left during attempt 1 .*running it again elsewhere/);
    expect(r.attempts).toBe(2);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('start\ndone\n');
    expect(await leftovers()).toBe(0);
  });

  it("a killed coordinator's leftovers (ended service, its config and network) are removed before the next executor's first step; a running step is not", async () => {
    // what kill -9 of a coordinator mid-step leaves: a labelled service whose task ended, with its
    // overlay config and internal network; and another coordinator's step, still running
    const labelled = (id: string) => ({ [SWARM_LABEL]: id, 'telebench.step': 'probe' });
    const ended = 'telebench-probe-leftover000';
    const live = 'telebench-probe-running0000';
    const cfg = await docker.docker.createConfig({
      Name: `${ended}-overlay-0`,
      Labels: labelled(ended),
      Data: Buffer.from('x').toString('base64'),
    });
    const net = await docker.docker.createNetwork({
      Name: ended,
      Driver: 'overlay',
      Internal: true,
      Labels: labelled(ended),
    });
    const service = (id: string, command: string) =>
      docker.docker.createService({
        Name: id,
        Labels: labelled(id),
        TaskTemplate: {
          ContainerSpec: { Image: image, Command: ['/bin/sh', '-c', command] },
          RestartPolicy: { Condition: 'none' },
        },
        Mode: { Replicated: { Replicas: 1 } },
      } as never);
    const endedSvc = await service(ended, 'true');
    const liveSvc = await service(live, 'sleep 600');
    const state = async (svc: string) =>
      (
        (await docker.docker.listTasks({ filters: { service: [svc] } })) as {
          Status: { State: string };
        }[]
      )[0]?.Status.State;
    // hang guards only, sized for load 30
    for (let i = 0; i < 600 && (await state(endedSvc.id)) !== 'complete'; i++)
      await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 600 && (await state(liveSvc.id)) !== 'running'; i++)
      await new Promise((r) => setTimeout(r, 500));
    expect(await state(liveSvc.id)).toBe('running');

    const logs: string[] = [];
    const young = new SwarmExecutor(docker, {
      registry: registry.address,
      log: (m) => logs.push(m),
    });
    // ended just now: younger than the default 10 minutes, so kept
    expect(await young.reapLeftovers(600_000)).toEqual([]);
    // the next executor's first step removes what ended (threshold 0 stands in for 10 minutes)
    const ex = new SwarmExecutor(docker, {
      registry: registry.address,
      reapAfterMs: 1,
      log: (m) => logs.push(m),
    });
    const r = await ex.run(spec('echo after'));
    expect(r.stdout).toBe('after\n');
    expect(logs.join('\n')).toMatch(
      /removed 1 service\(s\) an earlier, killed run left .*leftover000/,
    );
    const services = (await docker.docker.listServices({
      filters: { label: [SWARM_LABEL] },
    })) as { ID: string }[];
    expect(services.map((x) => x.ID)).toEqual([liveSvc.id]);
    await expect(docker.docker.getConfig(cfg.id).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
    await expect(docker.docker.getNetwork(net.id).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
    await docker.docker.getService(liveSvc.id).remove();
    expect(await leftovers()).toBe(0);
  });

  it('status: tasks per node and the cluster task budget', async () => {
    const { nodes, budget } = await swarmTasksPerNode(docker, { cpus: 0.5, memory: 256 * 2 ** 20 });
    expect(nodes.length).toBeGreaterThanOrEqual(1);
    const self = nodes.find((n) => n.state === 'ready');
    expect(self!.cpus).toBeGreaterThan(0);
    expect(budget).toBeGreaterThanOrEqual(Math.floor(self!.cpus / 0.5));
  });
});

/** The steps executor docker runs for one Go instance (validate.test.ts asserts the same list). */
const DOCKER_STEPS = ['parent_p2p', 'fix_1', 'fix_2', 'fix_3'];
/**
 * The same for a runner whose repeats are fresh containers (C, Python: the harness runs each
 * repeated step `test_repeats` = 3 times, logs `<step>_run2`, `<step>_run3`; Go repeats are fresh
 * `go test` processes inside one step).
 */
const FRESH_CONTAINER_STEPS = DOCKER_STEPS.flatMap((s) => [s, `${s}_run2`, `${s}_run3`]);

/** candidate -> resolved -> built -> validated with `executor` (SkipItem message on failure). */
async function validateWith(fx: Fixture, executor: Executor, state: string): Promise<Validated> {
  // a generous step timeout: meson compiles slowly on a loaded 2-core machine
  const settings = testSettings({
    limits: { timeout_s: 300, memory_mib: 1024, cpus: 1, pids: 512 },
  });
  const res = await resolveFixture(fx, state);
  const built = await buildInstanceImages(res, { docker, settings, stateDir: state });
  return validateInstance(
    { resolved: res, testgen: fx.testgen, built },
    { executor, settings, saveLog: (step) => `digest-${step}` },
  );
}

/**
 * Executor swarm gives what executor docker gives. Executor docker's results for these very
 * fixtures (FAIL_TO_PASS, PASS_TO_PASS, the step names) are asserted against the same
 * constants in test/stages/swe5g/validate/validate.test.ts, so this file does not run the docker
 * validation again (it halved this describe's time): swarm = the constants = docker.
 */
describe('swe5g.validate through executor swarm = through docker', () => {
  const root = mkdtempSync(join(tmpdir(), 'telebench-swarm-validate-'));
  const state = join(root, 'state');
  it.each([
    ['C (meson)', () => cFixture(join(root, 'src')), [C_F2P], [C_P2P], FRESH_CONTAINER_STEPS],
    [
      'Python (pytest)',
      () => pyFixture(join(root, 'src')),
      [PY_F2P],
      [PY_P2P],
      FRESH_CONTAINER_STEPS,
    ],
    [
      'Go (go test -json)',
      () => goFixture(join(root, 'src'), 'good'),
      [GO_F2P],
      GO_P2P,
      DOCKER_STEPS,
    ],
  ] as const)('%s: same FAIL_TO_PASS / PASS_TO_PASS', async (_name, fx, f2p, p2p, steps) => {
    const viaSwarm = await validateWith(
      fx(),
      new SwarmExecutor(docker, { registry: registry.address }),
      state,
    );
    expect(viaSwarm.executor).toBe('swarm');
    expect(viaSwarm.FAIL_TO_PASS).toEqual([...f2p]);
    expect(viaSwarm.PASS_TO_PASS).toEqual([...p2p]);
    expect(Object.keys(viaSwarm.step_logs)).toEqual(steps);
  });
});

/** The telebench step tasks of the swarm (node, state). */
async function stepTasks(): Promise<{ NodeID?: string; Status: { State: string } }[]> {
  const services = await docker.docker.listServices({ filters: { label: [SWARM_LABEL] } });
  if (!services.length) return [];
  return (await docker.docker.listTasks({
    filters: { service: services.map((x) => x.ID) },
  })) as { NodeID?: string; Status: { State: string } }[];
}

describe('two nodes: a worker engine joined to the swarm', () => {
  let worker: SwarmWorker | undefined;
  let self = '';
  beforeAll(async () => {
    self = await ensureSwarm(docker);
    worker = await startWorker(docker, image, registry);
  });
  afterAll(async () => {
    await setAvailability(docker, self, 'active');
    await worker?.remove();
  });

  it('a step placed on the worker pulls the image there and returns its structured results exactly', async () => {
    const w = worker!;
    // go test -json lines, a JUnit XML report and a meson testlog, byte for byte
    const goJson = [
      '{"Action":"run","Package":"example.com/amf","Test":"TestN2"}',
      '{"Action":"output","Package":"example.com/amf","Test":"TestN2","Output":"--- PASS: TestN2 (0.01s)\\n"}',
      '{"Action":"pass","Package":"example.com/amf","Test":"TestN2","Elapsed":0.01}',
    ].join('\n');
    const junit = `<?xml version="1.0"?>\n<testsuite name="smf" tests="2"><testcase name="test_pdu_é"/><testcase name="test_qos"><failure message="x &amp; y"/></testcase></testsuite>\n`;
    const meson = '{"name": "nas", "result": "OK", "duration": 0.2}\n';
    const s = spec(
      [
        `printf '%s\\n' ${shq(goJson)}`,
        `printf '%s' ${shq(junit)} > report.xml`,
        `mkdir -p build/meson-logs && printf '%s' ${shq(meson)} > build/meson-logs/testlog.json`,
        'echo warn >&2; exit 1',
      ].join('\n'),
      {
        instance: { image, workdir: '/tmp', sourceDir: '' },
        collect: ['report.xml', 'build/meson-logs/testlog.json'],
      },
    );
    await setAvailability(docker, w.nodeId, 'active');
    let r;
    try {
      r = await new SwarmExecutor(docker, {
        registry: registry.address,
        constraints: [`node.id==${w.nodeId}`],
      }).run(s);
    } finally {
      await setAvailability(docker, w.nodeId, 'pause');
    }
    expect(r.node).toBe(w.nodeId);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe(`${goJson}\n`);
    expect(r.stderr).toBe('warn\n');
    expect(r.collected['report.xml']).toBe(junit);
    expect(r.collected['build/meson-logs/testlog.json']).toBe(meson);
    // the same step through executor docker on this engine gives the same bytes
    const local = await new DockerExecutor(docker).run(s);
    expect([r.exitCode, r.stdout, r.stderr, r.collected]).toEqual([
      local.exitCode,
      local.stdout,
      local.stderr,
      local.collected,
    ]);
    // the worker's engine did not hold the image before: it pulled it from the registry
    const ref = await pushImage(docker, image, registry.address);
    const held = await execIn(w.container, [
      'docker',
      'image',
      'inspect',
      '--format',
      '{{.Id}}',
      ref,
    ]);
    expect(held.code).toBe(0);
    expect(await leftovers()).toBe(0);
  });

  it('builds on the worker (issue 31): the node builds and pushes, the coordinator pulls it back; a failing build names the node', async () => {
    const w = worker!;
    const hostname = (
      (await docker.docker.getNode(w.nodeId).inspect()) as { Description: { Hostname: string } }
    ).Description.Hostname;
    // the builder: any image with sh, tar and the docker CLI; the worker's own image has them
    const builderImage = await ensureWorkerImage(docker, image);
    const ctx = mkdtempSync(join(tmpdir(), 'telebench-nodebuild-'));
    const token = createHash('sha256').update(`${Date.now()}-${Math.random()}`).digest('hex');
    writeFileSync(join(ctx, 'f'), `payload ${token}\n`);
    writeFileSync(
      join(ctx, 'Dockerfile'),
      `FROM ${image}\nCOPY f /testbed/f\nRUN sed 's/payload/built/' /testbed/f > /testbed/g\n`,
    );
    const tag = `telebench-instance:nodebuild-${token.slice(0, 16)}`;
    const ex = new SwarmExecutor(docker, {
      registry: registry.address,
      constraints: [`node.id==${w.nodeId}`],
    });
    const opts = {
      registry: registry.address,
      builderImage,
      cpus: 0.5,
      memoryBytes: 512 * 2 ** 20,
      timeoutMs: 600_000,
    };
    await setAvailability(docker, w.nodeId, 'active');
    try {
      expect(await docker.hasImage(tag)).toBe(false);
      const nb = await buildOnNode(docker, ex, ctx, tag, { 'telebench.layer': 'instance' }, opts);
      // built by the worker's engine (its hostname, by Swarm's template), which holds the image
      expect(nb.node).toBe(hostname);
      expect(nb.ref).toMatch(
        new RegExp(
          `^${registry.address}/telebench-instance:nodebuild-[0-9a-f]{16}@sha256:[0-9a-f]{64}$`,
        ),
      );
      const held = await execIn(w.container, [
        'docker',
        'image',
        'inspect',
        '--format',
        '{{index .Config.Labels "telebench.built_on"}}',
        registryName(registry.address, tag),
      ]);
      expect([held.code, held.output.trim()]).toEqual([0, hostname]);
      // pulled back here under its own name, with the recipe's labels and the built content
      const info = await docker.inspect(tag);
      expect(info?.Config?.Labels?.['telebench.layer']).toBe('instance');
      expect(info?.Config?.Labels?.['telebench.built_on']).toBe(hostname);
      const r = await new DockerExecutor(docker).run(
        spec('cat /testbed/g', { instance: { image: tag, workdir: '/', sourceDir: '' } }),
      );
      expect(r.stdout).toBe(`built ${token}\n`);
      // a build that fails on the node: the error names the image and the node, with the log
      writeFileSync(join(ctx, 'Dockerfile'), `FROM ${image}\nRUN echo broken-recipe >&2; exit 3\n`);
      const bad = `telebench-instance:nodebuild-bad-${token.slice(0, 12)}`;
      const err = await buildOnNode(docker, ex, ctx, bad, {}, opts).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TelebenchError);
      expect((err as TelebenchError).code).toBe('image_build_failed');
      expect((err as TelebenchError).message).toContain(`on swarm node ${w.nodeId}`);
      expect((err as TelebenchError).message).toContain('broken-recipe');
      expect(await docker.hasImage(bad)).toBe(false);
    } finally {
      await setAvailability(docker, w.nodeId, 'pause');
      await docker.docker
        .getImage(tag)
        .remove()
        .catch(() => undefined);
    }
    expect(await leftovers()).toBe(0);
  });

  it('swe5g.build with swarm.builds.on nodes: every layer of a Go instance is built on the worker, then validates here', async () => {
    const w = worker!;
    const hostname = (
      (await docker.docker.getNode(w.nodeId).inspect()) as { Description: { Hostname: string } }
    ).Description.Hostname;
    const root = mkdtempSync(join(tmpdir(), 'telebench-nodebuild-stage-'));
    const state = join(root, 'state');
    const fx = goFixture(join(root, 'src'), 'good');
    const res = await resolveFixture(fx, state);
    // a prefix of its own: no layer of this recipe exists yet, so each one is built now
    const prefix = `tbnode${createHash('sha256').update(root).digest('hex').slice(0, 8)}`;
    const settings = testSettings({
      executor: 'swarm',
      image_prefix: prefix,
      swarm: {
        registry: registry.address,
        constraints: [`node.id==${w.nodeId}`],
        builds: { on: 'nodes', builder_image: await ensureWorkerImage(docker, image), cpus: 0.5 },
      },
    });
    const logs: string[] = [];
    await setAvailability(docker, w.nodeId, 'active');
    let built;
    try {
      built = await buildInstanceImages(res, {
        docker,
        settings,
        stateDir: state,
        log: (m) => logs.push(m),
      });
    } finally {
      await setAvailability(docker, w.nodeId, 'pause');
    }
    for (const layer of ['base', 'env', 'instance'] as const) {
      const name = built.images[layer];
      expect(name.startsWith(`${prefix}-`)).toBe(true);
      expect(logs).toContain(`built ${layer} image ${name} on swarm node ${hostname}`);
      expect((await docker.inspect(name))?.Config?.Labels?.['telebench.built_on']).toBe(hostname);
    }
    // the pulled-back images are the instance as a coordinator build makes it: it validates
    const v = await validateInstance(
      { resolved: res, testgen: fx.testgen, built },
      {
        executor: new DockerExecutor(docker),
        settings: testSettings(),
        saveLog: (step) => `digest-${step}`,
      },
    );
    expect(v.FAIL_TO_PASS).toEqual([GO_F2P]);
    for (const layer of ['instance', 'env', 'base'] as const)
      await docker.docker
        .getImage(built.images[layer])
        .remove({ force: true })
        .catch(() => undefined);
  });

  it('the worker stops mid-step: the step runs again on the manager and comes back once', async () => {
    const w = worker!;
    const logs: string[] = [];
    const ex = new SwarmExecutor(docker, { registry: registry.address, log: (m) => logs.push(m) });
    // the first attempt may only go to the worker: the manager takes no new task meanwhile
    await setAvailability(docker, self, 'pause');
    await setAvailability(docker, w.nodeId, 'active');
    let p: Promise<Awaited<ReturnType<SwarmExecutor['run']>>> | undefined;
    try {
      p = ex.run(spec('echo start; sleep 20; echo done'));
      const onWorker = async (): Promise<boolean> =>
        (await stepTasks()).some((t) => t.NodeID === w.nodeId && t.Status.State === 'running');
      for (let i = 0; i < 1200 && !(await onWorker()); i++)
        await new Promise((res) => setTimeout(res, 250));
      expect(await onWorker()).toBe(true);
    } finally {
      await setAvailability(docker, self, 'active');
    }
    await w.kill(); // the worker's engine stops with its container: the node goes down
    const r = await p;
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain(`node ${w.nodeId} left during attempt 1 (node down)`);
    expect(r.attempts).toBe(2);
    expect(r.node).toBe(self);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('start\ndone\n'); // once: the lost attempt's output is not read
    expect(await leftovers()).toBe(0);
  });
});
