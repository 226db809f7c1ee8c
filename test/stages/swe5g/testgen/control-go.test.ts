/**
 * Strategy B control checks in Go (issue 30): a nil guard counts only when the dereference it
 * protects becomes unreachable for nil. The site comes from tree-sitter on a parent and the gold
 * fix (the shape of free5gc/udm PR 85); the generated `go/ast` check runs for real with `go test`
 * on the gold, on correct fixes written differently, and on no-ops and fakes.
 */
import { describe, it, expect } from 'vitest';
import { checkResults, expected, sitesOf, type Variant } from './control-harness.js';

const HEAD = `package amf

type Seq struct{ Sqn string }
type Sub struct{ SequenceNumber *Seq }
type Auth struct{ Sub Sub }

func strictHex(s string, n int) string { return s }
func warn(msg string)                 {}

// Other is another function.
func Other(a *Auth) bool { return a != nil }
`;

const fn = (body: string): string =>
  `${HEAD}\n// Gen returns the sequence number.\nfunc Gen(a *Auth) string {\n${body}\n}\n`;

const USE = '\ts := strictHex(a.Sub.SequenceNumber.Sqn, 12)\n\treturn s';
const X = 'a.Sub.SequenceNumber';
const PARENT = fn(USE);
const GOLD = fn(`\tif ${X} == nil {\n\t\twarn("nil SequenceNumber")\n\t\treturn ""\n\t}\n${USE}`);

const before = (guard: string): string => fn(`${guard}\n${USE}`);

const VARIANTS: Variant[] = [
  { name: 'parent', source: PARENT, pass: false },
  { name: 'gold', source: GOLD, pass: true },
  // rejected: the dereference stays reachable with nil
  { name: 'no-op guard (empty body)', source: before(`\tif ${X} == nil {\n\t}`), pass: false },
  {
    name: 'gold with its body emptied',
    source: before(`\tif ${X} == nil {\n\t\twarn("nil")\n\t}`),
    pass: false,
  },
  { name: 'flag computed, unused', source: before(`\thas := ${X} != nil\n\t_ = has`), pass: false },
  {
    name: 'flag tested, no-op body',
    source: before(`\tbad := ${X} == nil\n\tif bad {\n\t}`),
    pass: false,
  },
  {
    name: 'guard in dead code',
    source: before(`\tif false {\n\t\tif ${X} == nil {\n\t\t\treturn ""\n\t\t}\n\t}`),
    pass: false,
  },
  { name: 'guard in a comment', source: before(`\t// if ${X} == nil { return "" }`), pass: false },
  { name: 'guard in a string', source: before(`\t_ = "if ${X} == nil { return }"`), pass: false },
  {
    name: 'guard in another function',
    source: PARENT.replace('return a != nil', `return a.Sub.SequenceNumber == nil`),
    pass: false,
  },
  {
    name: 'guard after the use',
    source: fn(
      `\ts := strictHex(${X}.Sqn, 12)\n\tif ${X} == nil {\n\t\treturn ""\n\t}\n\treturn s`,
    ),
    pass: false,
  },
  { name: 'wrong polarity', source: before(`\tif ${X} != nil {\n\t\treturn ""\n\t}`), pass: false },
  {
    name: 'guard of another operand',
    source: before(`\tif a == nil {\n\t\treturn ""\n\t}`),
    pass: false,
  },
  {
    name: 'guard inside a loop body',
    source: before(`\tfor {\n\t\tif ${X} == nil {\n\t\t\tbreak\n\t\t}\n\t\tbreak\n\t}`),
    pass: false,
  },
  {
    name: 'one of two uses unguarded',
    source: fn(`\tt := ${X}.Sqn\n\tif ${X} == nil {\n\t\treturn ""\n\t}\n${USE} + t`),
    pass: false,
  },
  // accepted: correct fixes written differently
  {
    name: 'local alias',
    source: fn(
      `\tsn := ${X}\n\tif sn == nil {\n\t\treturn ""\n\t}\n\ts := strictHex(sn.Sqn, 12)\n\treturn s`,
    ),
    pass: true,
  },
  {
    name: 'var alias, nil on the left',
    source: fn(
      `\tvar sn = ${X}\n\tif nil == sn {\n\t\treturn ""\n\t}\n\treturn strictHex(sn.Sqn, 12)`,
    ),
    pass: true,
  },
  {
    name: 'if-init alias',
    source: fn(`\tif sn := ${X}; sn == nil {\n\t\treturn ""\n\t}\n${USE}`),
    pass: true,
  },
  {
    name: 'condition inverted, branches swapped',
    source: fn(`\tif ${X} != nil {\n\t\treturn strictHex(${X}.Sqn, 12)\n\t}\n\treturn ""`),
    pass: true,
  },
  {
    name: 'else instead of early return',
    source: fn(
      `\ts := ""\n\tif ${X} == nil {\n\t\twarn("nil")\n\t} else {\n\t\ts = strictHex(${X}.Sqn, 12)\n\t}\n\treturn s`,
    ),
    pass: true,
  },
  {
    name: 'other branch terminates',
    source: fn(`\tif ${X} != nil {\n\t\twarn("ok")\n\t} else {\n\t\treturn ""\n\t}\n${USE}`),
    pass: true,
  },
  {
    name: 'if nil then assign X',
    source: before(`\tif ${X} == nil {\n\t\t${X} = &Seq{Sqn: "000000000000"}\n\t}`),
    pass: true,
  },
  {
    name: 'panic in the bad branch',
    source: before(`\tif ${X} == nil {\n\t\tpanic("nil SequenceNumber")\n\t}`),
    pass: true,
  },
  {
    name: 'flag used as the condition',
    source: before(`\thas := ${X} != nil\n\tif !has {\n\t\treturn ""\n\t}`),
    pass: true,
  },
  {
    name: 'disjunction with the check',
    source: before(`\tif a == nil || ${X} == nil || ${X}.Sqn == "" {\n\t\treturn ""\n\t}`),
    pass: true,
  },
  {
    name: 'conjunction in the condition',
    source: fn(
      `\ts := ""\n\tif ${X} != nil && len(${X}.Sqn) == 12 {\n\t\ts = strictHex(${X}.Sqn, 12)\n\t}\n\treturn s`,
    ),
    pass: true,
  },
  {
    name: 'guard in an enclosing block',
    source: fn(`\t{\n\t\tif ${X} == nil {\n\t\t\treturn ""\n\t\t}\n\t}\n${USE}`),
    pass: true,
  },
];

describe('Strategy B control checks (Go, go test)', () => {
  it('derives a control site: the Sqn dereference the gold guards and the parent does not', async () => {
    const sites = await sitesOf('go', 'amf/handler.go', PARENT, GOLD);
    expect(sites.map((s) => [s.function, s.strength, s.guard])).toEqual([
      ['Gen', 'control', { operand: X, signatures: ['field:Sqn'] }],
    ]);
  });

  it('rejects no-ops, flags, dead code and fakes; accepts the gold and equivalent fixes', async () => {
    const sites = await sitesOf('go', 'amf/handler.go', PARENT, GOLD);
    expect(checkResults('go', sites, 'amf/handler.go', VARIANTS)).toEqual(expected(VARIANTS));
  });

  it('keeps a text site when the guard protects no use the parent left unguarded', async () => {
    const parent = fn('\treturn ""');
    const gold = fn(`\tif ${X} == nil {\n\t\treturn ""\n\t}\n${USE}`);
    const sites = await sitesOf('go', 'amf/handler.go', parent, gold);
    expect(sites.map((s) => [s.strength, s.guard])).toEqual([['text', undefined]]);
  });
});
