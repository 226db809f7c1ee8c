/**
 * The model-written Strategy A test (`swe5g.testgen.llm`, issue 30) for C and Python, through a
 * scripted local server speaking the OpenAI-compatible chat protocol: each answer is placed by its
 * language's layout (a pytest module; a C case run in a forked child, registered as a meson test)
 * and run at both commits with the host toolchain. An answer that is not a test file, or that
 * does not fail at the parent, is refused and the outcome fed back; the one that flips is kept as
 * Strategy A. The rule-based Python direct call finds no input here (the guard is on a value read
 * from a module table), and C has no rule-based Strategy A on this branch.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { generateTestGen, hostRunner } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { createProvider } from '../../../../pipeline/providers/llm/config.js';
import { startLlmServer, type ScriptedReply } from '../../../servers/llm-server.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';

const repos: BuiltRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

/** Runs testgen with a model server answering `script` in order; returns the run and the chats. */
async function withModel(
  repo: BuiltRepo,
  fix: string,
  language: 'c' | 'python',
  script: ScriptedReply[],
  tries: number,
) {
  const server = await startLlmServer({ script });
  try {
    const endpoints = [
      { kind: 'openai-compatible' as const, base_url: server.url, stream: false, retries: 0 },
    ];
    const settings = testgenSchema.parse({
      verify: 'a',
      test_timeout_s: 300,
      llm: { model: 'qwen3.5:2b', tries, endpoints },
    });
    const llm = createProvider({ endpoints, cache: false });
    const gen = await generateTestGen(
      repo.dir,
      resolvedOf(repo, fix, language),
      settings,
      hostRunner,
      { llm },
    );
    return { gen, chats: server.chatRequests().map((c) => JSON.stringify(c.body)) };
  } finally {
    await server.close();
  }
}

const PY = `"""Sessions by IMSI."""

SESSIONS = {}


def release(imsi):
    return SESSIONS.get(imsi).pdu
`;
const PY_FIXED = PY.replace(
  '    return SESSIONS.get(imsi).pdu',
  '    session = SESSIONS.get(imsi)\n    if session is None:\n        return None\n    return session.pdu',
);

describe('swe5g.testgen LLM-written test for Python (OpenAI-compatible server)', () => {
  it('refuses a test that does not fail at the parent with feedback, keeps the one that flips', async () => {
    const repo = buildRepo({
      'smf/__init__.py': '',
      'smf/sessions.py': PY,
      'tests/__init__.py': '',
    });
    repos.push(repo);
    const fix = repo.commit({ 'smf/sessions.py': PY_FIXED }, 'fix unknown imsi');
    const passesEverywhere = 'def test_f2p_llm_release():\n    assert True\n';
    const flips =
      'from smf import sessions\n\n\ndef test_f2p_llm_release():\n    assert sessions.release("001010000000001") is None\n';
    const { gen, chats } = await withModel(
      repo,
      fix,
      'python',
      [
        { content: '```python\n' + passesEverywhere + '```' },
        { content: 'Here it is:\n```python\n' + flips + '```' },
      ],
      3,
    );
    expect(gen.testgen.strategy, gen.testgen.strategy_reason).toBe('A');
    expect(gen.testgen.strategy_reason).toMatch(
      /^A \(LLM-written by qwen3\.5:2b, try 2 of 3\): calls release/,
    );
    expect(gen.testgen.FAIL_TO_PASS).toEqual(['tests/test_f2p_llm.py::test_f2p_llm_release']);
    expect(gen.testgen.f2p_test_patch).toContain('+from smf import sessions');
    expect(gen.testgen.f2p_test_patch).toContain('+_REPO = pathlib.Path(__file__)');
    expect(chats).toHaveLength(2);
    expect(chats[0]).toContain('one pytest module');
    expect(chats[0]).toContain('import smf.sessions');
    expect(chats[1]).toMatch(/That test was rejected: does not fail at base_commit/);
    expect(gen.strategyA.reason).toBe('LLM-written test accepted');
    // the kept test rejects a no-op fix and accepts a fix written differently
    const id = gen.testgen.FAIL_TO_PASS[0]!;
    const noop = repo.commit(
      {
        'smf/sessions.py': PY.replace(
          '    return SESSIONS',
          '    if SESSIONS.get(imsi) is None:\n        pass\n    return SESSIONS',
        ),
      },
      'no-op',
    );
    const other = repo.commit(
      {
        'smf/sessions.py': PY.replace(
          '    return SESSIONS.get(imsi).pdu',
          '    try:\n        return SESSIONS[imsi].pdu\n    except KeyError:\n        return None',
        ),
      },
      'other fix',
    );
    for (const [c, want] of [
      [noop, 'failed'],
      [other, 'passed'],
    ] as const) {
      const run = await hostRunner(
        repo.dir,
        c,
        gen.testgen.f2p_test_patch,
        'python',
        [id],
        120_000,
      );
      expect(run.statuses[id]).toBe(want);
    }
  });
});

// a function-pointer parameter: the rule-based C direct call (strategyA-c.ts) cannot build it and
// falls back, so the model-written path is what this fixture exercises
const C = `#include <stddef.h>
#include "get.h"

int get_value(const struct item *p, int (*trace)(int))
{
    if (trace)
        trace(0);
    return *p->v;
}
`;

describe('swe5g.testgen LLM-written test for C (forked child, meson, OpenAI-compatible server)', () => {
  it('refuses answers that are no case or do not crash at the parent, keeps the one that flips', async () => {
    const repo = buildRepo({
      'meson.build': "project('cget', 'c')\nlib = static_library('get', 'src/get.c')\n",
      'src/get.c': C,
      'src/get.h':
        'struct item { int *v; };\nint get_value(const struct item *p, int (*trace)(int));\n',
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
    const noCrash =
      '#include "src/get.c"\n\nvoid f2p_llm_case(void)\n{\n    int x = 1;\n    struct item it = { &x };\n    (void)get_value(&it, NULL);\n}\n';
    const crashes =
      '#include "src/get.c"\n\nvoid f2p_llm_case(void)\n{\n    struct item it = { NULL };\n    (void)get_value(&it, NULL);\n}\n';
    const { gen, chats } = await withModel(
      repo,
      fix,
      'c',
      [
        { content: 'int main(void) { return 0; }' },
        { content: '```c\n' + noCrash + '```' },
        { content: '```c\n' + crashes + '```' },
      ],
      3,
    );
    expect(gen.testgen.strategy, gen.testgen.strategy_reason).toBe('A');
    expect(gen.testgen.strategy_reason).toMatch(/^A \(LLM-written by qwen3\.5:2b, try 3 of 3\)/);
    expect(gen.testgen.FAIL_TO_PASS).toEqual(['f2p::f2p_llm_get_value']);
    expect(gen.testgen.f2p_test_patch).toContain(
      "+test('f2p_llm_get_value', f2p_llm_get_value_exe, suite: 'f2p')",
    );
    expect(gen.strategyA.check?.parent?.statuses['f2p::f2p_llm_get_value']).toBe('failed');
    expect(gen.strategyA.check?.fix?.statuses['f2p::f2p_llm_get_value']).toBe('passed');
    expect(chats).toHaveLength(3);
    expect(chats[0]).toContain('void f2p_llm_case(void)');
    expect(chats[1]).toContain(
      'That test was rejected: the answer defines no void f2p_llm_case(void)',
    );
    expect(chats[2]).toMatch(/That test was rejected: does not fail at base_commit/);
  });
});
