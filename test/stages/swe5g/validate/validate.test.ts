import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { DockerExecutor, LocalExecutor } from '../../../../pipeline/providers/docker/executor.js';
import {
  goFixture,
  GO_F2P,
  GO_P2P,
  GO_SOMETIMES,
  type GoVariant,
} from '../../../fixtures/repos/go-nil.js';
import { cFixture, C_F2P, C_P2P } from '../../../fixtures/repos/c-null.js';
import { pyFixture, PY_F2P, PY_P2P } from '../../../fixtures/repos/py-none.js';
import {
  ensureTestBase,
  resolveFixture,
  testSettings,
  validateFixture,
} from '../../../fixtures/repos/harness.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import { generateTestGen } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { readStepLog } from '../../../../stages/swe5g/harness/step-log.js';

const docker = new DockerClient();
let root: string;
let state: string;

beforeAll(async () => {
  await docker.ping();
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-validate-'));
  state = join(root, 'state');
});

/** candidate -> resolved -> built -> validated (or the SkipItem) with `executor`. */
function validate(
  fx: Fixture,
  kind: 'docker' | 'local' = 'docker',
  over: Record<string, unknown> = {},
) {
  return validateFixture(fx, {
    docker,
    stateDir: state,
    settings: testSettings({ executor: kind, ...over }),
    executor: kind === 'docker' ? new DockerExecutor(docker) : new LocalExecutor(),
  });
}

const go = (v: GoVariant): Fixture => goFixture(join(root, 'src'), v);

describe('swe5g.validate in Docker', () => {
  it('Go nil-pointer fix with a generated F2P test: validated with FAIL_TO_PASS and PASS_TO_PASS', async () => {
    const { v, skip, logs } = await validate(go('good'));
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([GO_F2P]);
    expect(v!.PASS_TO_PASS).toEqual(GO_P2P);
    expect(v!.executor).toBe('docker');
    expect(v!.toolchain).toMatch(/^go1\./);
    // step 1 is the parent with the test patches (SWE-bench's before): it also decides step 2
    expect(Object.keys(v!.step_logs)).toEqual(['parent_p2p', 'fix_1', 'fix_2', 'fix_3']);
    expect(v!.images.instance).toMatch(/^telebench-instance:/);
    expect(v!.test_patch).toContain('TestHandleNGSetupRequestNilGNbId');
    expect(v!.patch).not.toContain('_test.go');
    expect(logs.get('parent_p2p')).toContain('nil pointer dereference');
  });

  it('Go PR that ships its test: FAIL_TO_PASS found from the test_patch', async () => {
    const { v, skip } = await validate(go('shipped'));
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([GO_F2P]);
    expect(v!.PASS_TO_PASS).toEqual(GO_P2P);
  });

  it('C NULL dereference (meson): validated', async () => {
    const { v, skip } = await validate(cFixture(join(root, 'src')));
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([C_F2P]);
    expect(v!.PASS_TO_PASS).toEqual([C_P2P]);
    expect(v!.toolchain).toMatch(/^gcc /);
  });

  it('C NULL dereference with a generated Strategy B test (meson suite f2p): validated', async () => {
    const fx = cFixture(join(root, 'src-c-b'));
    const res = await resolveFixture(fx, state);
    const gen = await generateTestGen(
      fx.dir,
      res,
      testgenSchema.parse({ strategy_a: false, prefer_shipped: false }),
    );
    expect(gen.testgen.strategy).toBe('B');
    expect(gen.testgen.FAIL_TO_PASS.every((id) => id.startsWith('f2p::f2p_'))).toBe(true);
    const { v, skip, logs } = await validate({ ...fx, testgen: gen.testgen });
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual(expect.arrayContaining(gen.testgen.FAIL_TO_PASS));
    expect(v!.PASS_TO_PASS).toContain(C_P2P);
    expect(logs.get('parent_p2p')).toMatch(/FAIL/);
  });

  it('Python None bug (pytest): validated', async () => {
    const { v, skip } = await validate(pyFixture(join(root, 'src')));
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([PY_F2P]);
    expect(v!.PASS_TO_PASS).toEqual([PY_P2P]);
    expect(v!.toolchain).toMatch(/^python 3\./);
  });

  it.each([
    ['badfix', 'f2p_fails_after_fix'],
    ['forge', 'f2p_fails_after_fix'],
    ['buildfail', 'build_failed_at_parent'],
    ['flaky', 'flaky'],
    ['hang', 'timeout'],
    ['envfail', 'p2p_fails_at_parent'],
    ['inject', 'ambiguous_log'],
  ] as const)('negative case %s ends as %s', async (variant, reason) => {
    // The hanging fix needs a step timeout short enough to be reached; the others keep the
    // harness's hang guard.
    const over = variant === 'hang' ? { limits: { timeout_s: 60, memory_mib: 1024, cpus: 1 } } : {};
    const { v, skip } = await validate(go(variant), 'docker', over);
    expect(v).toBeUndefined();
    expect(skip?.code).toBe(reason);
  });

  it('a pass event injected into the go command stdout is caught as a contradiction', async () => {
    const { skip, logs } = await validate(go('inject'));
    expect(skip?.code).toBe('ambiguous_log');
    expect(skip?.message).toMatch(/contradicting results for .*TestHandleNGSetupRequestNilGNbId/);
    expect(logs.get('fix_1')).toContain(
      '"Action":"pass","Package":"example.com/amfmini/ngap","Test":"TestHandleNGSetupRequestNilGNbId"}',
    );
  });

  it('forged pass lines reach the log but not the verdict', async () => {
    const { skip, logs } = await validate(go('forge'));
    expect(skip?.code).toBe('f2p_fails_after_fix');
    expect(logs.get('fix_1')).toContain('--- PASS: TestHandleNGSetupRequestNilGNbId');
  });

  it('pass_to_pass_policy drop-failing drops a test failing at the parent and names the environmental reason', async () => {
    const { v, skip } = await validate(go('envfail'), 'docker', {
      pass_to_pass_policy: 'drop-failing',
    });
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([GO_F2P]);
    expect(v!.PASS_TO_PASS).not.toContain('example.com/amfmini/ngap::TestNeedsMongo');
    expect(v!.dropped_failing_at_parent).toEqual([
      {
        test: 'example.com/amfmini/ngap::TestNeedsMongo',
        reason: 'needs a network service (database or peer)',
      },
    ]);
  });
});

