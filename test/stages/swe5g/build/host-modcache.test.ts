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
});
