/**
 * Strategy B `text` sites in Python (issue 30): a site that stays text (a None check whose use the
 * fix adds with it, a comparison that governs no effect) counts the tests of its condition written
 * as itself, mirrored, negated, or with a side through a one-level local alias (docs/strategy-b.md,
 * "Text sites"). The sites come from tree-sitter on a parent and a gold source; the generated
 * `ast` test runs for real with `python3` on each variant.
 */
import { describe, it, expect } from 'vitest';
import {
  checkResults,
  derivedResults,
  expected,
  sitesOf,
  type Variant,
} from './control-harness.js';

const HEAD = `"""SMF-like session handler."""

MAX_LEN = 16


def warn(msg):
    pass


class Handler:
    def other(self, session):
        return session is not None

`;

const FILE = 'smf/handler.py';
const fn = (sig: string, body: string): string => `${HEAD}    def ${sig}:\n${body}\n`;

interface Shape {
  name: string;
  parent: string;
  gold: string;
  sites: [string, string][];
  variants: Variant[];
}

const ok = (name: string, source: string): Variant => ({ name, source, pass: true });
const no = (name: string, source: string): Variant => ({ name, source, pass: false });
const I = '        ';

// 1. the None check whose use the fix adds with it (no unguarded use at the parent: text)
const h = (body: string): string =>
  fn('release(self, session)', `${I}rv = 0\n${body}\n${I}return rv`);
const NULL_ADDED: Shape = {
  name: 'a None check added with the use it guards',
  parent: h(''),
  gold: h(`${I}if session.pdu is not None:\n${I}    rv = session.pdu.size`),
  sites: [['text', 'null_check']],
  variants: [
    no('parent', h('')),
    ok('gold', h(`${I}if session.pdu is not None:\n${I}    rv = session.pdu.size`)),
    ok('mirrored', h(`${I}if None is not session.pdu:\n${I}    rv = session.pdu.size`)),
    ok(
      'negated operator, early return',
      h(`${I}if session.pdu is None:\n${I}    return rv\n${I}rv = session.pdu.size`),
    ),
    ok(
      'the audit inverted rewrite',
      h(
        `${I}if not (session.pdu is not None):\n${I}    pass\n${I}else:\n${I}    rv = session.pdu.size`,
      ),
    ),
    ok('not x', h(`${I}if not session.pdu:\n${I}    return rv\n${I}rv = session.pdu.size`)),
    ok('alias', h(`${I}v = session.pdu\n${I}if v is not None:\n${I}    rv = v.size`)),
    ok('alias, not', h(`${I}v = session.pdu\n${I}if not v:\n${I}    return rv\n${I}rv = v.size`)),
    ok(
      'alias, == None mirrored',
      h(`${I}v = session.pdu\n${I}if None == v:\n${I}    return rv\n${I}rv = v.size`),
    ),
    ok(
      'the audit via_local rewrite',
      h(`${I}audit_v1 = session.pdu\n${I}if audit_v1 is not None:\n${I}    rv = session.pdu.size`),
    ),
    no('only in a comment', h(`${I}# if session.pdu is not None: rv = session.pdu.size`)),
    no('only in a string', h(`${I}warn("if session.pdu is not None:")`)),
    no(
      'only in if False',
      h(`${I}if False:\n${I}    if session.pdu is not None:\n${I}        rv = 1`),
    ),
    no('only in if 0 and ...', h(`${I}if 0 and session.pdu is not None:\n${I}    rv = 1`)),
    no(
      'only in another function',
      h('').replace('return session is not None', 'return session.pdu is not None'),
    ),
    no(
      'alias of another value',
      h(`${I}p = session.other\n${I}if p is not None:\n${I}    rv = p.size`),
    ),
    // known limit: a null check is keyed by the operand's last name, so a local named like the
    // field counts whatever it holds (as before aliases counted)
    ok(
      'known limit: a local named like the field, from another value',
      h(`${I}pdu = session.other\n${I}if pdu is not None:\n${I}    rv = pdu.size`),
    ),
    no(
      'two-level alias',
      h(`${I}a = session.pdu\n${I}b = a\n${I}if b is not None:\n${I}    rv = b.size`),
    ),
    no(
      'alias declared, the check on something else',
      h(`${I}v = session.pdu\n${I}if session is not None:\n${I}    rv = v.size`),
    ),
  ],
};

