import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import {
  DockerExecutor,
  LocalExecutor,
  type StepSpec,
} from '../../../../pipeline/providers/docker/executor.js';
import { ensureTestBase, testSettings } from '../../../fixtures/repos/harness.js';

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
        files: { 'new/b.txt': 'hello\n', 'gone.txt': null },
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
    expect(r.durationMs).toBeLessThan(30_000);
  });
});

describe('LocalExecutor', () => {
  it('implements the same interface on a temporary copy of the tree', async () => {
    process.env.GITHUB_TOKEN = 'ghp_secretvalue123';
    const r = await new LocalExecutor().run(
      spec(
        'cat sub/a.txt; echo TZ=$TZ; env | grep -c GITHUB_TOKEN || true; echo changed > sub/a.txt',
        {
          files: { 'x.txt': 'x' },
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
