/**
 * Monorepo folders' instance layers as a delta over the env layer's repository (issue 31,
 * stages/swe5g/build/tree-delta.ts), in the real Docker engine: a repository this test builds with
 * a Go module folder and a Python folder, whose base commit deletes, renames and adds files
 * relative to the environment commit, turns a folder into a file and a file into a folder,
 * empties a folder, changes a binary file, a mode and a symlink. For both recipes the instance's
 * /testbed (without `.git`) equals `git archive base_commit` byte for byte (paths, types, modes,
 * contents, link targets), the image contract holds, and the instance layer stays smaller than
 * the unchanged large file the env layer holds. Then, over a real SQLite store whose item is
 * built and validated, `image_budget_gib` evicts its instance and env images, and the call
 * validate, audit and evaluate make before their steps rebuilds the same image from its recipe.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { ensureMirror } from '../../../../pipeline/providers/git/repo.js';
import { buildInstanceImages, type BuildSubject } from '../../../../stages/swe5g/build/build.js';
import { mirrorPath } from '../../../../stages/swe5g/resolve/resolve.js';
import { ensureTestBase, testSettings } from '../../../fixtures/repos/harness.js';
import { commit, git } from '../../../fixtures/git-repo.js';
import { inImage } from '../../../fixtures/in-image.js';
import { openState } from '../../../../pipeline/state.js';
import { readContext } from '../../../../pipeline/runner/context.js';
import { registry } from '../../../../stages/index.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { evictOverBudget, EVICTIONS_KV } from '../../../../stages/swe5g/build/eviction.js';
import { ensureInstanceImage } from '../../../../stages/swe5g/build/on-demand.js';

const docker = new DockerClient();
let root: string;
let src: string;
let envCommit: string;
let baseCommit: string;
const settings = testSettings();

/** Paths (type, mode, link target) and file digests of the current folder, .git left out. */
const LISTING = [
  `find . -mindepth 1 -path ./.git -prune -o -printf '%y %m %p %l\\n' | LC_ALL=C sort`,
  `find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum`,
].join(' && ');

