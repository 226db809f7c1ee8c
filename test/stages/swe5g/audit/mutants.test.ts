/**
 * Mutant generation of the fail-to-pass audit (stages/swe5g/audit/mutants.ts), pure: for a Go,
 * a C and a Python fix (a nil/NULL/None guard added before a use), each mutant's patch applies to
 * the parent with `git apply`, the mutated file parses with tree-sitter, and the mutant is what
 * its kind says (the no-op's empty guard, the dead code, the equivalent rewrites); kinds that do
 * not fit are `not_applicable` with why.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Mutant } from '../../../../stages/swe5g/audit/mutants.js';
import { git, mutantsOf, removeMutantRepos } from './mutant-repo.js';
import { failToPassOnly } from '../../../../stages/swe5g/audit/audit.js';
import type { EvalInstance } from '../../../../stages/swe5g/evaluate/grade.js';
import {
  parseSource,
  type SourceLanguage,
} from '../../../../pipeline/providers/treesitter/parser.js';

afterAll(removeMutantRepos);

/** Applies a mutant at the parent (then undoes it): its file text, checked to parse. */
async function applied(dir: string, m: Mutant, path: string, language: SourceLanguage) {
  expect(m.patch, `${m.kind}: ${m.not_applicable}`).not.toBeNull();
  writeFileSync(join(dir, 'm.diff'), m.patch!);
  git(dir, 'apply', '--check', 'm.diff');
  git(dir, 'apply', 'm.diff');
  const text = readFileSync(join(dir, path), 'utf8');
  git(dir, 'checkout', '-q', '--', '.');
  const tree = await parseSource(language, text);
  expect(tree.rootNode.hasError, `${m.kind} does not parse:\n${text}`).toBe(false);
  tree.delete();
  return text;
}

const byKind = (ms: Mutant[]) => new Map(ms.map((m) => [m.kind, m]));

const GO_PARENT = `package ngap

func Handle(req *Req) (string, error) {
	id := req.ID
	return req.Node.GNbId.Value + id, nil
}
`;
const GO_FIX = GO_PARENT.replace(
  '\treturn req.Node',
  '\tif req.Node == nil || req.Node.GNbId == nil {\n\t\treturn "", ErrMissing\n\t}\n\treturn req.Node',
);

