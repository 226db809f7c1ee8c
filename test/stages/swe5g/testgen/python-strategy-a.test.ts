/**
 * Python Strategy A, behavioural direct call (issue 30), end to end on repositories this test
 * builds, with the host `python3 -m pytest`: for five forms of crash (None argument, None
 * attribute of self, None attribute of an argument, missing dict key, empty list index) the
 * generated test calls the fixed function with the crash-triggering input, fails at the parent and
 * passes at the fix; it REJECTS a no-op fix (the guard evaluated, nothing done) and the audit's
 * must-reject mutants, and ACCEPTS correct fixes written differently from the gold (a local
 * variable, early return against else, a different exception) and the audit's rewrites.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { generateTestGen, hostRunner } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { generateMutants } from '../../../../stages/swe5g/audit/mutants.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';

const settings = testgenSchema.parse({ verify: 'a', test_timeout_s: 120 });
const repos: BuiltRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

interface Form {
  /** Module path under the package `smf/`. */
  file: string;
  buggy: string;
  gold: string;
  /** Wrong fixes: the generated test must fail on each. */
  wrong: Record<string, string>;
  /** Correct fixes written differently from the gold: the test must pass on each. */
  right: Record<string, string>;
  /** Part of the generated test's call and of its strategy_reason. */
  call: RegExp;
  inputs: string;
  crash: RegExp;
}

const FORMS: Record<string, Form> = {
  'None argument': {
    file: 'smf/pdu.py',
    buggy: 'def pdu_type(session, default="ipv4"):\n    return session.upper()\n',
    gold: 'def pdu_type(session, default="ipv4"):\n    if session is None:\n        return default\n    return session.upper()\n',
    wrong: {
      noop: 'def pdu_type(session, default="ipv4"):\n    if session is None:\n        pass\n    return session.upper()\n',
      swallow_other:
        'def pdu_type(session, default="ipv4"):\n    try:\n        return session.upper()\n    except ValueError:\n        return default\n',
    },
    right: {
      local:
        'def pdu_type(session, default="ipv4"):\n    s = session\n    if s is None:\n        return default\n    return s.upper()\n',
      else_branch:
        'def pdu_type(session, default="ipv4"):\n    if session is not None:\n        return session.upper()\n    else:\n        return default\n',
      raises:
        'def pdu_type(session, default="ipv4"):\n    if not session:\n        raise ValueError("no session")\n    return session.upper()\n',
    },
    call: /mod\.pdu_type\(_f2p_build\(\{"t":"none"\}\)\)/,
    inputs: 'session=None',
    crash:
      /pdu_type crashed on session=None: AttributeError: 'NoneType' object has no attribute 'upper'/,
  },
  'None attribute of self': {
    file: 'smf/context.py',
    buggy:
      'class SmContext:\n    def __init__(self):\n        self.session = None\n\n    def dnn(self):\n        return self.session.dnn.lower()\n',
    gold: 'class SmContext:\n    def __init__(self):\n        self.session = None\n\n    def dnn(self):\n        if self.session is None:\n            return ""\n        return self.session.dnn.lower()\n',
    wrong: {
      noop: 'class SmContext:\n    def __init__(self):\n        self.session = None\n\n    def dnn(self):\n        if self.session is None:\n            _ = 1\n        return self.session.dnn.lower()\n',
    },
    right: {
      local:
        'class SmContext:\n    def __init__(self):\n        self.session = None\n\n    def dnn(self):\n        session = self.session\n        if session is None:\n            return ""\n        return session.dnn.lower()\n',
      getattr_default:
        'class SmContext:\n    def __init__(self):\n        self.session = None\n\n    def dnn(self):\n        return getattr(getattr(self.session, "dnn", None) or "", "lower")()\n',
    },
    call: /obj = _f2p_build\(\{"t":"obj","attrs":\{"session":\{"t":"none"\}\},"absent":\[\]\}, _f2p_instance\(mod\.SmContext\)\)/,
    inputs: 'self.session=None',
    crash: /SmContext\.dnn crashed on self\.session=None: AttributeError/,
  },
  'None attribute of an argument': {
    file: 'smf/handler.py',
    buggy:
      'class SessionHandler:\n    def release(self, session, reason):\n        reason.log("release")\n        return session.pdu.upper()\n',
    gold: 'class SessionHandler:\n    def release(self, session, reason):\n        reason.log("release")\n        if session.pdu is None:\n            return ""\n        return session.pdu.upper()\n',
    wrong: {
      noop: 'class SessionHandler:\n    def release(self, session, reason):\n        reason.log("release")\n        if session.pdu is None:\n            pass\n        return session.pdu.upper()\n',
    },
    right: {
      else_branch:
        'class SessionHandler:\n    def release(self, session, reason):\n        reason.log("release")\n        pdu = session.pdu\n        if pdu:\n            return pdu.upper()\n        else:\n            return ""\n',
    },
    call: /obj\.release\(_f2p_build\(\{"t":"obj","attrs":\{"pdu":\{"t":"none"\}\},"absent":\[\]\}\), mock\.MagicMock\(\)\)/,
    inputs: 'session.pdu=None',
    crash: /SessionHandler\.release crashed on session\.pdu=None: AttributeError/,
  },
  'missing dict key': {
    file: 'smf/ngap.py',
    buggy: 'def gnb_id(req):\n    return req["global_ran_node_id"]["gnb_id"]["value"]\n',
    gold: 'def gnb_id(req):\n    node = req.get("global_ran_node_id") or {}\n    if node.get("gnb_id") is None:\n        raise ValueError("missing gnb_id")\n    return node["gnb_id"]["value"]\n',
    wrong: {
      noop: 'def gnb_id(req):\n    if "global_ran_node_id" not in req:\n        pass\n    return req["global_ran_node_id"]["gnb_id"]["value"]\n',
    },
    right: {
      in_check:
        'def gnb_id(req):\n    if "global_ran_node_id" not in req:\n        return None\n    return req["global_ran_node_id"]["gnb_id"]["value"]\n',
      try_except:
        'def gnb_id(req):\n    try:\n        return req["global_ran_node_id"]["gnb_id"]["value"]\n    except KeyError:\n        return None\n',
    },
    call: /mod\.gnb_id\(_f2p_build\(\{"t":"dict","keys":\{\},"absent":\["global_ran_node_id"\]\}\)\)/,
    inputs: 'req without key "global_ran_node_id"',
    crash:
      /gnb_id crashed on req without key "global_ran_node_id".*: KeyError: 'global_ran_node_id'/,
  },
  'empty list index': {
    file: 'smf/bearer.py',
    buggy: 'def default_bearer(bearers):\n    return bearers[0].ebi\n',
    gold: 'def default_bearer(bearers):\n    if len(bearers) == 0:\n        return None\n    return bearers[0].ebi\n',
    wrong: {
      noop: 'def default_bearer(bearers):\n    if len(bearers) == 0:\n        pass\n    return bearers[0].ebi\n',
      wrong_guard:
        'def default_bearer(bearers):\n    if bearers is None:\n        return None\n    return bearers[0].ebi\n',
    },
    right: {
      truthiness:
        'def default_bearer(bearers):\n    if bearers:\n        return bearers[0].ebi\n    return None\n',
      next_iter:
        'def default_bearer(bearers):\n    first = next(iter(bearers), None)\n    return first.ebi if first is not None else None\n',
    },
    call: /mod\.default_bearer\(_f2p_build\(\{"t":"list"\}\)\)/,
    inputs: 'bearers=[]',
    crash: /default_bearer crashed on bearers=\[\]: IndexError: list index out of range/,
  },
};

