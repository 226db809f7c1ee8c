/**
 * The C environment commit (issue 21, c-configure.ts) on real git repositories built by the test:
 * the version tag when nothing meson configures changed after it, else the commit that last
 * changed a configure input (a `meson.build`, a `*.in` template) on the base's first-parent line,
 * a merge when the change came in through a side branch.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureMirror } from '../../../../pipeline/providers/git/repo.js';
import { mirrorPath, resolveCandidate } from '../../../../stages/swe5g/resolve/resolve.js';
import {
  configureStateCommit,
  isConfigureInput,
} from '../../../../stages/swe5g/resolve/c-configure.js';
import { buildFixture, type Fixture } from '../../../fixtures/repos/builder.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-c-configure-'));
});

const base = {
  'meson.build': "project('nf', 'c')\nsubdir('lib')\n",
  'lib/meson.build': "core = static_library('core', 'core.c')\n",
  'lib/core.c': 'int core_add(int a, int b) { return a + b; }\n',
  'configs/nf.yaml.in': 'port: @PORT@\n',
  'src/amf/handler.c': 'int amf_handle(int *ue) { return *ue + 1; }\n',
};
const fix = { 'src/amf/handler.c': 'int amf_handle(int *ue) { return ue ? *ue + 1 : -1; }\n' };

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
}

async function envCommitOf(fx: Fixture, name: string): Promise<string> {
  const state = join(root, `state-${name}`);
  const dir = mirrorPath(state, fx.candidate.repo);
  await ensureMirror(fx.dir, dir, [fx.candidate.base_commit, fx.candidate.merge_commit]);
  const r = await resolveCandidate(dir, fx.candidate);
  expect(r.version).toBe('v0.1.0');
  return r.environment_setup_commit;
}

function fixture(name: string, afterTag: Record<string, string>[]): Fixture {
  return buildFixture(join(root, name), {
    owner: 'acme',
    name: 'nf',
    language: 'c',
    pr: 3,
    base,
    afterTag,
    fix,
  });
}

describe('C environment commit: the configure state of the base', () => {
  it('isConfigureInput: meson files, templates and subprojects, not sources or copies', () => {
    for (const p of [
      'meson.build',
      'lib/sbi/meson.build',
      'meson_options.txt',
      'meson.options',
      'configs/open5gs/scp.yaml.in',
      'subprojects/freeDiameter.wrap',
      'subprojects/prometheus-client-c/CMakeLists.txt',
    ])
      expect(isConfigureInput(p), p).toBe(true);
    for (const p of ['lib/core.c', 'src/amf/meson.c', 'configs/open5gs/tls/ca.crt', 'README.in.md'])
      expect(isConfigureInput(p), p).toBe(false);
  });

  it('the tag when only sources changed after it', async () => {
    const fx = fixture('src-only', [
      { 'lib/core.c': 'int core_add(int a, int b) { return b + a; }\n' },
    ]);
    const env = await envCommitOf(fx, 'src-only');
    expect(env).toBe(git(fx.dir, 'rev-parse', 'v0.1.0^{commit}'));
    expect(env).not.toBe(fx.candidate.base_commit);
  });

  it('the commit that last changed a meson.build, then a template; sources after it do not count', async () => {
    const fx = fixture('meson-then-src', [
      { 'lib/meson.build': "core = static_library('core', 'core.c', c_args: '-DX')\n" },
      { 'configs/nf.yaml.in': 'port: @PORT@\nhost: @HOST@\n' },
      { 'lib/core.c': 'int core_add(int a, int b) { return b + a; }\n' },
    ]);
    const env = await envCommitOf(fx, 'meson-then-src');
    // base = after (3), env = after (2): the template is the last configure input changed
    expect(env).toBe(git(fx.dir, 'rev-parse', `${fx.candidate.base_commit}~1`));
    expect(git(fx.dir, 'log', '-1', '--format=%s', env)).toBe('after the release (2)');
  });

  it('the base itself when its own commit changed a configure input', async () => {
    const fx = fixture('meson-at-base', [
      { 'lib/core.c': 'int core_add(int a, int b) { return b + a; }\n' },
      { 'meson.build': "project('nf', 'c', version: '0.1.1')\nsubdir('lib')\n" },
    ]);
    expect(await envCommitOf(fx, 'meson-at-base')).toBe(fx.candidate.base_commit);
  });

  it('first-parent line: a meson.build of a merged side branch gives the merge commit', async () => {
    const dir = join(root, 'merge');
    mkdirSync(dir, { recursive: true });
    const write = (files: Record<string, string>): void => {
      for (const [p, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, p)), { recursive: true });
        writeFileSync(join(dir, p), text);
      }
    };
    const commit = (msg: string): void => {
      git(dir, 'add', '-A');
      git(dir, '-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '-q', '-m', msg);
    };
    git(dir, 'init', '-q', '--initial-branch=main');
    write(base);
    commit('initial');
    git(dir, 'tag', 'v0.1.0');
    git(dir, 'checkout', '-q', '-b', 'side');
    write({ 'lib/meson.build': "core = static_library('core', 'core.c', c_args: '-DY')\n" });
    commit('side: meson');
    write({ 'lib/core.c': 'int core_add(int a, int b) { return b + a; }\n' });
    commit('side: source');
    git(dir, 'checkout', '-q', 'main');
    write({ 'src/amf/handler.c': 'int amf_handle(int *ue) { return *ue + 2; }\n' });
    commit('main: source');
    git(
      dir,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@localhost',
      'merge',
      '-q',
      '--no-ff',
      '-m',
      'merge side',
      'side',
    );
    const merge = git(dir, 'rev-parse', 'HEAD');
    write({ 'src/amf/handler.c': 'int amf_handle(int *ue) { return *ue + 3; }\n' });
    commit('main: after the merge');
    const tag = git(dir, 'rev-parse', 'v0.1.0^{commit}');
    expect(await configureStateCommit(dir, tag, git(dir, 'rev-parse', 'HEAD'))).toBe(merge);
  });
});
