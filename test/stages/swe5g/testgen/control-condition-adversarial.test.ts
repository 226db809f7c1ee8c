/**
 * Adversarial review of Strategy B control for comparisons (condition.ts, control.ts,
 * checker-*.ts): new fix shapes in C, Go and Python, each derived with tree-sitter and checked
 * for real by the generated checker. Every variant states the verdict a correct checker must give
 * (`pass: true` for a correct fix, `pass: false` for a wrong one); the known limits below are
 * asserted with today's wrong verdict. Written by a reviewer trying to break the checkers; the
 * false passes it found (a clamp that falls through counted as a guard, a label after a goto,
 * `false && C` as live code) are mended (testgen version 12).
 */
import { describe, it, expect } from 'vitest';
import { checkResults, sitesOf, type Variant } from './control-harness.js';

type Lang = 'c' | 'go' | 'python';
interface Shape {
  lang: Lang;
  name: string;
  file: string;
  parent: string;
  gold: string;
  variants: Variant[];
}

// =============================================================================================
// C
// =============================================================================================
const C_HEAD = `#include <stdint.h>
#include <string.h>

typedef enum { ITEM_CTRL, ITEM_DATA } item_type_e;
typedef struct { item_type_e type; int len; } item_t;

static void warn(const char *m) { (void)m; }

`;

// --- C1. a value-range guard with an early return before a store ----------------------------
const cStore = (body: string): string =>
  `${C_HEAD}int store(int *arr, int n, int idx, int v)\n{\n${body}\n    return 0;\n}\n`;
