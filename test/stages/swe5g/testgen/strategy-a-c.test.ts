/**
 * C Strategy A (issue 30): the fixed function called with the crash-triggering input in a forked
 * child, built by meson against the library that compiles the fixed file, run with the host's
 * `meson` and `cc` in repositories this test builds. Four forms of fix (a NULL field of a struct
 * argument, a bounds check, a zero count, an assertion turned into an error return) each fail at
 * the parent and pass at the fix; the generated test rejects a no-op guard and the audit's no-op
 * mutant (the call still crashes in the child) and accepts a correct fix written differently from
 * the gold; a function A cannot call falls back to Strategy B with the reason.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { generateTestGen, hostRunner } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { generateMutants } from '../../../../stages/swe5g/audit/mutants.js';
import { cDirectCall } from '../../../../stages/swe5g/testgen/strategyA-c.js';
import { sitesOf } from './control-harness.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';

const settings = testgenSchema.parse({ verify: 'a', test_timeout_s: 300 });
const repos: BuiltRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

/** A meson project whose library `libngap` (in `src/`, own meson.build) builds `src/ngap.c`. */
const project = (code: string, header: string): Record<string, string> => ({
  'meson.build': "project('cnull', 'c')\nsubdir('src')\n",
  'src/meson.build': `ngap_sources = files('''\n    ngap.c\n'''.split())\nngap_inc = include_directories('.')\nlibngap = static_library('ngap', sources: ngap_sources, c_args: '-DNGAP_COMPILATION', include_directories: ngap_inc)\n`,
  'src/ngap.h': header,
  'src/ngap.c': code,
});

const HEADER = `#ifndef NGAP_H
#define NGAP_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <assert.h>
#define MAX_ITEMS 8
typedef struct { const char *value; } gnb_id_t;
typedef struct { gnb_id_t *gnb_id; int items[MAX_ITEMS]; } ngsetup_t;
#endif
`;
const PRE = `#include "ngap.h"
#ifndef NGAP_COMPILATION
#error "built without the library's c_args"
#endif

`;

/** The repository, the gold fix commit and its generation. */
async function generated(parent: string, gold: string) {
  const repo = buildRepo(project(PRE + parent, HEADER));
  repos.push(repo);
  const fix = repo.commit({ 'src/ngap.c': PRE + gold }, 'fix');
  const r = resolvedOf(repo, fix, 'c');
  const gen = await generateTestGen(repo.dir, r, settings);
  return { repo, fix, r, gen };
}

/** Status of the generated test on `code` (committed on the parent). */
async function statusOn(repo: BuiltRepo, patch: string, id: string, code: string) {
  const c = repo.commit({ 'src/ngap.c': code }, 'variant');
  const run = await hostRunner(repo.dir, c, patch, 'c', [id], 300_000);
  return { build: run.buildFailed, status: run.statuses[id] };
}

const NULL_PARENT = `const char *ngap_gnb_id(const ngsetup_t *req)
{
    return req->gnb_id->value;
}
`;
const NULL_GOLD = `const char *ngap_gnb_id(const ngsetup_t *req)
{
    if (req->gnb_id == NULL) {
        return NULL;
    }
    return req->gnb_id->value;
}
`;

