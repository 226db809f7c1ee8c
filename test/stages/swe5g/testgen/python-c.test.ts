/**
 * Python (pytest + ast) and C (meson suite `f2p` + lexer checker) Strategy B, end to end on
 * repositories this test builds, with the host `python3 -m pytest` and `meson`: the test fails at
 * the parent and passes after the fix; a "fix" that puts the pattern in a comment, a string or
 * another function does not pass.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { generateTestGen, hostRunner } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';

const settings = testgenSchema.parse({ verify: 'all' });
const settingsB = testgenSchema.parse({ verify: 'all', strategy_a: false });
const repos: BuiltRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

const PY = `"""SMF-like session handler."""


class SessionHandler:
    def release(self, session):
        return session.pdu.upper()


def helper(x):
    return x
`;

describe('swe5g.testgen on a Python `is None` fix (pytest)', () => {
  it('fails at the parent, passes after the fix, rejects fake fixes', async () => {
    const repo = buildRepo({
      'smf/handler.py': PY,
      'smf/__init__.py': '',
      'tests/__init__.py': '',
      'tests/test_ok.py': 'def test_ok():\n    assert True\n',
    });
    repos.push(repo);
    const fix = repo.commit(
      {
        'smf/handler.py': PY.replace(
          '        return session.pdu.upper()',
          '        if session.pdu is None:\n            return ""\n        return session.pdu.upper()',
        ),
      },
      'fix None pdu',
    );
    // Strategy B itself (Strategy A takes this fix first: python-strategy-a.test.ts)
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'python'), {
      ...settings,
      strategy_a: false,
    });
    expect(gen.testgen.strategy).toBe('B');
    const id = 'tests/test_f2p_intent.py::test_f2p_SessionHandler_release';
    expect(gen.testgen.FAIL_TO_PASS).toEqual([id]);
    expect(gen.checkB?.ok).toBe(true);
    expect(gen.checkB?.parent?.log).toMatch(
      /SessionHandler.release in smf\/handler.py does not contain the expected fix/,
    );
    expect(gen.checkB?.parent?.log).not.toMatch(/pdu is None/);
    const fakes = {
      comment: PY.replace(
        '        return session.pdu.upper()',
        '        # if session.pdu is None:\n        return session.pdu.upper()',
      ),
      string: PY.replace(
        '        return session.pdu.upper()',
        '        _ = "session.pdu is None"\n        return session.pdu.upper()',
      ),
      otherFunction: PY.replace('    return x\n', '    return x.pdu is None\n'),
    };
    for (const [name, text] of Object.entries(fakes)) {
      const fake = repo.commit({ 'smf/handler.py': text }, `fake ${name}`);
      const run = await hostRunner(
        repo.dir,
        fake,
        gen.testgen.f2p_test_patch,
        'python',
        [id],
        120_000,
      );
      expect({ name, status: run.statuses[id] }).toEqual({ name, status: 'failed' });
    }
    // an equivalent fix written differently passes
    const alt = repo.commit(
      {
        'smf/handler.py': PY.replace(
          '        return session.pdu.upper()',
          '        if not session.pdu:\n            return ""\n        return session.pdu.upper()',
        ),
      },
      'alternative fix',
    );
    const altRun = await hostRunner(
      repo.dir,
      alt,
      gen.testgen.f2p_test_patch,
      'python',
      [id],
      120_000,
    );
    expect(altRun.statuses[id]).toBe('passed');
  });
});

const C = `#include <stddef.h>
#include "get.h"

/* value of the item; p->v != NULL is not checked yet */
int get_value(const struct item *p)
{
    return *p->v;
}

int other(const struct item *p)
{
    return p != NULL;
}
`;

describe('swe5g.testgen on a C NULL check (meson suite f2p)', () => {
  it('fails at the parent, passes after the fix, rejects fake fixes', async () => {
    const repo = buildRepo({
      'meson.build': "project('cget', 'c')\nlib = static_library('get', 'src/get.c')\n",
      'src/get.c': C,
      'src/get.h': 'struct item { int *v; };\nint get_value(const struct item *p);\n',
    });
    repos.push(repo);
    const fix = repo.commit(
      {
        'src/get.c': C.replace(
          '    return *p->v;',
          '    if (p->v == NULL)\n        return -1;\n    return *p->v;',
        ),
      },
      'fix NULL v',
    );
    // Strategy B itself (C Strategy A would take this fix first: strategy-a-c.test.ts)
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'c'), settingsB);
    expect(gen.testgen.strategy).toBe('B');
    expect(gen.testgen.FAIL_TO_PASS).toEqual(['f2p::f2p_get_value']);
    expect(gen.testgen.f2p_test_patch).toMatch(/\+test\('f2p_get_value', f2p_python/);
    expect(gen.checkB?.ok).toBe(true);
    expect(gen.testgen.bug_category).toBe('nil_pointer');
    const fakes = {
      comment: C.replace(
        '    return *p->v;',
        '    /* if (p->v == NULL) */ // p->v != NULL\n    return *p->v;',
      ),
      string: C.replace(
        '    return *p->v;',
        '    const char *s = "p->v == NULL"; (void)s;\n    return *p->v;',
      ),
      otherFunction: C.replace('    return p != NULL;', '    return p->v != NULL;'),
    };
    for (const [name, text] of Object.entries(fakes)) {
      const fake = repo.commit({ 'src/get.c': text }, `fake ${name}`);
      const run = await hostRunner(
        repo.dir,
        fake,
        gen.testgen.f2p_test_patch,
        'c',
        ['f2p::f2p_get_value'],
        120_000,
      );
      expect({ name, build: run.buildFailed, status: run.statuses['f2p::f2p_get_value'] }).toEqual({
        name,
        build: false,
        status: 'failed',
      });
    }
    const alt = repo.commit(
      {
        'src/get.c': C.replace(
          '    return *p->v;',
          '    if (!p->v)\n        return -1;\n    return *p->v;',
        ),
      },
      'alternative fix',
    );
    const altRun = await hostRunner(
      repo.dir,
      alt,
      gen.testgen.f2p_test_patch,
      'c',
      ['f2p::f2p_get_value'],
      120_000,
    );
    expect(altRun.statuses['f2p::f2p_get_value']).toBe('passed');
  });
});

describe('swe5g.testgen on a C NULL check (Makefile target)', () => {
  it('registers f2p_<fn> as a make target that fails at the parent and passes after the fix', async () => {
    const repo = buildRepo({ Makefile: 'all:\n\tcc -c src/get.c -o get.o\n', 'src/get.c': C });
    repos.push(repo);
    const fix = repo.commit(
      {
        'src/get.c': C.replace(
          '    return *p->v;',
          '    if (NULL == p->v) return -1;\n    return *p->v;',
        ),
      },
      'fix NULL v',
    );
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'c'), settings);
    expect(gen.testgen.FAIL_TO_PASS).toEqual(['make::f2p_get_value']);
    expect(gen.testgen.f2p_test_patch).toMatch(
      /\+f2p_get_value:\n\+\tpython3 f2p\/f2p_check.py f2p\/f2p_get_value.json/,
    );
    expect(gen.checkB?.ok).toBe(true);
    expect(gen.checkB?.parent?.log).toMatch(
      /get_value in src\/get.c does not contain the expected fix \(site 1 of 1\)/,
    );
  });
});