describe('swe5g.testgen Python Strategy A: the crash-triggering input of the fix (host pytest)', () => {
  for (const [name, form] of Object.entries(FORMS)) {
    it(`${name}: fails at the parent, passes at the fix, rejects wrong fixes, accepts rewrites`, async () => {
      const repo = buildRepo({
        'smf/__init__.py': '',
        [form.file]: form.buggy,
        'tests/__init__.py': '',
        'tests/test_ok.py': 'def test_ok():\n    assert True\n',
      });
      repos.push(repo);
      const fix = repo.commit({ [form.file]: form.gold }, 'gold fix');
      const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'python'), settings);
      expect(gen.testgen.strategy, gen.testgen.strategy_reason).toBe('A');
      expect(gen.testgen.strategy_reason).toContain(`called with ${form.inputs} crashes`);
      expect(gen.testgen.f2p_test_patch).toMatch(form.call);
      const [id] = gen.testgen.FAIL_TO_PASS as [string];
      expect(id).toMatch(/^tests\/test_f2p_call\.py::test_f2p_call_/);
      expect(gen.strategyA.check?.parent?.log).toMatch(form.crash);
      const run = async (text: string, label: string): Promise<string | undefined> => {
        const c = repo.commit({ [form.file]: text }, label);
        const r = await hostRunner(
          repo.dir,
          c,
          gen.testgen.f2p_test_patch,
          'python',
          [id],
          120_000,
        );
        return r.statuses[id];
      };
      for (const [label, text] of Object.entries(form.wrong))
        expect({ label, status: await run(text, label) }).toEqual({ label, status: 'failed' });
      for (const [label, text] of Object.entries(form.right))
        expect({ label, status: await run(text, label) }).toEqual({ label, status: 'passed' });
      // the audit's mutants of the gold patch (stages/swe5g/audit/mutants.ts) through the same test
      const mutants = await generateMutants(
        [{ path: form.file, language: 'python', parentSource: form.buggy, fixSource: form.gold }],
        gen.sites,
        repo.diff(repo.base, fix),
      );
      for (const m of mutants.filter((x) => x.patch !== null)) {
        const status = await run(m.files[0]!.content, m.kind);
        expect({ kind: m.kind, status }).toEqual({
          kind: m.kind,
          status: m.expectation === 'reject' ? 'failed' : 'passed',
        });
      }
    });
  }
});
