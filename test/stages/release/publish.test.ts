/**
 * `publish` through the real @huggingface/hub client against the local Hub server
 * (test/servers/hub-server.ts): dry run, creation, one commit with parentCommit and a tag, a large
 * file through LFS, a moved branch (412: clear error, nothing lost), a bad token (401), and the
 * immutability of a published tag.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHubServer, type HubServer } from '../../servers/hub-server.js';
import { swe5gDataset } from '../../../datasets/index.js';
import { planRelease, writeRelease, type ReleaseInput } from '../../../stages/release/assemble.js';
import { publishRelease, releaseFiles } from '../../../stages/release/publish.js';
import { swe5gRowOf } from '../../../stages/swe5g/dataset.js';
import { TelebenchError } from '../../../pipeline/errors.js';
import { swe5gInstances, validated } from './rows.js';

const TOKEN = 'hf_release_test_token_123';

function release(
  state: string,
  version: string,
  rows: unknown[],
  previous: ReleaseInput['previous'] = null,
): string {
  const plan = planRelease({
    dataset: swe5gDataset as never,
    version,
    rows,
    createdAt: '2026-11-29T18:00:00.000Z',
    provenance: {
      gitSha: 'abc',
      configHash: 'c',
      stageVersions: {},
      inputHashes: {},
      settings: {},
      profile: null,
      provenanceNotes: [],
      sample: null,
      models: { generator: [], targets: [] },
    },
    funnel: [],
    licenseEvidence: () => 'e',
    verify: null,
    snapshotLimitations: [],
    previous,
  });
  return writeRelease(state, plan).dir;
}

const baseRows = () =>
  swe5gInstances()
    .map((v) => swe5gRowOf(v, 'api'))
    .filter((r) => r !== null);

async function caught(p: Promise<unknown>): Promise<TelebenchError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TelebenchError);
    return err as TelebenchError;
  }
  throw new Error('expected a rejection');
}

describe('publish to a local Hub', () => {
  let hub: HubServer;
  let state: string;
  const repo = 'telebench/swe-bench-5g';
  const target = () => ({ hubUrl: hub.url, repo, accessToken: TOKEN });
  const args = (version: string, over: Record<string, unknown> = {}) => ({
    stateDir: state,
    dataset: 'swe-bench-5g',
    version,
    target: target(),
    branch: 'main',
    private: false,
    dryRun: false,
    ...over,
  });

  beforeAll(async () => {
    hub = await startHubServer({ tokens: { [TOKEN]: 'telebench' } });
    state = mkdtempSync(join(tmpdir(), 'pub-'));
    // 1.0.0 has one row whose patch is ~10.5 MiB: its JSON Lines file crosses the Hub's 10 MiB LFS threshold.
    const big = validated('free5gc/nrf', 500, {
      patch: `diff --git a/x b/x\n+${'y'.repeat(10.5 * 1024 * 1024)}\n`,
    });
    release(state, '1.0.0', [...baseRows(), swe5gRowOf(big, 'api')!]);
    release(
      state,
      '1.1.0',
      baseRows().filter((r) => r.repo !== 'magma/magma'),
    );
  });
  afterAll(() => hub.close());

  it('dry run against a missing repository lists every file as added and writes nothing', async () => {
    const before = hub.requests.length;
    const out = await publishRelease(args('1.0.0', { dryRun: true }));
    expect(out.status).toBe('dry-run');
    expect(out.createdRepo).toBe(true);
    expect(out.changes.every((c) => c.change === 'add')).toBe(true);
    expect(out.changes.map((c) => c.path)).toContain('data/free5gc/test.parquet');
    expect(hub.requests.slice(before).every((r) => r.method === 'GET')).toBe(true);
  });

  it('creates the repository, commits once with the large file through LFS, and tags the version', async () => {
    const out = await publishRelease(args('1.0.0'));
    expect(out.status).toBe('published');
    const head = hub.head(repo)!;
    expect(out.commit).toBe(head);
    expect(hub.tags(repo).get('1.0.0')).toBe(head);
    const files = hub.filesAt(repo, '1.0.0')!;
    for (const f of releaseFiles(state, 'swe-bench-5g', '1.0.0'))
      expect(Buffer.compare(files.get(f.path)!, Buffer.from(f.bytes))).toBe(0);
    expect(files.get('data/free5gc/test.jsonl')!.length).toBeGreaterThan(10 * 1024 * 1024);
    expect(hub.isLfs(repo, '1.0.0', 'data/free5gc/test.jsonl')).toBe(true);
    expect(hub.isLfs(repo, '1.0.0', 'data/free5gc/test.parquet')).toBe(true);
    expect(hub.isLfs(repo, '1.0.0', 'README.md')).toBe(false);
    expect(hub.requests.filter((r) => r.path.includes('/commit/main')).length).toBe(1);
    expect(hub.requests.some((r) => r.path.endsWith('.git/info/lfs/objects/batch'))).toBe(true);
    expect(hub.commitCount(repo)).toBe(2); // the initial commit and ours
  });

  it('publishing the same version again is a no-op', async () => {
    const commits = hub.commitCount(repo);
    const out = await publishRelease(args('1.0.0'));
    expect(out.status).toBe('already-published');
    expect(hub.commitCount(repo)).toBe(commits);
  });

  it('dry run of the next version prints the difference against the Hub', async () => {
    const out = await publishRelease(args('1.1.0', { dryRun: true }));
    const by = Object.fromEntries(out.changes.map((c) => [c.path, c.change]));
    expect(by['data/magma/test.parquet']).toBe('delete');
    expect(by['data/magma/test.jsonl']).toBe('delete');
    expect(by['data/open5gs/test.jsonl']).toBe('same');
    expect(by['data/free5gc/test.jsonl']).toBe('update');
    expect(by['README.md']).toBe('update');
  });

  it('a branch that moved during publish gives a clear error and loses nothing', async () => {
    const movedBy = { commit: '' };
    // Another writer commits to main between our read of the head and our commit.
    const racing: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (init?.method === 'POST' && url.includes('/commit/main') && !movedBy.commit) {
        movedBy.commit = hub.pushCommit(repo, { 'NOTES.md': 'a note someone else wrote\n' });
      }
      return fetch(input, init);
    };
    const err = await caught(
      publishRelease({ ...args('1.1.0'), target: { ...target(), fetch: racing } }),
    );
    expect(err.code).toBe('hub_branch_moved');
    expect(err.message).toMatch(
      /moved since it was read .*nothing was overwritten.*run publish again/,
    );
    expect(hub.head(repo)).toBe(movedBy.commit);
    expect(hub.filesAt(repo, 'main')!.get('NOTES.md')!.toString()).toBe(
      'a note someone else wrote\n',
    );
    expect(hub.filesAt(repo, 'main')!.has('data/magma/test.parquet')).toBe(true);
    expect(hub.tags(repo).has('1.1.0')).toBe(false);
    // Publishing again goes on top of the new head and keeps the other writer's file.
    const out = await publishRelease(args('1.1.0'));
    expect(out.status).toBe('published');
    const files = hub.filesAt(repo, '1.1.0')!;
    expect(files.get('NOTES.md')!.toString()).toBe('a note someone else wrote\n');
    expect(files.has('data/magma/test.parquet')).toBe(false);
    expect(files.get('README.md')!.toString()).toBe(
      readFileSync(join(state, 'releases/swe-bench-5g/1.1.0/README.md'), 'utf8'),
    );
    expect(hub.tags(repo).get('1.0.0')).not.toBe(hub.tags(repo).get('1.1.0'));
  });

  it('a bad token gives 401 as hub_unauthorized, without the token in the message', async () => {
    const err = await caught(
      publishRelease({
        ...args('1.1.0'),
        target: { ...target(), accessToken: 'hf_not_a_valid_token' },
      }),
    );
    expect(err.code).toBe('hub_unauthorized');
    expect(err.tier).toBe('config');
    expect(err.message).toMatch(/401.*HF_TOKEN/);
    expect(err.message).not.toContain('hf_not_a_valid_token');
  });

  it('no token at all is refused before any write', async () => {
    const err = await caught(
      publishRelease({ ...args('1.1.0'), target: { hubUrl: hub.url, repo } }),
    );
    expect(err.code).toBe('hub_token_missing');
  });

  it('a tag that holds other files is refused (a published version is never changed)', async () => {
    const other = 'telebench/other';
    hub.seedRepo({ repo: other, files: { 'README.md': 'someone else\n' }, tags: ['1.0.0'] });
    const err = await caught(
      publishRelease({ ...args('1.0.0'), target: { ...target(), repo: other } }),
    );
    expect(err.code).toBe('hub_version_exists');
  });
});
