/**
 * The Hub publishing provider's pure parts: git blob oids as git computes them, the change plan
 * against the Hub's files, and the mapping of Hub statuses to TelebenchErrors (with secrets redacted).
 */
import { describe, it, expect, afterEach } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HubApiError } from '@huggingface/hub';
import {
  gitBlobOid,
  hubError,
  planChanges,
  type RemoteFile,
} from '../../../../pipeline/providers/hub/publish.js';
import { sha256 } from '../../../../pipeline/hash.js';

const enc = new TextEncoder();
const saved = process.env.HF_TOKEN;
afterEach(() => {
  if (saved === undefined) delete process.env.HF_TOKEN;
  else process.env.HF_TOKEN = saved;
});

describe('hub publish provider', () => {
  it('computes the git blob oid exactly as git hash-object does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oid-'));
    for (const text of ['', 'hello\n', 'é and \u0000 bytes\n'.repeat(100)]) {
      writeFileSync(join(dir, 'f'), text);
      const git = execFileSync('git', ['hash-object', join(dir, 'f')], { encoding: 'utf8' }).trim();
      expect(gitBlobOid(enc.encode(text))).toBe(git);
    }
  });

  it('plans adds, updates, unchanged files and deletes of managed paths only', () => {
    const local = [
      { path: 'README.md', bytes: enc.encode('# new\n') },
      { path: 'data/a/test.parquet', bytes: enc.encode('PAR1...') },
      { path: 'data/b/test.jsonl', bytes: enc.encode('{}\n') },
    ];
    const remote = new Map<string, RemoteFile>([
      ['README.md', { path: 'README.md', size: 6, oid: gitBlobOid(enc.encode('# old\n')) }],
      [
        'data/a/test.parquet',
        {
          path: 'data/a/test.parquet',
          size: 7,
          oid: 'pointer-oid',
          lfsSha256: sha256(enc.encode('PAR1...')),
        },
      ],
      ['data/old/test.parquet', { path: 'data/old/test.parquet', size: 9, oid: 'x' }],
      ['NOTES.md', { path: 'NOTES.md', size: 3, oid: 'y' }],
      ['.gitattributes', { path: '.gitattributes', size: 3, oid: 'z' }],
    ]);
    const plan = planChanges(local, remote, (p) => p.startsWith('data/'));
    expect(plan.map((c) => [c.path, c.change])).toEqual([
      ['data/a/test.parquet', 'same'],
      ['data/b/test.jsonl', 'add'],
      ['data/old/test.parquet', 'delete'],
      ['README.md', 'update'],
    ]);
  });

  it('maps Hub statuses to codes and tiers, and redacts the token', () => {
    process.env.HF_TOKEN = 'hf_secret_value_123456';
    const e412 = hubError(
      new HubApiError('http://hub/api/datasets/a/b/commit/main', 412),
      'committing',
    );
    expect([e412.code, e412.tier]).toEqual(['hub_branch_moved', 'content']);
    const e401 = hubError(
      new HubApiError('http://hub/x', 401, undefined, 'bad hf_secret_value_123456'),
      'checking',
    );
    expect([e401.code, e401.tier]).toEqual(['hub_unauthorized', 'config']);
    expect(e401.message).not.toContain('hf_secret_value_123456');
    expect(hubError(new HubApiError('http://hub/x', 503), 'x').tier).toBe('transient');
    expect(hubError(new HubApiError('http://hub/x', 429), 'x').code).toBe('hub_rate_limited');
    expect(hubError(new TypeError('fetch failed'), 'looking up a/b on http://hub').code).toBe(
      'hub_unreachable',
    );
  });
});