describe('audit mutants', () => {
  it('Go: every kind applies, parses and says what it is', async () => {
    const path = 'ngap/handler.go';
    const { dir, mutants, sites } = await mutantsOf(path, 'go', GO_PARENT, GO_FIX);
    expect(sites.map((s) => s.pattern.operand).sort()).toEqual(['req.Node', 'req.Node.GNbId']);
    const m = byKind(mutants);
    const cond = 'req.Node == nil || req.Node.GNbId == nil';
    expect(await applied(dir, m.get('noop')!, path, 'go')).toContain(
      `\tid := req.ID\n\tif ${cond} {\n\t}\n\treturn req.Node.GNbId.Value`,
    );
    expect(await applied(dir, m.get('empty_body')!, path, 'go')).toContain(`if ${cond} {\n\t}\n`);
    const dead = await applied(dir, m.get('dead_code')!, path, 'go');
    expect(dead).toContain(`\tif false {\n\t\tif ${cond} {\n\t\t\treturn "", ErrMissing`);
    const local = await applied(dir, m.get('via_local')!, path, 'go');
    expect(local).toContain(
      '\tauditV1 := req.Node\n\tif auditV1 == nil || req.Node.GNbId == nil {',
    );
    const inv = await applied(dir, m.get('inverted')!, path, 'go');
    expect(inv).toContain(`if !(${cond}) {\n\t} else {\n\t\treturn "", ErrMissing\n\t}`);
    const els = await applied(dir, m.get('else_branch')!, path, 'go');
    expect(els).toMatch(/\t\} else \{\n\treturn req\.Node\.GNbId\.Value \+ id, nil\n\t\}\n\}/);
    expect(m.get('dead_code_preproc')!.not_applicable).toMatch(/no preprocessor in go/);
    // every must-reject mutant lacks the gold's early return before the use
    for (const k of ['noop', 'dead_code'] as const) expect(m.get(k)!.expectation).toBe('reject');
  });

  it('C: NULL guard, #if 0 and if (0), __auto_type local', async () => {
    const path = 'src/amf/context.c';
    const parent = `#include <stddef.h>\nstruct ue { int *sess; };\n\nint amf_sess_id(struct ue *ue)\n{\n    int n = 0;\n    n += 1;\n    return *ue->sess + n;\n}\n`;
    const fix = parent.replace(
      '    return *ue->sess',
      '    if (!ue->sess) {\n        return -1;\n    }\n    return *ue->sess',
    );
    const { dir, mutants } = await mutantsOf(path, 'c', parent, fix);
    const m = byKind(mutants);
    expect(await applied(dir, m.get('noop')!, path, 'c')).toContain(
      '    n += 1;\n    if (!ue->sess) { }\n    return *ue->sess',
    );
    expect(await applied(dir, m.get('dead_code')!, path, 'c')).toContain(
      '    if (0) {\n        if (!ue->sess) {',
    );
    expect(await applied(dir, m.get('dead_code_preproc')!, path, 'c')).toContain(
      '#if 0\n    if (!ue->sess) {',
    );
    expect(await applied(dir, m.get('empty_body')!, path, 'c')).toContain('if (!ue->sess) { }\n');
    expect(await applied(dir, m.get('via_local')!, path, 'c')).toContain(
      '__auto_type audit_v1 = ue->sess;\n    if (!audit_v1) {',
    );
    expect(await applied(dir, m.get('inverted')!, path, 'c')).toContain(
      'if (!(!ue->sess)) { } else {',
    );
    expect(await applied(dir, m.get('else_branch')!, path, 'c')).toContain(
      '} else {\n    return *ue->sess + n;\n    }',
    );
  });

  it('Python: is None guard with an else, pass and if False', async () => {
    const path = 'smf/handler.py';
    const parent =
      'class SessionHandler:\n    def release(self, session):\n        name = session.name\n        return session.pdu.upper() + name\n';
    const fix = parent.replace(
      '        return session.pdu',
      '        if session.pdu is None:\n            return ""\n        return session.pdu',
    );
    const { dir, mutants } = await mutantsOf(path, 'python', parent, fix);
    const m = byKind(mutants);
    expect(await applied(dir, m.get('noop')!, path, 'python')).toContain(
      '        name = session.name\n        if session.pdu is None:\n            pass\n        return session.pdu.upper()',
    );
    expect(await applied(dir, m.get('dead_code')!, path, 'python')).toContain(
      '        if False:\n            if session.pdu is None:\n                return ""\n',
    );
    expect(await applied(dir, m.get('empty_body')!, path, 'python')).toContain(
      '        if session.pdu is None:\n            pass\n        return',
    );
    expect(await applied(dir, m.get('via_local')!, path, 'python')).toContain(
      '        audit_v1 = session.pdu\n        if audit_v1 is None:',
    );
    expect(await applied(dir, m.get('inverted')!, path, 'python')).toContain(
      '        if not (session.pdu is None):\n            pass\n        else:\n            return ""',
    );
    expect(await applied(dir, m.get('else_branch')!, path, 'python')).toContain(
      '            return ""\n        else:\n            return session.pdu.upper() + name',
    );
    expect(m.get('dead_code_preproc')!.not_applicable).toMatch(/preprocessor/);
  });

  it('a fix whose check is not an if condition: its statement in dead code, every other kind not_applicable with why', async () => {
    // a text-counting test of such a site accepts the statement in code that never runs (real
    // Open5GS PRs 2805/2806: `ogs_assert(OGS_OK == f(...))`, audited 'no mutant' before)
    const cases: {
      path: string;
      language: SourceLanguage;
      parent: string;
      fix: string;
      dead: RegExp;
      preproc?: RegExp;
    }[] = [
      {
        path: 'p/ok.go',
        language: 'go',
        parent: 'package p\n\nfunc Ok(x *T) bool {\n\treturn true\n}\n',
        fix: 'package p\n\nfunc Ok(x *T) bool {\n\treturn x != nil\n}\n',
        dead: /\tif false \{\n\t\treturn x != nil\n\t\}\n\treturn true/,
      },
      {
        path: 'src/s11.c',
        language: 'c',
        parent: 'void handle(sess_t *s)\n{\n    s->type = 1;\n    use(&s->ue_ip);\n}\n',
        fix: 'void handle(sess_t *s)\n{\n    s->type = 1;\n    ogs_assert(OGS_OK ==\n            paa_to_ip(&s->paa, &s->ue_ip));\n    use(&s->ue_ip);\n}\n',
        dead: / {4}if \(0\) \{\n {8}ogs_assert\(OGS_OK ==\n\s+paa_to_ip\(&s->paa, &s->ue_ip\)\);\n {4}\}\n {4}use/,
        preproc: /#if 0\n {4}ogs_assert\(OGS_OK ==[\s\S]*\n#endif\n {4}use/,
      },
      {
        path: 'm/h.py',
        language: 'python',
        parent: 'def handle(s):\n    use(s.ip)\n    return 0\n',
        fix: 'def handle(s):\n    ok = s.ip is not None\n    use(s.ip)\n    return 0\n',
        dead: / {4}if False:\n {8}ok = s\.ip is not None\n {4}use\(s\.ip\)/,
      },
    ];
    for (const c of cases) {
      const { dir, mutants, sites } = await mutantsOf(c.path, c.language, c.parent, c.fix);
      expect(sites.length, c.path).toBeGreaterThan(0);
      const m = byKind(mutants);
      expect(await applied(dir, m.get('dead_code')!, c.path, c.language), c.path).toMatch(c.dead);
      if (c.preproc)
        expect(await applied(dir, m.get('dead_code_preproc')!, c.path, c.language)).toMatch(
          c.preproc,
        );
      for (const mu of mutants) {
        if (mu.kind === 'dead_code' || (c.preproc && mu.kind === 'dead_code_preproc')) continue;
        expect(mu.patch, `${c.path} ${mu.kind}`).toBeNull();
        expect(mu.not_applicable, `${c.path} ${mu.kind}`).toMatch(
          /not in an if condition|no preprocessor/,
        );
      }
    }
  });

  it('a comparison site (not a null check) gets the mutants too: C, Go and Python', async () => {
    // the real Open5GS shape (PR 2806): `if (OGS_OK != ogs_gtp2_paa_to_ip(...)) { ... return; }`
    // added by the fix; its text-strength test had no audit ("no null-check fix site")
    const cases: {
      path: string;
      language: SourceLanguage;
      parent: string;
      fix: string;
      cond: RegExp;
    }[] = [
      {
        path: 'src/s11.c',
        language: 'c',
        parent: 'int handle(sess_t *s)\n{\n    use(&s->ue_ip);\n    return 0;\n}\n',
        fix: 'int handle(sess_t *s)\n{\n    if (OGS_OK != paa_to_ip(&s->paa, &s->ue_ip)) {\n        return -1;\n    }\n    use(&s->ue_ip);\n    return 0;\n}\n',
        cond: /if \(OGS_OK != paa_to_ip\(&s->paa, &s->ue_ip\)\) \{\s*\}/,
      },
      {
        path: 'p/h.go',
        language: 'go',
        parent: 'package p\n\nfunc Handle(s *Sess) int {\n\tuse(s.IP)\n\treturn 0\n}\n',
        fix: 'package p\n\nfunc Handle(s *Sess) int {\n\tif len(s.IP) != 4 {\n\t\treturn -1\n\t}\n\tuse(s.IP)\n\treturn 0\n}\n',
        cond: /if len\(s\.IP\) != 4 \{\s*\}/,
      },
      {
        path: 'm/h.py',
        language: 'python',
        parent: 'def handle(s):\n    use(s.ip)\n    return 0\n',
        fix: 'def handle(s):\n    if len(s.ip) != 4:\n        return -1\n    use(s.ip)\n    return 0\n',
        cond: /if len\(s\.ip\) != 4:\s*\n\s*pass/,
      },
    ];
    for (const c of cases) {
      const { dir, mutants, sites } = await mutantsOf(c.path, c.language, c.parent, c.fix);
      expect(sites.length, c.path).toBeGreaterThan(0);
      expect(
        sites.every((x) => x.pattern.kind !== 'null_check'),
        c.path,
      ).toBe(true);
      const m = byKind(mutants);
      const noop = await applied(dir, m.get('noop')!, c.path, c.language);
      expect(noop, c.path).toMatch(c.cond);
      await applied(dir, m.get('dead_code')!, c.path, c.language);
      await applied(dir, m.get('inverted')!, c.path, c.language);
      // the local rewrite needs a null check's operand
      expect(m.get('via_local')!.not_applicable, c.path).toMatch(/no null check/);
    }
  });

  it('a must-reject mutant runs only the directories of FAIL_TO_PASS, graded on them alone', () => {
    const inst = {
      FAIL_TO_PASS: ['example.com/m/ngap::TestF2P'],
      PASS_TO_PASS: ['example.com/m/ngap::TestOK', 'example.com/m/util::TestAdd'],
      test_dirs: ['ngap', 'util'],
    } as unknown as EvalInstance;
    expect(failToPassOnly(inst)).toMatchObject({ PASS_TO_PASS: [], test_dirs: ['ngap'] });
    // nothing to tell the directories by (C meson names): every directory runs
    const c = { ...inst, FAIL_TO_PASS: ['unit/sess'], test_dirs: ['src/amf'] };
    expect(failToPassOnly(c).test_dirs).toEqual(['src/amf']);
    const py = { ...inst, FAIL_TO_PASS: ['tests/test_f2p.py::t'], test_dirs: ['tests', 'smf'] };
    expect(failToPassOnly(py).test_dirs).toEqual(['tests']);
  });
});

