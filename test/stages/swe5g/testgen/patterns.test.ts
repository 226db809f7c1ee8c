import { describe, it, expect } from 'vitest';
import { deriveFixSites, type FixSite } from '../../../../stages/swe5g/testgen/patterns.js';
import { readDiff } from '../../../../stages/swe5g/testgen/diffinfo.js';
import { createTwoFilesPatch } from 'diff';

/** Sites of one file change, the added lines taken from a real unified diff of the two texts. */
async function sitesOf(language: 'go' | 'c' | 'python', before: string, after: string, file = 'x') {
  const patch = createTwoFilesPatch(`a/${file}`, `b/${file}`, before, after);
  const [d] = readDiff(patch, 't');
  return deriveFixSites({
    file,
    language,
    parentSource: before,
    fixSource: after,
    addedLines: d!.addedLines,
  });
}

const GO_BASE = `package p

type Inner struct{ V string }
type Req struct{ In *Inner }

// other already guards.
func other(r *Req) string {
	if r.In != nil {
		return r.In.V
	}
	return ""
}

func handle(r *Req) string {
	x := r.In.V
	return x
}
`;

describe('deriveFixSites (Strategy B patterns, tree-sitter)', () => {
  it('finds the nil guard of a Go fix even when another function of the parent already has it', async () => {
    const fixed = GO_BASE.replace(
      '\tx := r.In.V\n',
      '\tif r.In == nil {\n\t\treturn ""\n\t}\n\tx := r.In.V\n',
    );
    const { sites } = await sitesOf('go', GO_BASE, fixed, 'p/h.go');
    expect(sites).toHaveLength(1);
    const s = sites[0] as FixSite;
    expect(s.function).toBe('handle');
    expect(s.pattern).toMatchObject({ kind: 'null_check', key: 'In', operand: 'r.In' });
    expect([s.parentCount, s.fixCount]).toEqual([0, 1]);
  });

  it('gives no site for a formatting-only or comment-only change', async () => {
    const fixed = GO_BASE.replace(
      '\tx := r.In.V\n',
      '\t// r.In != nil is assumed here\n\tx :=   r.In.V\n',
    );
    const r = await sitesOf('go', GO_BASE, fixed);
    expect(r.sites).toEqual([]);
    expect(r.notes.map((n) => n.note)).toContain('formatting or comments only');
  });

  it('gives no site for a rename-only change (function or variable)', async () => {
    const fn = await sitesOf('go', GO_BASE, GO_BASE.replace('func handle(', 'func handleReq('));
    expect(fn.sites).toEqual([]);
    expect(fn.notes[0]?.note).toMatch(/rename only \(was handle\)/);
    const v = await sitesOf(
      'go',
      GO_BASE,
      GO_BASE.replace(
        'if r.In != nil {\n\t\treturn r.In.V',
        'if req.In != nil {\n\t\treturn req.In.V',
      ).replace('func other(r *Req)', 'func other(req *Req)'),
    );
    expect(v.sites).toEqual([]);
    expect(v.notes[0]?.note).toBe('identifier rename only');
  });

  it('gives no site for a fix that only deletes lines, or adds only vacuous code', async () => {
    const del = await sitesOf(
      'go',
      GO_BASE,
      GO_BASE.replace('\tx := r.In.V\n\treturn x\n', '\treturn ""\n'),
    );
    expect(del.sites).toEqual([]);
    const vac = await sitesOf(
      'go',
      GO_BASE,
      GO_BASE.replace('\treturn x\n}', '\tif x == "" {\n\t}\n\treturn x\n}').replace(
        'if x == "" {',
        '{',
      ),
    );
    expect(vac.sites).toEqual([]);
    const logOnly = await sitesOf(
      'go',
      GO_BASE,
      GO_BASE.replace('\treturn x\n}\n', '\tlogger.Infof("x")\n\treturn x\n}\n'),
    );
    expect(logOnly.sites).toEqual([]);
  });

  it('does not count the pattern inside a string literal or another function', async () => {
    const fixed = GO_BASE.replace('\tx := r.In.V\n', '\tx := r.In.V + "r.In != nil"\n');
    const r = await sitesOf('go', GO_BASE, fixed);
    expect(r.sites.filter((s) => s.pattern.kind === 'null_check')).toEqual([]);
  });

  it('derives a C NULL check scoped to its function', async () => {
    const before = `#include <stddef.h>\nstruct s { int *v; };\nint get(struct s *p) {\n  return *p->v;\n}\n`;
    const after = `#include <stddef.h>\nstruct s { int *v; };\nint get(struct s *p) {\n  if (p->v == NULL) /* p->v != NULL */\n    return -1;\n  return *p->v;\n}\n`;
    const { sites } = await sitesOf('c', before, after, 'src/get.c');
    expect(sites).toHaveLength(1);
    expect(sites[0]!.function).toBe('get');
    expect(sites[0]!.pattern.kind).toBe('null_check');
    expect(sites[0]!.pattern.variants).toContainEqual(['p', '->', 'v', '!=', 'NULL']);
  });

  it('derives a Python `is None` check in a method, qualified by its class', async () => {
    const before = `class H:\n    def run(self, msg):\n        return msg.body.upper()\n`;
    const after = `class H:\n    def run(self, msg):\n        if msg.body is None:\n            return ""\n        return msg.body.upper()\n`;
    const { sites } = await sitesOf('python', before, after, 'pkg/h.py');
    expect(sites.map((s) => [s.function, s.pattern.kind, s.pattern.key])).toEqual([
      ['H.run', 'null_check', 'body'],
    ]);
  });

  it('prefers a length check over other expressions when no guard is added', async () => {
    const before = `package p\nfunc first(xs []int) int {\n\treturn xs[0]\n}\n`;
    const after = `package p\nfunc first(xs []int) int {\n\tif len(xs) == 0 {\n\t\treturn -1\n\t}\n\treturn xs[0]\n}\n`;
    const { sites } = await sitesOf('go', before, after);
    expect(sites.map((s) => [s.pattern.kind, s.pattern.key])).toEqual([
      ['length_check', 'len(xs)==0'],
    ]);
  });

  it('gives one site per distinct guard', async () => {
    const before = `package p\ntype A struct{ B *A; C *A }\nfunc f(a *A) *A {\n\treturn a.B.C\n}\n`;
    const after = `package p\ntype A struct{ B *A; C *A }\nfunc f(a *A) *A {\n\tif a == nil || a.B == nil {\n\t\treturn nil\n\t}\n\treturn a.B.C\n}\n`;
    const { sites } = await sitesOf('go', before, after);
    expect(sites.map((s) => s.pattern.key).sort()).toEqual(['B', 'a']);
  });
  it("takes C's idiomatic `!p` as the NULL check, counted with `p == NULL` forms", async () => {
    const before = `void h(struct msg *m) {\n  use(m->cause->v);\n}\n`;
    const after = `void h(struct msg *m) {\n  if (!m->cause)\n    return;\n  use(m->cause->v);\n}\n`;
    const { sites } = await sitesOf('c', before, after, 'src/h.c');
    expect(sites.map((s) => [s.function, s.pattern.kind, s.pattern.key])).toEqual([
      ['h', 'null_check', 'm->cause'],
    ]);
    expect(sites[0]!.pattern.variants).toContainEqual(['!', 'm', '->', 'cause']);
  });
});
