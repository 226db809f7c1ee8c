/**
 * The asserted preconditions of a C direct call (c-preconditions.ts): which assertions of the
 * fixed function get a value, and which do not (a soft check that returns, a condition zero already
 * meets, a local, a disjunction). The built programs are tested in strategy-a-c.test.ts.
 */
import { describe, it, expect } from 'vitest';
import { parseSource } from '../../../../pipeline/providers/treesitter/parser.js';
import { assertedValues } from '../../../../stages/swe5g/testgen/c-preconditions.js';

async function valuesOf(body: string): Promise<string[]> {
  const tree = await parseSource(
    'c',
    `int f(struct s *p, size_t n, int k, char *q)\n{\n${body}\n}\n`,
  );
  try {
    const fn = tree.rootNode.namedChildren.find((c) => c?.type === 'function_definition')!;
    const vs = assertedValues(fn.childForFieldName('body')!, new Set(['p', 'n', 'k', 'q']));
    return vs.map((v) => `${v.path}=${typeof v.value === 'string' ? v.value : v.value.expr}`);
  } finally {
    tree.delete();
  }
}

describe('assertedValues', () => {
  it('gives each hard assertion on an argument the value a zeroed input lacks', async () => {
    expect(await valuesOf('ogs_assert(n);')).toEqual(['n=truthy']);
    expect(await valuesOf('assert(p->len > 3);')).toEqual(['p->len=(3) + 1']);
    expect(await valuesOf('assert(4 <= k);')).toEqual(['k=4']);
    expect(await valuesOf('assert(k == MAX_K);')).toEqual(['k=MAX_K']);
    expect(await valuesOf('ogs_assert(p->buf != NULL && n >= 2);')).toEqual([
      'p->buf=truthy',
      'n=2',
    ]);
    // one value per path, the first assertion's
    expect(await valuesOf('assert(n > 1);\n  assert(n > 5);')).toEqual(['n=(1) + 1']);
  });

  it('leaves out what zero meets, what it cannot spell, soft checks and locals', async () => {
    expect(await valuesOf('assert(n < 8);')).toEqual([]);
    expect(await valuesOf('assert(!q);')).toEqual([]);
    expect(await valuesOf('assert(k == 0);')).toEqual([]);
    expect(await valuesOf('assert(n > strlen(q));')).toEqual([]);
    expect(await valuesOf('assert(p || q);')).toEqual([]);
    expect(await valuesOf('ogs_expect_or_return(n);')).toEqual([]);
    expect(await valuesOf('int local = 1;\n  assert(local);')).toEqual([]);
    expect(await valuesOf('if (!n) return -1;')).toEqual([]);
  });
});
