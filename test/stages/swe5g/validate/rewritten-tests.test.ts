/**
 * SWE-bench's convention in validation (issue 30): the parent ("before") run holds the test patch,
 * so a PR whose test patch renames a passing test and rewrites another validates, with
 * FAIL_TO_PASS and PASS_TO_PASS judged on the test patch's version of every test. Real git
 * repositories (test/fixtures/repos/rewrite.ts: Go, Python and C/meson siblings), real images,
 * and the before/after logs graded again as `telebench verify` grades its empty and gold runs.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { DockerExecutor, LocalExecutor } from '../../../../pipeline/providers/docker/executor.js';
import {
  cRewriteFixture,
  goRewriteFixture,
  pyRewriteFixture,
  type RewriteExpect,
} from '../../../fixtures/repos/rewrite.js';
import { ensureTestBase, testSettings, validateFixture } from '../../../fixtures/repos/harness.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import { gradeStoredLogs } from '../../../../stages/swe5g/harness/grading.js';
import { testSpec } from '../../../../stages/swe5g/harness/spec.js';
import type { RecipeName } from '../../../../pipeline/providers/docker/recipes.js';

const docker = new DockerClient();
let root: string;

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-rewrite-'));
});

function validate(fx: Fixture, kind: 'docker' | 'local', testgen?: Fixture['testgen']) {
  return validateFixture(fx, {
    docker,
    stateDir: join(root, 'state'),
    settings: testSettings({ executor: kind }),
    executor: kind === 'docker' ? new DockerExecutor(docker) : new LocalExecutor(),
    ...(testgen ? { testgen } : {}),
  });
}

/**
 * The before (step 1, first container) and after (fix_1) logs graded again: the before state is
 * `telebench verify`'s empty run (test patch alone: must not resolve, every PASS_TO_PASS test
 * passes there), the after state its gold run (resolves).
 */
function regrade(recipe: RecipeName, logs: Map<string, string>, tests: RewriteExpect) {
  const spec = testSpec({ recipe, dirs: 'all', moduleDir: '', settings: testSettings() });
  const runs = recipe === 'go' ? testSettings().test_repeats : 1;
  const grade = (step: string) => gradeStoredLogs(spec, [logs.get(step)!], tests, runs);
  return { before: grade('parent_p2p'), after: grade('fix_1') };
}

const cases = [
  ['Go (subtest renamed, test body rewritten)', 'go', goRewriteFixture, 'local'],
  ['Python (test function renamed, body rewritten)', 'python', pyRewriteFixture, 'local'],
  ['C meson (test renamed, case rewritten)', 'c-meson', cRewriteFixture, 'docker'],
] as const;

describe('validation judges every test on the test patch version (SWE-bench convention)', () => {
  it.each(cases)(
    '%s: validates with SWE-bench FAIL_TO_PASS / PASS_TO_PASS',
    async (_, recipe, make, kind) => {
      const { fx, expect: want } = make(join(root, 'src'));
      const { v, skip, logs } = await validate(fx, kind);
      expect(skip?.message).toBeUndefined();
      expect(v!.FAIL_TO_PASS).toEqual(want.FAIL_TO_PASS);
      expect(v!.PASS_TO_PASS).toEqual(want.PASS_TO_PASS);
      // the old name never ran: the before run already held the renamed test
      expect([...v!.FAIL_TO_PASS, ...v!.PASS_TO_PASS]).not.toContain(want.oldName);
      expect(Object.keys(v!.step_logs)).not.toContain('parent_f2p');
      const { before, after } = regrade(recipe, logs, want);
      expect(before.resolved).toBe(false);
      expect(before.not_passing).toEqual(want.FAIL_TO_PASS);
      expect(Object.values(before.PASS_TO_PASS).every((st) => st === 'pass')).toBe(true);
      expect(after.resolved).toBe(true);
    },
  );

  it('Go: a given FAIL_TO_PASS naming the renamed (passing) test is rejected; the rewritten test given is accepted', async () => {
    const { fx, expect: want } = goRewriteFixture(join(root, 'src-given'));
    const renamed = want.PASS_TO_PASS[1]!;
    const wrong = await validate(fx, 'local', {
      ...fx.testgen,
      strategy: 'A',
      FAIL_TO_PASS: [renamed],
    });
    expect(wrong.v).toBeUndefined();
    expect(wrong.skip?.code).toBe('f2p_does_not_fail_at_parent');
    expect(wrong.skip?.message).toContain(`${renamed} do(es) not fail at the parent (pass)`);
    const right = await validate(fx, 'local', {
      ...fx.testgen,
      strategy: 'A',
      FAIL_TO_PASS: want.FAIL_TO_PASS,
    });
    expect(right.skip?.message).toBeUndefined();
    expect(right.v!.FAIL_TO_PASS).toEqual(want.FAIL_TO_PASS);
    expect(right.v!.PASS_TO_PASS).toEqual(want.PASS_TO_PASS);
  });
});
