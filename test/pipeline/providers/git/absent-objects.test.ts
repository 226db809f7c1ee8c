/**
 * Issue 21, "Missing objects", on real repositories built here whose mirror lacks blobs (loose
 * object files removed, as in the Magma snapshot that lacks a `.docx` and some `.gif`s): the
 * source export goes on without documents and lists them; a missing source file stops it with the
 * list; swe5g.resolve records the documents (`absent_files`) or skips with `object_missing`.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { absentFiles, exportCleanRepo } from '../../../../pipeline/providers/git/repo.js';
import { resolveCandidate } from '../../../../stages/swe5g/resolve/resolve.js';
import { SkipItem, TelebenchError } from '../../../../pipeline/errors.js';
import { buildFixture, type Fixture } from '../../../fixtures/repos/builder.js';

const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

let root: string;
let fx: Fixture;

/** A `git clone --mirror` of the fixture without the blobs of `paths` at the base commit. */
function mirrorWithout(name: string, paths: string[]): string {
  const mirror = join(root, name);
  git(root, 'clone', '-q', '--mirror', fx.dir, mirror);
  for (const p of paths) {
    const blob = git(mirror, 'rev-parse', `${fx.candidate.base_commit}:${p}`);
    rmSync(join(mirror, 'objects', blob.slice(0, 2), blob.slice(2)));
  }
  return mirror;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-absent-'));
  fx = buildFixture(root, {
    owner: 'magma',
    name: 'magma',
    language: 'go',
    pr: 7,
    base: {
      'go.mod': 'module example.com/m\n\ngo 1.21\n',
      'lte/a.go': 'package lte\n\nfunc A() int { return 1 }\n',
      'lte/b.go': 'package lte\n\nfunc B() int { return 2 }\n',
      'docs/guide.docx': 'PK\u0003\u0004 a word document',
      'docs/pics/flow.gif': 'GIF89a an image',
    },
    fix: { 'lte/a.go': 'package lte\n\nfunc A() int { return 3 }\n' },
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a mirror that lacks some blobs', () => {
  it('exports the base commit without absent documents, lists them, and leaves a clean work tree', async () => {
    const mirror = mirrorWithout('docs-gone.git', ['docs/guide.docx', 'docs/pics/flow.gif']);
    expect((await absentFiles(mirror, fx.candidate.base_commit)).map((f) => f.path)).toEqual([
      'docs/guide.docx',
      'docs/pics/flow.gif',
    ]);
    const dest = join(root, 'export-docs');
    const left = await exportCleanRepo(mirror, fx.candidate.base_commit, dest);
    expect(left.map((f) => f.path)).toEqual(['docs/guide.docx', 'docs/pics/flow.gif']);
    expect(git(dest, 'rev-parse', 'HEAD')).toBe(fx.candidate.base_commit);
    expect(git(dest, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(existsSync(join(dest, 'lte', 'b.go'))).toBe(true);
    expect(existsSync(join(dest, 'docs', 'guide.docx'))).toBe(false);
    expect(git(dest, 'status', '--porcelain')).toBe('');
    expect(git(dest, 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main');
    const res = await resolveCandidate(mirror, fx.candidate);
    expect(res.absent_files!.map((f) => f.path)).toEqual(['docs/guide.docx', 'docs/pics/flow.gif']);
    expect(res.patch).toContain('return 3');
  });

  it('refuses an export and a resolve that would miss a source file, listing it', async () => {
    const mirror = mirrorWithout('src-gone.git', ['lte/b.go', 'docs/guide.docx']);
    const dest = join(root, 'export-src');
    const err = await exportCleanRepo(mirror, fx.candidate.base_commit, dest).catch((e) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect(err).toMatchObject({ code: 'source_objects_missing', tier: 'content' });
    expect((err as Error).message).toMatch(/lte\/b\.go \([0-9a-f]{40}\)/);
    expect((err as Error).message).not.toContain('guide.docx');
    const skip = await resolveCandidate(mirror, fx.candidate).catch((e) => e);
    expect(skip).toBeInstanceOf(SkipItem);
    expect(skip).toMatchObject({ code: 'object_missing' });
    expect((skip as Error).message).toMatch(/lte\/b\.go/);
  });
});