const C_STORE_USE = `    arr[idx] = v;`;
const C_STORE: Shape = {
  lang: 'c',
  name: 'C range guard (idx < 0 || idx >= n) before a store',
  file: 'lib/core/store.c',
  parent: cStore(C_STORE_USE),
  gold: cStore(`    if (idx < 0 || idx >= n)\n        return -1;\n${C_STORE_USE}`),
  variants: [
    { name: 'parent', source: cStore(C_STORE_USE), pass: false },
    {
      name: 'gold',
      source: cStore(`    if (idx < 0 || idx >= n)\n        return -1;\n${C_STORE_USE}`),
      pass: true,
    },
    {
      name: 'WRONG upper bound only',
      source: cStore(`    if (idx >= n)\n        return -1;\n${C_STORE_USE}`),
      pass: false,
    },
    {
      name: 'WRONG off-by-one (idx > n)',
      source: cStore(`    if (idx < 0 || idx > n)\n        return -1;\n${C_STORE_USE}`),
      pass: false,
    },
    {
      name: 'WRONG && for ||',
      source: cStore(`    if (idx < 0 && idx >= n)\n        return -1;\n${C_STORE_USE}`),
      pass: false,
    },
    {
      name: 'WRONG clamp with off-by-one (idx = n)',
      source: cStore(
        `    if (idx < 0)\n        idx = 0;\n    if (idx >= n)\n        idx = n;\n${C_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG guard only under #ifdef of a debug option',
      source: cStore(
        `#ifdef OGS_DEBUG_BOUNDS\n    if (idx < 0 || idx >= n)\n        return -1;\n#endif\n${C_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG goto to a label placed before the store',
      source: cStore(
        `    if (idx < 0 || idx >= n) {\n        warn("bad index");\n        goto out;\n    }\nout:\n${C_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG guard in a string',
      source: cStore(`    warn("if (idx < 0 || idx >= n) return -1;");\n${C_STORE_USE}`),
      pass: false,
    },
    {
      name: 'WRONG store duplicated before the guard',
      source: cStore(
        `${C_STORE_USE}\n    if (idx < 0 || idx >= n)\n        return -1;\n${C_STORE_USE}`,
      ),
      pass: false,
    },
    // accepted
    {
      name: 'OK inverted conjunction with else',
      source: cStore(
        `    if (idx >= 0 && idx < n)\n        arr[idx] = v;\n    else\n        return -1;`,
      ),
      pass: true,
    },
    {
      name: 'OK mirrored, two separate ifs',
      source: cStore(
        `    if (0 > idx)\n        return -1;\n    if (n <= idx) {\n        warn("too big");\n        return -1;\n    }\n${C_STORE_USE}`,
      ),
      pass: true,
    },
    {
      name: 'OK goto out after the store',
      source: cStore(
        `    if (idx < 0 || idx >= n)\n        goto out;\n${C_STORE_USE}\nout:\n    warn("done");`,
      ),
      pass: true,
    },
    {
      name: 'OK unsigned compare idiom',
      source: cStore(`    if ((unsigned)idx >= (unsigned)n)\n        return -1;\n${C_STORE_USE}`),
      pass: true,
    },
  ],
};

// --- C2. an overflow clamp in an else-if chain (the chain's first test already at the parent) --
const cChain = (body: string): string =>
  `${C_HEAD}uint64_t scale(uint64_t bitrate, uint64_t mul)\n{\n${body}\n    return bitrate;\n}\n`;
const C_CHAIN_PARENT = cChain(
  `    if (mul == 0)\n        bitrate = 0;\n    else\n        bitrate *= mul;`,
);
const C_CHAIN_GOLD = cChain(
  `    if (mul == 0)\n        bitrate = 0;\n    else if (bitrate >= INT64_MAX / mul)\n        bitrate = INT64_MAX;\n    else\n        bitrate *= mul;`,
);
const C_CHAIN: Shape = {
  lang: 'c',
  name: 'C overflow clamp in an else-if chain',
  file: 'lib/sbi/conv.c',
  parent: C_CHAIN_PARENT,
  gold: C_CHAIN_GOLD,
  variants: [
    { name: 'parent', source: C_CHAIN_PARENT, pass: false },
    { name: 'gold', source: C_CHAIN_GOLD, pass: true },
    {
      name: 'WRONG forgotten else: clamp, then multiply anyway',
      source: cChain(
        `    if (mul == 0)\n        return 0;\n    if (bitrate >= INT64_MAX / mul)\n        bitrate = INT64_MAX;\n    bitrate *= mul;`,
      ),
      pass: false,
    },
    {
      name: 'WRONG > for >=',
      source: cChain(
        `    if (mul == 0)\n        bitrate = 0;\n    else if (bitrate > INT64_MAX / mul)\n        bitrate = INT64_MAX;\n    else\n        bitrate *= mul;`,
      ),
      pass: false,
    },
    {
      name: 'WRONG clamp branch dead (&& 0)',
      source: cChain(
        `    if (mul == 0)\n        bitrate = 0;\n    else if (bitrate >= INT64_MAX / mul && 0)\n        bitrate = INT64_MAX;\n    else\n        bitrate *= mul;`,
      ),
      pass: false,
    },
    {
      name: 'WRONG condition on the multiplier',
      source: cChain(
        `    if (mul == 0)\n        bitrate = 0;\n    else if (mul >= INT64_MAX / mul)\n        bitrate = INT64_MAX;\n    else\n        bitrate *= mul;`,
      ),
      pass: false,
    },
    // accepted
    {
      name: 'OK nested ifs, mirrored',
      source: cChain(
        `    if (mul != 0) {\n        if (INT64_MAX / mul <= bitrate)\n            bitrate = INT64_MAX;\n        else\n            bitrate *= mul;\n    } else {\n        bitrate = 0;\n    }`,
      ),
      pass: true,
    },
    {
      name: 'OK early returns, inverted',
      source: cChain(
        `    if (mul == 0) {\n        bitrate = 0;\n        return bitrate;\n    }\n    if (bitrate < INT64_MAX / mul) {\n        bitrate *= mul;\n        return bitrate;\n    }\n    bitrate = INT64_MAX;`,
      ),
      pass: true,
    },
    {
      name: 'OK ternary',
      source: cChain(
        `    if (mul == 0)\n        bitrate = 0;\n    else\n        bitrate = bitrate >= INT64_MAX / mul ? INT64_MAX : bitrate * mul;`,
      ),
      pass: true,
    },
  ],
};

// --- C3. a struct field compared with an enum constant, continue in a loop -------------------
const cLoop = (body: string): string =>
  `${C_HEAD}int total(item_t *items, int n)\n{\n    int i, sum = 0;\n    for (i = 0; i < n; i++) {\n${body}\n    }\n    return sum;\n}\n`;
const C_LOOP_USE = `        sum += items[i].len;`;
const C_LOOP_GOLD = cLoop(
  `        if (items[i].type != ITEM_DATA)\n            continue;\n${C_LOOP_USE}`,
);
const C_LOOP: Shape = {
  lang: 'c',
  name: 'C enum field check with continue in a loop',
  file: 'lib/core/items.c',
  parent: cLoop(C_LOOP_USE),
  gold: C_LOOP_GOLD,
  variants: [
    { name: 'parent', source: cLoop(C_LOOP_USE), pass: false },
    { name: 'gold', source: C_LOOP_GOLD, pass: true },
    {
      name: 'WRONG break instead of continue',
      source: cLoop(`        if (items[i].type != ITEM_DATA)\n            break;\n${C_LOOP_USE}`),
      pass: false,
    },
    {
      name: 'WRONG no-op',
      source: cLoop(`        if (items[i].type != ITEM_DATA) { }\n${C_LOOP_USE}`),
      pass: false,
    },
    {
      name: 'WRONG first item only',
      source: cLoop(
        `        if (items[0].type != ITEM_DATA)\n            continue;\n${C_LOOP_USE}`,
      ),
      pass: false,
    },
    // accepted
    {
      name: 'OK positive test',
      source: cLoop(`        if (items[i].type == ITEM_DATA)\n            sum += items[i].len;`),
      pass: true,
    },
    {
      name: 'OK through a local, mirrored',
      source: cLoop(
        `        item_type_e t = items[i].type;\n        if (ITEM_DATA != t)\n            continue;\n${C_LOOP_USE}`,
      ),
      pass: true,
    },
    {
      name: 'OK switch on the field',
      source: cLoop(
        `        switch (items[i].type) {\n        case ITEM_DATA:\n            sum += items[i].len;\n            break;\n        default:\n            break;\n        }`,
      ),
      pass: true,
    },
  ],
};

// =============================================================================================
// Go
// =============================================================================================
const GO_HEAD = `package smf

import "errors"

var errBad = errors.New("bad")

type RegType int

const (
	RegInitial RegType = iota
	RegMobility
)

type Ue struct {
	Kind    int
	RegType RegType
}
type Req struct {
	Ind bool
	Mob bool
}

func logWarnf(format string, args ...interface{}) {}
`;

// --- Go1. a value-range guard with an early return before a store ----------------------------
const goStore = (body: string): string =>
  `${GO_HEAD}\n// Store stores v at idx.\nfunc Store(arr []int, idx int, v int) error {\n${body}\n\treturn nil\n}\n`;
const GO_STORE_USE = '\tarr[idx] = v';
const GO_STORE_GOLD = goStore(
  `\tif idx < 0 || idx >= len(arr) {\n\t\treturn errBad\n\t}\n${GO_STORE_USE}`,
);
const GO_STORE: Shape = {
  lang: 'go',
  name: 'Go range guard (idx < 0 || idx >= len(arr)) before a store',
  file: 'internal/a.go',
  parent: goStore(GO_STORE_USE),
  gold: GO_STORE_GOLD,
  variants: [
    { name: 'parent', source: goStore(GO_STORE_USE), pass: false },
    { name: 'gold', source: GO_STORE_GOLD, pass: true },
    {
      name: 'WRONG upper bound only',
      source: goStore(`\tif idx >= len(arr) {\n\t\treturn errBad\n\t}\n${GO_STORE_USE}`),
      pass: false,
    },
    {
      name: 'WRONG off-by-one (idx > len(arr))',
      source: goStore(`\tif idx < 0 || idx > len(arr) {\n\t\treturn errBad\n\t}\n${GO_STORE_USE}`),
      pass: false,
    },
    {
      name: 'WRONG clamp with off-by-one (idx = len(arr))',
      source: goStore(
        `\tif idx < 0 {\n\t\tidx = 0\n\t}\n\tif idx >= len(arr) {\n\t\tidx = len(arr)\n\t}\n${GO_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG goto to a label placed before the store',
      source: goStore(
        `\tif idx < 0 || idx >= len(arr) {\n\t\tlogWarnf("bad index")\n\t\tgoto store\n\t}\nstore:\n${GO_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG guard in dead code (if false &&)',
      source: goStore(
        `\tif false && (idx < 0 || idx >= len(arr)) {\n\t\treturn errBad\n\t}\n${GO_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG guard after the store',
      source: goStore(`${GO_STORE_USE}\n\tif idx < 0 || idx >= len(arr) {\n\t\treturn errBad\n\t}`),
      pass: false,
    },
    // accepted
    {
      name: 'OK inverted conjunction, store in the branch',
      source: goStore(
        `\tif 0 <= idx && idx < len(arr) {\n\t\tarr[idx] = v\n\t\treturn nil\n\t}\n\treturn errBad`,
      ),
      pass: true,
    },
    {
      name: 'OK length through a local, separate ifs',
      source: goStore(
        `\tn := len(arr)\n\tif idx < 0 {\n\t\treturn errBad\n\t}\n\tif idx >= n {\n\t\treturn errBad\n\t}\n${GO_STORE_USE}`,
      ),
      pass: true,
    },
    {
      name: 'OK unsigned compare idiom',
      source: goStore(
        `\tif uint(idx) >= uint(len(arr)) {\n\t\treturn errBad\n\t}\n${GO_STORE_USE}`,
      ),
      pass: true,
    },
    {
      name: 'OK tagless switch',
      source: goStore(
        `\tswitch {\n\tcase idx < 0, idx >= len(arr):\n\t\treturn errBad\n\t}\n${GO_STORE_USE}`,
      ),
      pass: true,
    },
  ],
};

// --- Go2. a field compared with an enum constant inside a switch case ------------------------
const goFill = (case2: string): string =>
  `${GO_HEAD}\n// Fill fills the request.\nfunc Fill(ue *Ue, req *Req) {\n\tswitch ue.Kind {\n\tcase 1:\n\t\treq.Mob = true\n\tcase 2:\n${case2}\n\t}\n}\n`;
const goFillIn = (case1: string, case2: string): string =>
  `${GO_HEAD}\n// Fill fills the request.\nfunc Fill(ue *Ue, req *Req) {\n\tswitch ue.Kind {\n\tcase 1:\n\t\treq.Mob = true\n${case1}\n\tcase 2:\n${case2}\n\t}\n}\n`;
const GO_FILL_PARENT = goFill('\t\treq.Mob = false');
const GO_FILL_GOLD = goFill(
  '\t\treq.Mob = false\n\t\tif ue.RegType == RegInitial {\n\t\t\treq.Ind = true\n\t\t}',
);
const GO_FILL: Shape = {
  lang: 'go',
  name: 'Go enum field condition inside a switch case',
  file: 'internal/a.go',
  parent: GO_FILL_PARENT,
  gold: GO_FILL_GOLD,
  variants: [
    { name: 'parent', source: GO_FILL_PARENT, pass: false },
    { name: 'gold', source: GO_FILL_GOLD, pass: true },
    {
      name: 'WRONG no-op',
      source: goFill('\t\treq.Mob = false\n\t\tif ue.RegType == RegInitial {\n\t\t}'),
      pass: false,
    },
    {
      name: 'WRONG dead code (if false && cond)',
      source: goFill(
        '\t\treq.Mob = false\n\t\tif false && ue.RegType == RegInitial {\n\t\t\treq.Ind = true\n\t\t}',
      ),
      pass: false,
    },
    {
      name: 'WRONG dead code (const debug = false)',
      source: goFill(
        '\t\treq.Mob = false\n\t\tconst debug = false\n\t\tif debug {\n\t\t\tif ue.RegType == RegInitial {\n\t\t\t\treq.Ind = true\n\t\t\t}\n\t\t}',
      ),
      pass: false,
    },
    {
      name: 'WRONG in the other case',
      source: goFillIn(
        '\t\tif ue.RegType == RegInitial {\n\t\t\treq.Ind = true\n\t\t}',
        '\t\treq.Mob = false',
      ),
      pass: false,
    },
    {
      name: 'WRONG other constant',
      source: goFill(
        '\t\treq.Mob = false\n\t\tif ue.RegType == RegMobility {\n\t\t\treq.Ind = true\n\t\t}',
      ),
      pass: false,
    },
    {
      name: 'WRONG condition in a comment, assignment ungated',
      source: goFill(
        '\t\treq.Mob = false\n\t\t// if ue.RegType == RegInitial {\n\t\treq.Ind = true',
      ),
      pass: false,
    },
    // accepted
    {
      name: 'OK break out of the case, mirrored',
      source: goFill(
        '\t\treq.Mob = false\n\t\tif RegInitial != ue.RegType {\n\t\t\tbreak\n\t\t}\n\t\treq.Ind = true',
      ),
      pass: true,
    },
    {
      name: 'OK through a local in the if initializer',
      source: goFill(
        '\t\treq.Mob = false\n\t\tif rt := ue.RegType; rt == RegInitial {\n\t\t\treq.Ind = true\n\t\t}',
      ),
      pass: true,
    },
    {
      name: 'OK nested tagless switch',
      source: goFill(
        '\t\treq.Mob = false\n\t\tswitch {\n\t\tcase ue.RegType == RegInitial:\n\t\t\treq.Ind = true\n\t\t}',
      ),
      pass: true,
    },
  ],
};

// =============================================================================================
// Python
// =============================================================================================
const PY_HEAD = `"""Policy helpers."""

import enum


class Kind(enum.Enum):
    CTRL = 0
    DATA = 1


class RegType(enum.Enum):
    INITIAL = 0
    MOBILITY = 1


def log_warning(msg):
    pass


MAXR = 2**63 - 1


class Policy:
`;
const PY_FILE = 'lte/gateway/python/magma/policy.py';
const pyMethod = (sig: string, body: string, ret: string): string =>
  `${PY_HEAD}    def ${sig}:\n${body}\n        return ${ret}\n`;

// --- Py1. a value-range guard with an early return before a store ----------------------------
const pyStore = (body: string): string => pyMethod('store(self, arr, idx, v)', body, '0');
const PY_STORE_USE = '        arr[idx] = v';
const PY_STORE_GOLD = pyStore(
  `        if idx < 0 or idx >= len(arr):\n            return -1\n${PY_STORE_USE}`,
);
const PY_STORE: Shape = {
  lang: 'python',
  name: 'Python range guard (idx < 0 or idx >= len(arr)) before a store',
  file: PY_FILE,
  parent: pyStore(PY_STORE_USE),
  gold: PY_STORE_GOLD,
  variants: [
    { name: 'parent', source: pyStore(PY_STORE_USE), pass: false },
    { name: 'gold', source: PY_STORE_GOLD, pass: true },
    {
      name: 'WRONG upper bound only',
      source: pyStore(`        if idx >= len(arr):\n            return -1\n${PY_STORE_USE}`),
      pass: false,
    },
    {
      name: 'WRONG off-by-one (idx > len(arr))',
      source: pyStore(
        `        if idx < 0 or idx > len(arr):\n            return -1\n${PY_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG clamp with off-by-one (idx = len(arr))',
      source: pyStore(
        `        if idx < 0:\n            idx = 0\n        if idx >= len(arr):\n            idx = len(arr)\n${PY_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG guard in dead code (while False)',
      source: pyStore(
        `        while False:\n            if idx < 0 or idx >= len(arr):\n                return -1\n${PY_STORE_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG guard after the store',
      source: pyStore(
        `${PY_STORE_USE}\n        if idx < 0 or idx >= len(arr):\n            return -1`,
      ),
      pass: false,
    },
    // accepted
    {
      name: 'OK chained comparison',
      source: pyStore(
        `        if not 0 <= idx < len(arr):\n            return -1\n${PY_STORE_USE}`,
      ),
      pass: true,
    },
    {
      name: 'OK inverted conjunction with else, mirrored',
      source: pyStore(
        `        if 0 <= idx and len(arr) > idx:\n            arr[idx] = v\n        else:\n            raise IndexError(idx)`,
      ),
      pass: true,
    },
    {
      name: 'OK guard inside a with block',
      source: pyStore(
        `        with open("/dev/null") as _f:\n            if idx < 0 or idx >= len(arr):\n                return -1\n${PY_STORE_USE}`,
      ),
      pass: true,
    },
  ],
};

// --- Py2. an elif chain, an attribute compared with an enum constant -------------------------
const pyFill = (body: string): string => pyMethod('fill(self, ue, req)', body, 'req');
const PY_FILL_PARENT = pyFill('        if ue.kind == 1:\n            req.mob = True');
const PY_FILL_GOLD = pyFill(
  '        if ue.kind == 1:\n            req.mob = True\n        elif ue.reg_type == RegType.INITIAL:\n            req.ind = True',
);
const PY_FILL: Shape = {
  lang: 'python',
  name: 'Python elif on an enum attribute',
  file: PY_FILE,
  parent: PY_FILL_PARENT,
  gold: PY_FILL_GOLD,
  variants: [
    { name: 'parent', source: PY_FILL_PARENT, pass: false },
    { name: 'gold', source: PY_FILL_GOLD, pass: true },
    {
      name: 'WRONG no-op elif',
      source: pyFill(
        '        if ue.kind == 1:\n            req.mob = True\n        elif ue.reg_type == RegType.INITIAL:\n            pass',
      ),
      pass: false,
    },
    {
      name: 'WRONG dead code (False and cond)',
      source: pyFill(
        '        if ue.kind == 1:\n            req.mob = True\n        elif False and ue.reg_type == RegType.INITIAL:\n            req.ind = True',
      ),
      pass: false,
    },
    {
      name: 'WRONG other constant',
      source: pyFill(
        '        if ue.kind == 1:\n            req.mob = True\n        elif ue.reg_type == RegType.MOBILITY:\n            req.ind = True',
      ),
      pass: false,
    },
    {
      name: 'WRONG condition in a string',
      source: pyFill(
        '        if ue.kind == 1:\n            req.mob = True\n        log_warning("elif ue.reg_type == RegType.INITIAL:")\n        req.ind = True',
      ),
      pass: false,
    },
    // accepted
    {
      name: 'OK identity test (is)',
      source: pyFill(
        '        if ue.kind == 1:\n            req.mob = True\n        elif ue.reg_type is RegType.INITIAL:\n            req.ind = True',
      ),
      pass: true,
    },
    {
      name: 'OK nested else, through a local',
      source: pyFill(
        '        rt = ue.reg_type\n        if ue.kind == 1:\n            req.mob = True\n        else:\n            if RegType.INITIAL == rt:\n                req.ind = True',
      ),
      pass: true,
    },
    {
      name: 'OK match statement',
      source: pyFill(
        '        if ue.kind == 1:\n            req.mob = True\n            return req\n        match ue.reg_type:\n            case RegType.INITIAL:\n                req.ind = True',
      ),
      pass: true,
    },
  ],
};

// --- Py3. an enum attribute check with continue in a loop ------------------------------------
const pyTotal = (body: string): string =>
  pyMethod('total(self, items)', `        t = 0\n        for it in items:\n${body}`, 't');
const PY_TOTAL_USE = '            t += it.size';
const PY_TOTAL_GOLD = pyTotal(
  `            if it.kind != Kind.DATA:\n                continue\n${PY_TOTAL_USE}`,
);
const PY_TOTAL: Shape = {
  lang: 'python',
  name: 'Python enum attribute check with continue in a loop',
  file: PY_FILE,
  parent: pyTotal(PY_TOTAL_USE),
  gold: PY_TOTAL_GOLD,
  variants: [
    { name: 'parent', source: pyTotal(PY_TOTAL_USE), pass: false },
    { name: 'gold', source: PY_TOTAL_GOLD, pass: true },
    {
      name: 'WRONG break instead of continue',
      source: pyTotal(
        `            if it.kind != Kind.DATA:\n                break\n${PY_TOTAL_USE}`,
      ),
      pass: false,
    },
    {
      name: 'WRONG first item only',
      source: pyTotal(
        `            if items[0].kind != Kind.DATA:\n                continue\n${PY_TOTAL_USE}`,
      ),
      pass: false,
    },
    // accepted
    {
      name: 'OK positive test',
      source: pyTotal(`            if it.kind == Kind.DATA:\n    ${PY_TOTAL_USE}`),
      pass: true,
    },
    {
      name: 'OK identity test (is not)',
      source: pyTotal(
        `            if it.kind is not Kind.DATA:\n                continue\n${PY_TOTAL_USE}`,
      ),
      pass: true,
    },
  ],
};

// --- the forgotten else of the overflow clamp in Go and Python (C: C_CHAIN) -------------------
const goScale = (body: string): string =>
  `${GO_HEAD}\nconst maxRate = 1 << 62\n\n// Scale scales a bitrate.\nfunc Scale(bitrate uint64, mul uint64) uint64 {\n${body}\n\treturn bitrate\n}\n`;
const GO_SCALE_GOLD = goScale(
  '\tif bitrate >= maxRate/mul {\n\t\tbitrate = maxRate\n\t} else {\n\t\tbitrate *= mul\n\t}',
);
const GO_SCALE: Shape = {
  lang: 'go',
  name: 'Go overflow clamp, forgotten else',
  file: 'internal/a.go',
  parent: goScale('\tbitrate *= mul'),
  gold: GO_SCALE_GOLD,
  variants: [
    { name: 'parent', source: goScale('\tbitrate *= mul'), pass: false },
    { name: 'gold', source: GO_SCALE_GOLD, pass: true },
    {
      name: 'WRONG forgotten else: clamp, then multiply anyway',
      source: goScale(
        '\tif bitrate >= maxRate/mul {\n\t\tbitrate = maxRate\n\t}\n\tbitrate *= mul',
      ),
      pass: false,
    },
  ],
};
const pyScale = (body: string): string => pyMethod('scale(self, bitrate, mul)', body, 'bitrate');
const PY_SCALE_GOLD = pyScale(
  '        if bitrate >= (MAXR // mul):\n            bitrate = MAXR\n        else:\n            bitrate *= mul',
);
const PY_SCALE: Shape = {
  lang: 'python',
  name: 'Python overflow clamp, forgotten else',
  file: PY_FILE,
  parent: pyScale('        bitrate *= mul'),
  gold: PY_SCALE_GOLD,
  variants: [
    { name: 'parent', source: pyScale('        bitrate *= mul'), pass: false },
    { name: 'gold', source: PY_SCALE_GOLD, pass: true },
    {
      name: 'WRONG forgotten else: clamp, then multiply anyway',
      source: pyScale(
        '        if bitrate >= (MAXR // mul):\n            bitrate = MAXR\n        bitrate *= mul',
      ),
      pass: false,
    },
  ],
};

const SHAPES: Shape[] = [
  C_STORE,
  C_CHAIN,
  C_LOOP,
  GO_STORE,
  GO_FILL,
  GO_SCALE,
  PY_STORE,
  PY_FILL,
  PY_TOTAL,
  PY_SCALE,
];

/** Golds whose shape the derive step may not make a control site of (then a text test). */
const DERIVE_ONLY: [string, Lang, string, string, string][] = [
  [
    'C ternary clamp',
    'c',
    'lib/sbi/conv.c',
    cChain('    bitrate *= mul;'),
    cChain('    bitrate = bitrate >= INT64_MAX / mul ? INT64_MAX : bitrate * mul;'),
  ],
  [
    'C switch on an enum field',
    'c',
    'lib/core/items.c',
    cLoop(C_LOOP_USE),
    cLoop(
      '        switch (items[i].type) {\n        case ITEM_DATA:\n            sum += items[i].len;\n            break;\n        default:\n            break;\n        }',
    ),
  ],
  [
    'Go tagless switch',
    'go',
    'internal/a.go',
    GO_FILL_PARENT,
    goFill(
      '\t\treq.Mob = false\n\t\tswitch {\n\t\tcase ue.RegType == RegInitial:\n\t\t\treq.Ind = true\n\t\t}',
    ),
  ],
  [
    'Python identity test (is not)',
    'python',
    PY_FILE,
    pyTotal(PY_TOTAL_USE),
    pyTotal(`            if it.kind is not Kind.DATA:\n                continue\n${PY_TOTAL_USE}`),
  ],
  [
    'Python chained comparison',
    'python',
    PY_FILE,
    pyStore(PY_STORE_USE),
    pyStore(`        if not 0 <= idx < len(arr):\n            return -1\n${PY_STORE_USE}`),
  ],
];

/**
 * Known limits (docs/strategy-b.md, "Conditions"): a WRONG fix accepted (a false pass: the guard
 * only under an `#ifdef`, `break` for `continue`, dead code through a constant, the right `if` in
 * the wrong `case`) or an OK fix rejected (a condition written another way: unsigned idiom,
 * `is`/`is not`, a chained comparison, `switch`/`match`, a ternary, the value through a local, a
 * Python `with` block).
 */
const LIMITS = new Set<string>([
  'C enum field check with continue in a loop::OK switch on the field',
  'C enum field check with continue in a loop::WRONG break instead of continue',
  'C overflow clamp in an else-if chain::OK ternary',
  'C range guard (idx < 0 || idx >= n) before a store::OK unsigned compare idiom',
  'C range guard (idx < 0 || idx >= n) before a store::WRONG guard only under #ifdef of a debug option',
  'Go enum field condition inside a switch case::OK nested tagless switch',
  'Go enum field condition inside a switch case::WRONG dead code (const debug = false)',
  'Go enum field condition inside a switch case::WRONG in the other case',
  'Go range guard (idx < 0 || idx >= len(arr)) before a store::OK length through a local, separate ifs',
  'Go range guard (idx < 0 || idx >= len(arr)) before a store::OK tagless switch',
  'Go range guard (idx < 0 || idx >= len(arr)) before a store::OK unsigned compare idiom',
  'Python elif on an enum attribute::OK identity test (is)',
  'Python elif on an enum attribute::OK match statement',
  'Python enum attribute check with continue in a loop::OK identity test (is not)',
  'Python enum attribute check with continue in a loop::WRONG break instead of continue',
  'Python range guard (idx < 0 or idx >= len(arr)) before a store::OK chained comparison',
  'Python range guard (idx < 0 or idx >= len(arr)) before a store::OK guard inside a with block',
]);

describe('Strategy B control for comparisons: adversarial siblings', () => {
  it.each(SHAPES.map((s) => [s.name, s] as const))('%s', async (_n, shape) => {
    const sites = await sitesOf(shape.lang, shape.file, shape.parent, shape.gold);
    expect(sites.length).toBeGreaterThan(0);
    expect(sites.every((s) => s.strength === 'control')).toBe(true);
    // a known limit gives the wrong verdict today: asserted as such, so that mending one shows
    const want = Object.fromEntries(
      shape.variants.map((v) => [
        v.name,
        LIMITS.has(`${shape.name}::${v.name}`) ? !v.pass : v.pass,
      ]),
    );
    expect(checkResults(shape.lang, sites, shape.file, shape.variants)).toEqual(want);
  });

  it.each(DERIVE_ONLY)('derive only: %s', async (name, lang, file, parent, gold) => {
    const sites = await sitesOf(lang, file, parent, gold);
    // a control site is wanted; today these shapes give a text site or none (a limit of the
    // derive step: they keep a text test), asserted so that a change shows
    expect(sites.map((s) => s.strength)).not.toContain('control');
  });
});
