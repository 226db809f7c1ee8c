/**
 * The local Hub server (test/servers/hub-server.ts) checked through the real `@huggingface/hub`
 * client: the read routes a pinned-revision download uses, then the write routes of a commit.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  downloadFile,
  fileDownloadInfo,
  pathsInfo,
  listFiles,
  datasetInfo,
  downloadFileToCacheDir,
  whoAmI,
  createRepo,
  commit,
  createBranch,
  HubApiError,
} from '@huggingface/hub';
import { startHubServer, type HubServer } from '../../../servers/hub-server.js';

const TOKEN = 'hf_test_token';

describe('local Hub server, read routes', () => {
  let hub: HubServer;
  let pinned: string;
  beforeAll(async () => {
    hub = await startHubServer({ lfsThreshold: 1024 });
    pinned = hub.seedRepo({
      repo: 'GSMA/ot-lite',
      files: { 'test_teleqna.json': '[{"q":1}]', 'big.bin': 'x'.repeat(4096) },
      tags: ['v1'],
    });
    hub.pushCommit('GSMA/ot-lite', { 'test_teleqna.json': '[{"q":2}]' });
  });
  afterAll(() => hub.close());

  it('downloads a file at a pinned commit, a tag and main', async () => {
    const repo = { type: 'dataset' as const, name: 'GSMA/ot-lite' };
    const atPin = await downloadFile({
      repo,
      path: 'test_teleqna.json',
      revision: pinned,
      hubUrl: hub.url,
    });
    expect(await atPin!.text()).toBe('[{"q":1}]');
    const atTag = await downloadFile({
      repo,
      path: 'test_teleqna.json',
      revision: 'v1',
      hubUrl: hub.url,
    });
    expect(await atTag!.text()).toBe('[{"q":1}]');
    const atMain = await downloadFile({ repo, path: 'test_teleqna.json', hubUrl: hub.url });
    expect(await atMain!.text()).toBe('[{"q":2}]');
    expect(await downloadFile({ repo, path: 'missing.json', hubUrl: hub.url })).toBeNull();
    const info = await fileDownloadInfo({
      repo,
      path: 'big.bin',
      revision: pinned,
      hubUrl: hub.url,
    });
    expect(info?.size).toBe(4096);
    expect(hub.requests.some((r) => r.path.includes(`/resolve/${pinned}/`))).toBe(true);
  });

  it('answers HEAD with the etag and the commit', async () => {
    const res = await fetch(`${hub.url}/datasets/GSMA/ot-lite/resolve/${pinned}/big.bin`, {
      method: 'HEAD',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-repo-commit')).toBe(pinned);
    expect(res.headers.get('x-linked-size')).toBe('4096');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
  });

  it('serves paths-info, tree and revision info', async () => {
    const repo = { type: 'dataset' as const, name: 'GSMA/ot-lite' };
    const infos = await pathsInfo({
      repo,
      paths: ['big.bin', 'test_teleqna.json'],
      revision: pinned,
      expand: true,
      hubUrl: hub.url,
    });
    expect(infos.map((i) => i.path)).toEqual(['big.bin', 'test_teleqna.json']);
    expect(infos[0]!.lfs?.size).toBe(4096);
    expect(infos[1]!.lastCommit?.id).toBe(pinned);
    const files: string[] = [];
    for await (const f of listFiles({ repo, revision: pinned, hubUrl: hub.url }))
      files.push(f.path);
    expect(files.sort()).toEqual(['.gitattributes', 'big.bin', 'test_teleqna.json']);
    const ds = await datasetInfo({
      name: 'GSMA/ot-lite',
      revision: pinned,
      hubUrl: hub.url,
      additionalFields: ['sha'],
    });
    expect(ds.sha).toBe(pinned);
  });

  it('downloads into a cache dir once', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'hubcache-'));
    const repo = { type: 'dataset' as const, name: 'GSMA/ot-lite' };
    const p = await downloadFileToCacheDir({
      repo,
      path: 'test_teleqna.json',
      revision: pinned,
      hubUrl: hub.url,
      cacheDir,
    });
    expect(readFileSync(p, 'utf8')).toBe('[{"q":1}]');
    const before = hub.requests.length;
    await downloadFileToCacheDir({
      repo,
      path: 'test_teleqna.json',
      revision: pinned,
      hubUrl: hub.url,
      cacheDir,
    });
    expect(hub.requests.length).toBe(before);
  });

  it('gives 401 for a bad token and 404 RevisionNotFound for an unknown revision', async () => {
    const repo = { type: 'dataset' as const, name: 'GSMA/ot-lite' };
    await expect(
      downloadFile({ repo, path: 'big.bin', hubUrl: hub.url, accessToken: 'hf_wrong' }),
    ).rejects.toMatchObject({ statusCode: 401 });
    await expect(
      downloadFile({ repo, path: 'big.bin', revision: 'nope', hubUrl: hub.url }),
    ).rejects.toBeInstanceOf(HubApiError);
  });
});

describe('local Hub server, write routes', () => {
  let hub: HubServer;
  beforeAll(async () => {
    hub = await startHubServer({ lfsThreshold: 1024 });
  });
  afterAll(() => hub.close());

  it('creates a repo, commits inline and LFS files, refuses a stale parentCommit', async () => {
    const me = await whoAmI({ accessToken: TOKEN, hubUrl: hub.url });
    expect(me.name).toBe('telebench');
    const repo = { type: 'dataset' as const, name: 'telebench/demo' };
    await createRepo({ repo, accessToken: TOKEN, hubUrl: hub.url });
    await expect(createRepo({ repo, accessToken: TOKEN, hubUrl: hub.url })).rejects.toMatchObject({
      statusCode: 409,
    });
    const parent = hub.head('telebench/demo')!;
    const big = new Uint8Array(5000).fill(7);
    const out = await commit({
      repo,
      accessToken: TOKEN,
      hubUrl: hub.url,
      title: 'first',
      parentCommit: parent,
      useXet: false,
      operations: [
        { operation: 'addOrUpdate', path: 'README.md', content: new Blob(['# hi\n']) },
        { operation: 'addOrUpdate', path: 'data/big.bin', content: new Blob([big]) },
      ],
    });
    expect(out?.commit.oid).toBe(hub.head('telebench/demo'));
    expect(hub.isLfs('telebench/demo', 'main', 'data/big.bin')).toBe(true);
    expect(hub.isLfs('telebench/demo', 'main', 'README.md')).toBe(false);
    expect(hub.requests.some((r) => r.path.endsWith('.git/info/lfs/objects/batch'))).toBe(true);
    await expect(
      commit({
        repo,
        accessToken: TOKEN,
        hubUrl: hub.url,
        title: 'stale',
        parentCommit: parent,
        useXet: false,
        operations: [
          { operation: 'addOrUpdate', path: 'README.md', content: new Blob(['# lost\n']) },
        ],
      }),
    ).rejects.toMatchObject({ statusCode: 412 });
    expect(hub.filesAt('telebench/demo', 'main')!.get('README.md')!.toString()).toBe('# hi\n');
    await createBranch({ repo, branch: 'dev', accessToken: TOKEN, hubUrl: hub.url });
    expect(hub.head('telebench/demo', 'dev')).toBe(out?.commit.oid);
  });
});

describe('local Hub server, private repositories', () => {
  it('hides a private repository from anonymous reads and lets its owner commit LFS files', async () => {
    const hub = await startHubServer({ lfsThreshold: 16 });
    try {
      const repo = { type: 'dataset' as const, name: 'telebench/secret' };
      await createRepo({ repo, accessToken: TOKEN, hubUrl: hub.url, private: true });
      await expect(
        downloadFile({ repo, path: '.gitattributes', hubUrl: hub.url }),
      ).rejects.toMatchObject({ statusCode: 404 });
      await commit({
        repo,
        accessToken: TOKEN,
        hubUrl: hub.url,
        title: 'private data',
        operations: [
          { operation: 'addOrUpdate', path: 'data.bin', content: new Blob(['x'.repeat(100)]) },
        ],
      });
      expect(hub.isLfs('telebench/secret', 'main', 'data.bin')).toBe(true);
      const blob = await downloadFile({
        repo,
        path: 'data.bin',
        hubUrl: hub.url,
        accessToken: TOKEN,
      });
      expect(await blob!.text()).toBe('x'.repeat(100));
    } finally {
      await hub.close();
    }
  });
});
