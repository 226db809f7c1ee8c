/**
 * Strategy B control for C comparisons (issue 30, condition.ts): a comparison the fix adds counts
 * only when the statements it governs run on its side alone. Three fix shapes from Open5GS's
 * history (an overflow check choosing between two assignments, as PR 2864; a condition gating a
 * new assignment, as PR 2863; a bounds check with an early return before a copy), each derived
 * with tree-sitter and checked for real by the generated `f2p_check.py` with `python3`: the gold
 * and correct fixes written differently pass, no-ops, emptied bodies, dead code and wrong
 * polarities fail.
 */
import { describe, it, expect } from 'vitest';
import { checkResults, expected, sitesOf, type Variant } from './control-harness.js';

const HEAD = `#include <stdint.h>
#include <string.h>

typedef struct { int value; int ind; int is_ind; } reg_t;
typedef struct { reg_t registration; } nas_t;
typedef struct { nas_t nas; } ue_t;

static void warn(const char *m) { (void)m; }

`;

// --- 1. overflow check choosing between two assignments (PR 2864's shape) -------------------
const scale = (body: string): string =>
  `${HEAD}uint64_t scale(uint64_t bitrate, uint64_t mul)\n{\n${body}\n    return bitrate;\n}\n`;
const S_PARENT = scale(`    bitrate *= mul;`);
const S_GOLD = scale(
  `    if (bitrate >= (INT64_MAX / mul))\n        bitrate = INT64_MAX;\n    else\n        bitrate *= mul;`,
);
const SCALE: Variant[] = [
  { name: 'parent', source: S_PARENT, pass: false },
  { name: 'gold', source: S_GOLD, pass: true },
  {
    name: 'no-op condition',
    source: scale(`    if (bitrate >= (INT64_MAX / mul)) { }\n    bitrate *= mul;`),
    pass: false,
  },
  {
    name: 'gold with its then-body emptied',
    source: scale(`    if (bitrate >= (INT64_MAX / mul)) { }\n    else\n        bitrate *= mul;`),
    pass: false,
  },
  {
    name: 'gold in if (0), the old multiplication kept',
    source: scale(
      `    if (0) {\n        if (bitrate >= (INT64_MAX / mul))\n            bitrate = INT64_MAX;\n        else\n            bitrate *= mul;\n    }\n    bitrate *= mul;`,
    ),
    pass: false,
  },
  {
    name: 'branches swapped without inverting',
    source: scale(
      `    if (bitrate >= (INT64_MAX / mul))\n        bitrate *= mul;\n    else\n        bitrate = INT64_MAX;`,
    ),
    pass: false,
  },
  {
    name: 'clamp after the multiplication',
    source: scale(
      `    bitrate *= mul;\n    if (bitrate >= (INT64_MAX / mul))\n        bitrate = INT64_MAX;`,
    ),
    pass: false,
  },
  // accepted
  {
    name: 'inverted, mirrored, branches swapped',
    source: scale(
      `    if ((INT64_MAX / mul) > bitrate) {\n        bitrate *= mul;\n    } else {\n        bitrate = INT64_MAX;\n    }`,
    ),
    pass: true,
  },
  {
    name: 'early return instead of else',
    source: scale(
      `    if (bitrate >= (INT64_MAX / mul)) {\n        bitrate = INT64_MAX;\n        return bitrate;\n    }\n    bitrate *= mul;`,
    ),
    pass: true,
  },
  {
    name: 'through a local',
    source: scale(
      `    uint64_t b = bitrate;\n    if (b < INT64_MAX / mul)\n        bitrate *= mul;\n    else\n        bitrate = INT64_MAX;`,
    ),
    pass: true,
  },
];

// --- 2. a condition gating new assignments (PR 2863's shape) --------------------------------
const build = (body: string): string =>
  `${HEAD}int build(ue_t *ue, reg_t *out)\n{\n    out->ind = 0;\n${body}\n    return 0;\n}\n`;
