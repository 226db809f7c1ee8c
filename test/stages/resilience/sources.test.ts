/**
 * Local sources without a configured data root: `<state>/data` filled once from a local HTTP
 * server laid out like raw.githubusercontent.com (serving the real srsRANBench bytes, found by
 * test/fixtures/real-data.ts), `$TELEBENCH_DATA_ROOT` honoured, unreachable URL named; and
 * findDataRoot, the lookup the tests' real data goes through (env, beside the checkout, download).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  CHECKOUT_DATA_DIR,
  ensureSourceFile,
  findDataRoot,
  readSourceRecord,
} from '../../../stages/resilience/sources.js';
import { realDataRoot } from '../../fixtures/real-data.js';
import {
  DATA_ROOT_ENV,
  SOURCE_FILES,
  dataRootOf,
  loadSubsets,
} from '../../../stages/resilience/subsets.js';
import { resilienceConfigSchema } from '../../../stages/resilience/config.js';

const SRSRAN = 'srsranbench/srsRANBench.json';
const BODY = readFileSync(join(await realDataRoot(SRSRAN), SRSRAN));
const CONFIG = resolve(import.meta.dirname, '../../../config/default.yaml');

let server: Server;
let base = '';
const requests: string[] = [];
let dir = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-sources-'));
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === `/${SOURCE_FILES['srsranbench/srsRANBench.json']}`) {
      res.writeHead(200, { 'content-type': 'application/json', etag: '"srsran-v1"' });
      res.end(BODY);
    } else {
      res.writeHead(404);
      res.end('not found');
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});

afterAll(async () => {
  await new Promise((ok) => server.close(ok));
  rmSync(dir, { recursive: true, force: true });
});

describe('local sources downloaded into <state>/data', () => {
  it('downloads a missing file once and reuses it afterwards', async () => {
    const dest = join(dir, 'state', 'data', 'srsranbench', 'srsRANBench.json');
    const url = `${base}/${SOURCE_FILES['srsranbench/srsRANBench.json']}`;
    expect(await ensureSourceFile(url, dest)).toBe(true);
    expect(readFileSync(dest).equals(BODY)).toBe(true);
    expect(readSourceRecord(dest)).toMatchObject({ url, etag: '"srsran-v1"', bytes: BODY.length });
    const n = requests.length;
    expect(await ensureSourceFile(url, dest)).toBe(false);
    expect(requests.length).toBe(n);
  });

  it('names the URL when the source answers 404 or cannot be reached (source_unreachable)', async () => {
    const dest = join(dir, 'state', 'data', 'oran-bench-13k', 'fin_E.json');
    const url = `${base}/${SOURCE_FILES['oran-bench-13k/fin_E.json']}`;
    await expect(ensureSourceFile(url, dest)).rejects.toMatchObject({
      code: 'source_unreachable',
      tier: 'transient',
      message: expect.stringContaining(`${url} into ${dest}: HTTP 404`),
    });
    const srv = createServer().listen(0, '127.0.0.1');
    await once(srv, 'listening');
    const port = (srv.address() as AddressInfo).port;
    await new Promise((r) => srv.close(r)); // a port nobody listens on
    const dead = `http://127.0.0.1:${port}/prnshv/srsRANBench/main/srsRANBench.json`;
    // the cause of Node's bare 'fetch failed' is in the message (new-user trial)
    await expect(ensureSourceFile(dead, dest)).rejects.toThrow(
      new RegExp(
        `could not download ${dead.replaceAll('.', '\\.')} into .*: fetch failed: connect ECONNREFUSED 127\\.0\\.0\\.1:${port} `,
      ),
    );
    expect(existsSync(dest)).toBe(false);
  });

  it('data root: config key, else $TELEBENCH_DATA_ROOT, else <state>/data', () => {
    const saved = process.env[DATA_ROOT_ENV];
    try {
      delete process.env[DATA_ROOT_ENV];
      const cfg = resilienceConfigSchema.parse({});
      const state = join(dir, 'st');
      expect(dataRootOf(CONFIG, cfg, state)).toBe(join(state, 'data'));
      const paths = loadSubsets(CONFIG, cfg, state).flatMap((s) => (s.path ? [s.path] : []));
      expect(paths).toContain(join(state, 'data', 'srsranbench', 'srsRANBench.json'));
      // every local file of the default registry has a publisher URL
      for (const p of paths)
        expect(SOURCE_FILES[p.slice(join(state, 'data').length + 1)]).toBeDefined();
      process.env[DATA_ROOT_ENV] = join(dir, 'envroot');
      expect(dataRootOf(CONFIG, cfg, state)).toBe(join(dir, 'envroot'));
      const own = resilienceConfigSchema.parse({ data_root: 'mine' });
      expect(dataRootOf(CONFIG, own, state)).toBe(resolve(CONFIG, '..', 'mine'));
    } finally {
      if (saved === undefined) delete process.env[DATA_ROOT_ENV];
      else process.env[DATA_ROOT_ENV] = saved;
    }
  });
});

describe('findDataRoot: the real data of tests and benchmarks, found like the product finds it', () => {
  const file = SRSRAN;
  const layout = (root: string) => {
    mkdirSync(join(root, 'srsranbench'), { recursive: true });
    writeFileSync(join(root, file), BODY);
    return root;
  };

  it('$TELEBENCH_DATA_ROOT first, then the folder beside the checkout, else a download into the cache', async () => {
    const top = mkdtempSync(join(dir, 'find-'));
    const checkout = join(top, 'checkout');
    mkdirSync(checkout);
    const cacheDir = join(top, 'cache', 'data');
    const envRoot = layout(join(top, 'env'));
    const opts = { checkout, cacheDir, urlBase: base, env: { [DATA_ROOT_ENV]: envRoot } };
    const n = requests.length;
    expect(await findDataRoot([file], opts)).toEqual({ root: envRoot, via: 'env' });
    // nothing beside the checkout: downloaded once from the publisher's URL, then reused
    expect(await findDataRoot([file], { ...opts, env: {} })).toEqual({
      root: cacheDir,
      via: 'download',
    });
    expect(readFileSync(join(cacheDir, file)).equals(BODY)).toBe(true);
    expect(readSourceRecord(join(cacheDir, file))?.url).toBe(`${base}/${SOURCE_FILES[file]}`);
    expect(requests.length).toBe(n + 1);
    await findDataRoot([file], { ...opts, env: {} });
    expect(requests.length).toBe(n + 1);
    const beside = layout(resolve(checkout, CHECKOUT_DATA_DIR));
    expect(await findDataRoot([file], { ...opts, env: {} })).toEqual({
      root: beside,
      via: 'checkout',
    });
  });

  it('without the data and without the publisher: one message saying how to provide it', async () => {
    const top = mkdtempSync(join(dir, 'none-'));
    const empty = join(top, 'empty');
    mkdirSync(empty);
    const cacheDir = join(top, 'cache', 'data');
    const aux = 'teleresiliencebench/AuxiliaryBenchmark.json';
    const ways = [`set $${DATA_ROOT_ENV} to a folder holding ${aux}`, CHECKOUT_DATA_DIR, base];
    const offline = findDataRoot([aux], { checkout: top, cacheDir, urlBase: base, env: {} });
    await expect(offline).rejects.toMatchObject({ code: 'data_missing' });
    const msg = ((await offline.catch((e: unknown) => e)) as Error).message;
    expect(msg).toContain(
      `${aux} is not in ${resolve(top, CHECKOUT_DATA_DIR)}, and ${base}/${SOURCE_FILES[aux]} could not be downloaded (HTTP 404 Not Found). Provide`,
    );
    expect(msg).not.toContain('--retry-failed');
    for (const w of ways) expect(msg).toContain(w);
    expect(existsSync(join(cacheDir, aux))).toBe(false);
    // a data root that lacks the file is named; nothing falls through behind the user's back
    const env = { [DATA_ROOT_ENV]: empty };
    const wrong = findDataRoot([aux], { checkout: top, cacheDir, urlBase: base, env });
    await expect(wrong).rejects.toThrow(
      `$${DATA_ROOT_ENV} is ${empty}, which has no ${aux}. Provide`,
    );
  });

  it('every published file is found under one root, laid out as SOURCE_FILES names it', async () => {
    const files = Object.keys(SOURCE_FILES);
    expect(files).toContain('teleresiliencebench/experiments/gemma4_31b/main.jsonl');
    const root = await realDataRoot(...files);
    for (const f of files) expect(readFileSync(join(root, f)).length).toBeGreaterThan(500);
  });
});

describe('a second run of a downloaded subset (issue 15)', () => {
  it('does no download and no reload: the item is keyed by the source URL, not the bytes', async () => {
    const work = mkdtempSync(join(dir, 'run-'));
    const root = resolve(import.meta.dirname, '../../..');
    const config = join(work, 'config.yaml');
    writeFileSync(
      config,
      `version: 1
resilience:
  subsets_file: ${join(root, 'config/subsets.yaml')}
  prompts_dir: ${join(root, 'config/prompts/resilience')}
  only_subsets: ['srsranbench:srsranbench']
  data_url_base: ${base}
`,
    );
    const env: Record<string, string | undefined> = { ...process.env, CI: 'true' };
    delete env[DATA_ROOT_ENV];
    const path = `/${SOURCE_FILES['srsranbench/srsRANBench.json']}`;
    // asynchronous: the HTTP server answers from this process's event loop
    const run = async () => {
      const before = requests.filter((r) => r === path).length;
      const r = await promisify(execFile)(
        process.execPath,
        [
          join(root, 'bin/telebench.js'),
          '--state',
          join(work, 'state'),
          'run',
          'resilience',
          '--only',
          'resilience.load',
          '--config',
          config,
          '--verbose',
        ],
        { encoding: 'utf8', env, cwd: work },
      ); // rejects on a non-zero exit, with the output
      expect(r.stderr).toContain('exit 0');
      const starts = r.stdout
        .split('\n')
        .filter((l) => l.includes('"item-start"') && l.includes('resilience.load'));
      return { downloads: requests.filter((x) => x === path).length - before, starts };
    };
    const first = await run();
    expect(first.downloads).toBe(1);
    expect(first.starts).toHaveLength(1);
    const file = join(work, 'state', 'data', 'srsranbench', 'srsRANBench.json');
    expect(readSourceRecord(file)?.url).toBe(`${base}${path}`);
    const second = await run();
    expect(second.downloads).toBe(0);
    expect(second.starts).toEqual([]);
  });
});
