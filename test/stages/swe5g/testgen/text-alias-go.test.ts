/**
 * Strategy B `text` sites in Go (issue 30): a site that stays text (a nil check whose use the fix
 * adds with it, a comparison that governs no effect) counts the tests of its condition written as
 * itself, mirrored, negated, or with a side through a one-level local alias (docs/strategy-b.md,
 * "Text sites"). The sites come from tree-sitter on a parent and a gold source; the generated
 * `go/ast` test runs for real with `go test` (one package a variant, each must compile).
 */
import { describe, it, expect } from 'vitest';
import {
  checkResults,
  derivedResults,
  expected,
  sitesOf,
  type Variant,
} from './control-harness.js';

const HEAD = `package smf

const MaxLen = 16

type Pdu struct{ Len int }
type Sess struct {
	Pdu   *Pdu
	Other *Pdu
	N     int
	Step  int
	Name  string
}

func warn(msg string) {}

// Other is another function.
func Other(s *Sess) bool { return s != nil }
`;

const FILE = 'smf/handler.go';
const fn = (sig: string, body: string): string =>
  `${HEAD}\n// F is the function the fix changes.\nfunc ${sig} {\n${body}\n}\n`;

interface Shape {
  name: string;
  parent: string;
  gold: string;
  sites: [string, string][];
  variants: Variant[];
}

const ok = (name: string, source: string): Variant => ({ name, source, pass: true });
const no = (name: string, source: string): Variant => ({ name, source, pass: false });

// 1. the nil check whose use the fix adds with it (no unguarded use at the parent: text)
const h = (body: string): string => fn('Handle(s *Sess) int', `\trv := 0\n${body}\n\treturn rv`);
const NULL_ADDED: Shape = {
  name: 'a nil check added with the use it guards',
  parent: h(''),
  gold: h('\tif s.Pdu != nil {\n\t\trv = s.Pdu.Len\n\t}'),
  sites: [['text', 'null_check']],
  variants: [
    no('parent', h('')),
    ok('gold', h('\tif s.Pdu != nil {\n\t\trv = s.Pdu.Len\n\t}')),
    ok('mirrored', h('\tif nil != s.Pdu {\n\t\trv = s.Pdu.Len\n\t}')),
    ok(
      'negated operator, branches swapped',
      h('\tif s.Pdu == nil {\n\t} else {\n\t\trv = s.Pdu.Len\n\t}'),
    ),
    ok(
      'negated with !, early return',
      h('\tif !(s.Pdu != nil) {\n\t\treturn rv\n\t}\n\trv = s.Pdu.Len'),
    ),
    ok('alias', h('\tp := s.Pdu\n\tif p != nil {\n\t\trv = p.Len\n\t}')),
    ok(
      'var alias, mirrored',
      h('\tvar p = s.Pdu\n\tif nil == p {\n\t\treturn rv\n\t}\n\trv = p.Len'),
    ),
    ok('alias in the if initializer', h('\tif p := s.Pdu; p != nil {\n\t\trv = p.Len\n\t}')),
    ok(
      'alias assigned, negated',
      h('\tvar p *Pdu\n\tp = s.Pdu\n\tif !(p != nil) {\n\t\treturn rv\n\t}\n\trv = p.Len'),
    ),
    ok(
      'the audit via_local rewrite',
      h('\tauditV1 := s.Pdu\n\tif auditV1 != nil {\n\t\trv = s.Pdu.Len\n\t}'),
    ),
    no('only in a comment', h('\t// if s.Pdu != nil { rv = s.Pdu.Len }')),
    no('only in a string', h('\t_ = "if s.Pdu != nil {"')),
    no(
      'only in if false',
      h('\tif false {\n\t\tif s.Pdu != nil {\n\t\t\trv = s.Pdu.Len\n\t\t}\n\t}'),
    ),
    no('only in if false && ...', h('\tif false && s.Pdu != nil {\n\t\trv = s.Pdu.Len\n\t}')),
    no('only in another function', h('').replace('return s != nil', 'return s.Pdu != nil')),
    no('alias of another value', h('\tp := s.Other\n\tif p != nil {\n\t\trv = p.Len\n\t}')),
    no('two-level alias', h('\tp := s.Pdu\n\tq := p\n\tif q != nil {\n\t\trv = q.Len\n\t}')),
    no(
      'alias declared, the check on something else',
      h('\tp := s.Pdu\n\tif s != nil {\n\t\trv = p.Len\n\t}'),
    ),
  ],
};

