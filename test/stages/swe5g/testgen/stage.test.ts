/**
 * The `swe5g.testgen` stage through the engine's runner: kept candidates seeded as swe5g.filter
 * outputs, the real swe5g.resolve stage clones the repository this test builds, swe5g.testgen
 * writes its TestGen records (Strategy A for a callable Go function, B otherwise), artifacts, and
 * a skip with its reason for a formatting-only change; a second run does nothing.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline, storeReader } from '../../../../pipeline/runner.js';
import { openState } from '../../../../pipeline/state.js';
import { EventBus } from '../../../../pipeline/events.js';
import { hashJson } from '../../../../pipeline/hash.js';
import { swe5gMiningStages } from '../../../../stages/swe5g/mining.js';
import { swe5gFilter } from '../../../../stages/swe5g/filter/filter.js';
import { resolveStage } from '../../../../stages/swe5g/resolve/resolve.js';
import { testgenStage } from '../../../../stages/swe5g/testgen/testgen.js';
import { swe5gConfigSchema, type HasSwe5g } from '../../../../stages/swe5g/config.js';
import type { Candidate, TestGen } from '../../../../stages/swe5g/types.js';
import { testgenMarkdown } from '../../../../stages/swe5g/testgen/report.js';
import { buildRepo, resolvedOf } from './repos.js';

const root = mkdtempSync(join(tmpdir(), 'telebench-testgen-stage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const GO = `package ngap

// Node is a RAN node.
type Node struct{ ID *struct{ V string } }

// Name returns the node id.
func Name(n *Node) string {
	return n.ID.V
}

// Feed sends the node id.
func Feed(n *Node, out chan string) {
	out <- n.ID.V
}
`;

describe('swe5g.testgen stage', () => {
  it('runs after swe5g.resolve and stores TestGen records, artifacts and skips', async () => {
    const repo = buildRepo({ 'go.mod': 'module example.org/nf\n\ngo 1.21\n', 'ngap/node.go': GO });
    const mirror = join(root, 'mirrors', 'test+go', 'repo');
    mkdirSync(join(root, 'mirrors', 'test+go'), { recursive: true });
    const fixA = repo.commit(
      {
        'ngap/node.go': GO.replace(
          '\treturn n.ID.V',
          '\tif n.ID == nil {\n\t\treturn ""\n\t}\n\treturn n.ID.V',
        ),
      },
      'fix Name',
    );
    const fixB = repo.commit(
      {
        'ngap/node.go': GO.replace(
          '\tout <- n.ID.V',
          '\tif n.ID == nil {\n\t\treturn\n\t}\n\tout <- n.ID.V',
        ),
      },
      'fix Feed',
    );
    const fmt = repo.commit(
      { 'ngap/node.go': GO.replace('return n.ID.V', 'return  n.ID.V') },
      'fmt',
    );
    execFileSync('git', ['clone', '-q', '--bare', repo.dir, mirror]);
    repo.cleanup();
    const cands: Candidate[] = [
      [fixA, 1],
      [fixB, 2],
      [fmt, 3],
    ].map(([c, n]) => {
      const {
        patch: _p,
        test_patch: _t,
        environment_setup_commit: _e,
        version: _v,
        test_dirs: _d,
        ...cand
      } = resolvedOf({ ...repo, dir: mirror, diff: () => '' }, c as string, 'go', {
        instance_id: `test__go-${n}`,
        pr_number: n as number,
      });
      return cand;
    });
    const state = openState(join(root, 'state'));
    for (const c of cands) {
      state.store.planItem(
        'swe5g.filter',
        c.instance_id,
        swe5gFilter.version,
        hashJson(c),
        JSON.stringify(c),
        false,
      );
      state.store.startItem('swe5g.filter', c.instance_id, 'seed', 'seed');
      state.store.finishItem('swe5g.filter', c.instance_id, 'seed', { state: 'done', output: c });
    }
    const config: HasSwe5g = {
      swe5g: swe5gConfigSchema.parse({ source: 'git', mining: { mirrors_dir: 'mirrors' } }),
    };
    const run = () =>
      runPipeline<HasSwe5g>({
        pipeline: { name: 'swe5g', description: '', stages: ['swe5g.resolve', 'swe5g.testgen'] },
        registry: new Map(
          [...swe5gMiningStages, resolveStage, testgenStage].map((s) => [s.name, s]),
        ),
        config,
        configFile: join(root, 'config.yaml'),
        stateDir: join(root, 'state'),
        store: state.store,
        blobs: state.blobs,
        bus: new EventBus(),
        signal: new AbortController().signal,
      });
    const first = await run();
    expect(JSON.stringify(first)).toMatch(/"ran":3/);
    const out = Object.fromEntries([...state.store.items('swe5g.testgen')].map((r) => [r.key, r]));
    expect(out['test__go-1']?.state).toBe('done');
    const a = out['test__go-1']!.output as TestGen;
    expect(a).toMatchObject({
      strategy: 'A',
      FAIL_TO_PASS: ['example.org/nf/ngap::TestF2PCall_Name'],
      bug_category: 'nil_pointer',
      nf: 'AMF',
    });
    const b = out['test__go-2']!.output as TestGen;
    expect(b.strategy).toBe('B');
    expect(b.strategy_reason).toMatch(/parameter out of Feed is a channel/);
    expect(b.FAIL_TO_PASS).toEqual(['example.org/nf/ngap::TestF2P_Feed']);
    expect(out['test__go-3']).toMatchObject({ state: 'skipped', skipReason: 'no_fix_pattern' });
    const names = state.store.artifacts('swe5g.testgen', 'test__go-1').map((x) => x.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'f2p_test_patch',
        'testgen_details.json',
        'strategy_a_parent.log',
        'strategy_a_fix.log',
      ]),
    );
    const md = testgenMarkdown({
      store: storeReader(state.store, () => undefined),
    });
    expect(md).toContain('| test/go | 1 | 1 | 0 | no_fix_pattern 1 | 0 | nil_pointer 2 | - |');
    const second = await run();
    expect(JSON.stringify(second)).not.toMatch(/"ran":[1-9]/);
    state.close();
  });
});
