/**
 * Strategy B on C guards as Open5GS writes them (issue 21): truthiness (`if (source_ue)`),
 * `if (!x)` then return/goto, the assertion macros (`ogs_assert(x)`, `ogs_expect_or_return(_val)`),
 * found through tree-sitter, so a guard in a comment, a string or `#if 0` dead code never counts;
 * then end to end on a meson repository this test builds, with the host `meson` and `python3`:
 * the generated f2p test fails at the parent, passes after the fix and after an equivalent fix,
 * and fails for the fakes.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { deriveFixSites, type FileChange } from '../../../../stages/swe5g/testgen/patterns.js';
import { generateTestGen, hostRunner } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';
import { rewriteCStatementMacros } from '../../../../pipeline/providers/treesitter/c-macros.js';

const PARENT = `#include <stddef.h>
#include "amf.h"

int handle(amf_ue_t *source_ue, sess_t *sess)
{
    int rv = 0;
    rv = source_ue->id + sess->psi;
    return rv;
}
`;

/** The added lines (1-based) of `fix` against `parent`: lines of `fix` not in `parent`. */
function added(parent: string, fix: string): Set<number> {
  const old = new Set(parent.split('\n'));
  const out = new Set<number>();
  fix.split('\n').forEach((l, i) => {
    if (!old.has(l)) out.add(i + 1);
  });
  return out;
}

async function sitesOf(fix: string) {
  const change: FileChange = {
    file: 'src/amf/handler.c',
    language: 'c',
    parentSource: PARENT,
    fixSource: fix,
    addedLines: added(PARENT, fix),
  };
  return deriveFixSites(change);
}

const guarded = (guard: string): string =>
  PARENT.replace('    rv = source_ue->id', `${guard}\n    rv = source_ue->id`);

describe('Strategy B C guards (tree-sitter)', () => {
  it.each([
    ['if (source_ue)', '    if (source_ue) rv = 1;', 'source_ue'],
    ['if (a && field)', '    if (rv == 0 && sess->smf) rv = 2;', 'sess->smf'],
    ['if (!x) return', '    if (!sess)\n        return -1;', 'sess'],
    ['if (!x) goto', '    if (!source_ue)\n        goto end;', 'source_ue'],
    ['ogs_assert(x)', '    ogs_assert(sess);', 'sess'],
    ['ogs_expect_or_return(x)', '    ogs_expect_or_return(source_ue);', 'source_ue'],
    ['ogs_expect_or_return_val(x, v)', '    ogs_expect_or_return_val(sess->smf, -1);', 'sess->smf'],
    [
      'ogs_error then return',
      '    if (sess->psi == 0) {\n        ogs_error("no PSI");\n        return -1;\n    }',
      'sess->psi==0',
    ],
  ])('%s gives a pattern (%s)', async (_name, guard, key) => {
    const { sites } = await sitesOf(guarded(guard));
    expect(sites.map((s) => s.pattern.key)).toContain(key);
    const site = sites.find((s) => s.pattern.key === key)!;
    expect(site.parentCount).toBe(0);
    expect(site.fixCount).toBeGreaterThan(0);
    expect(site.function).toBe('handle');
  });

  it('classes truthiness and assertion guards as null checks', async () => {
    for (const g of ['    if (source_ue) rv = 1;', '    ogs_assert(source_ue);']) {
      const { sites } = await sitesOf(guarded(g));
      expect(sites[0]?.pattern.kind).toBe('null_check');
      // the checker counts every equivalent form of the null check of source_ue
      expect(sites[0]?.pattern.variants).toContainEqual(['source_ue', '==', 'NULL']);
    }
    // an added assertion is met by any null check; a graceful check is not met by an assertion
    const assertSite = (await sitesOf(guarded('    ogs_assert(source_ue);'))).sites[0]!;
    expect(assertSite.pattern.variants).toContainEqual(['ogs_assert', '(', 'source_ue', ')']);
    const ifSite = (await sitesOf(guarded('    if (source_ue) rv = 1;'))).sites[0]!;
    expect(ifSite.pattern.variants).not.toContainEqual(['ogs_assert', '(', 'source_ue', ')']);
  });

  it('finds the fix that turns ogs_assert(x) into if (!x) { ogs_error(...); return }', async () => {
    const parent = PARENT.replace('    int rv = 0;', '    int rv = 0;\n    ogs_assert(sess);');
    const fix = parent.replace(
      '    ogs_assert(sess);',
      '    if (!sess) {\n        ogs_error("no session");\n        return -1;\n    }',
    );
    const { sites } = await deriveFixSites({
      file: 'src/smf/context.c',
      language: 'c',
      parentSource: parent,
      fixSource: fix,
      addedLines: added(parent, fix),
    });
    expect(sites.map((s) => [s.pattern.key, s.parentCount, s.fixCount])).toEqual([['sess', 0, 1]]);
  });

  it.each([
    ['a comment', '    /* if (!sess) return -1; ogs_assert(sess); */'],
    ['a string', '    const char *why = "ogs_assert(sess) if (source_ue)"; (void)why;'],
    ['#if 0 dead code', '#if 0\n    ogs_assert(sess);\n    if (!source_ue) return -1;\n#endif'],
  ])('a guard in %s is no fix pattern', async (_name, fake) => {
    const { sites } = await sitesOf(guarded(fake));
    expect(sites.filter((s) => s.pattern.kind === 'null_check')).toEqual([]);
  });

  it('keeps the #else branch of #if 0', async () => {
    const { sites } = await sitesOf(
      guarded('#if 0\n    rv = 9;\n#else\n    ogs_assert(sess);\n#endif'),
    );
    expect(sites.map((s) => s.pattern.key)).toEqual(['sess']);
  });
});

