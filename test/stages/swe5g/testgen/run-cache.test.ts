/**
 * Testgen's host runs kept by content (run-cache.ts): a second generation of the same fix reads
 * every run back from a real SQLite store and blob store and makes none (the host `go` is called
 * zero times), with the same test; a changed fix, another toolchain or another state makes them
 * anew; what is not the code's own outcome (killed, aborted, a tool timeout, a missing
 * dependency) is never kept.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateTestGen,
  hostRunner,
  type TestRunner,
} from '../../../../stages/swe5g/testgen/generate.js';
import {
  cachedRunner,
  isStorable,
  RUN_CACHE_NAMESPACE,
} from '../../../../stages/swe5g/testgen/run-cache.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';

const HANDLER = `package ngap

type GNbID struct{ Value string }

type RanNodeID struct{ GNbId *GNbID }

// Describe returns the gNB id of the target node.
func Describe(id *RanNodeID) string {
	if id.GNbId.Value != "" {
		return id.GNbId.Value
	}
	return "none"
}
`;
const FIXED = HANDLER.replace('if id.GNbId.Value', 'if id.GNbId != nil && id.GNbId.Value');

let repo: BuiltRepo;
let state: OpenState;
let root: string;
const settings = testgenSchema.parse({});

/** The real host runner, counting the runs it makes. */
function counting(): { runner: TestRunner; runs: () => number } {
  let n = 0;
  return {
    runner: (...a) => {
      n++;
      return hostRunner(...a);
    },
    runs: () => n,
  };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'run-cache-'));
  state = openState(join(root, 'state'));
  repo = buildRepo({
    'go.mod': 'module example.org/amfish\n\ngo 1.21\n',
    'internal/ngap/handler.go': HANDLER,
  });
});
afterAll(() => {
  state?.close();
  repo?.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('host runs read back by content', () => {
  it('the same fix twice: the second generation makes no run and gives the same test', async () => {
    const fix = repo.commit({ 'internal/ngap/handler.go': FIXED }, 'fix nil GNbId');
    const r = resolvedOf(repo, fix, 'go');
    const cache = { kv: state.store, blobs: state.blobs };
    const first = counting();
    const reused: string[] = [];
    const a = await generateTestGen(
      repo.dir,
      r,
      settings,
      cachedRunner(first.runner, cache, undefined, (c) => reused.push(c)),
    );
    expect(a.testgen.strategy).toBe('A');
    expect(first.runs()).toBe(2); // base_commit and merge_commit
    expect(state.store.count(RUN_CACHE_NAMESPACE)).toBe(2);

    const second = counting();
    const b = await generateTestGen(
      repo.dir,
      r,
      settings,
      cachedRunner(second.runner, cache, undefined, (c) => reused.push(c)),
    );
    expect(second.runs()).toBe(0);
    expect(reused).toEqual([r.base_commit, r.merge_commit]);
    expect(b.testgen).toEqual(a.testgen);
    expect(b.strategyA.check?.parent?.log).toBe(a.strategyA.check?.parent?.log);

    // another toolchain: made anew
    const third = counting();
    await generateTestGen(
      repo.dir,
      r,
      settings,
      cachedRunner(third.runner, cache, async () => 'go version go9.99 linux/amd64'),
    );
    expect(third.runs()).toBe(2);

    // another fix of the same base (another merge commit, another test): its runs are made
    const other = repo.commit(
      { 'internal/ngap/handler.go': FIXED.replace('return "none"', 'return "-"') },
      'fix nil GNbId, another way',
    );
    const fourth = counting();
    const c = await generateTestGen(
      repo.dir,
      resolvedOf(repo, other, 'go'),
      settings,
      cachedRunner(fourth.runner, cache),
    );
    expect(c.testgen.strategy).toBe('A');
    // the parent run of the same test patch at the same base is the same run: read back
    expect(fourth.runs()).toBe(1);
  });

  it('a run stopped by the signal is not kept, so the next one runs', async () => {
    const fix = repo.commit(
      { 'internal/ngap/handler.go': FIXED.replace('"none"', '"n/a"') },
      'fix three',
    );
    const r = resolvedOf(repo, fix, 'go');
    const fresh = openState(join(root, 'aborted'));
    try {
      const cache = { kv: fresh.store, blobs: fresh.blobs };
      const ac = new AbortController();
      ac.abort();
      const first = counting();
      await cachedRunner(first.runner, cache)(
        repo.dir,
        r.base_commit,
        'diff --git a/x b/x\n',
        'go',
        ['example.org/amfish/internal/ngap::TestX'],
        60_000,
        ac.signal,
      ).catch(() => undefined);
      expect(fresh.store.count(RUN_CACHE_NAMESPACE)).toBe(0);
    } finally {
      fresh.close();
    }
  });
});

describe('what is kept (isStorable)', () => {
  const run = (o: Partial<Parameters<typeof isStorable>[0]> = {}) => ({
    statuses: { 'p::T': 'failed' as const },
    buildFailed: false,
    exitCode: 1,
    log: '--- FAIL: T\n',
    durationMs: 10,
    applyError: null,
    ...o,
  });
  it('keeps a test that failed or passed for reasons of the code, and a patch that does not apply', () => {
    expect(isStorable(run(), 'go')).toBe(true);
    expect(isStorable(run({ exitCode: 0, statuses: { 'p::T': 'passed' } }), 'go')).toBe(true);
    expect(isStorable(run({ buildFailed: true, log: 'x.go:3:1: undefined: y\n' }), 'go')).toBe(
      true,
    );
    expect(isStorable(run({ applyError: 'error: patch failed: a.go:3' }), 'go')).toBe(true);
  });
  it('does not keep a killed, ambiguous, timed-out or dependency-failed run', () => {
    expect(isStorable(run({ exitCode: null }), 'go')).toBe(false);
    expect(isStorable(run({ ambiguous: 'exit 1 but every test passed' }), 'go')).toBe(false);
    expect(isStorable(run({ log: 'panic: test timed out after 2m0s\n' }), 'go')).toBe(false);
    expect(
      isStorable(run({ log: ' 1/1 f2p:f2p_call_x  TIMEOUT  30.01s   killed by signal 15\n' }), 'c'),
    ).toBe(false);
    expect(
      isStorable(
        run({
          buildFailed: true,
          log: 'meson.build:10:0: ERROR: Dependency "talloc" not found, tried pkgconfig\n',
        }),
        'c',
      ),
    ).toBe(false);
    const ac = new AbortController();
    ac.abort();
    expect(isStorable(run(), 'go', ac.signal)).toBe(false);
  });
});
