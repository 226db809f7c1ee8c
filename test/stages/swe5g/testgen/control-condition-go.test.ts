/**
 * Strategy B control for Go comparisons (issue 30, condition.ts): the Go siblings of the C shapes
 * (an overflow clamp choosing between two assignments, a condition gating new field assignments
 * in a free5GC request builder, a length check with an early return before a slice copy). The
 * generated `go/ast` check runs for real with `go test`: the gold and correct fixes written
 * differently pass; no-ops, emptied bodies, `if false`, wrong polarity and misplaced checks fail.
 */
import { describe, it, expect } from 'vitest';
import { checkResults, expected, sitesOf, type Variant } from './control-harness.js';

const HEAD = `package smf

import "math"

var _ = math.MaxInt64

type Reg struct{ Value int }
type Nas struct{ Registration Reg }
type Ue struct{ Nas Nas }
type Req struct {
	Ind   bool
	IsInd bool
}

func logWarnf(format string, args ...interface{}) {}
`;

const scale = (body: string): string =>
  `${HEAD}\n// Scale scales a bitrate.\nfunc Scale(bitrate uint64, mul uint64) uint64 {\n${body}\n\treturn bitrate\n}\n`;
const S_PARENT = scale('\tbitrate *= mul');
const S_GOLD = scale(
  '\tif bitrate >= (math.MaxInt64 / mul) {\n\t\tbitrate = math.MaxInt64\n\t} else {\n\t\tbitrate *= mul\n\t}',
);
const SCALE: Variant[] = [
  { name: 'parent', source: S_PARENT, pass: false },
  { name: 'gold', source: S_GOLD, pass: true },
  {
    name: 'no-op condition',
    source: scale('\tif bitrate >= (math.MaxInt64 / mul) {\n\t}\n\tbitrate *= mul'),
    pass: false,
  },
  {
    name: 'gold in if false, the old multiplication kept',
    source: scale(
      '\tif false {\n\t\tif bitrate >= math.MaxInt64/mul {\n\t\t\tbitrate = math.MaxInt64\n\t\t}\n\t}\n\tbitrate *= mul',
    ),
    pass: false,
  },
  {
    name: 'branches swapped without inverting',
    source: scale(
      '\tif bitrate >= math.MaxInt64/mul {\n\t\tbitrate *= mul\n\t} else {\n\t\tbitrate = math.MaxInt64\n\t}',
    ),
    pass: false,
  },
  {
    name: 'inverted, mirrored, branches swapped',
    source: scale(
      '\tif math.MaxInt64/mul > bitrate {\n\t\tbitrate *= mul\n\t} else {\n\t\tbitrate = math.MaxInt64\n\t}',
    ),
    pass: true,
  },
  {
    name: 'early return through a local',
    source: scale(
      '\tb := bitrate\n\tif !(b < math.MaxInt64/mul) {\n\t\tbitrate = math.MaxInt64\n\t\treturn bitrate\n\t}\n\tbitrate *= mul',
    ),
    pass: true,
  },
];

const build = (body: string): string =>
  `${HEAD}\n// Build fills the request.\nfunc Build(ue *Ue, req *Req) {\n\treq.Ind = false\n${body}\n}\n`;
const B_PARENT = build('');
const B_GOLD = build(
  '\tif ue.Nas.Registration.Value == 1 {\n\t\treq.IsInd = true\n\t\treq.Ind = true\n\t}',
);
const BUILD: Variant[] = [
  { name: 'parent', source: B_PARENT, pass: false },
  { name: 'gold', source: B_GOLD, pass: true },
  {
    name: 'no-op condition',
    source: build('\tif ue.Nas.Registration.Value == 1 {\n\t}'),
    pass: false,
  },
  {
    name: 'assignments without the condition',
    source: build('\treq.IsInd = true\n\treq.Ind = true'),
    pass: false,
  },
  {
    name: 'wrong polarity',
    source: build(
      '\tif ue.Nas.Registration.Value != 1 {\n\t\treq.IsInd = true\n\t\treq.Ind = true\n\t}',
    ),
    pass: false,
  },
  {
    name: 'switch-free flag through a local, mirrored',
    source: build(
      '\tv := ue.Nas.Registration.Value\n\tif 1 == v {\n\t\treq.Ind = true\n\t\treq.IsInd = true\n\t}',
    ),
    pass: true,
  },
  {
    name: 'negated with an early return',
    source: build(
      '\tif ue.Nas.Registration.Value != 1 {\n\t\treturn\n\t}\n\treq.IsInd = true\n\treq.Ind = true',
    ),
    pass: true,
  },
];