describe('C Strategy A: direct call in a forked child', () => {
  it('a NULL field of a struct argument: crashes at the parent, returns at the fix; rejects a no-op, accepts a local-alias fix', async () => {
    const { repo, gen } = await generated(NULL_PARENT, NULL_GOLD);
    expect(gen.testgen.strategy).toBe('A');
    const id = 'f2p::f2p_call_ngap_gnb_id';
    expect(gen.testgen.FAIL_TO_PASS).toEqual([id]);
    expect(gen.testgen.strategy_reason).toMatch(/req->gnb_id = null/);
    expect(gen.testgen.f2p_test_patch).toContain('+++ b/src/f2p_call_ngap_gnb_id.c');
    expect(gen.testgen.f2p_test_patch).toContain('#include "ngap.c"');
    expect(gen.testgen.f2p_test_patch).toMatch(/link_with: libngap/);
    // the child's crash is the test program's exit status 1 (its stderr names the signal)
    expect(gen.strategyA.check?.parent?.log).toMatch(/f2p_call_ngap_gnb_id FAIL .*exit status 1/);
    const patch = gen.testgen.f2p_test_patch;
    const noop = NULL_PARENT.replace(
      '    return req',
      '    if (req->gnb_id == NULL) { }\n    return req',
    );
    expect(await statusOn(repo, patch, id, PRE + noop)).toEqual({ build: false, status: 'failed' });
    const viaLocal = `const char *ngap_gnb_id(const ngsetup_t *req)
{
    const gnb_id_t *g = req->gnb_id;
    const char *v;
    if (!g)
        v = NULL;
    else
        v = g->value;
    return v;
}
`;
    expect(await statusOn(repo, patch, id, PRE + viaLocal)).toEqual({
      build: false,
      status: 'passed',
    });
  });

  it("meets the function's own assertions (a length, n > K and n == K in one, a pointer field) so the call reaches the guard; a no-op still fails", async () => {
    // Open5GS's ogs_kdf_kamf aborted on ogs_assert(abba_len) with zeroed inputs at the fix commit
    const fn = (guard: string): string => `#define ogs_assert(e) assert(e)
int ngap_fill(const ngsetup_t *req, size_t len, int count, int kind, gnb_id_t *ctx)
{
    ogs_assert(len);
    assert(count > 2 && kind == 7);
    assert(ctx->value != NULL);
${guard}    return (int)strlen(req->gnb_id->value) + (int)len + count + kind + (int)strlen(ctx->value);
}
`;
    const { repo, gen } = await generated(
      fn(''),
      fn('    if (req->gnb_id == NULL)\n        return -1;\n'),
    );
    expect(gen.testgen.strategy, gen.testgen.strategy_reason).toBe('A');
    const patch = gen.testgen.f2p_test_patch;
    expect(patch).toMatch(/F2P_TRUTHY\(f2p_a1\); \/\* len/);
    expect(patch).toMatch(/\(f2p_a2\) = \(__typeof__\(f2p_a2\)\)\(\(2\) \+ 1\)/);
    expect(patch).toMatch(/\(f2p_a3\) = \(__typeof__\(f2p_a3\)\)\(7\)/);
    expect(patch).toMatch(/F2P_TRUTHY\(f2p_a4->value\)/);
    const id = gen.testgen.FAIL_TO_PASS[0]!;
    const noop = fn('    if (req->gnb_id == NULL) { }\n');
    expect(await statusOn(repo, patch, id, PRE + noop)).toEqual({ build: false, status: 'failed' });
  });

  it('the audit no-op mutant of the gold is graded failed by the A test', async () => {
    const { repo, r, gen } = await generated(NULL_PARENT, NULL_GOLD);
    const mutants = await generateMutants(
      [
        {
          path: 'src/ngap.c',
          language: 'c',
          parentSource: PRE + NULL_PARENT,
          fixSource: PRE + NULL_GOLD,
        },
      ],
      gen.sites,
      r.patch,
    );
    const byKind = Object.fromEntries(mutants.map((m) => [m.kind, m]));
    const id = gen.testgen.FAIL_TO_PASS[0]!;
    for (const kind of ['noop', 'empty_body'] as const) {
      const m = byKind[kind]!;
      expect(m.not_applicable).toBeUndefined();
      const got = await statusOn(repo, gen.testgen.f2p_test_patch, id, m.files[0]!.content);
      expect({ kind, ...got }).toEqual({ kind, build: false, status: 'failed' });
    }
    const inverted = byKind.else_branch!;
    expect(inverted.not_applicable).toBeUndefined();
    const got = await statusOn(repo, gen.testgen.f2p_test_patch, id, inverted.files[0]!.content);
    expect(got).toEqual({ build: false, status: 'passed' });
  });

  it('a bounds check: the index set out of range by far faults at the parent', async () => {
    const parent = `int ngap_set_item(ngsetup_t *req, int idx, int v)
{
    req->items[idx] = v;
    return 0;
}
`;
    const gold = parent.replace(
      '    req->items',
      '    if (idx >= MAX_ITEMS)\n        return -1;\n    req->items',
    );
    const { repo, gen } = await generated(parent, gold);
    expect(gen.testgen.strategy).toBe('A');
    expect(gen.testgen.strategy_reason).toMatch(/idx = max/);
    const id = gen.testgen.FAIL_TO_PASS[0]!;
    // an early return written as an else branch is accepted; a check with the wrong bound is not
    const elseForm = parent.replace(
      '    req->items[idx] = v;\n    return 0;',
      '    if (idx < MAX_ITEMS) {\n        req->items[idx] = v;\n        return 0;\n    } else {\n        return -1;\n    }',
    );
    expect(await statusOn(repo, gen.testgen.f2p_test_patch, id, PRE + elseForm)).toEqual({
      build: false,
      status: 'passed',
    });
    const noop = parent.replace(
      '    req->items',
      '    if (idx >= MAX_ITEMS) { (void)v; }\n    req->items',
    );
    expect(await statusOn(repo, gen.testgen.f2p_test_patch, id, PRE + noop)).toEqual({
      build: false,
      status: 'failed',
    });
  });

  it('a zero count: the division by a zero count (SIGFPE in the child) at the parent, the early return at the fix', async () => {
    const parent = `int ngap_average(const int *vals, unsigned count)
{
    int sum = 0;
    for (unsigned i = 0; i < count; i++) sum += vals[i];
    return sum / (int)count;
}
`;
    const gold = parent.replace(
      '    int sum = 0;',
      '    int sum = 0;\n    if (count == 0) return 0;',
    );
    const { gen } = await generated(parent, gold);
    expect(gen.testgen.strategy).toBe('A');
    expect(gen.strategyA.check?.parent?.log).toMatch(/f2p_call_ngap_average FAIL/);
    expect(gen.strategyA.check?.fix?.log).toMatch(/f2p_call_ngap_average\s+OK/);
  });

  it('an assertion turned into an error return: SIGABRT at the parent, the return at the fix', async () => {
    const parent = `int ngap_copy(uint8_t *dst, const uint8_t *src, size_t len)
{
    uint8_t buf[16];
    assert(len <= sizeof(buf));
    memcpy(buf, src, len);
    memcpy(dst, buf, len);
    return 0;
}
`;
    const gold = parent.replace(
      '    assert(len <= sizeof(buf));',
      '    if (len > sizeof(buf))\n        return -1;',
    );
    const { gen } = await generated(parent, gold);
    expect(gen.testgen.strategy).toBe('A');
    expect(gen.testgen.strategy_reason).toMatch(/len = max/);
    expect(gen.strategyA.check?.parent?.log).toMatch(/f2p_call_ngap_copy FAIL/);
  });

  it('falls back to Strategy B with the reason when the function cannot be called simply', async () => {
    const parent = `int ngap_each(ngsetup_t *req, int (*cb)(int))
{
    return cb(req->gnb_id->value[0]);
}
`;
    const gold = parent.replace(
      '    return cb',
      '    if (req->gnb_id == NULL)\n        return -1;\n    return cb',
    );
    const { gen } = await generated(parent, gold);
    expect(gen.testgen.strategy).toBe('B');
    expect(gen.testgen.strategy_reason).toMatch(
      /Strategy A not used: .*cb.* is a function pointer/,
    );
  });

  it('says why A is not generated: a function the fix adds, changed parameters, a file no meson library builds', async () => {
    const gold = PRE + NULL_GOLD;
    const sites = await sitesOf('c', 'src/ngap.c', PRE + NULL_PARENT, gold);
    const files = project(gold, HEADER);
    const read = (p: string): string | null => files[p] ?? null;
    const ok = await cDirectCall(gold, sites, read, read);
    expect(ok.ok).toBe(true);
    const added = await cDirectCall(gold, sites, read, (p) => (p === 'src/ngap.c' ? PRE : read(p)));
    expect(added).toMatchObject({ ok: false, code: 'new_function' });
    const widened = await cDirectCall(gold, sites, read, (p) =>
      p === 'src/ngap.c'
        ? PRE + NULL_PARENT.replace('(const ngsetup_t *req)', '(const ngsetup_t *req, int flags)')
        : read(p),
    );
    expect(widened).toMatchObject({ ok: false, code: 'signature_changed' });
    const noLib = await cDirectCall(
      gold,
      sites,
      (p) => (p === 'src/meson.build' ? "executable('ngapd', 'main.c')\n" : read(p)),
      read,
    );
    expect(noLib).toMatchObject({ ok: false, code: 'no_meson_target' });
  });
});