// 2. a comparison that governs no effect (PR 2851's shape: the fix widens `step != 2`)
const st = (cond: string, rest = ''): string =>
  fn(
    'check_step(self)',
    `${rest}${I}if ${cond}:\n${I}    warn("unexpected step")\n${I}    return -1\n${I}return 0`,
  );
const flipped = (cond: string, rest = ''): string =>
  fn(
    'check_step(self)',
    `${rest}${I}if ${cond}:\n${I}    return 0\n${I}warn("unexpected step")\n${I}return -1`,
  );
const WIDENED: Shape = {
  name: 'a comparison that governs no effect (the condition widened)',
  parent: st('self.step != 2'),
  gold: st('self.step != 2 and self.step != 3'),
  sites: [['text', 'comparison']],
  variants: [
    no('parent', st('self.step != 2')),
    ok('gold', st('self.step != 2 and self.step != 3')),
    ok('mirrored', st('self.step != 2 and 3 != self.step')),
    ok(
      'negated operator (De Morgan), branches swapped',
      flipped('self.step == 2 or self.step == 3'),
    ),
    ok('negated with not', st('self.step != 2 and not (self.step == 3)')),
    ok('the audit inverted rewrite', flipped('not (self.step != 2 and self.step != 3)')),
    ok('alias', st('step != 2 and step != 3', `${I}step = self.step\n`)),
    ok('alias, mirrored and negated', flipped('step == 2 or 3 == step', `${I}step = self.step\n`)),
    no('only in a comment', st('self.step != 2  # and self.step != 3')),
    no('only in a string', st('self.step != 2', `${I}warn("self.step != 3")\n`)),
    no(
      'only in if False',
      st('self.step != 2', `${I}if False:\n${I}    if self.step != 3:\n${I}        return -1\n`),
    ),
    no('another value', st('self.step != 2 and self.step != 4')),
    no('alias of another value', st('self.step != 2 and step != 3', `${I}step = self.count\n`)),
    no('two-level alias', st('s1 != 2 and s2 != 3', `${I}s1 = self.step\n${I}s2 = s1\n`)),
    no(
      'alias declared, the check on something else',
      st('step != 2 and self.count != 3', `${I}step = self.step\n`),
    ),
  ],
};

// 3. a comparison in a return (no statement governed)
const r = (body: string): string => fn('too_long(self, session)', body);
const RETURNED: Shape = {
  name: 'a comparison in a return',
  parent: r(`${I}return False`),
  gold: r(`${I}return session.count >= MAX_LEN`),
  sites: [['text', 'comparison']],
  variants: [
    no('parent', r(`${I}return False`)),
    ok('gold', r(`${I}return session.count >= MAX_LEN`)),
    ok('mirrored', r(`${I}return MAX_LEN <= session.count`)),
    ok('negated', r(`${I}return not (session.count < MAX_LEN)`)),
    ok('alias', r(`${I}n = session.count\n${I}return n >= MAX_LEN`)),
    ok('the bound through a local', r(`${I}lim = MAX_LEN\n${I}return session.count >= lim`)),
    ok(
      'both sides through locals, mirrored',
      r(`${I}n = session.count\n${I}lim = MAX_LEN\n${I}return lim <= n`),
    ),
    no('only in a comment', r(`${I}return False  # session.count >= MAX_LEN`)),
    no('only in if 0', r(`${I}if 0:\n${I}    return session.count >= MAX_LEN\n${I}return False`)),
    no('another bound', r(`${I}return session.count >= MAX_LEN + 1`)),
    no('alias of another value', r(`${I}n = session.size\n${I}return n >= MAX_LEN`)),
    no('two-level alias', r(`${I}n = session.count\n${I}m = n\n${I}return m >= MAX_LEN`)),
    no(
      'alias declared, the check on something else',
      r(`${I}n = session.count\n${I}return session.size >= MAX_LEN`),
    ),
  ],
};

