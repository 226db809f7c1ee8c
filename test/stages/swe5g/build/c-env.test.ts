/**
 * Host side of a C kept-build environment (stages/swe5g/build/c-env.ts) on git repositories this
 * test builds: a meson project whose `subprojects/dep.wrap` names a branch of another repository
 * (found in a mirrors folder laid out `<owner>+<name>/repo`), and a second wrap nobody can fetch;
 * the delta from the environment commit to a later base commit.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseWrapGit, resolveSubprojects } from '../../../../stages/swe5g/build/c-env.js';
import { exportTree } from '../../../../pipeline/providers/git/export-tree.js';
import { deltaContext, treeDelta } from '../../../../stages/swe5g/build/tree-delta.js';
import { exportCleanRepo } from '../../../../pipeline/providers/git/repo.js';

let root: string;
const sh = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();
const commit = (dir: string, files: Record<string, string | null>, date: string): string => {
  for (const [p, text] of Object.entries(files)) {
    if (text === null) rmSync(join(dir, p));
    else {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
  }
  sh(dir, 'add', '-A');
  execFileSync('git', ['commit', '-q', '-m', `at ${date}`], {
    cwd: dir,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    },
  });
  return sh(dir, 'rev-parse', 'HEAD');
};

let depOld: string;
let envCommit: string;
let baseCommit: string;
let app: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-c-env-'));
  const dep = join(root, 'work', 'dep');
  mkdirSync(dep, { recursive: true });
  sh(dep, 'init', '-q', '-b', 'r1.5.0');
  depOld = commit(dep, { 'meson.build': "project('dep', 'c')\n# old\n" }, '2022-01-01T00:00:00Z');
  commit(dep, { 'meson.build': "project('dep', 'c')\n# new\n" }, '2024-01-01T00:00:00Z');
  mkdirSync(join(root, 'mirrors', 'acme+dep'), { recursive: true });
  sh(root, 'clone', '-q', '--mirror', dep, join(root, 'mirrors', 'acme+dep', 'repo'));
  app = join(root, 'work', 'app');
  mkdirSync(app, { recursive: true });
  sh(app, 'init', '-q', '-b', 'main');
  envCommit = commit(
    app,
    {
      'meson.build': "project('app', 'c')\n",
      'subprojects/dep.wrap':
        '[wrap-git]\ndirectory = dep\nurl = https://github.com/acme/dep.git\nrevision = r1.5.0\n',
      'subprojects/gone.wrap':
        '[wrap-git]\nurl = https://github.com/acme/gone.git\nrevision = v1\n',
      'src/a.c': 'int a;\n',
      'src/old.c': 'int old;\n',
    },
    '2022-06-01T00:00:00Z',
  );
  baseCommit = commit(
    app,
    { 'src/a.c': 'int a = 1;\n', 'src/old.c': null, 'src/new.c': 'int n;\n' },
    '2022-07-01T00:00:00Z',
  );
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('C kept-build environment inputs', () => {
  it('parses [wrap-git] files', () => {
    expect(parseWrapGit('[wrap-git]\nurl = https://x/y.git\nrevision = r1\n', 'y.wrap')).toEqual({
      url: 'https://x/y.git',
      revision: 'r1',
      directory: 'y',
    });
    expect(parseWrapGit('[wrap-file]\nsource_url = https://x/y.tgz\n', 'y.wrap')).toBeNull();
  });

  it('reads wraps from the mirrors, pins a branch to the environment date, lists the missing one', async () => {
    const dest = join(root, 'subs');
    const { resolved, missing } = await resolveSubprojects({
      mirror: app,
      commit: envCommit,
      dest,
      stateDir: join(root, 'state'),
      gitUrlBase: join(root, 'nowhere'),
      mirrorsDir: join(root, 'mirrors'),
    });
    expect(resolved).toEqual([
      { directory: 'dep', repo: 'acme/dep', revision: 'r1.5.0', commit: depOld },
    ]);
    expect(readFileSync(join(dest, 'dep', 'meson.build'), 'utf8')).toContain('# old');
    expect(existsSync(join(dest, 'dep', '.git'))).toBe(false);
    expect(missing.map((m) => [m.directory, m.url])).toEqual([
      ['gone', 'https://github.com/acme/gone.git'],
    ]);
  });

  it('with source: git fetches nothing: a subproject only git_url_base has is missing, never fetched', async () => {
    // a real "remote" under git_url_base that has acme/gone: without offline it is cloned from there
    const gone = join(root, 'work', 'gone');
    mkdirSync(gone, { recursive: true });
    sh(gone, 'init', '-q', '-b', 'main');
    commit(gone, { 'meson.build': "project('gone', 'c')\n" }, '2022-01-01T00:00:00Z');
    sh(gone, 'tag', 'v1');
    sh(root, 'clone', '-q', '--bare', gone, join(root, 'remote', 'acme', 'gone.git'));
    const args = {
      mirror: app,
      commit: envCommit,
      gitUrlBase: join(root, 'remote'),
      mirrorsDir: join(root, 'mirrors'),
    };
    const online = await resolveSubprojects({
      ...args,
      dest: join(root, 'subs-online'),
      stateDir: join(root, 'state-online'),
    });
    expect(online.resolved.map((r) => r.directory).sort()).toEqual(['dep', 'gone']);
    const offline = await resolveSubprojects({
      ...args,
      dest: join(root, 'subs-offline'),
      stateDir: join(root, 'state-offline'),
      offline: true,
    });
    expect(offline.resolved.map((r) => r.directory)).toEqual(['dep']);
    expect(offline.missing).toEqual([
      expect.objectContaining({
        directory: 'gone',
        reason: expect.stringContaining('swe5g.source: git fetches nothing'),
      }),
    ]);
    expect(existsSync(join(root, 'state-offline', 'git', 'acme+gone.git'))).toBe(false);
  });

  it('writes only the delta over the env tree, and lists what the base deleted', async () => {
    await exportTree(app, envCommit, join(root, 'envsrc'));
    expect(readFileSync(join(root, 'envsrc', 'src', 'old.c'), 'utf8')).toBe('int old;\n');
    const delta = await treeDelta(app, envCommit, baseCommit);
    expect(delta).toEqual({ changed: ['src/a.c', 'src/new.c'], deleted: ['src/old.c'] });
    const clean = join(root, 'clean');
    await exportCleanRepo(app, baseCommit, clean);
    const ctx = deltaContext(clean, delta, join(root, 'delta'));
    expect(ctx.deletedList).toBe('src/old.c\0');
    expect(readFileSync(join(ctx.dir, 'src', 'a.c'), 'utf8')).toBe('int a = 1;\n');
    expect(existsSync(join(ctx.dir, 'meson.build'))).toBe(false); // unchanged: from the env layer
    expect(existsSync(join(ctx.dir, '.git', 'HEAD'))).toBe(true);
    expect(readFileSync(join(ctx.dir, '.git', 'info', 'exclude'), 'utf8')).toContain('.telebench/');
  });
});
