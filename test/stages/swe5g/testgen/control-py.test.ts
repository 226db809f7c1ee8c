/**
 * Strategy B control checks in Python (issue 30): a `None` guard counts only when the attribute
 * access it protects becomes unreachable for None. The site comes from tree-sitter on a parent and
 * the gold fix; the generated `ast` check runs for real with `python3` on the gold, on
 * correct fixes written differently, and on no-ops and fakes.
 */
import { describe, it, expect } from 'vitest';
import { checkResults, expected, sitesOf, type Variant } from './control-harness.js';

const HEAD = `"""SMF-like session handler."""


def warn(msg):
    pass


class Handler:
    def other(self, session):
        return session is not None

`;

const fn = (body: string): string => `${HEAD}    def release(self, session):\n${body}\n`;

const X = 'session.pdu';
const USE = `        name = ${X}.upper()\n        return name`;
const PARENT = fn(USE);
const GOLD = fn(
  `        if ${X} is None:\n            warn("no pdu")\n            return ""\n${USE}`,
);
const before = (guard: string): string => fn(`${guard}\n${USE}`);
const FILE = 'smf/handler.py';

const VARIANTS: Variant[] = [
  { name: 'parent', source: PARENT, pass: false },
  { name: 'gold', source: GOLD, pass: true },
  // rejected
  {
    name: 'no-op guard (pass)',
    source: before(`        if ${X} is None:\n            pass`),
    pass: false,
  },
  {
    name: 'gold with its body emptied',
    source: before(`        if ${X} is None:\n            warn("no pdu")`),
    pass: false,
  },
  { name: 'flag computed, unused', source: before(`        has = ${X} is not None`), pass: false },
  {
    name: 'flag tested, no-op body',
    source: before(`        missing = ${X} is None\n        if missing:\n            warn("x")`),
    pass: false,
  },
  {
    name: 'guard in dead code',
    source: before(`        if False:\n            if ${X} is None:\n                return ""`),
    pass: false,
  },
  {
    name: 'guard in a comment',
    source: before(`        # if ${X} is None: return ""`),
    pass: false,
  },
  {
    name: 'guard in a string',
    source: before(`        _ = "if ${X} is None: return"`),
    pass: false,
  },
  {
    name: 'guard in another method',
    source: PARENT.replace('return session is not None', `return ${X} is not None`),
    pass: false,
  },
  {
    name: 'guard after the use',
    source: fn(
      `        name = ${X}.upper()\n        if ${X} is None:\n            return ""\n        return name`,
    ),
    pass: false,
  },
  {
    name: 'wrong polarity',
    source: before(`        if ${X} is not None:\n            return ""`),
    pass: false,
  },
  {
    name: 'guard inside a loop body',
    source: before(
      `        for _ in range(1):\n            if ${X} is None:\n                break`,
    ),
    pass: false,
  },
  // accepted
  {
    name: 'local alias',
    source: fn(
      `        pdu = ${X}\n        if pdu is None:\n            return ""\n        return pdu.upper()`,
    ),
    pass: true,
  },
  { name: 'truthiness', source: before(`        if not ${X}:\n            return ""`), pass: true },
  {
    name: 'condition inverted, branches swapped',
    source: fn(`        if ${X} is not None:\n            return ${X}.upper()\n        return ""`),
    pass: true,
  },
  {
    name: 'else instead of early return',
    source: fn(
      `        name = ""\n        if ${X} is None:\n            warn("no pdu")\n        else:\n            name = ${X}.upper()\n        return name`,
    ),
    pass: true,
  },
  {
    name: 'elif chain',
    source: fn(
      `        if ${X} is None:\n            return ""\n        elif ${X} == "":\n            return "-"\n${USE}`,
    ),
    pass: true,
  },
  {
    name: 'if None then assign X',
    source: before(`        if ${X} is None:\n            ${X} = "ipv4"`),
    pass: true,
  },
  {
    name: 'raise in the bad branch',
    source: before(`        if ${X} is None:\n            raise ValueError("no pdu")`),
    pass: true,
  },
  {
    name: 'flag used as the condition',
    source: before(`        has = ${X} is not None\n        if not has:\n            return ""`),
    pass: true,
  },
  {
    name: 'conditional expression',
    source: fn(`        return ${X}.upper() if ${X} is not None else ""`),
    pass: true,
  },
  { name: 'and-guard', source: fn(`        return ${X} and ${X}.upper()`), pass: true },
  {
    name: 'disjunction with the check',
    source: before(`        if session is None or ${X} is None:\n            return ""`),
    pass: true,
  },
];

describe('Strategy B control checks (Python, the generated test module)', () => {
  it('derives a control site: the pdu attribute the gold guards and the parent does not', async () => {
    const sites = await sitesOf('python', FILE, PARENT, GOLD);
    expect(sites.map((s) => [s.function, s.strength, s.guard])).toEqual([
      ['Handler.release', 'control', { operand: X, signatures: ['field:upper'] }],
    ]);
  });

  it('rejects no-ops, flags, dead code and fakes; accepts the gold and equivalent fixes', async () => {
    const sites = await sitesOf('python', FILE, PARENT, GOLD);
    expect(checkResults('python', sites, FILE, VARIANTS)).toEqual(expected(VARIANTS));
  });
});
