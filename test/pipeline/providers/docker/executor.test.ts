import { describe, it, expect, beforeAll } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import {
  DockerExecutor,
  LocalExecutor,
  type StepSpec,
} from '../../../../pipeline/providers/docker/executor.js';
import { overlayFile } from '../../../../pipeline/providers/docker/overlay.js';
import { ensureTestBase, testSettings } from '../../../fixtures/repos/harness.js';
import { TelebenchError } from '../../../../pipeline/errors.js';

const docker = new DockerClient();
let image: string;
let src: string;

const spec = (command: string, over: Partial<StepSpec> = {}): StepSpec => ({
  step: 'probe',
  instance: { image, workdir: '/testbed', sourceDir: src },
  files: {},
  command,
  collect: [],
  limits: { memory: 256 * 2 ** 20, cpus: 0.5, pids: 64, timeoutMs: 20_000 },
  ...over,
});

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  image = testSettings().offline.rootfs_image;
  src = mkdtempSync(join(tmpdir(), 'telebench-exec-'));
  mkdirSync(join(src, 'sub'));
  writeFileSync(join(src, 'sub', 'a.txt'), 'original\n');
});

describe('DockerExecutor', () => {
  it('runs with no network, pinned TZ, no host secrets, and the configured limits', async () => {
    process.env.GITHUB_TOKEN = 'ghp_secretvalue123';
    const r = await new DockerExecutor(docker).run(
      spec(
        'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "; echo TZ=$TZ; env | grep -c GITHUB_TOKEN || true; cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max',
      ),
    );
    delete process.env.GITHUB_TOKEN;
    expect(r.executor).toBe('docker');
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('lo'); // only the loopback interface
    expect(lines).toContain('TZ=UTC');
    expect(lines).toContain('0'); // GITHUB_TOKEN absent
    expect(lines).toContain(String(256 * 2 ** 20));
    expect(lines).toContain('64');
  });

  it('writes and deletes files, reads back collected files, separates stderr', async () => {
    const r = await new DockerExecutor(docker).run(
      spec('mkdir -p out && cat new/b.txt > out/r.txt && echo err >&2; ls', {
        files: { 'new/b.txt': overlayFile('hello\n'), 'gone.txt': null },
        collect: ['out/r.txt', 'missing.txt'],
      }),
    );
    expect(r.exitCode).toBe(0);
    expect(r.collected['out/r.txt']).toBe('hello\n');
    expect(r.collected['missing.txt']).toBeUndefined();
    expect(r.stderr).toBe('err\n');
  });

  it('kills a step that outlives its timeout', async () => {
    const r = await new DockerExecutor(docker).run(
      spec('sleep 60', { limits: { memory: 2 ** 28, cpus: 0.5, pids: 64, timeoutMs: 2_000 } }),
    );
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
  });
});

describe('LocalExecutor', () => {
  it('implements the same interface on a temporary copy of the tree', async () => {
    process.env.GITHUB_TOKEN = 'ghp_secretvalue123';
    const r = await new LocalExecutor().run(
      spec(
        'cat sub/a.txt; echo TZ=$TZ; env | grep -c GITHUB_TOKEN || true; echo changed > sub/a.txt',
        {
          files: { 'x.txt': overlayFile('x') },
          collect: ['x.txt'],
        },
      ),
    );
    delete process.env.GITHUB_TOKEN;
    expect(r.executor).toBe('local');
    expect(r.stdout.split('\n')).toEqual(['original', 'TZ=UTC', '0', '']);
    expect(r.collected['x.txt']).toBe('x');
    // the source tree itself is untouched; a null file is deleted
    const again = await new LocalExecutor().run(spec('cat sub/a.txt; ls sub', { files: {} }));
    expect(again.stdout).toBe('original\na.txt\n');
    const del = await new LocalExecutor().run(
      spec('ls sub | wc -l', { files: { 'sub/a.txt': null } }),
    );
    expect(del.stdout.trim()).toBe('0');
  });

  it('kills the process group on timeout', async () => {
    const r = await new LocalExecutor().run(
      spec('sleep 60 & sleep 60', { limits: { memory: 0, cpus: 1, pids: 1, timeoutMs: 1_000 } }),
    );
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
  });
});

/**
 * The real engine behind a proxy that answers chosen requests with an engine error instead of
 * forwarding them (`fail`: method + path pattern -> status), to see what the executor does when
 * the engine refuses a kill or a remove.
 */
