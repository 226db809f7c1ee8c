/**
 * `go_modules: host` with the host's real Go: the host's module cache (GOMODCACHE as the user has
 * it) is read before the proxy, and a proxy that answers 403 is a permanent dependency_unavailable.
 * The module cache is built by the test in the layout Go writes (`cache/download/<module>/@v/`).
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { hostModCache } from '../../../../stages/swe5g/build/build.js';
import { TelebenchError } from '../../../../pipeline/errors.js';

let root: string;
let server: Server;
let proxyUrl: string;
const saved: Record<string, string | undefined> = {};
const VARS = ['GOMODCACHE', 'GOPROXY', 'GOSUMDB', 'GOFLAGS', 'GONOSUMDB'];

const goMod = 'module example.com/app\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'telebench-modcache-'));
  // the host's module cache: example.com/dep v1.0.0 as `go mod download` leaves it
  const v = join(root, 'hostcache', 'cache', 'download', 'example.com', 'dep', '@v');
  mkdirSync(v, { recursive: true });
  writeFileSync(join(v, 'list'), 'v1.0.0\n');
  writeFileSync(join(v, 'v1.0.0.info'), '{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}');
  writeFileSync(join(v, 'v1.0.0.mod'), 'module example.com/dep\n\ngo 1.21\n');
  const src = join(root, 'zipsrc', 'example.com', 'dep@v1.0.0');
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'go.mod'), 'module example.com/dep\n\ngo 1.21\n');
  writeFileSync(join(src, 'dep.go'), 'package dep\n\n// V is one.\nconst V = 1\n');
  const zip = spawnSync('zip', ['-qrD', join(v, 'v1.0.0.zip'), 'example.com'], {
    cwd: join(root, 'zipsrc'),
  });
  expect(zip.status).toBe(0);
  server = createServer((_req, res) => {
    res.statusCode = 403;
    res.end('Forbidden');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  proxyUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  for (const k of VARS) saved[k] = process.env[k];
});
afterEach(() => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});
afterAll(() => {
  server.close();
  rmSync(root, { recursive: true, force: true });
});

describe('hostModCache (go_modules: host)', () => {
  it("uses the host's module cache before the proxy: a module only the host holds builds", async () => {
    process.env.GOMODCACHE = join(root, 'hostcache');
    process.env.GOPROXY = 'off'; // nothing from the network: only the host cache can serve it
    process.env.GOSUMDB = 'off';
    process.env.GOFLAGS = '';
    const mod = await hostModCache(join(root, 'state1'), { 'go.mod': goMod, 'go.sum': '' });
    expect(existsSync(join(mod, 'example.com', 'dep@v1.0.0', 'dep.go'))).toBe(true);
  });

  it('a 403 from the proxy for a module the host lacks is a permanent dependency_unavailable', async () => {
    process.env.GOMODCACHE = join(root, 'emptycache');
    process.env.GOPROXY = proxyUrl;
    process.env.GOSUMDB = 'off';
    process.env.GOFLAGS = '';
    const err = await hostModCache(join(root, 'state2'), { 'go.mod': goMod, 'go.sum': '' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TelebenchError);
    const e = err as TelebenchError;
    expect(e.code).toBe('dependency_unavailable');
    expect(e.tier).not.toBe('transient');
    expect(e.context).toMatchObject({
      module: 'example.com/dep@v1.0.0',
      status: 403,
      permanent: true,
    });
    expect(e.message).toContain('host module cache');
  });

  // free5GC's own modules at a pseudo-version the proxy never served (real free5gc__amf-210:
  // github.com/free5gc/nas@v1.2.3-0.20260121015506-0329a7ac3f31, refused with 403): its mirror has it
  describe('a module the proxy refuses, from the mirrors folder', () => {
    const git = (cwd: string, ...args: string[]): string => {
      const r = spawnSync('git', args, {
        cwd,
        encoding: 'utf8',
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@l',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@l',
          GIT_AUTHOR_DATE: '2026-01-21T01:55:06Z',
          GIT_COMMITTER_DATE: '2026-01-21T01:55:06Z',
        },
      });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim();
    };
    let mirrors: string;
    let pseudo: string;
    beforeAll(() => {
      mirrors = join(root, 'mirrors');
      const work = join(root, 'nas-work');
      mkdirSync(work, { recursive: true });
      git(work, 'init', '-q');
      writeFileSync(join(work, 'go.mod'), 'module github.com/tbtest/nas\n\ngo 1.21\n');
      writeFileSync(join(work, 'nas.go'), 'package nas\n\n// N is two.\nconst N = 2\n');
      git(work, 'add', '-A');
      git(work, 'commit', '-qm', 'nas');
      pseudo = `v0.0.0-20260121015506-${git(work, 'rev-parse', 'HEAD').slice(0, 12)}`;
      git(root, 'clone', '-q', '--bare', work, join(mirrors, 'tbtest+nas', 'repo'));
    });
    const appMod = (v: string): string =>
      `module example.com/app\n\ngo 1.21\n\nrequire (\n\texample.com/dep v1.0.0\n\tgithub.com/tbtest/nas ${v}\n)\n`;
    const env403 = (): void => {
      process.env.GOMODCACHE = join(root, 'hostcache'); // holds example.com/dep only
      process.env.GOPROXY = proxyUrl; // 403 for everything else
      process.env.GOSUMDB = 'off';
      process.env.GOFLAGS = '';
    };

    it('is taken from its mirror through git; the host cache still serves the others', async () => {
      env403();
      const deps = { 'go.mod': appMod(pseudo), 'go.sum': '' };
      const mod = await hostModCache(join(root, 'state3'), deps, '', mirrors);
      expect(existsSync(join(mod, 'github.com', 'tbtest', `nas@${pseudo}`, 'nas.go'))).toBe(true);
      expect(existsSync(join(mod, 'example.com', 'dep@v1.0.0', 'dep.go'))).toBe(true);
    });

    it('without the mirrors folder, or with a mirror that lacks the commit, it stays dependency_unavailable and says which', async () => {
      env403();
      const without = await hostModCache(
        join(root, 'state4'),
        { 'go.mod': appMod(pseudo), 'go.sum': '' },
        '',
      ).catch((e: unknown) => e);
      expect((without as TelebenchError).code).toBe('dependency_unavailable');
      expect((without as TelebenchError).context.module).toBe(`github.com/tbtest/nas@${pseudo}`);
      const missing = 'v0.0.0-20260121015506-0123456789ab';
      const lacking = await hostModCache(
        join(root, 'state5'),
        { 'go.mod': appMod(missing), 'go.sum': '' },
        '',
        mirrors,
      ).catch((e: unknown) => e);
      expect((lacking as TelebenchError).code).toBe('dependency_unavailable');
      expect((lacking as TelebenchError).message).toContain('nor its mirror tbtest/nas');
    });
  });
});