// 2. a comparison that governs no effect (PR 2851's shape: the fix widens `Step != 2`)
const st = (cond: string, rest = ''): string =>
  fn(
    'CheckStep(s *Sess) int',
    `${rest}\tif ${cond} {\n\t\twarn("unexpected step")\n\t\treturn -1\n\t}\n\treturn 0`,
  );
const flipped = (cond: string, rest = ''): string =>
  fn(
    'CheckStep(s *Sess) int',
    `${rest}\tif ${cond} {\n\t\treturn 0\n\t}\n\twarn("unexpected step")\n\treturn -1`,
  );
const WIDENED: Shape = {
  name: 'a comparison that governs no effect (the condition widened)',
  parent: st('s.Step != 2'),
  gold: st('s.Step != 2 && s.Step != 3'),
  sites: [['text', 'comparison']],
  variants: [
    no('parent', st('s.Step != 2')),
    ok('gold', st('s.Step != 2 && s.Step != 3')),
    ok('mirrored', st('s.Step != 2 && 3 != s.Step')),
    ok('negated operator (De Morgan), branches swapped', flipped('s.Step == 2 || s.Step == 3')),
    ok('negated with !', st('s.Step != 2 && !(s.Step == 3)')),
    ok('the audit inverted rewrite', flipped('!(s.Step != 2 && s.Step != 3)')),
    ok('alias', st('step != 2 && step != 3', '\tstep := s.Step\n')),
    ok('alias in the if initializer, mirrored', st('step := s.Step; step != 2 && 3 != step')),
    no('only in a comment', st('s.Step != 2 /* && s.Step != 3 */')),
    no('only in a string', st('s.Step != 2', '\twarn("s.Step != 3")\n')),
    no(
      'only in if false',
      st('s.Step != 2', '\tif false {\n\t\tif s.Step != 3 {\n\t\t\treturn -1\n\t\t}\n\t}\n'),
    ),
    no('another value', st('s.Step != 2 && s.Step != 4')),
    no('alias of another value', st('s.Step != 2 && step != 3', '\tstep := s.N\n')),
    no('two-level alias', st('s1 != 2 && s2 != 3', '\ts1 := s.Step\n\ts2 := s1\n')),
    no(
      'alias declared, the check on something else',
      st('step != 2 && s.N != 3', '\tstep := s.Step\n'),
    ),
  ],
};

// 3. a comparison in a return (no statement governed)
const r = (body: string): string => fn('TooLong(s *Sess) bool', body);
const RETURNED: Shape = {
  name: 'a comparison in a return',
  parent: r('\treturn false'),
  gold: r('\treturn s.N >= MaxLen'),
  sites: [['text', 'comparison']],
  variants: [
    no('parent', r('\treturn false')),
    ok('gold', r('\treturn s.N >= MaxLen')),
    ok('mirrored', r('\treturn MaxLen <= s.N')),
    ok('negated', r('\treturn !(s.N < MaxLen)')),
    ok('alias', r('\tn := s.N\n\treturn n >= MaxLen')),
    ok('the bound through a local', r('\tlim := MaxLen\n\treturn s.N >= lim')),
    ok('both sides through locals, mirrored', r('\tn := s.N\n\tlim := MaxLen\n\treturn lim <= n')),
    no('only in a comment', r('\treturn false // s.N >= MaxLen')),
    no('only in if false', r('\tif false {\n\t\treturn s.N >= MaxLen\n\t}\n\treturn false')),
    no('another bound', r('\treturn s.N >= MaxLen+1')),
    no('alias of another value', r('\tn := s.Step\n\treturn n >= MaxLen')),
    no('two-level alias', r('\tn := s.N\n\tm := n\n\treturn m >= MaxLen')),
    no(
      'alias declared, the check on something else',
      r('\tn := s.N\n\t_ = n\n\treturn s.Step >= MaxLen'),
    ),
  ],
};