async function faultyEngine(
  fail: { method: string; path: RegExp; status: number }[],
): Promise<{ client: DockerClient; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const rule = fail.find((f) => f.method === req.method && f.path.test(req.url ?? ''));
    if (rule) {
      seen.push(`${req.method} ${req.url} -> ${rule.status}`);
      req.resume();
      res.writeHead(rule.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `injected engine error ${rule.status}` }));
      return;
    }
    const up = request(
      {
        socketPath: '/var/run/docker.sock',
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    client: new DockerClient({ host: '127.0.0.1', port, protocol: 'http' }),
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const containersOf = async (step: string): Promise<number> =>
  (
    await docker.docker.listContainers({
      all: true,
      filters: { label: [`telebench.step=${step}`] },
    })
  ).length;

/**
 * A stopped run (Ctrl-C) must not grade or start steps: seen on a real run, a validation went on
 * starting containers for minutes after SIGINT, each step's `run` called with the signal already
 * aborted (an abort listener added then never fires), and a step the stop killed came back as a
 * result with exit 137 (the stop's code, not the tests').
 */
describe('a stopped run: no step starts, a killed step is no result', () => {
  const executors = (): [string, () => DockerExecutor | LocalExecutor][] => [
    ['docker', () => new DockerExecutor(docker)],
    ['local', () => new LocalExecutor()],
  ];
  for (const [name, make] of executors()) {
    it(`${name}: a step asked for after the stop does not start`, async () => {
      const marker = join(mkdtempSync(join(tmpdir(), 'telebench-abort-')), 'ran');
      const ac = new AbortController();
      ac.abort('SIGINT');
      const step = `aborted-before-${name}-${Date.now()}`;
      const err = await make()
        .run(spec(`touch ${marker}; echo ran`, { step }), ac.signal)
        .catch((e: unknown) => e);
      expect((err as TelebenchError).code).toBe('step_aborted');
      expect((err as TelebenchError).message).toContain('before it started');
      expect(existsSync(marker)).toBe(false);
      if (name === 'docker') {
        const left = await docker.docker.listContainers({
          all: true,
          filters: { label: [`telebench.step=${step}`] },
        });
        expect(left).toHaveLength(0);
      }
    });

    it(`${name}: a step the stop kills is step_aborted, not exit 137`, async () => {
      const ac = new AbortController();
      const started = Date.now();
      const p = make()
        .run(spec('echo start; sleep 60; echo done', { step: `aborted-mid-${name}` }), ac.signal)
        .catch((e: unknown) => e);
      setTimeout(() => ac.abort('SIGINT'), 1500);
      const err = await p;
      expect(err).toBeInstanceOf(TelebenchError);
      expect((err as TelebenchError).code).toBe('step_aborted');
      expect((err as TelebenchError).message).toContain('while it ran');
      // hang guard only: far below the step's 60 s sleep, sized for a loaded machine
      expect(Date.now() - started).toBeLessThan(45_000);
    });
  }
});

describe('DockerExecutor reports engine failures of kill and remove', () => {
  it('ignores 404 on remove (already gone) and keeps the result', async () => {
    const engine = await faultyEngine([{ method: 'DELETE', path: /^\/containers\//, status: 404 }]);
    try {
      const r = await new DockerExecutor(engine.client).run(
        spec('echo ok', { step: 'probe-remove-404' }),
      );
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe('ok\n');
      expect(engine.seen.some((s) => s.startsWith('DELETE'))).toBe(true);
    } finally {
      await engine.close();
      for (const c of await docker.docker.listContainers({
        all: true,
        filters: { label: ['telebench.step=probe-remove-404'] },
      }))
        await docker.docker.getContainer(c.Id).remove({ force: true });
    }
  });

  it('gives a failed remove (500) to onCleanupError, or throws it when there is no callback', async () => {
    const engine = await faultyEngine([{ method: 'DELETE', path: /^\/containers\//, status: 500 }]);
    try {
      const reported: { code: string; message: string }[] = [];
      const r = await new DockerExecutor(engine.client, {
        onCleanupError: (e) => reported.push({ code: e.code, message: e.message }),
      }).run(spec('echo ok', { step: 'probe-remove-500' }));
      expect(r.exitCode).toBe(0);
      expect(reported).toHaveLength(1);
      expect(reported[0]!.code).toBe('container_remove_failed');
      expect(reported[0]!.message).toMatch(/probe-remove-500.*injected engine error 500/);
      await expect(
        new DockerExecutor(engine.client).run(spec('echo ok', { step: 'probe-remove-500' })),
      ).rejects.toMatchObject({ code: 'container_remove_failed', tier: 'infra' });
      // the containers really were left behind (the proxy never forwarded the DELETE)
      expect(await containersOf('probe-remove-500')).toBe(2);
    } finally {
      await engine.close();
      for (const c of await docker.docker.listContainers({
        all: true,
        filters: { label: ['telebench.step=probe-remove-500'] },
      }))
        await docker.docker.getContainer(c.Id).remove({ force: true });
    }
  });

  it('throws container_kill_failed when the engine refuses the timeout kill', async () => {
    const engine = await faultyEngine([
      { method: 'POST', path: /^\/containers\/[^/]+\/kill/, status: 500 },
    ]);
    try {
      await expect(
        new DockerExecutor(engine.client).run(
          spec('sleep 60', {
            step: 'probe-kill-500',
            limits: { memory: 2 ** 28, cpus: 0.5, pids: 64, timeoutMs: 1_000 },
          }),
        ),
      ).rejects.toMatchObject({ code: 'container_kill_failed', tier: 'infra' });
      // the forced remove still went through: nothing is left running
      expect(await containersOf('probe-kill-500')).toBe(0);
    } finally {
      await engine.close();
    }
  });
});
