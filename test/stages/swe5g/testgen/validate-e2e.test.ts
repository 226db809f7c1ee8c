/**
 * End to end through the real three-step validation (`validateInstance` of swe5g.validate with
 * its LocalExecutor: existing tests pass at the parent, the generated FAIL_TO_PASS fail at the
 * parent, everything passes after the fix, 3 runs), on repositories this test builds: Go with
 * Strategy A and with Strategy B, Python with Strategy A and with Strategy B.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestGen } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { validateInstance } from '../../../../stages/swe5g/validate/validate.js';
import type { Built } from '../../../../stages/swe5g/build/build.js';
import { environmentsSchema } from '../../../../stages/swe5g/environments-config.js';
import { LocalExecutor } from '../../../../pipeline/providers/docker/executor.js';
import { exportCleanRepo } from '../../../../pipeline/providers/git/repo.js';
import type { Resolved } from '../../../../stages/swe5g/types.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';

const cleanup: (() => void)[] = [];
afterAll(() => cleanup.forEach((c) => c()));

async function validate(
  repo: BuiltRepo,
  res: Resolved,
  recipe: Built['image_recipe'],
  strategyA: boolean,
) {
  const gen = await generateTestGen(repo.dir, res, testgenSchema.parse({ strategy_a: strategyA }));
  const state = mkdtempSync(join(tmpdir(), 'telebench-testgen-e2e-'));
  cleanup.push(() => rmSync(state, { recursive: true, force: true }));
  const source_dir = join(state, 'testbed');
  await exportCleanRepo(repo.dir, res.base_commit, source_dir);
  const built: Built = {
    instance_id: res.instance_id,
    image_recipe: recipe,
    images: { base: 'local', env: 'local', instance: 'local' },
    base_from: 'host',
    toolchain: 'host',
    sizes: { base: 0, env_layer: 0, instance_layer: 0, instance_total: 0 },
    source_dir,
    module_dir: '',
    build_seconds: { base: 0, env: 0, instance: 0 },
  };
  const logs: Record<string, string> = {};
  const v = await validateInstance(
    { resolved: res, testgen: gen.testgen, built },
    {
      executor: new LocalExecutor(),
      settings: environmentsSchema.parse({
        executor: 'local',
        test_scope: 'touched',
        limits: { timeout_s: 300 },
      }),
      saveLog: (step, text) => {
        logs[step] = text;
        return step;
      },
    },
  );
  return { gen, v, logs };
}

const GO = `package ngap

// RanNodeID is the target RAN node.
type RanNodeID struct {
	GNbId *struct{ Value string }
	Name  string
}

// Describe returns the gNB id of the target node.
func Describe(id *RanNodeID) string {
	if id.GNbId.Value != "" {
		return id.GNbId.Value
	}
	return "none"
}
`;

describe('testgen -> three-step validation (local executor)', () => {
  it('Go: Strategy A and Strategy B instances validate', async () => {
    const repo = buildRepo({
      'go.mod': 'module example.org/amfish\n\ngo 1.21\n',
      'internal/ngap/handler.go': GO,
      'internal/ngap/handler_test.go':
        'package ngap\n\nimport "testing"\n\nfunc TestName(t *testing.T) {\n\tif (&RanNodeID{Name: "a"}).Name != "a" {\n\t\tt.Fatal("name")\n\t}\n}\n',
    });
    cleanup.push(() => repo.cleanup());
    const fix = repo.commit(
      {
        'internal/ngap/handler.go': GO.replace(
          'if id.GNbId.Value',
          'if id.GNbId != nil && id.GNbId.Value',
        ),
      },
      'fix',
    );
    const res = resolvedOf(repo, fix, 'go', { test_dirs: ['internal/ngap'] });
    const a = await validate(repo, res, 'go', true);
    expect(a.v.strategy).toBe('A');
    expect(a.v.FAIL_TO_PASS).toEqual(['example.org/amfish/internal/ngap::TestF2PCall_Describe']);
    expect(a.v.PASS_TO_PASS).toContain('example.org/amfish/internal/ngap::TestName');
    expect(a.v.test_patch).toContain('f2p_call_test.go');
    const b = await validate(repo, res, 'go', false);
    expect(b.v.strategy).toBe('B');
    expect(b.v.FAIL_TO_PASS).toEqual(['example.org/amfish/internal/ngap::TestF2P_Describe']);
    expect(b.logs.parent_p2p).toMatch(
      /Describe in internal\/ngap\/handler.go does not contain the expected fix/,
    );
    expect(b.v.bug_category).toBe('nil_pointer');
  });

  it('Python: Strategy A and Strategy B instances validate with pytest', async () => {
    const PY =
      'class SessionHandler:\n    def release(self, session):\n        return session.pdu.upper()\n';
    const repo = buildRepo({
      'smf/__init__.py': '',
      'smf/handler.py': PY,
      'tests/__init__.py': '',
      'tests/test_ok.py': 'def test_ok():\n    assert True\n',
    });
    cleanup.push(() => repo.cleanup());
    const fix = repo.commit(
      {
        'smf/handler.py': PY.replace(
          '        return session',
          '        if session.pdu is None:\n            return ""\n        return session',
        ),
      },
      'fix',
    );
    const res = resolvedOf(repo, fix, 'python');
    // Strategy A first (issue 30: behavioural where it flips): `session` with a None `pdu`
    const a = await validate(repo, res, 'python', true);
    expect(a.v.strategy).toBe('A');
    expect(a.v.FAIL_TO_PASS).toHaveLength(1);
    expect(a.v.FAIL_TO_PASS[0]).toMatch(/^tests\/test_f2p_call\.py::/);
    expect(a.v.PASS_TO_PASS).toContain('tests/test_ok.py::test_ok');
    const { v } = await validate(repo, res, 'python', false);
    expect(v.strategy).toBe('B');
    expect(v.FAIL_TO_PASS).toEqual(['tests/test_f2p_intent.py::test_f2p_SessionHandler_release']);
  });
});
