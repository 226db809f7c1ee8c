/**
 * Python Strategy A deferred to validation (issue 30): when testgen's host flip check of the A
 * test stops at the fixed module's import (the host lacks a package the instance image installs,
 * as Magma's setup.py dependencies and generated protos), the A test is kept as the record's
 * `deferred_a` beside the Strategy B fallback, for swe5g.validate to decide in the image
 * (validate/deferred-a.ts). Host only: the fixture's module imports `inflection`, which the host's
 * python3 lacks.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestGen } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { pythonDeferral } from '../../../../stages/swe5g/testgen/py-direct-call.js';
import { pythonTestDir } from '../../../../stages/swe5g/testgen/emit.js';
import { resolveFixture } from '../../../fixtures/repos/harness.js';
import { DEFERRED_PKG, pyDeferredFixture } from '../../../fixtures/repos/py-deferred.js';
import { buildRepo, resolvedOf } from './repos.js';

const settings = testgenSchema.parse({ verify: 'a', test_timeout_s: 120 });
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-py-deferred-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Whether the host's python3 imports `pkg` (the fixture needs it absent). */
function hostImports(pkg: string): boolean {
  try {
    execFileSync('python3', ['-c', `import ${pkg}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('testgen defers a Python Strategy A test the host cannot import', () => {
  it('keeps the A test (patch, ids, function, inputs, the import failure) beside the B fallback', async () => {
    expect(hostImports(DEFERRED_PKG), `the host's python3 must lack ${DEFERRED_PKG}`).toBe(false);
    const fx = pyDeferredFixture(join(root, 'src'), 'flips');
    const res = await resolveFixture(fx, join(root, 'state'));
    const gen = await generateTestGen(fx.dir, res, settings);
    const tg = gen.testgen;
    expect(tg.strategy).toBe('B');
    expect(tg.FAIL_TO_PASS).toEqual(['tests/test_f2p_intent.py::test_f2p_session_label']);
    expect(tg.deferred_a).toEqual({
      f2p_test_patch: expect.stringContaining('+++ b/tests/test_f2p_call.py'),
      FAIL_TO_PASS: ['tests/test_f2p_call.py::test_f2p_call_session_label'],
      function: 'session_label',
      inputs: 'session=None',
      host_import_failure: `No module named '${DEFERRED_PKG}'`,
    });
    expect(tg.deferred_a!.f2p_test_patch).toContain('importlib.import_module("smfpy.naming")');
    expect(tg.strategy_reason).toContain(
      `direct call of session_label does not import on this runner (No module named '${DEFERRED_PKG}')`,
    );
    expect(tg.strategy_reason).toContain(
      'the A test of session_label is deferred to validation in the instance image',
    );
    // the host runs were made and say why
    expect(gen.strategyA.check?.parent?.log).toContain(`No module named '${DEFERRED_PKG}'`);
  });
});

describe('a monorepo folder under a pytest.ini (Magma: lte/gateway/pytest.ini)', () => {
  it('the A test goes in the folder and its host check finds it by its repository id', async () => {
    const buggy = 'def pdu_type(session):\n    return session.upper()\n';
    const repo = buildRepo({
      'lte/gateway/pytest.ini': '[pytest]\n',
      'lte/gateway/python/smf/__init__.py': '',
      'lte/gateway/python/smf/pdu.py': buggy,
    });
    try {
      const fix = repo.commit(
        {
          'lte/gateway/python/smf/pdu.py':
            'def pdu_type(session):\n    if session is None:\n        return ""\n    return session.upper()\n',
        },
        'fix',
      );
      const gen = await generateTestGen(
        repo.dir,
        resolvedOf(repo, fix, 'python'),
        settings,
        undefined,
        {
          pythonRoots: ['lte/gateway/python'],
          moduleDir: 'lte/gateway/python/smf',
        },
      );
      // pytest roots its ids at lte/gateway (the ini): the id step roots them at the checkout
      expect(gen.testgen.strategy, gen.testgen.strategy_reason).toBe('A');
      expect(gen.testgen.FAIL_TO_PASS).toEqual([
        'lte/gateway/python/smf/test_f2p_call.py::test_f2p_call_pdu_type',
      ]);
    } finally {
      repo.cleanup();
    }
  });
});

describe('pythonDeferral: the fallback decision', () => {
  const imp = `E   ModuleNotFoundError: No module named 'grpc'`;
  it('an import failure at the parent or at the fix defers; a decided check does not', () => {
    expect(pythonDeferral({ ok: false, parent: { log: imp } })).toBe("No module named 'grpc'");
    // the parent ran the call (it crashed), the fix's new import is what the host lacks
    expect(
      pythonDeferral({ ok: false, parent: { log: 'crashed on x=None' }, fix: { log: imp } }),
    ).toBe("No module named 'grpc'");
    expect(
      pythonDeferral({
        ok: false,
        parent: { log: "ImportError: cannot import name 'X' from 'y'" },
      }),
    ).toBe("cannot import name 'X' from 'y'");
    // the call ran and said something of the fix: decided on the host
    expect(pythonDeferral({ ok: false, parent: { log: 'passed' } })).toBeNull();
    expect(
      pythonDeferral({ ok: false, parent: { log: 'x' }, fix: { log: 'AttributeError' } }),
    ).toBeNull();
    expect(pythonDeferral({ ok: true, parent: { log: imp } })).toBeNull();
  });
});

describe('pythonTestDir under a registry folder', () => {
  const files = new Set(['tests/__init__.py', 'lte/py/mobilityd/tests/__init__.py']);
  const exists = (p: string): boolean => files.has(p);
  it('the tests folder of the entry, else the entry folder; the root as before', () => {
    expect(pythonTestDir(exists)).toBe('tests');
    expect(pythonTestDir(exists, 'lte/py/mobilityd')).toBe('lte/py/mobilityd/tests');
    expect(pythonTestDir(exists, 'lte/py/smsd')).toBe('lte/py/smsd');
    expect(pythonTestDir(() => false)).toBe('.');
  });
});
