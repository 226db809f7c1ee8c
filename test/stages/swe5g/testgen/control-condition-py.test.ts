/**
 * Strategy B control for Python comparisons (issue 30, condition.ts): the Python siblings of the C
 * and Go shapes, in Magma's style (an overflow clamp choosing between two assignments, a
 * condition gating new attribute assignments, a length check with an early return before a
 * slice copy). The generated `ast` check runs for real with `python3`: the gold and correct fixes
 * written differently pass; no-ops (`pass`), emptied bodies, `if False:`, wrong polarity and
 * misplaced checks fail.
 */
import { describe, it, expect } from 'vitest';
import { checkResults, expected, sitesOf, type Variant } from './control-harness.js';

const HEAD = `"""Policy helpers."""

MAX = 2**63 - 1


def log_warning(msg):
    pass


class Policy:
`;
const FILE = 'lte/gateway/python/magma/policy.py';
const method = (sig: string, body: string, ret: string): string =>
  `${HEAD}    def ${sig}:\n${body}\n        return ${ret}\n`;

const scale = (body: string): string => method('scale(self, bitrate, mul)', body, 'bitrate');
const S_PARENT = scale('        bitrate *= mul');
const S_GOLD = scale(
  '        if bitrate >= (MAX // mul):\n            bitrate = MAX\n        else:\n            bitrate *= mul',
);
const SCALE: Variant[] = [
  { name: 'parent', source: S_PARENT, pass: false },
  { name: 'gold', source: S_GOLD, pass: true },
  {
    name: 'no-op condition',
    source: scale('        if bitrate >= (MAX // mul):\n            pass\n        bitrate *= mul'),
    pass: false,
  },
  {
    name: 'gold in if False, the old multiplication kept',
    source: scale(
      '        if False:\n            if bitrate >= MAX // mul:\n                bitrate = MAX\n        bitrate *= mul',
    ),
    pass: false,
  },
  {
    name: 'branches swapped without inverting',
    source: scale(
      '        if bitrate >= MAX // mul:\n            bitrate *= mul\n        else:\n            bitrate = MAX',
    ),
    pass: false,
  },
  {
    name: 'inverted, mirrored, branches swapped',
    source: scale(
      '        if MAX // mul > bitrate:\n            bitrate *= mul\n        else:\n            bitrate = MAX',
    ),
    pass: true,
  },
  {
    name: 'early return through a local',
    source: scale(
      '        b = bitrate\n        if not b < MAX // mul:\n            bitrate = MAX\n            return bitrate\n        bitrate *= mul',
    ),
    pass: true,
  },
];

const build = (body: string): string =>
  method('build(self, ue, req)', `        req.ind = False\n${body}`, 'req');
const B_PARENT = build('        pass');
const B_GOLD = build(
  '        if ue.nas.registration.value == 1:\n            req.is_ind = True\n            req.ind = True',
);
const BUILD: Variant[] = [
  { name: 'parent', source: B_PARENT, pass: false },
  { name: 'gold', source: B_GOLD, pass: true },
  {
    name: 'no-op condition',
    source: build('        if ue.nas.registration.value == 1:\n            pass'),
    pass: false,
  },
  {
    name: 'assignments without the condition',
    source: build('        req.is_ind = True\n        req.ind = True'),
    pass: false,
  },
  {
    name: 'wrong polarity',
    source: build(
      '        if ue.nas.registration.value != 1:\n            req.is_ind = True\n            req.ind = True',
    ),
    pass: false,
  },
  {
    name: 'through a local, mirrored',
    source: build(
      '        v = ue.nas.registration.value\n        if 1 == v:\n            req.ind = True\n            req.is_ind = True',
    ),
    pass: true,
  },
  {
    name: 'negated with an early return',
    source: build(
      '        if ue.nas.registration.value != 1:\n            return req\n        req.is_ind = True\n        req.ind = True',
    ),
    pass: true,
  },
];

const copy = (body: string): string => method('copy(self, dst, src, n)', body, 'n');
const USE = '        dst[:n] = src[:n]';
const C_PARENT = copy(USE);
const C_GOLD = copy(
  `        if n > len(src):\n            log_warning("short source")\n            return -1\n${USE}`,
);
const COPY: Variant[] = [
  { name: 'parent', source: C_PARENT, pass: false },
  { name: 'gold', source: C_GOLD, pass: true },
  {
    name: 'no-op check',
    source: copy(`        if n > len(src):\n            pass\n${USE}`),
    pass: false,
  },
  {
    name: 'gold with its body emptied (log only)',
    source: copy(`        if n > len(src):\n            log_warning("short")\n${USE}`),
    pass: false,
  },
  {
    name: 'check after the copy',
    source: copy(`${USE}\n        if n > len(src):\n            return -1`),
    pass: false,
  },
  {
    name: 'check in a string',
    source: copy(`        log_warning("if n > len(src): return -1")\n${USE}`),
    pass: false,
  },
  {
    name: 'else branch, inverted',
    source: copy(
      '        if n <= len(src):\n            dst[:n] = src[:n]\n        else:\n            return -1',
    ),
    pass: true,
  },
  {
    name: 'mirrored, raise in the bad branch',
    source: copy(`        if len(src) < n:\n            raise ValueError("short")\n${USE}`),
    pass: true,
  },
];

describe('Strategy B control for Python comparisons (condition.ts, ast check)', () => {
  it('derives condition sites with the effects each side governs', async () => {
    const s = await sitesOf('python', FILE, S_PARENT, S_GOLD);
    expect(s.map((x) => [x.strength, x.guard])).toEqual([
      [
        'control',
        {
          operand: 'bitrate',
          condition: { op: '>=', value: 'MAX//mul' },
          signatures: ['effect+:bitrate=MAX', 'effect-:bitrate*=mul'],
        },
      ],
    ]);
  });

  it.each([
    ['overflow clamp (two assignments)', S_PARENT, S_GOLD, SCALE],
    ['condition gating new assignments', B_PARENT, B_GOLD, BUILD],
    ['length check with an early return', C_PARENT, C_GOLD, COPY],
  ] as const)('%s: rejects no-ops and fakes, accepts equivalent fixes', async (_n, p, g, v) => {
    const sites = await sitesOf('python', FILE, p, g);
    expect(sites.length).toBeGreaterThan(0);
    expect(sites.every((s) => s.strength === 'control')).toBe(true);
    const vs = v as unknown as Variant[];
    expect(checkResults('python', sites, FILE, vs)).toEqual(expected(vs));
  });
});
