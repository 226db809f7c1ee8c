/**
 * Strategy B `text` sites in C (issue 30): a site that stays text (a null check whose use the fix
 * adds with it, an assertion, a comparison that governs no effect) counts the tests of its
 * condition written as itself, mirrored, negated, or with a side through a one-level local alias
 * (docs/strategy-b.md, "Text sites"). The sites come from tree-sitter on a parent and a gold
 * source; the generated `f2p/f2p_check.py` runs for real with `python3` on each variant.
 */
import { describe, it, expect } from 'vitest';
import {
  checkResults,
  derivedResults,
  expected,
  sitesOf,
  type Variant,
} from './control-harness.js';

const HEAD = `#include <stddef.h>
#include <stdbool.h>

#define MAX_LEN 16
#define OGS_OK 0

typedef struct { int len; } pdu_t;
typedef struct { pdu_t *pdu; pdu_t *other; int n; int step; } sess_t;

static int use_pdu(pdu_t *p) { return p->len; }
static int ogs_f(sess_t *s) { return s->n; }
static int ogs_g(sess_t *s) { return s->step; }
static void ogs_warn(const char *m) { (void)m; }

int other(sess_t *sess)
{
    return sess != NULL;
}

`;

const FILE = 'src/smf/handler.c';
const fn = (name: string, body: string): string =>
  `${HEAD}int ${name}(sess_t *sess)\n{\n${body}\n}\n`;

interface Shape {
  name: string;
  parent: string;
  gold: string;
  /** [strength, kind] of each derived site. */
  sites: [string, string][];
  variants: Variant[];
}

const ok = (name: string, source: string): Variant => ({ name, source, pass: true });
const no = (name: string, source: string): Variant => ({ name, source, pass: false });

// 1. the null check whose use the fix adds with it (no unguarded use at the parent: text)
const h = (body: string): string => fn('handle', `    int rv = 0;\n${body}\n    return rv;`);
const NULL_ADDED: Shape = {
  name: 'a null check added with the use it guards',
  parent: h(''),
  gold: h('    if (sess->pdu != NULL)\n        rv = use_pdu(sess->pdu);'),
  sites: [['text', 'null_check']],
  variants: [
    no('parent', h('')),
    ok('gold', h('    if (sess->pdu != NULL)\n        rv = use_pdu(sess->pdu);')),
    ok('mirrored', h('    if (NULL != sess->pdu)\n        rv = use_pdu(sess->pdu);')),
    ok(
      'negated operator, branches swapped',
      h('    if (sess->pdu == NULL) {\n    } else {\n        rv = use_pdu(sess->pdu);\n    }'),
    ),
    ok(
      'negated with !, early return',
      h('    if (!(sess->pdu != NULL))\n        return rv;\n    rv = use_pdu(sess->pdu);'),
    ),
    ok(
      '!(x) early return',
      h('    if (!(sess->pdu))\n        return rv;\n    rv = use_pdu(sess->pdu);'),
    ),
    ok(
      'alias declared',
      h('    pdu_t *pdu = sess->pdu;\n    if (pdu != NULL)\n        rv = use_pdu(pdu);'),
    ),
    ok(
      '__auto_type alias, mirrored, early return',
      h(
        '    __auto_type v = sess->pdu;\n    if (NULL == v)\n        return rv;\n    rv = use_pdu(v);',
      ),
    ),
    ok(
      'alias assigned, negated',
      h(
        '    pdu_t *pdu;\n    pdu = sess->pdu;\n    if (!pdu)\n        return rv;\n    rv = use_pdu(pdu);',
      ),
    ),
    ok(
      'the audit via_local rewrite',
      h(
        '    __auto_type audit_v1 = sess->pdu;\n    if (audit_v1 != NULL)\n        rv = use_pdu(sess->pdu);',
      ),
    ),
    no('only in a comment', h('    /* if (sess->pdu != NULL) rv = use_pdu(sess->pdu); */')),
    no('only in a string', h('    ogs_warn("if (sess->pdu != NULL)");')),
    no(
      'only in if (0)',
      h('    if (0) {\n        if (sess->pdu != NULL)\n            rv = 1;\n    }'),
    ),
    no('only in #if 0', h('#if 0\n    if (sess->pdu != NULL)\n        rv = 1;\n#endif')),
    no('only in if (0 && ...)', h('    if (0 && sess->pdu != NULL)\n        rv = 1;')),
    no(
      'only in another function',
      h('').replace('return sess != NULL;', 'return sess->pdu != NULL;'),
    ),
    no(
      'alias of another value',
      h('    pdu_t *pdu = sess->other;\n    if (pdu != NULL)\n        rv = use_pdu(pdu);'),
    ),
    no(
      'two-level alias',
      h(
        '    pdu_t *a = sess->pdu;\n    pdu_t *b = a;\n    if (b != NULL)\n        rv = use_pdu(b);',
      ),
    ),
    no(
      'alias declared, the check on something else',
      h('    pdu_t *pdu = sess->pdu;\n    if (sess != NULL)\n        rv = use_pdu(pdu);'),
    ),
    no(
      'a store through a pointer is no alias',
      h(
        '    pdu_t **out = &sess->other;\n    *out = sess->pdu;\n    if (out != NULL)\n        rv = 1;',
      ),
    ),
  ],
};

