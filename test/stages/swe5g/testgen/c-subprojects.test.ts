/**
 * Testgen's host checks of a C meson project whose build needs a `[wrap-git]` subproject
 * (Open5GS: prometheus-client-c, freeDiameter). A `git archive` checkout holds only the wrap
 * file; meson cloned the subproject from its URL at `meson setup`, so on a machine without
 * GitHub (and with `swe5g.source: git`, where nothing may be fetched) every direct call read as
 * "does not compile at base_commit": measured on 25 of 25 real Open5GS v2.7.0 candidates. Now the
 * subprojects come from the mirrors folder (testgen/c-subprojects.ts) and meson never downloads.
 * Real repositories built here, a real mirrors folder, the host's meson and cc; no network.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateTestGen,
  makeHostRunner,
  type ScratchPreparer,
} from '../../../../stages/swe5g/testgen/generate.js';
import { cSubprojectPreparer } from '../../../../stages/swe5g/testgen/c-subprojects.js';
import { scratchCheckout, removeScratch } from '../../../../stages/swe5g/testgen/executor.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import type { MissingSubproject } from '../../../../stages/swe5g/build/c-env.js';
import { commit, gitAt } from '../../../fixtures/git-repo.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';

const settings = testgenSchema.parse({ verify: 'a', test_timeout_s: 300 });
let root: string;
let mirrors: string;
const repos: BuiltRepo[] = [];

/** The subproject `acme/dep`: `dep_len` in a static library, exported as `dep_dep`. */
const DEP_V1 = {
  'meson.build':
    "project('dep', 'c')\ndep_lib = static_library('dep', 'dep.c')\ndep_dep = declare_dependency(link_with: dep_lib, include_directories: include_directories('.'))\n",
  'dep.h': '#ifndef DEP_H\n#define DEP_H\nint dep_len(const char *s);\n#endif\n',
  'dep.c':
    '#include <string.h>\n#include "dep.h"\nint dep_len(const char *s) { return (int)strlen(s); }\n',
};

/** ccache's counters of this test's own cache (`ccache --print-stats`). */
function ccacheStats(): Record<string, number> {
  const out = execFileSync('ccache', ['--print-stats'], { encoding: 'utf8' });
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => l.split('\t'))
      .map(([k, v]) => [k!, Number(v)]),
  );
}

const savedCcache = process.env.CCACHE_DIR;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-c-subprojects-'));
  // a cache of this test's own, so its counters say what these builds did
  process.env.CCACHE_DIR = join(root, 'ccache');
  const work = join(root, 'dep-work');
  mkdirSync(work);
  gitAt('2023-06-01T00:00:00Z', work, 'init', '-q', '-b', 'main');
  commit(work, DEP_V1, 'dep v1');
  gitAt(
    '2023-06-01T00:00:00Z',
    work,
    'commit',
    '-q',
    '--amend',
    '--no-edit',
    '--date=2023-06-01T00:00:00Z',
  );
  gitAt('2023-06-01T00:00:00Z', work, 'tag', 'v1.0');
  // a later commit on main (after the project's 2024-01-01 commits): the checkout must not get it
  commit(work, { 'LATER.txt': 'from 2025\n' }, 'later');
  gitAt('2025-01-01T00:00:00Z', work, 'commit', '-q', '--amend', '--no-edit');
  mirrors = join(root, 'mirrors');
  mkdirSync(join(mirrors, 'acme+dep'), { recursive: true });
  execFileSync('git', ['clone', '-q', '--bare', work, join(mirrors, 'acme+dep', 'repo')]);
});
afterAll(() => {
  if (savedCcache === undefined) delete process.env.CCACHE_DIR;
  else process.env.CCACHE_DIR = savedCcache;
  repos.forEach((r) => r.cleanup());
  rmSync(root, { recursive: true, force: true });
});

/** A meson project whose library `libngap` links the subproject `dep` named by `wrap`. */
function project(wrapName: string, wrap: string, code: string): Record<string, string> {
  return {
    'meson.build': `project('cnull', 'c')\ndep_dep = subproject('${wrapName.replace(/\.wrap$/, '')}').get_variable('dep_dep')\nsubdir('src')\n`,
    [`subprojects/${wrapName}`]: wrap,
    'src/meson.build':
      "ngap_sources = files('ngap.c')\nlibngap = static_library('ngap', sources: ngap_sources, dependencies: dep_dep, include_directories: include_directories('.'))\n",
    'src/ngap.h':
      '#ifndef NGAP_H\n#define NGAP_H\n#include <stddef.h>\ntypedef struct { const char *value; } gnb_id_t;\ntypedef struct { gnb_id_t *gnb_id; } ngsetup_t;\n#endif\n',
    'src/ngap.c': code,
  };
}

