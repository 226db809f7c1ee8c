/**
 * The Go env layer keeps the build cache of the environment commit (issue 21, layers: the
 * instance layer was 0.25-0.50 of the env layer on real free5GC, mostly its warm test-build
 * cache). A real repository built here: the commit that last set go.mod is the environment commit
 * of the instances after it; its env layer compiles the module with its tests, keeps no tree and
 * gives every cache file a far-future mtime; an instance layer compiles only the packages its base
 * commit changed. Checked in the real Docker engine with `go test -x`: with the instance layer's
 * own cache entries removed, the unchanged package is not compiled (the env layer has it), the
 * changed one is.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { ensureMirror } from '../../../../pipeline/providers/git/repo.js';
import { buildInstanceImages } from '../../../../stages/swe5g/build/build.js';
import {
  goEnvironmentCommit,
  mirrorPath,
  resolveCandidate,
} from '../../../../stages/swe5g/resolve/resolve.js';
import type { Candidate } from '../../../../stages/swe5g/types.js';
import { ensureTestBase, testSettings } from '../../../fixtures/repos/harness.js';
import { commit, git } from '../../../fixtures/git-repo.js';
import { inImage as probe } from '../../../fixtures/in-image.js';

const docker = new DockerClient();
const MODULE = 'example.com/core';
let root: string;
let src: string;
const c: Record<string, string> = {};

const pkg = (name: string, body: string): Record<string, string> => ({
  [`${name}/${name}.go`]: `package ${name}\n\n${body}\n`,
  [`${name}/${name}_test.go`]: `package ${name}\n\nimport "testing"\n\nfunc TestOK(t *testing.T) { _ = Version() }\n`,
});

/** A merged PR `pr` whose first parent is `base` (a `--no-ff` merge of a one-file fix). */
function mergePr(base: string, pr: number, file: string, text: string): string {
  git(src, 'checkout', '-q', '-b', `pr${pr}`, base);
  commit(src, { [file]: text }, `fix: pr ${pr}`);
  git(src, 'checkout', '-q', 'main');
  git(src, 'merge', '-q', '--no-ff', '-m', `Merge pull request #${pr} from dev/pr${pr}`, `pr${pr}`);
  return git(src, 'rev-parse', 'HEAD');
}

function candidate(pr: number, base: string, merge: string): Candidate {
  return {
    instance_id: `acme__core-${pr}`,
    alias: `core_pr${pr}`,
    repo: 'acme/core',
    registry_id: 'acme/core',
    language: 'go',
    nf: 'AMF',
    license: 'Apache-2.0',
    pr_number: pr,
    merge_commit: merge,
    base_commit: base,
    pr_head: merge,
    issues: [],
    pr_title: 'fix',
    pr_body: '',
    changed_files: [],
    created_at: '2024-05-01T10:00:00Z',
    merged_at: '2024-05-01T10:00:00Z',
    problem_statement: '',
    hints_text: '',
    source: 'git',
    incomplete: true,
    links: [],
  };
}

/** Runs `command` in a fresh network-less container of `image`; stdout. */
async function inImage(image: string, command: string): Promise<string> {
  return (await probe(docker, image, command)).trim();
}

beforeAll(async () => {
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-goenvcache-'));
  src = join(root, 'acme', 'core.git');
  git(root, 'init', '-q', '--initial-branch=main', src);
  c.deps = commit(
    src,
    {
      'go.mod': `module ${MODULE}\n\ngo 1.21\n`,
      ...pkg('a', 'func Version() string { return "a1" }'),
      ...pkg('b', 'func Version() string { return "b1" }'),
    },
    'initial import with go.mod',
  );
  c.base1 = commit(src, pkg('b', 'func Version() string { return "b2" }'), 'b: version 2');
  c.merge1 = mergePr(c.base1, 7, 'b/b.go', 'package b\n\nfunc Version() string { return "b3" }\n');
  c.base2 = c.merge1;
  c.merge2 = mergePr(c.base2, 8, 'b/b.go', 'package b\n\nfunc Version() string { return "b4" }\n');
  c.sumBump = commit(src, { 'go.sum': '' }, 'go.sum added');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('goEnvironmentCommit', () => {
  it('is the commit that last set go.mod/go.sum; the base itself when the base sets them', async () => {
    expect(await goEnvironmentCommit(src, c.base1!, '')).toBe(c.deps);
    // a merge commit in between changes nothing of go.mod: still the same commit
    expect(await goEnvironmentCommit(src, c.base2!, '')).toBe(c.deps);
    expect(await goEnvironmentCommit(src, c.sumBump!, '')).toBe(c.sumBump);
    expect(await goEnvironmentCommit(src, c.deps!, '')).toBe(c.deps);
  });
});

describe('Go env layer: the build cache of the environment commit', () => {
  it('instances after one go.mod share one env layer; each instance layer compiles only what changed', async () => {
    const state = join(root, 'state');
    const settings = testSettings({ go_modules: 'container', build_concurrency: 1 });
    const mirror = mirrorPath(state, 'acme/core');
    await ensureMirror(src, mirror, [c.merge2!]);
    const r1 = await resolveCandidate(mirror, candidate(7, c.base1!, c.merge1!));
    const r2 = await resolveCandidate(mirror, candidate(8, c.base2!, c.merge2!));
    expect(r1.environment_setup_commit).toBe(c.deps);
    expect(r2.environment_setup_commit).toBe(c.deps);
    const b1 = await buildInstanceImages(r1, { docker, settings, stateDir: state });
    const b2 = await buildInstanceImages(r2, { docker, settings, stateDir: state });
    expect(b2.images.env).toBe(b1.images.env);

    // the env layer: no tree left, a cache whose every file has an mtime in 2100
    expect(await inImage(b1.images.env, 'ls -A /testbed | wc -l')).toBe('0');
    const files = Number(await inImage(b1.images.env, 'find "$(go env GOCACHE)" -type f | wc -l'));
    expect(files).toBeGreaterThan(0);
    expect(
      await inImage(
        b1.images.env,
        `find "$(go env GOCACHE)" -type f ! -newermt '2099-01-01' | wc -l`,
      ),
    ).toBe('0');

    // the instance layer's own entries (mtime now) removed: a (unchanged since the env commit)
    // comes from the env layer, b (changed) is compiled again
    const compiles = async (image: string, p: string): Promise<number> =>
      Number(
        await inImage(
          image,
          `find "$(go env GOCACHE)" -type f ! -newermt '2099-01-01' -delete && ` +
            `GOPROXY=off GOFLAGS=-mod=mod go test -count=1 -run '^$' -x ./a ./b 2>&1 | grep -c -- '-p ${MODULE}/${p} ' || true`,
        ),
      );
    expect(await compiles(b1.images.instance, 'a')).toBe(0);
    expect(await compiles(b1.images.instance, 'b')).toBeGreaterThan(0);
    // and with them: nothing to compile at the base commit
    const warm = await inImage(
      b1.images.instance,
      `GOPROXY=off GOFLAGS=-mod=mod go test -count=1 -run '^$' -x ./... 2>&1 | grep -c -- '/compile ' || true`,
    );
    expect(warm).toBe('0');
    expect(b1.sizes.instance_layer).toBeLessThan(b1.sizes.env_layer);
  });
});