// 4. a length bound in an assertion (an assertion is no guard: text)
const a = (body: string): string => fn('store(self, data)', `${body}\n${I}self.data = data`);
const ASSERTED: Shape = {
  name: 'a length bound in an assertion',
  parent: a(''),
  gold: a(`${I}assert len(data) <= MAX_LEN`),
  sites: [['text', 'length_check']],
  variants: [
    no('parent', a('')),
    ok('gold', a(`${I}assert len(data) <= MAX_LEN`)),
    ok('mirrored', a(`${I}assert MAX_LEN >= len(data)`)),
    ok('negated, a raise', a(`${I}if len(data) > MAX_LEN:\n${I}    raise ValueError("too long")`)),
    ok('the length through a local', a(`${I}n = len(data)\n${I}assert n <= MAX_LEN`)),
    no('only in a comment', a(`${I}# assert len(data) <= MAX_LEN`)),
    no('only in a string', a(`${I}warn("assert len(data) <= MAX_LEN")`)),
    no('only in if False', a(`${I}if False:\n${I}    assert len(data) <= MAX_LEN`)),
    no('alias of another value', a(`${I}n = len(self.data)\n${I}assert n <= MAX_LEN`)),
    no('two-level alias', a(`${I}n = len(data)\n${I}m = n\n${I}assert m <= MAX_LEN`)),
    no(
      'alias declared, the check on something else',
      a(`${I}n = len(data)\n${I}assert len(self.data) <= MAX_LEN`),
    ),
  ],
};

// 5. a None check in a conditional expression with the use it guards (both added: text)
const c = (body: string): string => fn('name(self, session)', `${body}\n${I}return name`);
const TERNARY: Shape = {
  name: 'a None check in a conditional expression',
  parent: c(`${I}name = ""`),
  gold: c(`${I}name = session.pdu.name if session.pdu is not None else ""`),
  sites: [['text', 'null_check']],
  variants: [
    no('parent', c(`${I}name = ""`)),
    ok('gold', c(`${I}name = session.pdu.name if session.pdu is not None else ""`)),
    ok(
      'negated, branches swapped',
      c(`${I}name = "" if session.pdu is None else session.pdu.name`),
    ),
    ok('alias', c(`${I}v = session.pdu\n${I}name = v.name if v is not None else ""`)),
    ok(
      'alias, an if statement',
      c(`${I}v = session.pdu\n${I}name = ""\n${I}if None is not v:\n${I}    name = v.name`),
    ),
    no('the use without the check', c(`${I}name = session.pdu.name`)),
    no(
      'alias of another value',
      c(`${I}p = session.other\n${I}name = p.name if p is not None else ""`),
    ),
    no(
      'two-level alias',
      c(`${I}a = session.pdu\n${I}b = a\n${I}name = b.name if b is not None else ""`),
    ),
    no(
      'alias declared, the check on something else',
      c(`${I}v = session.pdu\n${I}name = v.name if session is not None else ""`),
    ),
  ],
};

const SHAPES = [NULL_ADDED, WIDENED, RETURNED, ASSERTED, TERNARY];

describe('Strategy B text sites in Python: the tests of the condition, mirrored, negated, through a local', () => {
  for (const shape of SHAPES)
    it(shape.name, async () => {
      const sites = await sitesOf('python', FILE, shape.parent, shape.gold);
      expect(sites.map((x) => [x.strength, x.pattern.kind])).toEqual(shape.sites);
      expect(checkResults('python', sites, FILE, shape.variants)).toEqual(expected(shape.variants));
      // generation counts as the checker does (the parent's count is the bar the test sets)
      expect(await derivedResults('python', sites, shape.variants)).toEqual(
        expected(shape.variants),
      );
    });

  it('counts the parent the same way: its mirrored and aliased tests raise the bar', async () => {
    const rest = `${I}step = self.step\n${I}if 3 != step:\n${I}    warn("three")\n`;
    const parent = st('self.step != 2', rest);
    const gold = st('self.step != 2 and self.step != 3', rest);
    const sites = await sitesOf('python', FILE, parent, gold);
    expect(sites.map((x) => [x.pattern.key, x.parentCount, x.fixCount])).toEqual([
      ['self.step!=3', 1, 2],
    ]);
    const variants = [no('parent', parent), ok('gold', gold)];
    expect(checkResults('python', sites, FILE, variants)).toEqual(expected(variants));
  });
});