// 2. a comparison that governs no effect (PR 2851: the fix widens `step != 2` by `step != 3`)
const s = (cond: string, rest = ''): string =>
  fn(
    'check_step',
    `${rest}    if (${cond}) {\n        ogs_warn("unexpected step");\n        return -1;\n    }\n    return 0;`,
  );
const flipped = (cond: string, rest = ''): string =>
  fn(
    'check_step',
    `${rest}    if (${cond})\n        return 0;\n    ogs_warn("unexpected step");\n    return -1;`,
  );
const WIDENED: Shape = {
  name: 'a comparison that governs no effect (the condition widened)',
  parent: s('sess->step != 2'),
  gold: s('sess->step != 2 && sess->step != 3'),
  sites: [['text', 'comparison']],
  variants: [
    no('parent', s('sess->step != 2')),
    ok('gold', s('sess->step != 2 && sess->step != 3')),
    ok('mirrored', s('sess->step != 2 && 3 != sess->step')),
    ok(
      'negated operator (De Morgan), branches swapped',
      flipped('sess->step == 2 || sess->step == 3'),
    ),
    ok('negated with !', s('sess->step != 2 && !(sess->step == 3)')),
    ok('the audit inverted rewrite', flipped('(!(sess->step != 2 && sess->step != 3))')),
    ok('alias', s('step != 2 && step != 3', '    int step = sess->step;\n')),
    ok(
      'alias, mirrored and negated',
      flipped('step == 2 || 3 == step', '    int step = sess->step;\n'),
    ),
    no('only in a comment', s('sess->step != 2 /* && sess->step != 3 */')),
    no('only in a string', s('sess->step != 2', '    ogs_warn("sess->step != 3");\n')),
    no(
      'only in if (0)',
      s(
        'sess->step != 2',
        '    if (0) {\n        if (sess->step != 3)\n            return -1;\n    }\n',
      ),
    ),
    no('another value', s('sess->step != 2 && sess->step != 4')),
    no('alias of another value', s('sess->step != 2 && step != 3', '    int step = sess->n;\n')),
    no('two-level alias', s('s1 != 2 && s2 != 3', '    int s1 = sess->step;\n    int s2 = s1;\n')),
    no(
      'alias declared, the check on something else',
      s('step != 2 && sess->n != 3', '    int step = sess->step;\n'),
    ),
  ],
};

