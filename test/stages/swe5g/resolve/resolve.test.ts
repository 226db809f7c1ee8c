import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureMirror } from '../../../../pipeline/providers/git/repo.js';
import {
  goDirective,
  mirrorPath,
  mirrorSource,
  resolveCandidate,
} from '../../../../stages/swe5g/resolve/resolve.js';
import { SkipItem } from '../../../../pipeline/errors.js';
import { filesOfPatch, packageDirs } from '../../../../stages/swe5g/resolve/packages.js';
import { goFixture } from '../../../fixtures/repos/go-nil.js';
import { pyFixture } from '../../../fixtures/repos/py-none.js';
import { cFixture } from '../../../fixtures/repos/c-null.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-resolve-'));
});

async function mirrored(fx: ReturnType<typeof goFixture>): Promise<string> {
  const src = mirrorSource(fx.candidate.repo, join(root, 'src'), undefined);
  expect(src).toBe(join(root, 'src', 'fixture', `${fx.candidate.repo.split('/')[1]}.git`));
  return ensureMirror(src, mirrorPath(join(root, 'state'), fx.candidate.repo), [
    fx.candidate.merge_commit,
  ]);
}

describe('swe5g.resolve', () => {
  it('Go: patch/test_patch split, version from go.mod, test_dirs from the fix', async () => {
    const fx = goFixture(join(root, 'src'), 'shipped');
    const r = await resolveCandidate(await mirrored(fx), fx.candidate);
    expect(r.version).toBe('1.21');
    expect(r.test_dirs).toEqual(['ngap']);
    expect(r.patch).toMatch(/^diff --git a\/ngap\/handler.go/);
    expect(r.test_patch).toMatch(/^diff --git a\/ngap\/handler_nil_test.go/);
    expect(r.environment_setup_commit).toBe(fx.candidate.base_commit);
  });

  it('Go: a fix that also touches the root go.mod/go.sum tests its packages, not the root', async () => {
    const fx = goFixture(join(root, 'src'), 'gomod');
    const r = await resolveCandidate(await mirrored(fx), fx.candidate);
    expect(r.patch).toContain('+++ b/go.mod');
    expect(r.test_dirs).toEqual(['ngap']);
  });

  it('packageDirs: Go packages, C and Python source folders; filesOfPatch', () => {
    const files = [
      'go.mod',
      'go.sum',
      'ngap/handler.go',
      'docs/x.md',
      'main.go',
      'lib/a.h',
      'p/m.py',
    ];
    expect(packageDirs(files, 'go')).toEqual(['.', 'ngap']);
    expect(
      packageDirs(
        files.filter((f) => f !== 'main.go'),
        'go',
      ),
    ).toEqual(['ngap']);
    expect(packageDirs(files, 'c')).toEqual(['lib']);
    expect(packageDirs(files, 'python')).toEqual(['p']);
    expect(
      filesOfPatch('diff --git a/go.mod b/go.mod\n--- a/go.mod\ndiff --git a/x/y.go b/x/y.go\n'),
    ).toEqual(['go.mod', 'x/y.go']);
  });

  it('Python and C: version from the newest tag reaching the base; tests/ is test_patch', async () => {
    for (const fx of [pyFixture(join(root, 'src')), cFixture(join(root, 'src'))]) {
      const r = await resolveCandidate(await mirrored(fx), fx.candidate);
      expect(r.version).toBe('v0.1.0'); // v0.2.0 is on the merge, after the base
      expect(r.test_patch).toContain('+++ b/tests/');
      expect(r.patch).not.toContain('+++ b/tests/');
    }
  });

  it('skips a candidate whose base_commit is not the first parent of merge_commit', async () => {
    const fx = goFixture(join(root, 'src'), 'good');
    const dir = await mirrored(fx);
    const err = await resolveCandidate(dir, { ...fx.candidate, base_commit: fx.prHead }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SkipItem);
    expect((err as SkipItem).code).toBe('base_commit_mismatch');
  });

  it('names a commit the source does not have', async () => {
    const fx = goFixture(join(root, 'src'), 'badfix');
    await expect(
      ensureMirror(fx.dir, mirrorPath(join(root, 'state2'), fx.candidate.repo), ['0'.repeat(40)]),
    ).rejects.toMatchObject({ code: 'commit_not_found' });
  });

  it('reads the go directive', () => {
    expect(goDirective('module x\n\ngo 1.22.3\n')).toBe('1.22.3');
    expect(goDirective('module x\n')).toBeUndefined();
  });
});