const PARENT = `#include "ngap.h"
#include "dep.h"

int ngap_gnb_id_len(const ngsetup_t *req)
{
    return dep_len(req->gnb_id->value);
}
`;
const GOLD = `#include "ngap.h"
#include "dep.h"

int ngap_gnb_id_len(const ngsetup_t *req)
{
    if (req->gnb_id == NULL) {
        return -1;
    }
    return dep_len(req->gnb_id->value);
}
`;
const BRANCH_WRAP = '[wrap-git]\nurl = https://github.com/acme/dep.git\nrevision = main\n';

function preparer(missing: MissingSubproject[], mirrorsDir = mirrors): ScratchPreparer {
  return cSubprojectPreparer({
    stateDir: join(root, `state-${missing.length}-${Math.random().toString(36).slice(2)}`),
    // nothing may come from here: an unreachable base, and `offline` on
    gitUrlBase: 'http://127.0.0.1:9',
    mirrorsDir,
    offline: true,
    onMissing: (m) => missing.push(m),
  });
}

async function generated(wrapName: string, wrap: string, prepare: ScratchPreparer) {
  const repo = buildRepo(project(wrapName, wrap, PARENT));
  repos.push(repo);
  const fix = repo.commit({ 'src/ngap.c': GOLD }, 'fix');
  const r = resolvedOf(repo, fix, 'c');
  return generateTestGen(repo.dir, r, settings, makeHostRunner(prepare));
}

describe('testgen host checks: meson subprojects from the mirrors folder, never downloaded', () => {
  it('a branch wrap: the direct call builds against the mirrored subproject and flips (Strategy A)', async () => {
    const missing: MissingSubproject[] = [];
    const gen = await generated('dep.wrap', BRANCH_WRAP, preparer(missing));
    expect(missing).toEqual([]);
    expect(gen.testgen.strategy, gen.testgen.strategy_reason).toBe('A');
    expect(gen.testgen.FAIL_TO_PASS).toEqual(['f2p::f2p_call_ngap_gnb_id_len']);
    // the fix commit's build (another scratch folder) took the unchanged objects from ccache
    const stats = ccacheStats();
    expect(stats.direct_cache_hit! + stats.preprocessed_cache_hit!).toBeGreaterThan(0);
  });

  it('a subproject the mirrors lack: said once with its URL, no download tried, A not used "does not compile"', async () => {
    const missing: MissingSubproject[] = [];
    const empty = join(root, 'no-mirrors');
    mkdirSync(empty, { recursive: true });
    const gen = await generated('dep.wrap', BRANCH_WRAP, preparer(missing, empty));
    expect(gen.testgen.strategy).toBe('B');
    expect(gen.testgen.strategy_reason).toMatch(/does not compile at base_commit/);
    expect(missing.map((m) => m.url)).toEqual(['https://github.com/acme/dep.git']);
    expect(missing[0]!.reason).toMatch(/not in the mirrors folder/);
  });

  it('puts each wrap where meson looks, pinned like the environment layer (branch by date, tag, directory=)', async () => {
    const cases: { wrapName: string; wrap: string; dir: string; later: boolean }[] = [
      // a branch: its last commit at or before the checkout's commit date (2024), not the 2025 one
      { wrapName: 'dep.wrap', wrap: BRANCH_WRAP, dir: 'dep', later: false },
      // a tag, into the wrap's own `directory`
      {
        wrapName: 'dep.wrap',
        wrap: '[wrap-git]\nurl = https://github.com/acme/dep.git\nrevision = v1.0\ndirectory = dep-1.0\n',
        dir: 'dep-1.0',
        later: false,
      },
    ];
    for (const c of cases) {
      const repo = buildRepo(project(c.wrapName, c.wrap, PARENT));
      repos.push(repo);
      const dir = await scratchCheckout(repo.dir, repo.base);
      try {
        await preparer([])(dir, repo.dir, repo.base, 'c');
        expect(readFileSync(join(dir, 'subprojects', c.dir, 'dep.c'), 'utf8')).toBe(
          DEP_V1['dep.c'],
        );
        expect(existsSync(join(dir, 'subprojects', c.dir, 'LATER.txt'))).toBe(c.later);
        expect(existsSync(join(dir, '.telebench-subprojects'))).toBe(false);
      } finally {
        removeScratch(dir);
      }
    }
    // a vendored subproject (already in the tree) is left as committed; Go and Python untouched
    const vendored = buildRepo({
      ...project('dep.wrap', BRANCH_WRAP, PARENT),
      'subprojects/dep/meson.build': DEP_V1['meson.build'],
      'subprojects/dep/dep.h': DEP_V1['dep.h'],
      'subprojects/dep/dep.c': '/* vendored */\n' + DEP_V1['dep.c'],
    });
    repos.push(vendored);
    for (const language of ['c', 'go'] as const) {
      const dir = await scratchCheckout(vendored.dir, vendored.base);
      try {
        await preparer([])(dir, vendored.dir, vendored.base, language);
        expect(readFileSync(join(dir, 'subprojects', 'dep', 'dep.c'), 'utf8')).toMatch(
          /^\/\* vendored \*\//,
        );
      } finally {
        removeScratch(dir);
      }
    }
  });
});