describe('empty_body applies only where the body refuses the bad value', () => {
  // the paper's amf_pr161 shape: the gold strengthens an existing `if` with `X != nil &&`; its body
  // is where the value is used, so emptying it is another fix, not a broken one (seen on the real
  // amf_pr161: the behavioural test rightly accepted it and the audit called the test weak)
  const PARENT = `package p

type N struct{ V string }
type R struct{ G *N }

func f(r R) string {
	if r.G.V != "" {
		return r.G.V
	}
	return ""
}
`;
  const FIX = PARENT.replace('if r.G.V != "" {', 'if r.G != nil && r.G.V != "" {');
  it('is not applicable to a guard of the good value (Go conjunction)', async () => {
    const { mutants } = await mutantsOf('p/f.go', 'go', PARENT, FIX);
    const m = byKind(mutants).get('empty_body')!;
    expect(m.patch).toBeNull();
    expect(m.not_applicable).toMatch(/good value/);
    // the no-op still applies and stays a must-reject mutant
    expect(byKind(mutants).get('noop')!.expectation).toBe('reject');
  });

  it('still empties an early-exit guard of the bad value (C and Python siblings)', async () => {
    const C_PARENT = 'int g(struct s *p) {\n    return p->len;\n}\n';
    const C_FIX =
      'int g(struct s *p) {\n    if (p == NULL) {\n        return -1;\n    }\n    return p->len;\n}\n';
    const c = await mutantsOf('src/g.c', 'c', C_PARENT, C_FIX);
    expect(byKind(c.mutants).get('empty_body')!.patch).not.toBeNull();
    const PY_PARENT = 'def g(p):\n    return p.size\n';
    const PY_FIX = 'def g(p):\n    if p is None:\n        return 0\n    return p.size\n';
    const py = await mutantsOf('pkg/g.py', 'python', PY_PARENT, PY_FIX);
    expect(byKind(py.mutants).get('empty_body')!.patch).not.toBeNull();
  });

  // siblings of Open5GS PR 2829 (a truth-value test added to an `else if`): the body runs for the
  // good value, so emptying it removes the use; the audit called the real test weak for that
  const goodValue: [string, SourceLanguage, string, string][] = [
    [
      'src/nrf/h.c',
      'c',
      'int h(struct o *opt, int a) {\n    if (a) {\n        return 0;\n    } else if (opt->n && opt->m) {\n        return opt->n;\n    }\n    return 1;\n}\n',
      'int h(struct o *opt, int a) {\n    if (a) {\n        return 0;\n    } else if (opt &&\n            opt->n && opt->m) {\n        return opt->n;\n    }\n    return 1;\n}\n',
    ],
    [
      'src/g.c',
      'c',
      'int g(struct s *p) {\n    int n = 0;\n    n = p->len;\n    return n;\n}\n',
      'int g(struct s *p) {\n    int n = 0;\n    if (p) {\n        n = p->len;\n    }\n    return n;\n}\n',
    ],
    [
      'pkg/g.py',
      'python',
      'def g(p):\n    n = 0\n    n = p.size\n    return n\n',
      'def g(p):\n    n = 0\n    if not (p is None):\n        n = p.size\n    return n\n',
    ],
  ];
  for (const [path, lang, parent, fix] of goodValue)
    it(`is not applicable where the body runs for the good value (${lang}, ${path})`, async () => {
      const { mutants } = await mutantsOf(path, lang, parent, fix);
      const m = byKind(mutants).get('empty_body')!;
      expect(m.not_applicable ?? m.patch).toMatch(/good value/);
    });

  // the same operands tested for the bad value, written through a negation or a disjunction: the
  // body is the fix's handling and is emptied (a structural reading, not `!= NULL` text)
  const badValue: [string, SourceLanguage, string, string][] = [
    // a flag tested for truth and not used (real Open5GS 2874 `if (failed)`, 2857): a branch choice
    [
      'src/f.c',
      'c',
      'void f(struct u *ue) {\n    ue->n = 0;\n}\n',
      'void f(struct u *ue) {\n    ue->n = 0;\n    if (ue->paging.failed) {\n        ue->n = 1;\n    }\n}\n',
    ],
    // a non-null test whose body does not use the value: emptying it drops other behaviour
    [
      'p/u.go',
      'go',
      'package p\n\ntype N struct{ V string }\n\nfunc u(g *N, n int) int {\n\treturn n\n}\n',
      'package p\n\ntype N struct{ V string }\n\nfunc u(g *N, n int) int {\n\tif g != nil {\n\t\tn++\n\t}\n\treturn n\n}\n',
    ],
    [
      'pkg/u.py',
      'python',
      'def u(p, n):\n    return n\n',
      'def u(p, n):\n    if p is not None:\n        n += 1\n    return n\n',
    ],
    [
      'src/b.c',
      'c',
      'int b(struct s *p) {\n    return p->len;\n}\n',
      'int b(struct s *p) {\n    if (!(p != NULL) || p->len == 0) {\n        return -1;\n    }\n    return p->len;\n}\n',
    ],
    [
      'p/b.go',
      'go',
      'package p\n\ntype N struct{ V string }\n\nfunc b(g *N) string {\n\treturn g.V\n}\n',
      'package p\n\ntype N struct{ V string }\n\nfunc b(g *N) string {\n\tif !(g != nil) {\n\t\treturn ""\n\t}\n\treturn g.V\n}\n',
    ],
    [
      'pkg/b.py',
      'python',
      'def b(p):\n    return p.size\n',
      'def b(p):\n    if not p or p.size == 0:\n        return 0\n    return p.size\n',
    ],
  ];
  for (const [path, lang, parent, fix] of badValue)
    it(`empties the body that refuses the bad value (${lang}, ${path})`, async () => {
      const { mutants } = await mutantsOf(path, lang, parent, fix);
      const m = byKind(mutants).get('empty_body')!;
      expect(m.not_applicable).toBeUndefined();
      expect(m.patch).not.toBeNull();
    });
});