describe('swe5g.validate with the local executor', () => {
  it('a fix that also touches the root go.mod validates (test dirs are Go packages, not ".")', async () => {
    const { v, skip, logs } = await validate(go('gomod'), 'local');
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([GO_F2P]);
    // the go test invocation inside the command the harness stored in the step log (a loop of
    // fresh processes around it)
    const stored = readStepLog(logs.get('parent_p2p') ?? '').command;
    const cmd = /go test [^;)&|']*/.exec(stored)?.[0]?.trim() ?? '';
    expect(cmd).toMatch(/ \.\/ngap$/);
    expect(cmd).not.toMatch(/ \.( |$)/);
  });

  it('an existing test failing one run in three is listed as flaky, never rejects the instance', async () => {
    // step 1 is re-run while it fails: it fails all 5 parent runs with probability (1/3)^5 = 0.41%
    const { v, skip } = await validate(go('p2pflaky'), 'local');
    expect(skip?.code).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([GO_F2P]);
    // either seen flaky (dropped and listed) or lucky in every run (kept in PASS_TO_PASS)
    expect(v!.dropped_flaky.includes(GO_SOMETIMES) !== v!.PASS_TO_PASS.includes(GO_SOMETIMES)).toBe(
      true,
    );
    const parentRuns = Object.keys(v!.step_logs).filter((k) => k.startsWith('parent_p2p'));
    if (v!.dropped_flaky.includes(GO_SOMETIMES)) expect(parentRuns.length).toBeGreaterThan(0);
    expect(v!.PASS_TO_PASS).toEqual(expect.arrayContaining(GO_P2P));
  });

  it('Go fix validated on the host toolchain', async () => {
    const { v, skip } = await validate(go('good'), 'local');
    expect(skip?.message).toBeUndefined();
    expect(v!.executor).toBe('local');
    expect(v!.FAIL_TO_PASS).toEqual([GO_F2P]);
    expect(v!.PASS_TO_PASS).toEqual(GO_P2P);
  });

  it('Python fix validated on the host', async () => {
    const { v, skip } = await validate(pyFixture(join(root, 'src')), 'local');
    expect(skip?.message).toBeUndefined();
    expect(v!.FAIL_TO_PASS).toEqual([PY_F2P]);
  });

  it.each([
    ['badfix', 'f2p_fails_after_fix'],
    ['forge', 'f2p_fails_after_fix'],
    ['buildfail', 'build_failed_at_parent'],
    ['flaky', 'flaky'],
  ] as const)('negative case %s ends as %s', async (variant, reason) => {
    const { skip } = await validate(go(variant), 'local');
    expect(skip?.code).toBe(reason);
  });
});
