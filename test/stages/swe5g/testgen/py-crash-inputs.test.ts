/**
 * The crash-triggering inputs of a Python fix (py-crash-inputs.ts), read from the parent and the
 * fixed function alone: which guard the fix adds, on which input, in which form; guards the
 * parent already had, and guards on values that are no input, give none.
 */
import { describe, it, expect } from 'vitest';
import { crashInputs, formText } from '../../../../stages/swe5g/testgen/py-crash-inputs.js';

const forms = async (parent: string, fix: string, fn: string, params: string[]) => {
  const r = await crashInputs(fix, parent, fn, params);
  return { forms: r.forms.map(formText), skipped: r.skipped };
};

describe('crashInputs', () => {
  it('reads a None argument, a None attribute of self and of an argument', async () => {
    expect(
      await forms(
        'def f(a, b):\n    return a.x + b\n',
        'def f(a, b):\n    if a is None or not a.x:\n        return 0\n    return a.x + b\n',
        'f',
        ['a', 'b'],
      ),
    ).toEqual({ forms: ['a=None', 'a.x=None'], skipped: [] });
    expect(
      await forms(
        'class C:\n    def m(self):\n        return self.s.ctx.id\n',
        'class C:\n    def m(self):\n        ctx = self.s.ctx\n        if ctx is not None:\n            return ctx.id\n',
        'C.m',
        ['self'],
      ),
    ).toEqual({ forms: ['self.s.ctx=None'], skipped: [] });
  });

  it('reads a missing key through .get, `in` and a local alias', async () => {
    expect(
      await forms(
        'def g(req):\n    return req["ran"]["id"]\n',
        'def g(req):\n    node = req.get("ran") or {}\n    if "id" not in node:\n        return None\n    return node["id"]\n',
        'g',
        ['req'],
      ),
    ).toEqual({
      forms: ['req without key "ran"', 'req["ran"] without key "id"'],
      skipped: [],
    });
  });

  it('reads an empty list from len() or from a truth test on a value the parent indexed', async () => {
    expect(
      await forms(
        'def h(xs):\n    return xs[0]\n',
        'def h(xs):\n    if not xs:\n        return None\n    return xs[0]\n',
        'h',
        ['xs'],
      ),
    ).toEqual({ forms: ['xs=[]'], skipped: [] });
    expect(
      await forms(
        'def h(xs):\n    return xs[-1]\n',
        'def h(xs):\n    if len(xs) > 0:\n        return xs[-1]\n',
        'h',
        ['xs'],
      ),
    ).toEqual({ forms: ['xs=[]'], skipped: [] });
  });

  it('reads a missing attribute from hasattr/getattr', async () => {
    expect(
      await forms(
        'def k(o):\n    return o.imsi\n',
        'def k(o):\n    return getattr(o, "imsi", "")\n',
        'k',
        ['o'],
      ),
    ).toEqual({ forms: ['o without attribute imsi'], skipped: [] });
  });

  it('gives none for guards the parent had, and names guards on values that are no input', async () => {
    expect(
      await forms(
        'def f(a):\n    if a is None:\n        return 0\n    return a.x\n',
        'def f(a):\n    if a is None:\n        return 1\n    return a.x\n',
        'f',
        ['a'],
      ),
    ).toEqual({ forms: [], skipped: [] });
    expect(
      await forms(
        'TABLE = {}\n\ndef f(imsi):\n    return TABLE.get(imsi).pdu\n',
        'TABLE = {}\n\ndef f(imsi):\n    s = TABLE.get(imsi)\n    if s is None:\n        return None\n    return s.pdu\n',
        'f',
        ['imsi'],
      ),
    ).toEqual({ forms: [], skipped: ['s=None: s is not an input of f'] });
  });
});
