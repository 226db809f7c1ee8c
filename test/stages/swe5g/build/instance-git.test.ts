/**
 * The instance layer's `.git` over an env layer holding the env commit's clean repository
 * (stages/swe5g/build/instance-git.ts), on a git history this test builds: a tag (the env commit), a
 * side branch forked before it and merged after it, the base commit, and a later fix commit. The
 * layers are replayed on the host (the env repository, then the instance copy over it, then the
 * deletions), and the image contract's rules are checked with git's own commands.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instanceGitOverEnv } from '../../../../stages/swe5g/build/instance-git.js';
import { deltaContext, treeDelta } from '../../../../stages/swe5g/build/tree-delta.js';
import { exportCleanRepo } from '../../../../pipeline/providers/git/repo.js';
import { commit, git } from '../../../fixtures/git-repo.js';

let root: string;
let app: string;
let envCommit: string;
let forkPoint: string;
let baseCommit: string;
let fixCommit: string;

const g = (dir: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

/** Size of a folder's files, bytes. */
function bytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  return n;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-c-git-'));
  app = join(root, 'app');
  mkdirSync(app, { recursive: true });
  git(app, 'init', '-q', '-b', 'main');
  const big = Array.from({ length: 4000 }, (_, i) => `int v${i} = ${i * 7919};`).join('\n');
  forkPoint = commit(
    app,
    { 'meson.build': "project('app', 'c')\n", 'lib/big.c': big, 'src/a.c': 'int a;\n' },
    'first',
  );
  envCommit = commit(app, { 'src/a.c': 'int a = 1;\n', 'src/old.c': 'int old;\n' }, 'v1.0.0');
  git(app, 'tag', 'v1.0.0');
  // a side branch forked before the tag, merged after it
  git(app, 'checkout', '-q', '-b', 'side', forkPoint);
  commit(app, { 'src/side.c': 'int side;\n' }, 'side');
  git(app, 'checkout', '-q', 'main');
  git(app, 'rm', '-q', 'src/old.c');
  commit(app, { 'src/a.c': 'int a = 2;\n' }, 'after the tag');
  git(app, 'merge', '-q', '--no-edit', 'side');
  baseCommit = git(app, 'rev-parse', 'HEAD');
  fixCommit = commit(app, { 'src/a.c': 'int a = 3; /* the fix */\n' }, 'the fix');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a C instance's .git over the env layer's repository", () => {
  it('adds only the commits after the env commit; the replayed layers keep the image contract', async () => {
    const envRepo = join(root, 'envsrc');
    await exportCleanRepo(app, envCommit, envRepo);
    const clean = join(root, 'clean');
    await exportCleanRepo(app, baseCommit, clean);
    const dest = join(root, 'delta.git');
    const out = await instanceGitOverEnv({
      mirror: app,
      envCommit,
      baseCommit,
      cleanRepo: clean,
      envGit: join(envRepo, '.git'),
      destGit: dest,
    });
    expect(out).not.toBeNull();
    // base, the merge's side commit and the commit between: three after the tag
    expect(out!.commits).toBe(3);
    expect(out!.shallow).toEqual([envCommit, forkPoint].sort());
    // the big file is unchanged since the env commit: its blob stays in the env layer
    expect(out!.pack_bytes).toBeLessThan(bytes(join(clean, '.git')) / 2);

    // replay: env layer, then the instance layer's copy (delta files + .git), then deletions
    const delta = await treeDelta(app, envCommit, baseCommit);
    const ctx = deltaContext(clean, delta, join(root, 'delta'), dest);
    const testbed = join(root, 'testbed');
    cpSync(envRepo, testbed, { recursive: true, verbatimSymlinks: true });
    cpSync(ctx.dir, testbed, { recursive: true, verbatimSymlinks: true });
    for (const p of ctx.deletedList.split('\0').filter(Boolean))
      rmSync(join(testbed, p), { recursive: true, force: true });

    expect(g(testbed, 'rev-parse', 'HEAD')).toBe(baseCommit);
    expect(g(testbed, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    const all = g(testbed, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)')
      .split('\n')
      .sort();
    const reachable = [
      ...new Set(
        g(testbed, 'rev-list', '--objects', '--all')
          .split('\n')
          .map((l) => l.split(' ')[0]!),
      ),
    ].sort();
    expect(all).toEqual(reachable); // nothing unreachable, so nothing of the fix
    expect(all).not.toContain(fixCommit);
    for (const ref of g(testbed, 'for-each-ref', '--format=%(objectname)').split('\n'))
      expect(ref).toBe(baseCommit);
    expect(g(testbed, 'log', '--format=%H', 'HEAD').split('\n')).toContain(envCommit);
    expect(g(testbed, 'show', 'HEAD:src/side.c')).toBe('int side;');
  });

  it('returns null when the history cannot be packed (a commit the mirror lacks)', async () => {
    const clean = join(root, 'clean2');
    await exportCleanRepo(app, baseCommit, clean);
    const out = await instanceGitOverEnv({
      mirror: app,
      envCommit: '0'.repeat(40),
      baseCommit,
      cleanRepo: clean,
      envGit: join(root, 'envsrc', '.git'),
      destGit: join(root, 'bad.git'),
    }).catch((err: unknown) => err);
    expect(out).toBeNull();
  });
});
