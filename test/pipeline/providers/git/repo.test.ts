import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  writeFileSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyPatch,
  diffSplit,
  ensureMirror,
  exportCleanRepo,
  fileAt,
  hostEnv,
  isTestPath,
  missingCommits,
  numstatPaths,
  patchFiles,
  unquoteGitPath,
} from '../../../../pipeline/providers/git/repo.js';
import { goFixture } from '../../../fixtures/repos/go-nil.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';

const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

/** A new empty repository on branch `main` in a fresh folder `<root>/<prefix>XXXXXX`. */
function newRepo(prefix: string): string {
  const dir = mkdtempSync(join(root, prefix));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 't@t');
  git(dir, 'config', 'user.name', 't');
  return dir;
}

let root: string;
let fx: Fixture;
let mirror: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'telebench-git-'));
  fx = goFixture(join(root, 'src'), 'shipped');
  mirror = join(root, 'mirror.git');
  await ensureMirror(fx.dir, mirror, [fx.candidate.merge_commit]);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

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

describe('fileAt and missingCommits tell "absent" from "git failed"', () => {
  const unknown = 'deadbeefdeadbeefdeadbeefdeadbeefdeadbeef';

  it('gives undefined only for a file the commit does not hold', async () => {
    const base = fx.candidate.base_commit;
    expect(await fileAt(mirror, base, 'ngap/handler.go')).toContain('package ngap');
    expect(await fileAt(mirror, base, 'no/such/file.go')).toBeUndefined();
    // an unknown commit is not an absent file
    await expect(fileAt(mirror, unknown, 'go.mod')).rejects.toMatchObject({
      code: 'commit_not_found',
      context: { repoDir: mirror, commit: unknown },
    });
  });

  it('names the repository and commit when the mirror is missing, not a repository or corrupt', async () => {
    const base = fx.candidate.base_commit;
    const gone = join(root, 'gone.git');
    await expect(fileAt(gone, base, 'go.mod')).rejects.toMatchObject({
      code: 'git_read_failed',
      message: expect.stringContaining(gone),
    });
    const empty = join(root, 'empty.git');
    mkdirSync(empty, { recursive: true });
    await expect(fileAt(empty, base, 'go.mod')).rejects.toThrow(/not a git repository/);
    await expect(missingCommits(empty, [base])).rejects.toMatchObject({
      code: 'git_read_failed',
      context: { repoDir: empty, commit: base },
    });
    // a mirror whose pack files were overwritten with garbage
    const corrupt = join(root, 'corrupt.git');
    cpSync(mirror, corrupt, { recursive: true });
    // a local clone keeps loose objects (and maybe packs): overwrite every object file
    let broken = 0;
    for (const sub of readdirSync(join(corrupt, 'objects'))) {
      if (sub === 'info') continue;
      for (const f of readdirSync(join(corrupt, 'objects', sub))) {
        if (f.endsWith('.idx')) continue;
        writeFileSync(join(corrupt, 'objects', sub, f), 'not a git object');
        broken++;
      }
    }
    expect(broken).toBeGreaterThan(0);
    await expect(fileAt(corrupt, base, 'ngap/handler.go')).rejects.toMatchObject({
      code: 'git_read_failed',
      message: expect.stringContaining(base),
    });
  });

  it('lists only commits git says it does not have', async () => {
    const base = fx.candidate.base_commit;
    expect(await missingCommits(mirror, [base, unknown])).toEqual([unknown]);
  });
});

describe('hostEnv', () => {
  it('passes PATH and asked-for names but never a secret variable', () => {
    const saved = process.env.GITHUB_TOKEN;
    process.env.GITHUB_TOKEN = 'ghp_secretvalue123';
    process.env.GOPROXY_TEST_HOSTENV = 'https://proxy.example';
    try {
      const env = hostEnv(['GOPROXY_TEST_HOSTENV', 'GITHUB_TOKEN']);
      expect(env.PATH).toBe(process.env.PATH);
      expect(env.GOPROXY_TEST_HOSTENV).toBe('https://proxy.example');
      expect(env).not.toHaveProperty('GITHUB_TOKEN');
      expect(Object.values(env)).not.toContain('ghp_secretvalue123');
    } finally {
      if (saved === undefined) delete process.env.GITHUB_TOKEN;
      else process.env.GITHUB_TOKEN = saved;
      delete process.env.GOPROXY_TEST_HOSTENV;
    }
  });
});