beforeAll(async () => {
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-delta-'));
  src = join(root, 'src');
  mkdirSync(src, { recursive: true });
  git(src, 'init', '-q', '-b', 'main');
  const big = Array.from({ length: 400_000 }, (_, i) => `line ${i} ${i * 7919}`).join('\n');
  envCommit = commit(
    src,
    {
      'gomod/go.mod': 'module example.com/gomod\n\ngo 1.21\n',
      'gomod/calc.go': 'package gomod\n\nfunc Add(a, b int) int { return a + b }\n',
      'gomod/old.go': 'package gomod\n\nfunc Old() {}\n',
      'pyapp/mod.py': 'def f():\n    return 1\n',
      'pyapp/renamed_from.py': 'X = 1\n',
      'data/big.txt': big,
      'data/blob.bin': '\u0000\u0001\u0002binary\u0000',
      'lib/dir_to_file/inner.txt': 'inner\n',
      'lib/file_to_dir': 'a file\n',
      'emptied/deep/only.txt': 'only\n',
      'bin/tool.sh': '#!/bin/sh\necho tool\n',
    },
    'env: the dependency files',
  );
  symlinkSync('mod.py', join(src, 'pyapp', 'link.py'));
  envCommit = commit(src, {}, 'env: a symlink');
  // the base commit: every kind of change the instance layer must write
  git(src, 'mv', 'pyapp/renamed_from.py', 'pyapp/renamed_to.py');
  git(src, 'rm', '-q', '-r', 'gomod/old.go', 'lib/dir_to_file', 'lib/file_to_dir', 'emptied');
  chmodSync(join(src, 'bin', 'tool.sh'), 0o755);
  rmSync(join(src, 'pyapp', 'link.py'));
  symlinkSync('renamed_to.py', join(src, 'pyapp', 'link.py'));
  writeFileSync(join(src, 'data', 'blob.bin'), Buffer.from([0, 255, 254, 3, 0]));
  baseCommit = commit(
    src,
    {
      'gomod/calc.go': 'package gomod\n\nfunc Add(a, b int) int { return b + a }\n',
      'gomod/calc_test.go':
        'package gomod\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("sum")\n\t}\n}\n',
      'pyapp/new.py': 'NEW = True\n',
      'lib/dir_to_file': 'now a file\n',
      'lib/file_to_dir/inner.txt': 'now a folder\n',
    },
    'base',
  );
  commit(src, { 'pyapp/mod.py': 'def f():\n    return 2  # the fix\n' }, 'the fix');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The listing of `git archive baseCommit`, extracted on the host. */
function archiveListing(): string {
  const dir = join(root, 'archive');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  // git archive's own umask is 002 (tar.umask): 022 gives the modes a checkout gives (644/755)
  execFileSync('sh', [
    '-c',
    `umask 022 && git -C ${src} -c tar.umask=022 archive ${baseCommit} | tar -x -C ${dir}`,
  ]);
  return execFileSync('sh', ['-c', LISTING], { cwd: dir, encoding: 'utf8' });
}

const subject = (folder: string, language: 'go' | 'python'): BuildSubject => ({
  instance_id: `fixture__mono-${language}`,
  repo: 'fixture/mono',
  registry_id: `fixture/mono:${folder}`,
  language,
  version: language === 'go' ? '1.21' : '3',
  environment_setup_commit: envCommit,
  base_commit: baseCommit,
  patch: '',
});

describe('monorepo instance layers as a delta over the env layer', () => {
  it.each([
    ['pyapp', 'python'],
    ['gomod', 'go'],
  ] as const)(
    '%s (%s): /testbed equals git archive of the base commit',
    async (folder, language) => {
      const stateDir = join(root, 'state');
      await ensureMirror(src, mirrorPath(stateDir, 'fixture/mono'));
      const built = await buildInstanceImages(subject(folder, language), {
        docker,
        settings,
        stateDir,
      });
      expect(built.delta).toMatchObject({ env_commit: envCommit });
      // removed: old.go, renamed_from.py, lib/dir_to_file (a folder), lib/file_to_dir (a file),
      // emptied (the folder, not only its file)
      expect(built.delta!.deleted).toBe(5);
      expect(built.delta!.git?.commits).toBe(1);
      const inside = await inImage(docker, built.images.instance, LISTING);
      expect(inside).toBe(archiveListing());
      expect(inside).toContain('l 777 ./pyapp/link.py renamed_to.py');
      expect(inside).toMatch(/^f 755 \.\/bin\/tool\.sh/m);
      expect(inside).not.toContain('./emptied');
      // the unchanged 8 MB file stays in the env layer (Go's layer also holds the build cache
      // entries of the changed package, about 1.5 MB)
      expect(built.sizes.instance_layer).toBeLessThan(4_000_000);
      expect(built.sizes.env_layer).toBeGreaterThan(8_000_000);
      const head = await inImage(docker, built.images.instance, 'git rev-parse HEAD');
      expect(head.trim()).toBe(baseCommit);
    },
  );
});

describe('image_budget_gib: eviction and rebuild on demand', () => {
  it('evicts a validated instance and its env under a tight budget; a later stage rebuilds them', async () => {
    const stateDir = join(root, 'state-budget');
    await ensureMirror(src, mirrorPath(stateDir, 'fixture/mono'));
    const res = { ...subject('pyapp', 'python'), instance_id: 'fixture__mono-budget' };
    const built = await buildInstanceImages(res, { docker, settings, stateDir });
    // the records of a state whose item has been built and validated (a real SQLite store)
    const state = openState(stateDir);
    const record = (stage: string, output: unknown): void => {
      const version = registry.get(stage)!.version;
      state.store.planItem(stage, res.instance_id, version, `h-${stage}`, '{}', false);
      state.store.startItem(stage, res.instance_id, `a-${stage}`, 'r0');
      state.store.finishItem(stage, res.instance_id, `a-${stage}`, { state: 'done', output });
    };
    record('swe5g.resolve', res);
    record('swe5g.testgen', {});
    record('swe5g.build', built);
    record('swe5g.validate', {});
    const config = {
      swe5g: swe5gConfigSchema.parse({
        environments: { base_source: 'offline', image_budget_gib: 0.000_001 },
        audit: { enabled: false },
      }),
    };
    const ctx = readContext('budget-run', config, join(root, 'c.yaml'), stateDir, state, registry);
    const report = await evictOverBudget(ctx, docker);
    expect(report!.evicted.map((e) => e.image)).toEqual([built.images.instance, built.images.env]);
    expect(await docker.hasImage(built.images.instance)).toBe(false);
    expect(await docker.hasImage(built.images.env)).toBe(false);
    expect(state.store.get(EVICTIONS_KV, 'budget-run')).toMatchObject({ evicted: report!.evicted });
    // evicted images are no longer counted: a second pass has nothing to do
    expect((await evictOverBudget(ctx, docker))!.evicted).toEqual([]);

    // what validate, audit and evaluate call before their steps: the same image, rebuilt
    await ensureInstanceImage(ctx, res.instance_id, built.images.instance);
    expect(await docker.hasImage(built.images.instance)).toBe(true);
    const head = await inImage(docker, built.images.instance, 'git rev-parse HEAD');
    expect(head.trim()).toBe(baseCommit);
    state.store.close();
  });
});