const B_PARENT = build('');
const B_GOLD = build(
  `    if (ue->nas.registration.value ==\n                1) {\n        out->is_ind = 1;\n        out->ind = 1;\n    }`,
);
const BUILD: Variant[] = [
  { name: 'parent', source: B_PARENT, pass: false },
  { name: 'gold', source: B_GOLD, pass: true },
  {
    name: 'no-op condition',
    source: build(`    if (ue->nas.registration.value == 1) { }`),
    pass: false,
  },
  {
    name: 'assignments without the condition',
    source: build(`    out->is_ind = 1;\n    out->ind = 1;`),
    pass: false,
  },
  {
    name: 'wrong polarity',
    source: build(
      `    if (ue->nas.registration.value != 1) {\n        out->is_ind = 1;\n        out->ind = 1;\n    }`,
    ),
    pass: false,
  },
  {
    name: 'condition in a string, assignments ungated',
    source: build(
      `    warn("if (ue->nas.registration.value == 1)");\n    out->is_ind = 1;\n    out->ind = 1;`,
    ),
    pass: false,
  },
  // accepted
  {
    name: 'through a local, mirrored',
    source: build(
      `    int v = ue->nas.registration.value;\n    if (1 == v) {\n        out->ind = 1;\n        out->is_ind = 1;\n    }`,
    ),
    pass: true,
  },
  {
    name: 'negated with an early return',
    source: build(
      `    if (!(ue->nas.registration.value == 1))\n        return 0;\n    out->is_ind = 1;\n    out->ind = 1;`,
    ),
    pass: true,
  },
  {
    name: 'conjunction holding the condition',
    source: build(
      `    if (out != NULL && ue->nas.registration.value == 1) {\n        out->is_ind = 1;\n        out->ind = 1;\n    }`,
    ),
    pass: true,
  },
];

// --- 3. a bounds check with an early return before a copy -----------------------------------
const copy = (body: string): string =>
  `${HEAD}int copy(char *dst, const char *src, int len)\n{\n${body}\n    return len;\n}\n`;
const COPY_USE = `    memcpy(dst, src, len);`;
const C_PARENT = copy(COPY_USE);
const C_GOLD = copy(
  `    if (len > 16) {\n        warn("too long");\n        return -1;\n    }\n${COPY_USE}`,
);
const COPY: Variant[] = [
  { name: 'parent', source: C_PARENT, pass: false },
  { name: 'gold', source: C_GOLD, pass: true },
  { name: 'no-op check', source: copy(`    if (len > 16) { }\n${COPY_USE}`), pass: false },
  {
    name: 'gold with its body emptied (log only)',
    source: copy(`    if (len > 16) {\n        warn("too long");\n    }\n${COPY_USE}`),
    pass: false,
  },
  {
    name: 'check after the copy',
    source: copy(`${COPY_USE}\n    if (len > 16)\n        return -1;`),
    pass: false,
  },
  {
    name: 'check in #if 0',
    source: copy(`#if 0\n    if (len > 16) return -1;\n#endif\n${COPY_USE}`),
    pass: false,
  },
  {
    name: 'another bound',
    source: copy(`    if (len > 32)\n        return -1;\n${COPY_USE}`),
    pass: false,
  },
  // accepted
  {
    name: 'else branch, inverted',
    source: copy(
      `    if (len <= 16)\n        memcpy(dst, src, len);\n    else\n        return -1;`,
    ),
    pass: true,
  },
  {
    name: 'mirrored with goto',
    source: copy(`    if (16 < len)\n        goto end;\n${COPY_USE}\nend:`),
    pass: true,
  },
];

// --- 4. statement macros around the condition (Open5GS: SWITCH ... END, ogs_list_for_each) ---
const macros = (body: string): string =>
  `${HEAD}int conv(char *unit, uint64_t bitrate, list_t *l)\n{\n    uint64_t mul = 1;\n    int n = 0;\n    SWITCH(unit)\n    CASE("Kbps")\n        mul = 1000ul;\n        break;\n    DEFAULT\n    END\n${body}\n    return n;\n}\n`;