// 4. a length check that only logs (a call side: aliases of the call's result)
const l = (body: string): string => fn('Name(s *Sess) string', `${body}\n\treturn s.Name`);
const LENGTH: Shape = {
  name: 'a length check that only logs',
  parent: l(''),
  gold: l('\tif len(s.Name) > MaxLen {\n\t\twarn("long name")\n\t}'),
  sites: [['text', 'length_check']],
  variants: [
    no('parent', l('')),
    ok('gold', l('\tif len(s.Name) > MaxLen {\n\t\twarn("long name")\n\t}')),
    ok('mirrored', l('\tif MaxLen < len(s.Name) {\n\t\twarn("long name")\n\t}')),
    ok(
      'negated, branches swapped',
      l('\tif len(s.Name) <= MaxLen {\n\t} else {\n\t\twarn("long name")\n\t}'),
    ),
    ok(
      'the length through a local',
      l('\tn := len(s.Name)\n\tif n > MaxLen {\n\t\twarn("long name")\n\t}'),
    ),
    no('only in a comment', l('\t// if len(s.Name) > MaxLen { warn("long name") }')),
    no(
      'only in if false',
      l('\tif false {\n\t\tif len(s.Name) > MaxLen {\n\t\t\twarn("long name")\n\t\t}\n\t}'),
    ),
    no(
      'alias of another value',
      l('\tn := len(s.Name) + 1\n\tif n > MaxLen {\n\t\twarn("long name")\n\t}'),
    ),
    no(
      'two-level alias',
      l('\tn := len(s.Name)\n\tm := n\n\tif m > MaxLen {\n\t\twarn("long name")\n\t}'),
    ),
    no(
      'alias declared, the check on something else',
      l('\tn := len(s.Name)\n\t_ = n\n\tif s.N > MaxLen {\n\t\twarn("long name")\n\t}'),
    ),
  ],
};

// 5. a nil check in a conjunction with the use it guards (both added: text)
const c = (body: string): string => fn('Big(s *Sess) int', `${body}\n\treturn 0`);
const CONJ: Shape = {
  name: 'a nil check in a conjunction with its use',
  parent: c(''),
  gold: c('\tif s.Pdu != nil && s.Pdu.Len > MaxLen {\n\t\treturn 1\n\t}'),
  sites: [['text', 'null_check']],
  variants: [
    no('parent', c('')),
    ok('gold', c('\tif s.Pdu != nil && s.Pdu.Len > MaxLen {\n\t\treturn 1\n\t}')),
    ok(
      'De Morgan, branches swapped',
      c('\tif s.Pdu == nil || s.Pdu.Len <= MaxLen {\n\t} else {\n\t\treturn 1\n\t}'),
    ),
    ok('alias', c('\tp := s.Pdu\n\tif p != nil && p.Len > MaxLen {\n\t\treturn 1\n\t}')),
    ok(
      'alias, mirrored, nested',
      c('\tp := s.Pdu\n\tif nil != p {\n\t\tif p.Len > MaxLen {\n\t\t\treturn 1\n\t\t}\n\t}'),
    ),
    no('the use without the check', c('\tif s.Pdu.Len > MaxLen {\n\t\treturn 1\n\t}')),
    no('only in a string', c('\twarn("s.Pdu != nil && s.Pdu.Len > MaxLen")')),
    no(
      'alias of another value',
      c('\tp := s.Other\n\tif p != nil && p.Len > MaxLen {\n\t\treturn 1\n\t}'),
    ),
    no(
      'two-level alias',
      c('\tp := s.Pdu\n\tq := p\n\tif q != nil && q.Len > MaxLen {\n\t\treturn 1\n\t}'),
    ),
    no(
      'alias declared, the check on something else',
      c('\tp := s.Pdu\n\tif s != nil && p.Len > MaxLen {\n\t\treturn 1\n\t}'),
    ),
  ],
};

const SHAPES = [NULL_ADDED, WIDENED, RETURNED, LENGTH, CONJ];

describe('Strategy B text sites in Go: the tests of the condition, mirrored, negated, through a local', () => {
  for (const shape of SHAPES)
    it(shape.name, async () => {
      const sites = await sitesOf('go', FILE, shape.parent, shape.gold);
      expect(sites.map((x) => [x.strength, x.pattern.kind])).toEqual(shape.sites);
      expect(checkResults('go', sites, FILE, shape.variants)).toEqual(expected(shape.variants));
      // generation counts as the checker does (the parent's count is the bar the test sets)
      expect(await derivedResults('go', sites, shape.variants)).toEqual(expected(shape.variants));
    });

  it('counts the parent the same way: its mirrored and aliased tests raise the bar', async () => {
    const rest = '\tstep := s.Step\n\tif 3 != step {\n\t\twarn("three")\n\t}\n';
    const parent = st('s.Step != 2', rest);
    const gold = st('s.Step != 2 && s.Step != 3', rest);
    const sites = await sitesOf('go', FILE, parent, gold);
    expect(sites.map((x) => [x.pattern.key, x.parentCount, x.fixCount])).toEqual([
      ['s.Step!=3', 1, 2],
    ]);
    const variants = [no('parent', parent), ok('gold', gold)];
    expect(checkResults('go', sites, FILE, variants)).toEqual(expected(variants));
  });
});