// Open5GS's string switch (lib/core/ogs-macros.h) before the fixed function: a construct reduced
// from lib/sbi/message.c (balanced lines deleted while the grammar still failed), where without
// the rewrite tree-sitter's recovery makes `build_request` run to the end of the file and swallow
// `handle`, so the fix in `handle` had no function (on the real file: 45 of 60 functions found)
const SWITCHED = `#include "amf.h"

request_t *build_request(message_t *message)
{
    if (build_content(&request->http, message) == false) {
        SWITCH(message->h.method)
        CASE(HTTP_METHOD_DELETE)
        DEFAULT
        END
    }
    nf_type = NF_INSTANCE_TYPE(self()->nf_instance);
    return request;
}

${PARENT.split('\n').slice(2).join('\n')}`;

describe('Strategy B C guards after a SWITCH/CASE/END block (Open5GS string switch)', () => {
  it('finds the fix in the function after the switch, with its own rows', async () => {
    const fix = SWITCHED.replace(
      '    rv = source_ue->id',
      '    ogs_assert(sess);\n    rv = source_ue->id',
    );
    const { sites } = await deriveFixSites({
      file: 'lib/sbi/message.c',
      language: 'c',
      parentSource: SWITCHED,
      fixSource: fix,
      addedLines: added(SWITCHED, fix),
    });
    expect(sites.map((s) => [s.function, s.pattern.key])).toEqual([['handle', 'sess']]);
  });

  it('rewrites the macros to C of the same length, line for line', () => {
    const out = rewriteCStatementMacros(SWITCHED);
    expect(out.length).toBe(SWITCHED.length);
    expect(out.split('\n').map((l) => l.length)).toEqual(SWITCHED.split('\n').map((l) => l.length));
    expect(out).toContain('        {(message->h.method);{{');
    expect(out).toContain('        }(HTTP_METHOD_DELETE);{');
    expect(out).not.toMatch(/SWITCH|CASE|DEFAULT|END/);
    // a file without SWITCH( keeps a lone END (another project's macro)
    expect(rewriteCStatementMacros('int f(void)\n{\nEND\n}\n')).toContain('\nEND\n');
  });
});

const settings = testgenSchema.parse({ verify: 'all' });
const repos: BuiltRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

describe('swe5g.testgen on an Open5GS-style ogs_assert fix (meson suite f2p)', () => {
  it('fails at the parent, passes after the fix and an equivalent fix, fails for fakes', async () => {
    const repo = buildRepo({
      'meson.build': "project('amf', 'c')\nlib = static_library('amf', 'src/amf/handler.c')\n",
      'src/amf/handler.c': PARENT,
      'src/amf/amf.h':
        'typedef struct { int id; } amf_ue_t;\ntypedef struct { int psi; int *smf; } sess_t;\n',
    });
    repos.push(repo);
    const fix = repo.commit(
      { 'src/amf/handler.c': guarded('    ogs_assert(sess);') },
      'amf: assert the session',
    );
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'c'), settings);
    expect(gen.testgen.strategy).toBe('B');
    expect(gen.testgen.FAIL_TO_PASS).toEqual(['f2p::f2p_handle']);
    expect(gen.checkB?.ok).toBe(true);
    const run = async (text: string, label: string) =>
      (
        await hostRunner(
          repo.dir,
          repo.commit({ 'src/amf/handler.c': text }, label),
          gen.testgen.f2p_test_patch,
          'c',
          ['f2p::f2p_handle'],
          120_000,
        )
      ).statuses['f2p::f2p_handle'];
    expect(await run(guarded('    if (!sess)\n        return -1;'), 'equivalent')).toBe('passed');
    expect(await run(guarded('    if (sess == NULL) return -2;'), 'equivalent 2')).toBe('passed');
    expect(await run(guarded('    /* ogs_assert(sess); */'), 'comment')).toBe('failed');
    expect(await run(guarded('    const char *s = "ogs_assert(sess)"; (void)s;'), 'string')).toBe(
      'failed',
    );
    expect(await run(guarded('#if 0\n    ogs_assert(sess);\n#endif'), 'dead')).toBe('failed');
  });
});