describe('paths from git are read NUL-separated (issue 14, section 1)', () => {
  it('a fix that adds größe.go keeps its exact name in source_files and its diff in patch', async () => {
    const dir = newRepo('telebench-git-names-');
    writeFileSync(join(dir, 'a.go'), 'package a\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'base');
    const base = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(join(dir, 'größe.go'), 'package a\n\nfunc Size() int { return 1 }\n');
    writeFileSync(join(dir, 'with space_test.go'), 'package a\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'fix');
    const fix = git(dir, 'rev-parse', 'HEAD');
    const s = await diffSplit(dir, base, fix, 'go');
    expect(s.source_files).toEqual(['größe.go']);
    expect(s.test_files).toEqual(['with space_test.go']);
    expect(s.patch).toContain('func Size()');
    expect(s.test_patch).toContain('with space_test.go');
  });

  it('applyPatch reads touched paths NUL-separated: a quoted name, a deletion, a rename', async () => {
    const dir = newRepo('telebench-git-apply-');
    writeFileSync(join(dir, 'old.txt'), 'old\n');
    writeFileSync(join(dir, 'moved.txt'), 'moved\n'.repeat(20));
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'base');
    git(dir, 'rm', '-q', 'old.txt');
    git(dir, 'mv', 'moved.txt', 'neu "ä".txt');
    writeFileSync(join(dir, 'größe.go'), 'package a\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'fix');
    const patch = execFileSync('git', ['diff', '--binary', '-M', 'HEAD~', 'HEAD'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(patch).toContain('"b/gr\\303\\266\\303\\237e.go"'); // git quotes it in the patch text
    git(dir, 'checkout', '-q', 'HEAD~');
    const r = await applyPatch(dir, patch, 'patch');
    expect(r.changed.sort()).toEqual(['größe.go', 'neu "ä".txt']);
    expect(r.deleted.sort()).toEqual(['moved.txt', 'old.txt']);
    // the patch-text reader agrees with git's own listing
    expect(patchFiles(patch)).toEqual([
      { oldPath: null, newPath: 'größe.go' },
      { oldPath: 'moved.txt', newPath: 'neu "ä".txt' },
      { oldPath: 'old.txt', newPath: null },
    ]);
  });

  it('numstatPaths, unquoteGitPath and patchFiles read exact names', () => {
    expect(
      numstatPaths('1\t0\tgr\u00f6\u00dfe.go\0-\t-\tbin.dat\0' + '2\t1\t\0a b\0c\nd\0'),
    ).toEqual(['größe.go', 'bin.dat', 'a b', 'c\nd']);
    expect(unquoteGitPath('"gr\\303\\266\\303\\237e.go"')).toBe('größe.go');
    expect(unquoteGitPath('"tab\\there \\"q\\" back\\\\slash"')).toBe('tab\there "q" back\\slash');
    expect(unquoteGitPath('plain name.go')).toBe('plain name.go');
    // a removed line that starts with '-- ' is hunk content, not a header; a plain diff; binary
    const plain = [
      '--- a/x.sql',
      '+++ b/x.sql',
      '@@ -1 +1 @@',
      '--- a comment',
      '+++ not a header',
      '--- a/y.go\t2024-01-01 00:00:00',
      '+++ b/y.go\t2024-01-01 00:00:00',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      'diff --git a/with space.bin b/with space.bin',
      'new file mode 100644',
      'index 0000000..1111111',
      'GIT binary patch',
      'literal 12',
      'zcmZo*',
      '',
      'literal 0',
      'HcmV?d00001',
      '',
    ].join('\n');
    expect(patchFiles(plain)).toEqual([
      { oldPath: 'x.sql', newPath: 'x.sql' },
      { oldPath: 'y.go', newPath: 'y.go' },
      { oldPath: null, newPath: 'with space.bin' },
    ]);
  });

  it('a text file with bytes that are not UTF-8 reaches the tree byte-exact through patch', async () => {
    const dir = newRepo('telebench-git-latin1-');
    const before = Buffer.from('int a; /* caf\xe9 */\n', 'latin1');
    const after = Buffer.from('int a; /* caf\xe9 */\nint b; /* \xff */\n', 'latin1');
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'x[1].c'), before);
    writeFileSync(join(dir, 'src', 'plain.c'), 'int c;\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'base');
    const base = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(join(dir, 'src', 'x[1].c'), after);
    writeFileSync(join(dir, 'src', 'plain.c'), 'int c;\nint d;\n');
    git(dir, 'commit', '-qam', 'fix');
    const fix = git(dir, 'rev-parse', 'HEAD');
    const s = await diffSplit(dir, base, fix, 'c');
    expect(s.source_files).toEqual(['src/plain.c', 'src/x[1].c']);
    expect(s.patch).toContain('+int d;'); // UTF-8 text stays a text diff
    expect(s.patch).toContain('GIT binary patch'); // the Latin-1 file goes as exact bytes
    git(dir, 'checkout', '-q', base);
    await applyPatch(dir, s.patch, 'patch');
    expect(readFileSync(join(dir, 'src', 'x[1].c'))).toEqual(after);
    expect(readFileSync(join(dir, 'src', 'plain.c'), 'utf8')).toBe('int c;\nint d;\n');
  });
});
