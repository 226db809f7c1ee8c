import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHubServer, type HubServer } from '../../../servers/hub-server.js';
import {
  downloadHubFile,
  checkHubFile,
  hubLocalPath,
  isHubFileCached,
} from '../../../../pipeline/providers/hub/download.js';
import { PreflightError, TelebenchError } from '../../../../pipeline/errors.js';

let hub: HubServer;
let pinned: string;
const dir = mkdtempSync(join(tmpdir(), 'hub-dl-'));
const v1 = JSON.stringify([{ question: 'Q?', choices: ['a', 'b'], answer: 1 }]);

beforeAll(async () => {
  hub = await startHubServer();
  pinned = hub.seedRepo({
    repo: 'GSMA/ot-lite',
    type: 'dataset',
    files: { 'test_teleqna.json': v1 },
  });
  // main moves on after the pin: the pinned download must still get v1
  hub.pushCommit('GSMA/ot-lite', { 'test_teleqna.json': '[]' }, { type: 'dataset' });
});
afterAll(async () => {
  await hub.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('downloadHubFile (real @huggingface/hub client against a local Hub)', () => {
  it('requests the pinned revision, stores the file once, and a second run makes no request', async () => {
    const params = {
      hubUrl: hub.url,
      dataset: 'GSMA/ot-lite',
      revision: pinned,
      path: 'test_teleqna.json',
      downloadsDir: dir,
    };
    expect(isHubFileCached(params)).toBe(false);
    const before = hub.requests.length;
    const got = await downloadHubFile(params);
    const seen = hub.requests.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen)
      expect(r.path).toContain(`/datasets/GSMA/ot-lite/resolve/${pinned}/test_teleqna.json`);
    expect(got).toMatchObject({
      fromCache: false,
      revision: pinned,
      commit: pinned,
      size: Buffer.byteLength(v1),
    });
    expect(got.file).toBe(hubLocalPath(params));
    expect(got.file.startsWith(join(dir, 'hf', 'datasets', 'GSMA', 'ot-lite', pinned))).toBe(true);
    expect(readFileSync(got.file, 'utf8')).toBe(v1);

    const count = hub.requests.length;
    const again = await downloadHubFile(params);
    expect(hub.requests.length).toBe(count);
    expect(again).toMatchObject({ fromCache: true, sha256: got.sha256, commit: pinned });
    expect(isHubFileCached(params)).toBe(true);
  });

  it('a missing file is hub_not_found (config), naming the URL', async () => {
    const err = await downloadHubFile({
      hubUrl: hub.url,
      dataset: 'GSMA/ot-lite',
      revision: pinned,
      path: 'test_nope.json',
      downloadsDir: dir,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect(err).toMatchObject({ code: 'hub_not_found', tier: 'config' });
    expect((err as Error).message).toContain(`GSMA/ot-lite@${pinned}/test_nope.json`);
  });

  it('an unreachable Hub is hub_unreachable (transient); the preflight check says what to do', async () => {
    const down = 'http://127.0.0.1:9';
    const err = await downloadHubFile({
      hubUrl: down,
      dataset: 'GSMA/ot-lite',
      revision: 'main',
      path: 'test_teleqna.json',
      downloadsDir: dir,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'hub_unreachable', tier: 'transient' });
    const pre = await checkHubFile({
      hubUrl: down,
      dataset: 'GSMA/ot-lite',
      revision: 'main',
      path: 'test_teleqna.json',
    }).catch((e: unknown) => e);
    expect(pre).toBeInstanceOf(PreflightError);
    expect((pre as PreflightError).hint).toContain('resilience.hub.url');
  });

  it('sends HF_TOKEN when given, and a private dataset needs it', async () => {
    const rev = hub.seedRepo({
      repo: 'telebench/private-set',
      type: 'dataset',
      private: true,
      files: { 'test_x.json': '[]' },
    });
    const params = {
      hubUrl: hub.url,
      dataset: 'telebench/private-set',
      revision: rev,
      path: 'test_x.json',
      downloadsDir: dir,
    };
    await expect(downloadHubFile(params)).rejects.toMatchObject({ code: 'hub_not_found' });
    const got = await downloadHubFile({ ...params, accessToken: 'hf_test_token' });
    expect(got.size).toBe(2);
    expect(hub.requests.at(-1)!.authorized).toBe(true);
  });
});
