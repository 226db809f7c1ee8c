import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyPatch,
  diffSplit,
  ensureMirror,
  exportCleanRepo,
  isTestPath,
} from '../../../../pipeline/providers/git/repo.js';
import { goFixture } from '../../../fixtures/repos/go-nil.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';

const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

let root: string;
let fx: Fixture;
let mirror: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'telebench-git-'));
  fx = goFixture(join(root, 'src'), 'shipped');
  mirror = join(root, 'mirror.git');
  await ensureMirror(fx.dir, mirror, [fx.candidate.merge_commit]);
});

describe('isTestPath', () => {
  it('follows per-language rules', () => {
    expect(isTestPath('go', 'internal/ngap/handler_test.go')).toBe(true);
    expect(isTestPath('go', 'internal/ngap/testdata/a.json')).toBe(true);
    expect(isTestPath('go', 'internal/ngap/handler.go')).toBe(false);
    expect(isTestPath('python', 'tests/test_x.py')).toBe(true);
    expect(isTestPath('python', 'pkg/x_test.py')).toBe(true);
    expect(isTestPath('python', 'pkg/x.py')).toBe(false);
    expect(isTestPath('c', 'tests/meson.build')).toBe(true);
    expect(isTestPath('c', 'src/ngap.c')).toBe(false);
  });
});

describe('bare mirror and diff split', () => {
  it('mirrors all refs including refs/pull/*', () => {
    expect(git(mirror, 'rev-parse', 'refs/pull/162/head')).toBe(fx.prHead);
    expect(git(mirror, 'tag', '--list')).toContain('v0.2.0');
  });

  it('splits base..merge into patch and test_patch', async () => {
    const s = await diffSplit(mirror, fx.candidate.base_commit, fx.candidate.merge_commit, 'go');
    expect(s.source_files).toEqual(['ngap/handler.go']);
    expect(s.test_files).toEqual(['ngap/handler_nil_test.go']);
    expect(s.patch).toContain('+	if req.GlobalRANNodeID == nil');
    expect(s.patch).not.toContain('_test.go');
    expect(s.test_patch).toContain('TestHandleNGSetupRequestNilGNbId');
  });
});

describe('exportCleanRepo', () => {
  it('holds only the base commit: no fix commit, no refs/pull, no tags', async () => {
    const dest = join(root, 'clean');
    await exportCleanRepo(mirror, fx.candidate.base_commit, dest);
    expect(git(dest, 'rev-parse', 'HEAD')).toBe(fx.candidate.base_commit);
    expect(git(dest, 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main');
    expect(git(dest, 'rev-list', '--all')).toBe(fx.candidate.base_commit);
    for (const sha of [fx.candidate.merge_commit, fx.prHead]) {
      expect(() => git(dest, 'cat-file', '-e', sha)).toThrow();
    }
    // the fixed source is nowhere in the object store
    const objects = git(dest, 'rev-list', '--objects', '--all');
    const fixedBlob = git(mirror, 'rev-parse', `${fx.candidate.merge_commit}:ngap/handler.go`);
    expect(objects).not.toContain(fixedBlob);
    expect(git(dest, 'count-objects', '-v')).toMatch(/count: \d+/);
  });

  it('applies a patch and names a patch that does not apply', async () => {
    const dest = join(root, 'apply');
    await exportCleanRepo(mirror, fx.candidate.base_commit, dest);
    const s = await diffSplit(mirror, fx.candidate.base_commit, fx.candidate.merge_commit, 'go');
    const r = await applyPatch(dest, s.patch, 'patch');
    expect(r.changed).toEqual(['ngap/handler.go']);
    expect(readFileSync(join(dest, 'ngap/handler.go'), 'utf8')).toContain('ErrMissingGNbID\n\t}');
    writeFileSync(join(dest, 'ngap/handler.go'), 'package ngap\n');
    await expect(applyPatch(dest, s.patch, 'patch')).rejects.toMatchObject({
      code: 'patch_does_not_apply',
    });
  });
});
