/**
 * A gold patch that writes its condition first in dead code and then as the real guard (real
 * Open5GS PR 1552: the condition inside an added `#if 0` TODO block, then the live `if` choosing
 * between two assignments). The fix site is its first added occurrence in live code, so the
 * audit's emptied-guard mutant empties the live guard's body (before: the `#if 0` copy's, the
 * mutant was the gold itself, it resolved, and the instance was withheld as weak). Siblings in
 * Go (`if false { ... }`) and Python (`if False:`).
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mutantsOf, removeMutantRepos } from './mutant-repo.js';

afterAll(removeMutantRepos);

const C_PARENT = `#include <stdint.h>
struct msg { uint32_t reason; };

void fill(struct msg *m, int type)
{
    m->reason = 7;
    m->reason += 0;
}
`;
const C_FIX = `#include <stdint.h>
struct msg { uint32_t reason; };

void fill(struct msg *m, int type)
{
#if 0
    if (type == 1) {
        m->reason = 9;
    }
#endif
    if (type == 1) {
        m->reason = 7;
    } else {
        m->reason = 3;
    }
    m->reason += 0;
}
`;

const GO_PARENT = `package gy

func Fill(m *Msg, t int) {
	m.Reason = 7
	m.Reason += 0
}
`;
const GO_FIX = `package gy

func Fill(m *Msg, t int) {
	if false {
		if t == 1 {
			m.Reason = 9
		}
	}
	if t == 1 {
		m.Reason = 7
	} else {
		m.Reason = 3
	}
	m.Reason += 0
}
`;

const PY_PARENT = `def fill(m, t):
    m.reason = 7
    m.reason += 0
`;
const PY_FIX = `def fill(m, t):
    if False:
        if t == 1:
            m.reason = 9
    if t == 1:
        m.reason = 7
    else:
        m.reason = 3
    m.reason += 0
`;

describe('a condition written first in dead code, then as the guard', () => {
  for (const [lang, path, parent, fix, live] of [
    ['c', 'src/smf/gy-path.c', C_PARENT, C_FIX, 11],
    ['go', 'gy/fill.go', GO_PARENT, GO_FIX, 9],
    ['python', 'gy/fill.py', PY_PARENT, PY_FIX, 5],
  ] as const) {
    it(`${lang}: the site is the live guard, and the emptied body is the live guard's`, async () => {
      const { mutants, sites } = await mutantsOf(path, lang, parent, fix);
      expect(sites.length).toBeGreaterThan(0);
      expect(sites.map((s) => s.line)).toEqual(sites.map(() => live));
      const empty = mutants.find((m) => m.kind === 'empty_body')!;
      expect(empty.patch, empty.not_applicable).not.toBeNull();
      // the live guard's assignment is gone from the mutant, the dead copy's text is not emptied
      const added = empty
        .patch!.split('\n')
        .filter((l) => l.startsWith('+'))
        .join('\n');
      expect(added).not.toMatch(/[Rr]eason = 7/);
      expect(added).toMatch(/[Rr]eason = 9/);
    });
  }
});