// 3. a comparison in an assertion (Open5GS PRs 2805, 2806: `ogs_assert(OGS_OK == f(...))`)
const a = (body: string): string => fn('send', `${body}\n    return 0;`);
const ASSERTED: Shape = {
  name: 'a comparison in an assertion',
  parent: a('    ogs_f(sess);'),
  gold: a('    ogs_assert(OGS_OK == ogs_f(sess));'),
  sites: [['text', 'comparison']],
  variants: [
    no('parent', a('    ogs_f(sess);')),
    ok('gold', a('    ogs_assert(OGS_OK == ogs_f(sess));')),
    ok('mirrored', a('    ogs_assert(ogs_f(sess) == OGS_OK);')),
    ok('negated with !', a('    ogs_assert(!(OGS_OK != ogs_f(sess)));')),
    ok(
      'the call result through a local',
      a('    int rv = ogs_f(sess);\n    ogs_assert(rv == OGS_OK);'),
    ),
    ok(
      'through a local, negated, an exit',
      a('    int rv;\n    rv = ogs_f(sess);\n    if (rv != OGS_OK)\n        abort();'),
    ),
    no('only in a comment', a('    ogs_f(sess); // ogs_assert(OGS_OK == ogs_f(sess));')),
    no('only in a string', a('    ogs_f(sess);\n    ogs_warn("OGS_OK == ogs_f(sess)");')),
    no(
      'only in if (0)',
      a('    ogs_f(sess);\n    if (0)\n        ogs_assert(OGS_OK == ogs_f(sess));'),
    ),
    no(
      'only in #if 0',
      a('    ogs_f(sess);\n#if 0\n    ogs_assert(OGS_OK == ogs_f(sess));\n#endif'),
    ),
    no('alias of another value', a('    int rv = ogs_g(sess);\n    ogs_assert(rv == OGS_OK);')),
    no(
      'two-level alias',
      a('    int rv = ogs_f(sess);\n    int r2 = rv;\n    ogs_assert(r2 == OGS_OK);'),
    ),
    no(
      'alias declared, the check on something else',
      a('    int rv = ogs_f(sess);\n    ogs_assert(sess->n == OGS_OK);\n    (void)rv;'),
    ),
  ],
};

// 4. an added assertion of a pointer (an assertion is no guard: the site stays text)
const u = (body: string): string => fn('use', `${body}\n    return use_pdu(sess->pdu);`);
const ASSERT_NULL: Shape = {
  name: 'an added pointer assertion',
  parent: u(''),
  gold: u('    ogs_assert(sess->pdu);'),
  sites: [['text', 'null_check']],
  variants: [
    no('parent', u('')),
    ok('gold', u('    ogs_assert(sess->pdu);')),
    ok('a comparison, mirrored', u('    ogs_assert(NULL != sess->pdu);')),
    ok('a graceful check', u('    if (!sess->pdu)\n        return -1;')),
    ok('alias', u('    pdu_t *p = sess->pdu;\n    ogs_assert(p);')),
    ok(
      '__auto_type alias in a guard macro',
      u('    __auto_type v = sess->pdu;\n    ogs_expect_or_return_val(v, -1);'),
    ),
    no('only in a comment', u('    // ogs_assert(sess->pdu);')),
    no('only in #if 0', u('#if 0\n    ogs_assert(sess->pdu);\n#endif')),
    no('only in if (false)', u('    if (false) {\n        ogs_assert(sess->pdu);\n    }')),
    no('alias of another value', u('    pdu_t *p = sess->other;\n    ogs_assert(p);')),
    no('two-level alias', u('    pdu_t *p = sess->pdu;\n    pdu_t *q = p;\n    ogs_assert(q);')),
    no(
      'alias declared, the check on something else',
      u('    pdu_t *p = sess->pdu;\n    ogs_assert(sess);\n    (void)p;'),
    ),
  ],
};