const copyFn = (body: string): string =>
  `${HEAD}\n// Copy copies n bytes.\nfunc Copy(dst, src []byte, n int) int {\n${body}\n\treturn n\n}\n`;
const USE = '\tcopy(dst, src[:n])';
const C_PARENT = copyFn(USE);
const C_GOLD = copyFn(
  `\tif n > len(src) {\n\t\tlogWarnf("short source")\n\t\treturn -1\n\t}\n${USE}`,
);
const COPY: Variant[] = [
  { name: 'parent', source: C_PARENT, pass: false },
  { name: 'gold', source: C_GOLD, pass: true },
  { name: 'no-op check', source: copyFn(`\tif n > len(src) {\n\t}\n${USE}`), pass: false },
  {
    name: 'gold with its body emptied (log only)',
    source: copyFn(`\tif n > len(src) {\n\t\tlogWarnf("short")\n\t}\n${USE}`),
    pass: false,
  },
  {
    name: 'check after the copy',
    source: copyFn(`${USE}\n\tif n > len(src) {\n\t\treturn -1\n\t}`),
    pass: false,
  },
  {
    name: 'check in a comment',
    source: copyFn(`\t// if n > len(src) { return -1 }\n${USE}`),
    pass: false,
  },
  {
    name: 'else branch, inverted',
    source: copyFn('\tif n <= len(src) {\n\t\tcopy(dst, src[:n])\n\t} else {\n\t\treturn -1\n\t}'),
    pass: true,
  },
  {
    name: 'mirrored, panic in the bad branch',
    source: copyFn(`\tif len(src) < n {\n\t\tpanic("short")\n\t}\n${USE}`),
    pass: true,
  },
];

describe('Strategy B control for Go comparisons (condition.ts, go/ast check)', () => {
  it('derives condition sites with the effects each side governs', async () => {
    const s = await sitesOf('go', 'internal/a.go', S_PARENT, S_GOLD);
    expect(s.map((x) => [x.strength, x.guard])).toEqual([
      [
        'control',
        {
          operand: 'bitrate',
          condition: { op: '>=', value: 'math.MaxInt64/mul' },
          signatures: ['effect+:bitrate=math.MaxInt64', 'effect-:bitrate*=mul'],
        },
      ],
    ]);
    const c = await sitesOf('go', 'internal/a.go', C_PARENT, C_GOLD);
    expect(c.map((x) => x.guard)).toEqual([
      {
        operand: 'n',
        condition: { op: '>', value: 'len(src)' },
        signatures: ['effect-:copy(dst,src[:n])'],
      },
    ]);
  });

  it.each([
    ['overflow clamp (two assignments)', S_PARENT, S_GOLD, SCALE],
    ['condition gating new assignments', B_PARENT, B_GOLD, BUILD],
    ['length check with an early return', C_PARENT, C_GOLD, COPY],
  ] as const)('%s: rejects no-ops and fakes, accepts equivalent fixes', async (_n, p, g, v) => {
    const sites = await sitesOf('go', 'internal/a.go', p, g);
    expect(sites.length).toBeGreaterThan(0);
    expect(sites.every((s) => s.strength === 'control')).toBe(true);
    const vs = v as unknown as Variant[];
    expect(checkResults('go', sites, 'internal/a.go', vs)).toEqual(expected(vs));
  });
});
