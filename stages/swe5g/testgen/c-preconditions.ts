/**
 * The asserted preconditions of a C Strategy A call (strategyA-c.ts): values that satisfy the
 * hard assertions the fixed function keeps (`ogs_assert(abba_len)`, `assert(n > 0 && p->buf)`),
 * so the call with zeroed inputs reaches the code the fix guards instead of aborting on a
 * precondition the fix never touched. Measured on real Open5GS (docs/results/strategy-a-c.md):
 * `ogs_kdf_kamf` with zeroed inputs aborted at the fix commit on `ogs_assert(abba_len)`, so its
 * test failed at both commits and Strategy B was used. Only conditions a zeroed input violates
 * get a value: a path that must be non-zero (`p`, `p != NULL`, `n != 0`), `n > K`, `n >= K`,
 * `n == K`; a condition zero already meets (`n < K`, `!p`) or one the test cannot spell gets none.
 * The fix's own crash-triggering values are set after these and win (badValues, c-inputs.ts).
 */
import type { Node } from '../../../pipeline/providers/treesitter/parser.js';
import { constantLike, pathOf, rootOf, type BadValue } from './c-inputs.js';

/** Calls that abort the process when their argument is false. */
const HARD_ASSERT = /^(assert|ogs_assert|d_assert)$/;

const SWAP: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

/** Values making one conjunct of an assertion hold, or [] when zero holds or none can be spelt. */
function satisfy(cond: Node, params: Set<string>): BadValue[] {
  const t = cond.type;
  if (t === 'parenthesized_expression' && cond.namedChildren[0])
    return satisfy(cond.namedChildren[0], params);
  const own = (p: string | null): p is string => p !== null && params.has(rootOf(p));
  const path = pathOf(cond);
  if (own(path)) return [{ path, value: 'truthy', from: cond.text }];
  if (t !== 'binary_expression') return [];
  const op = cond.childForFieldName('operator')?.text ?? '';
  const l = cond.childForFieldName('left')!;
  const r = cond.childForFieldName('right')!;
  if (op === '&&') return [...satisfy(l, params), ...satisfy(r, params)];
  let o = op;
  let lp = pathOf(l);
  let other = r;
  if (!own(lp)) {
    lp = pathOf(r);
    other = l;
    o = SWAP[o] ?? o;
  }
  if (!own(lp) || !constantLike(other, params)) return [];
  const zero = other.type === 'null' || other.text === 'NULL' || /^0+[uUlL]*$/.test(other.text);
  const v = (value: BadValue['value']): BadValue[] => [{ path: lp, value, from: cond.text }];
  if (o === '!=') return zero ? v('truthy') : [];
  if (o === '>') return v({ expr: `(${other.text}) + 1` });
  if (o === '>=' || o === '==') return zero ? [] : v({ expr: other.text });
  return [];
}

/**
 * The values that satisfy the hard assertions of `body` on argument paths (see the module
 * comment), in source order, one per path (the first assertion's).
 * @param params the function's parameter names
 */
export function assertedValues(body: Node, params: Set<string>): BadValue[] {
  const out: BadValue[] = [];
  const seen = new Set<string>();
  const walk = (n: Node): void => {
    if (n.type === 'call_expression') {
      const f = n.childForFieldName('function')?.text ?? '';
      const arg = n.childForFieldName('arguments')?.namedChildren[0];
      if (HARD_ASSERT.test(f) && arg)
        for (const v of satisfy(arg, params))
          if (!seen.has(v.path)) {
            seen.add(v.path);
            out.push(v);
          }
    }
    for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(body);
  return out;
}
