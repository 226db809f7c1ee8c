/**
 * `telebench report swe5g` through the real CLI: the environments section reads the base commits'
 * dates from the state's git mirror (a real repository whose commits carry chosen committer
 * dates) and counts a +08:00 New Year commit under the earlier UTC year.
 */
import { describe, it, expect, afterEach } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../fixtures/cli.js';
import { commit, git, gitAt } from '../../fixtures/git-repo.js';
import { done, failed, storeWith } from '../../fixtures/swe5g-build-records.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('telebench report swe5g: environments by project and year', () => {
  it('reads the base commit dates from the mirror and counts a +08:00 New Year commit in the earlier UTC year', async () => {
    const root = mkdtempSync(join(tmpdir(), 'telebench-envyear-cli-'));
    dirs.push(root);
    const work = join(root, 'work');
    mkdirSync(work);
    git(work, 'init', '-q');
    const at = (date: string, n: number) => {
      commit(work, { 'f.txt': String(n) }, `c${n}`);
      // the committer date git's %cI gives back, offset and all
      gitAt(date, work, 'commit', '-q', '--amend', '--no-edit', '--reset-author');
      return git(work, 'rev-parse', 'HEAD');
    };
    const c2020 = at('2021-01-01T03:00:00+08:00', 1); // 2020-12-31T19:00Z
    const c2021 = at('2021-06-01T12:00:00+00:00', 2);
    expect(git(work, 'show', '-s', '--format=%cI', c2020)).toBe('2021-01-01T03:00:00+08:00');
    const state = join(root, 'state');
    mkdirSync(join(state, 'git'), { recursive: true });
    git(root, 'clone', '-q', '--mirror', work, join(state, 'git', 'free5gc+amf.git'));
    const store = storeWith(
      [
        { key: 'free5gc__amf-1', repo: 'free5gc/amf', base: c2020, build: done },
        { key: 'free5gc__amf-2', repo: 'free5gc/amf', base: c2021, build: done },
        {
          key: 'free5gc__amf-3',
          repo: 'free5gc/amf',
          base: c2021,
          build: failed('dependency_unavailable', { image: 'telebench-env:ab' }),
        },
      ],
      dirs,
      state,
    );
    store.close();
    const r = await runCli(['--state', state, 'report', 'swe5g']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('| free5gc | 2020 | 1 | 1 | 0 | 0 | 0 | 100.0% |');
    expect(r.stdout).toContain(
      '| free5gc | 2021 | 2 | 1 | 1 (dependency_unavailable 1) | 0 | 0 | 50.0% |',
    );
    expect(r.stdout).toContain('- free5gc: not met (66.7% < 90%)');
  }, 120_000);
});
