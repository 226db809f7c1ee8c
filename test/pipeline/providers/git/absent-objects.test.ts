/**
 * Issue 21, "Missing objects", on real repositories built here whose mirror lacks blobs (loose
 * object files removed, as in the Magma snapshot that lacks a `.docx` and some `.gif`s): the
 * source export goes on without documents and lists them; a missing source file stops it with the
 * list; swe5g.resolve records the documents (`absent_files`) or skips with `object_missing`. For a
 * monorepo folder (Magma's registry entries), a file absent outside what the folder reads (its
 * path, its `reads`, its go.mod's local `replace` folders; Magma's snapshot lacks the
 * `cn/deploy/helm/templates/virtctl` binary) is listed, and the export goes on without it.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { absentFiles, exportCleanRepo } from '../../../../pipeline/providers/git/repo.js';
import { exportTree } from '../../../../pipeline/providers/git/export-tree.js';
import { removeScratch, scratchCheckout } from '../../../../stages/swe5g/testgen/executor.js';
import { checkFlip } from '../../../../stages/swe5g/testgen/generate.js';
import { resolveCandidate } from '../../../../stages/swe5g/resolve/resolve.js';
import { goReplaceDirs } from '../../../../stages/swe5g/resolve/reads.js';
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
      'feg/radius/src/go.mod':
        'module fbc/cwf/radius\n\ngo 1.21\n\nreplace (\n\tfbc/lib/go/machine => ../lib/go/machine\n\tmagma/orc8r/lib/go => ../../../orc8r/lib/go\n\texample.com/x => example.com/y v1.0.0\n)\n',
      'feg/radius/src/main.go': 'package main\n\nfunc main() {}\n',
      'feg/radius/lib/go/machine/m.go': 'package machine\n',
      'orc8r/lib/go/l.go': 'package lib\n',
      'cn/deploy/helm/templates/virtctl': '\u007fELF a binary no test reads',
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

  it('a monorepo folder goes on without a file outside what it reads; one it reads still stops it', async () => {
    const mirror = mirrorWithout('helm-gone.git', ['cn/deploy/helm/templates/virtctl']);
    const radius = { ...fx.candidate, registry_id: 'magma/magma:feg/radius/src' };
    const entry = { path: 'feg/radius/src', language: 'go' as const, reads: [] };
    const res = await resolveCandidate(mirror, radius, entry);
    expect(res.absent_files!.map((f) => f.path)).toEqual(['cn/deploy/helm/templates/virtctl']);
    // the build's export is told which absent files are unread; without that it refuses
    const dest = join(root, 'export-helm');
    const unread = (p: string): boolean => p === 'cn/deploy/helm/templates/virtctl';
    await exportCleanRepo(mirror, fx.candidate.base_commit, dest, unread);
    expect(existsSync(join(dest, 'orc8r', 'lib', 'go', 'l.go'))).toBe(true);
    expect(git(dest, 'status', '--porcelain')).toBe('');
    await expect(
      exportCleanRepo(mirror, fx.candidate.base_commit, join(root, 'export-helm2')),
    ).rejects.toMatchObject({ code: 'source_objects_missing' });
    // a whole-repository entry reads everything
    await expect(resolveCandidate(mirror, fx.candidate)).rejects.toMatchObject({
      code: 'object_missing',
    });
    // a Python folder reads its `reads` folders
    const py = { ...fx.candidate, registry_id: 'magma/magma:lte', language: 'python' as const };
    const libGone = mirrorWithout('lib-gone.git', ['orc8r/lib/go/l.go']);
    const outside = await resolveCandidate(libGone, py, {
      path: 'lte',
      language: 'python',
      reads: ['orc8r/gateway/python'],
    });
    expect(outside.absent_files!.map((f) => f.path)).toEqual(['orc8r/lib/go/l.go']);
    await expect(
      resolveCandidate(libGone, py, { path: 'lte', language: 'python', reads: ['orc8r'] }),
    ).rejects.toMatchObject({ code: 'object_missing' });
    // and a Go module its go.mod's local replace folders
    const skip = await resolveCandidate(libGone, radius, entry).catch((e: unknown) => e);
    expect(skip).toBeInstanceOf(SkipItem);
    expect((skip as Error).message).toContain('orc8r/lib/go/l.go');
  });

  // The plain-tree exporter of testgen's host checks and the C subprojects (git archive reads
  // every blob, even under an exclude pathspec: the real Magma 2548, 3962 and 6900 failed
  // testgen with `git_archive_failed` on a `.gif` and a `.docx` of their docs)
  it('a plain tree (testgen scratch copy) goes on without absent documents and lists them', async () => {
    const mirror = mirrorWithout('tree-docs.git', ['docs/guide.docx', 'docs/pics/flow.gif']);
    const dest = join(root, 'tree-docs');
    const left = await exportTree(mirror, fx.candidate.base_commit, dest);
    expect(left.map((f) => f.path).sort()).toEqual(['docs/guide.docx', 'docs/pics/flow.gif']);
    expect(readFileSync(join(dest, 'lte', 'b.go'), 'utf8')).toContain('func B()');
    expect(readFileSync(join(dest, 'feg', 'radius', 'src', 'go.mod'), 'utf8')).toContain('replace');
    expect(existsSync(join(dest, 'docs', 'guide.docx'))).toBe(false);
    expect(existsSync(join(dest, '.git'))).toBe(false);
    expect(existsSync(`${dest}.part`)).toBe(false);
    const scratch = await scratchCheckout(mirror, fx.candidate.base_commit);
    try {
      expect(readFileSync(join(scratch, 'lte', 'a.go'), 'utf8')).toContain('return 1');
    } finally {
      removeScratch(scratch);
    }
  });

  it('a plain tree: a complete mirror lists nothing; an absent source file or an unknown commit stops it', async () => {
    const whole = join(root, 'tree-whole');
    expect(await exportTree(fx.dir, fx.candidate.merge_commit, whole)).toEqual([]);
    expect(readFileSync(join(whole, 'lte', 'a.go'), 'utf8')).toContain('return 3');
    const mirror = mirrorWithout('tree-src.git', ['lte/b.go', 'docs/pics/flow.gif']);
    const dest = join(root, 'tree-src');
    const err = await exportTree(mirror, fx.candidate.base_commit, dest).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'source_objects_missing', tier: 'content' });
    expect((err as Error).message).toMatch(/lte\/b\.go \([0-9a-f]{40}\)/);
    expect((err as Error).message).not.toContain('flow.gif');
    expect(existsSync(dest) || existsSync(`${dest}.part`)).toBe(false);
    // a file the caller knows is unread (an instance's absent_files) does not stop it
    const ok = await exportTree(mirror, fx.candidate.base_commit, dest, (p) => p === 'lte/b.go');
    expect(ok.map((f) => f.path).sort()).toEqual(['docs/pics/flow.gif', 'lte/b.go']);
    expect(existsSync(join(dest, 'lte', 'a.go'))).toBe(true);
    const unknown = await exportTree(mirror, 'f'.repeat(40), join(root, 'tree-unknown')).catch(
      (e: unknown) => e,
    );
    expect(unknown).toMatchObject({ code: 'git_export_failed', tier: 'infra' });
    expect((unknown as Error).message).toContain('f'.repeat(40));
  });

  // real Magma 6900: its folder's absent `cn/deploy/helm/templates/virtctl` (a binary resolve
  // listed in absent_files) stopped testgen's flip check with source_objects_missing
  it("testgen's flip check goes on without the instance's absent_files, and stops without them", async () => {
    const mirror = mirrorWithout('flip-helm.git', ['cn/deploy/helm/templates/virtctl']);
    const patch = [
      'diff --git a/lte/a_test.go b/lte/a_test.go',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/lte/a_test.go',
      '@@ -0,0 +1,9 @@',
      '+package lte',
      '+',
      '+import "testing"',
      '+',
      '+func TestA(t *testing.T) {',
      '+\tif A() != 3 {',
      '+\t\tt.Fatal(A())',
      '+\t}',
      '+}',
      '',
    ].join('\n');
    const r = {
      base_commit: fx.candidate.base_commit,
      merge_commit: fx.candidate.merge_commit,
      language: 'go' as const,
    };
    const absent_files = [
      {
        path: 'cn/deploy/helm/templates/virtctl',
        object: 'ebf15c98fffea0232b0f4a32a6d55601822448e6',
      },
    ];
    const ok = await checkFlip(
      mirror,
      { ...r, absent_files },
      patch,
      ['example.com/m/lte::TestA'],
      120_000,
    );
    expect(ok, JSON.stringify(ok).slice(0, 1500)).toMatchObject({ ok: true });
    const refused = await checkFlip(mirror, r, patch, ['example.com/m/lte::TestA'], 120_000).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: 'source_objects_missing' });
    expect((refused as Error).message).toContain('cn/deploy/helm/templates/virtctl');
  }, 300_000);

  it('goReplaceDirs: local replace folders relative to the module, not module paths', () => {
    const goMod =
      'replace (\n\ta => ../lib/go/machine\n\tb => ../../../orc8r/lib/go\n\tc => example.com/y v1.0.0\n\td => ./sub\n)\nreplace e => ../../../../outside\n';
    expect(goReplaceDirs(goMod, 'feg/radius/src')).toEqual([
      'feg/radius/lib/go/machine',
      'orc8r/lib/go',
      'feg/radius/src/sub',
    ]);
  });
});