describe('statement kinds at the parent need a function body to go in', () => {
  // real Open5GS 2857: the fix adds `ogs_ip_to_paa` whole; its no-op and `if (0)` copies went
  // between two functions of the parent, did not compile, and cost a grading run each
  const newFunction: [string, SourceLanguage, string, string][] = [
    [
      'lib/conv.c',
      'c',
      'int a(const struct ip *ip)\n{\n    return ip->v4;\n}\n',
      'int a(const struct ip *ip)\n{\n    return ip->v4;\n}\n\nint b(const struct ip *ip, struct paa *paa)\n{\n    if (ip == NULL) {\n        return -1;\n    }\n    paa->v = ip->v4;\n    return 0;\n}\n',
    ],
    [
      'p/conv.go',
      'go',
      'package p\n\ntype IP struct{ V4 int }\n\nfunc A(ip *IP) int {\n\treturn ip.V4\n}\n',
      'package p\n\ntype IP struct{ V4 int }\n\nfunc A(ip *IP) int {\n\treturn ip.V4\n}\n\nfunc B(ip *IP) int {\n\tif ip == nil {\n\t\treturn -1\n\t}\n\treturn ip.V4 + 1\n}\n',
    ],
    [
      'pkg/conv.py',
      'python',
      'def a(ip):\n    return ip.v4\n',
      'def a(ip):\n    return ip.v4\n\n\ndef b(ip):\n    if ip is None:\n        return -1\n    return ip.v4 + 1\n',
    ],
  ];
  for (const [path, lang, parent, fix] of newFunction)
    it(`no-op and if (0) are not applicable to a guard of a function the fix adds (${lang})`, async () => {
      const { mutants } = await mutantsOf(path, lang, parent, fix);
      for (const kind of ['noop', 'dead_code'] as const) {
        const m = byKind(mutants).get(kind)!;
        expect(m.patch).toBeNull();
        expect(m.not_applicable).toMatch(/outside any function body|not the one it is in/);
      }
      // the kinds that start from the fix still apply
      expect(byKind(mutants).get('empty_body')!.patch).not.toBeNull();
    });
});