// 5. a bound in a ternary (the statement is the same effect on both sides: no control)
const c = (body: string): string => fn('clamp', `    int len;\n${body}\n    return len;`);
const TERNARY: Shape = {
  name: 'a bound in a ternary',
  parent: c('    len = sess->n;'),
  gold: c('    len = sess->n > MAX_LEN ? MAX_LEN : sess->n;'),
  sites: [['text', 'comparison']],
  variants: [
    no('parent', c('    len = sess->n;')),
    ok('gold', c('    len = sess->n > MAX_LEN ? MAX_LEN : sess->n;')),
    ok('mirrored', c('    len = MAX_LEN < sess->n ? MAX_LEN : sess->n;')),
    ok(
      'negated operator, branches swapped',
      c('    len = sess->n <= MAX_LEN ? sess->n : MAX_LEN;'),
    ),
    ok('alias', c('    int n = sess->n;\n    len = n > MAX_LEN ? MAX_LEN : n;')),
    ok(
      'alias of the bound',
      c('    const int lim = MAX_LEN;\n    len = sess->n > lim ? lim : sess->n;'),
    ),
    ok(
      'both sides through locals',
      c('    int n = sess->n;\n    int lim = MAX_LEN;\n    len = lim < n ? lim : n;'),
    ),
    no('only in a comment', c('    len = sess->n; /* sess->n > MAX_LEN ? MAX_LEN : sess->n */')),
    no('only in a string', c('    len = sess->n;\n    ogs_warn("sess->n > MAX_LEN");')),
    no(
      'only in if (0)',
      c('    len = sess->n;\n    if (0)\n        len = sess->n > MAX_LEN ? MAX_LEN : sess->n;'),
    ),
    no(
      'alias of another value',
      c('    int n = sess->step;\n    len = n > MAX_LEN ? MAX_LEN : sess->n;'),
    ),
    no(
      'two-level alias',
      c('    int n = sess->n;\n    int m = n;\n    len = m > MAX_LEN ? MAX_LEN : m;'),
    ),
    no(
      'alias declared, the check on something else',
      c('    int n = sess->n;\n    len = sess->step > MAX_LEN ? MAX_LEN : n;'),
    ),
  ],
};

const SHAPES = [NULL_ADDED, WIDENED, ASSERTED, ASSERT_NULL, TERNARY];

describe('Strategy B text sites in C: the tests of the condition, mirrored, negated, through a local', () => {
  for (const shape of SHAPES)
    it(shape.name, async () => {
      const sites = await sitesOf('c', FILE, shape.parent, shape.gold);
      expect(sites.map((x) => [x.strength, x.pattern.kind])).toEqual(shape.sites);
      expect(checkResults('c', sites, FILE, shape.variants)).toEqual(expected(shape.variants));
      // generation counts as the checker does (the parent's count is the bar the test sets)
      expect(await derivedResults('c', sites, shape.variants)).toEqual(expected(shape.variants));
    });

  it('keeps the control site of an assertion turned into a graceful check of its negation', async () => {
    // Open5GS PR 2942: `ogs_assert(context->epfd >= 0)` became `if (context->epfd < 0) return`;
    // the text count is the same at both (one test of the condition), the control site stands
    const e = (check: string): string =>
      fn('open_poll', `    sess->n = ogs_f(sess);\n${check}\n    sess->step = 1;\n    return 0;`);
    const parent = e('    ogs_assert(sess->n >= 0);');
    const gold = e('    if (sess->n < 0) {\n        ogs_warn("epoll");\n        return -1;\n    }');
    const sites = await sitesOf('c', FILE, parent, gold);
    expect(sites.map((x) => [x.strength, x.pattern.key, x.parentCount, x.fixCount])).toEqual([
      ['control', 'sess->n<0', 1, 1],
    ]);
    const variants = [
      no('parent', parent),
      ok('gold', gold),
      no('no-op', e('    ogs_assert(sess->n >= 0);\n    if (sess->n < 0) {\n    }')),
    ];
    expect(checkResults('c', sites, FILE, variants)).toEqual(expected(variants));
  });

  it('counts the parent the same way: its mirrored and aliased tests raise the bar', async () => {
    const rest = '    int step = sess->step;\n    if (3 != step)\n        ogs_warn("three");\n';
    const parent = s('sess->step != 2', rest);
    const gold = s('sess->step != 2 && sess->step != 3', rest);
    const sites = await sitesOf('c', FILE, parent, gold);
    expect(sites.map((x) => [x.pattern.key, x.parentCount, x.fixCount])).toEqual([
      ['sess->step!=3', 1, 2],
    ]);
    const variants = [no('parent', parent), ok('gold', gold)];
    expect(checkResults('c', sites, FILE, variants)).toEqual(expected(variants));
  });
});
