/**
 * Strategy B control checks in C (issue 30): a NULL guard counts only when the dereference or the
 * call it protects becomes unreachable for NULL. The site comes from tree-sitter on a parent and
 * the gold fix (Open5GS style: `if (!p->field) { warn; return; }`); the generated checker (a
 * statement parser on its own C tokens) runs for real with `python3` on the gold, on correct
 * fixes written differently, and on no-ops and fakes.
 */
import { describe, it, expect } from 'vitest';
import { checkResults, expected, sitesOf, type Variant } from './control-harness.js';

const HEAD = `#include <stddef.h>
#include <stdbool.h>
#include <string.h>

typedef struct { char *field; int n; } req_t;

static void warn(const char *m) { (void)m; }

int other(req_t *p)
{
    return p != NULL;
}

`;

const fn = (body: string): string =>
  `${HEAD}int handle(req_t *p)\n{\n    int len = 0;\n${body}\n    return len;\n}\n`;

const X = 'p->field';
const USE = `    len = (int)strlen(${X});`;
const PARENT = fn(USE);
const GOLD = fn(`    if (!${X}) {\n        warn("no field");\n        return -1;\n    }\n${USE}`);
const before = (guard: string): string => fn(`${guard}\n${USE}`);
const FILE = 'src/amf/handler.c';

const VARIANTS: Variant[] = [
  { name: 'parent', source: PARENT, pass: false },
  { name: 'gold', source: GOLD, pass: true },
  // rejected
  { name: 'no-op guard (empty body)', source: before(`    if (!${X}) { }`), pass: false },
  {
    name: 'gold with its body emptied',
    source: before(`    if (!${X}) {\n        warn("no field");\n    }`),
    pass: false,
  },
  {
    name: 'flag computed, unused',
    source: before(`    bool has = ${X} != NULL;\n    (void)has;`),
    pass: false,
  },
  {
    name: 'flag tested, no-op body',
    source: before(`    bool missing = ${X} == NULL;\n    if (missing) warn("x");`),
    pass: false,
  },
  {
    name: 'guard in #if 0',
    source: before(`#if 0\n    if (!${X}) return -1;\n#endif`),
    pass: false,
  },
  {
    name: 'guard in if (0)',
    source: before(`    if (0) {\n        if (!${X}) return -1;\n    }`),
    pass: false,
  },
  { name: 'guard in a comment', source: before(`    /* if (!${X}) return -1; */`), pass: false },
  { name: 'guard in a string', source: before(`    warn("if (!${X}) return -1;");`), pass: false },
  {
    name: 'guard in another function',
    source: PARENT.replace('return p != NULL;', `return ${X} != NULL;`),
    pass: false,
  },
  { name: 'assertion, not a guard', source: before(`    ogs_assert(${X});`), pass: false },
  { name: 'guard after the use', source: fn(`${USE}\n    if (!${X}) return -1;`), pass: false },
  { name: 'wrong polarity', source: before(`    if (${X}) return -1;`), pass: false },
  // accepted
  {
    name: 'local alias with else',
    source: fn(
      `    char *v = ${X};\n    if (v == NULL) {\n        warn("no field");\n    } else {\n        len = (int)strlen(v);\n    }`,
    ),
    pass: true,
  },
  {
    name: '__auto_type alias, NULL on the left',
    source: fn(
      `    __auto_type v = ${X};\n    if (NULL == v)\n        goto end;\n    len = (int)strlen(v);\nend:`,
    ),
    pass: true,
  },
  {
    name: 'condition inverted, branches swapped',
    source: fn(
      `    if (${X} != NULL) {\n        len = (int)strlen(${X});\n    } else {\n        return -1;\n    }`,
    ),
    pass: true,
  },
  {
    name: 'else instead of early return',
    source: fn(
      `    if (${X} == NULL)\n        warn("no field");\n    else\n        len = (int)strlen(${X});`,
    ),
    pass: true,
  },
  {
    name: 'if NULL then assign X',
    source: before(`    if (!${X})\n        ${X} = "";`),
    pass: true,
  },
  {
    name: 'abort in the bad branch',
    source: before(`    if (${X} == NULL) {\n        abort();\n    }`),
    pass: true,
  },
  {
    name: 'flag used as the condition',
    source: before(`    bool has = ${X} != NULL;\n    if (!has) return -1;`),
    pass: true,
  },
  { name: 'ternary', source: fn(`    len = ${X} ? (int)strlen(${X}) : 0;`), pass: true },
  {
    name: 'conjunction in the condition',
    source: fn(`    if (p->n > 0 && ${X} && strlen(${X}) > 0)\n        len = (int)strlen(${X});`),
    pass: true,
  },
  {
    name: 'disjunction with the check',
    source: before(`    if (p->n < 0 || !${X})\n        return -1;`),
    pass: true,
  },
  {
    name: 'break out of a switch case',
    source: fn(
      `    switch (p->n) {\n    case 1:\n        if (!${X}) break;\n        len = (int)strlen(${X});\n        break;\n    default:\n        break;\n    }`,
    ),
    pass: true,
  },
];

describe('Strategy B control checks (C, f2p_check.py)', () => {
  it('derives a control site: the strlen call the gold guards and the parent does not', async () => {
    const sites = await sitesOf('c', FILE, PARENT, GOLD);
    expect(sites.map((s) => [s.function, s.strength, s.guard])).toEqual([
      ['handle', 'control', { operand: X, signatures: ['arg:strlen'] }],
    ]);
  });

  it('rejects no-ops, flags, dead code, asserts and fakes; accepts the gold and equivalent fixes', async () => {
    const sites = await sitesOf('c', FILE, PARENT, GOLD);
    expect(checkResults('c', sites, FILE, VARIANTS)).toEqual(expected(VARIANTS));
  });
});