const LOOP = `    ogs_list_for_each(l, b) {\n        n = b->ebi;\n    }`;
const M_PARENT = macros(`    bitrate *= mul;\n${LOOP}`);
const M_GOLD = macros(
  `    if (bitrate >= (INT64_MAX / mul))\n        return -1;\n    bitrate *= mul;\n${LOOP}`,
);
const MACROS: Variant[] = [
  { name: 'parent', source: M_PARENT, pass: false },
  { name: 'gold', source: M_GOLD, pass: true },
  {
    name: 'no-op condition',
    source: macros(`    if (bitrate >= (INT64_MAX / mul)) { }\n    bitrate *= mul;\n${LOOP}`),
    pass: false,
  },
  {
    name: 'else branch holding the rest',
    source: macros(
      `    if (bitrate < INT64_MAX / mul) {\n        bitrate *= mul;\n${LOOP}\n    } else {\n        return -1;\n    }`,
    ),
    pass: true,
  },
];

describe('Strategy B control for C comparisons (condition.ts, f2p_check.py)', () => {
  it('derives condition sites with the effects each side governs', async () => {
    const s = await sitesOf('c', 'lib/sbi/conv.c', S_PARENT, S_GOLD);
    expect(s.map((x) => [x.function, x.strength, x.guard])).toEqual([
      [
        'scale',
        'control',
        {
          operand: 'bitrate',
          condition: { op: '>=', value: 'INT64_MAX/mul' },
          signatures: ['effect+:bitrate=INT64_MAX', 'effect-:bitrate*=mul'],
        },
      ],
    ]);
    const b = await sitesOf('c', 'src/amf/nudm-build.c', B_PARENT, B_GOLD);
    expect(b.map((x) => x.guard)).toEqual([
      {
        operand: 'ue->nas.registration.value',
        condition: { op: '==', value: '1' },
        signatures: ['effect+:out->ind=1', 'effect+:out->is_ind=1'],
      },
    ]);
    const c = await sitesOf('c', 'lib/core/copy.c', C_PARENT, C_GOLD);
    expect(c.map((x) => x.guard)).toEqual([
      {
        operand: 'len',
        condition: { op: '>', value: '16' },
        signatures: ['effect-:memcpy(dst,src,len)'],
      },
    ]);
    // the macro loop `ogs_list_for_each(l, b) { }` is a loop, not an effect; its body's statement is
    const m = await sitesOf('c', 'lib/sbi/conv.c', M_PARENT, M_GOLD);
    expect(m.map((x) => x.guard?.signatures)).toEqual([
      ['effect-:bitrate*=mul', 'effect-:n=b->ebi'],
    ]);
    // a break out of a macro loop's body governs nothing after the loop (Open5GS PR 3728's shape)
    const pick = (body: string): string =>
      `${HEAD}int pick(list_t *l, int t)\n{\n    int save = 0;\n${body}\n    drop(l);\n    return save;\n}\n`;
    const p = await sitesOf(
      'c',
      'lib/sbi/nf-sm.c',
      pick(`    ogs_list_for_each(l, s) {\n        save = 1;\n    }`),
      pick(
        `    ogs_list_for_each(l, s) {\n        if (s->type == t) {\n            save = 1;\n            break;\n        }\n    }`,
      ),
    );
    expect(p.map((x) => x.guard?.signatures)).toEqual([['effect+:save=1']]);
  });

  it.each([
    ['overflow check (two assignments)', 'lib/sbi/conv.c', S_PARENT, S_GOLD, SCALE],
    ['condition gating new assignments', 'src/amf/nudm-build.c', B_PARENT, B_GOLD, BUILD],
    ['bounds check with an early return', 'lib/core/copy.c', C_PARENT, C_GOLD, COPY],
    ['statement macros around the condition', 'lib/sbi/conv.c', M_PARENT, M_GOLD, MACROS],
  ] as const)(
    '%s: rejects no-ops and fakes, accepts equivalent fixes',
    async (_n, file, p, g, v) => {
      const sites = await sitesOf('c', file, p, g);
      expect(sites.every((s) => s.strength === 'control')).toBe(true);
      expect(checkResults('c', sites, file, v as unknown as Variant[])).toEqual(
        expected(v as unknown as Variant[]),
      );
    },
  );
});
