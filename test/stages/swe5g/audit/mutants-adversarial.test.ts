/**
 * Adversarial shapes (a fresh reviewer's, 39 of them) for two rules of the fail-to-pass audit's
 * mutants: polarity.ts `testsGoodValue` (when `empty_body` leaves a good-value body alone) and
 * place.ts `parentPlace` (where `noop` and `dead_code` may insert at the parent). Each case states
 * the right answer and why; the first review found 20 wrong answers, all mended or, where named a
 * known limit, asserted with today's verdict.
 * Applicable statement mutants are also compiled (gcc -fsyntax-only, go tool compile) or, for
 * Python, parsed and checked to sit in the right function.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Mutant } from '../../../../stages/swe5g/audit/mutants.js';
import { git, mutantsOf, removeMutantRepos, scratchDir } from './mutant-repo.js';
import {
  parseSource,
  type SourceLanguage,
} from '../../../../pipeline/providers/treesitter/parser.js';

afterAll(removeMutantRepos);

/** The mutant's file text after `git apply` at the parent. */
function appliedText(dir: string, m: Mutant, path: string): string {
  writeFileSync(join(dir, 'm.diff'), m.patch!);
  git(dir, 'apply', 'm.diff');
  const text = readFileSync(join(dir, path), 'utf8');
  git(dir, 'checkout', '-q', '--', '.');
  return text;
}

/** Compiler / parser diagnostics of a mutated file, '' when it is accepted. */
async function problems(language: SourceLanguage, text: string): Promise<string> {
  const d = scratchDir('telebench-rev7-cc-');
  if (language === 'c') {
    writeFileSync(join(d, 'm.c'), text);
    const r = spawnSync('gcc', ['-fsyntax-only', '-Wno-implicit-function-declaration', 'm.c'], {
      cwd: d,
      encoding: 'utf8',
    });
    return r.status === 0 ? '' : r.stderr;
  }
  if (language === 'go') {
    writeFileSync(join(d, 'm.go'), text);
    const r = spawnSync('go', ['tool', 'compile', '-o', 'm.o', 'm.go'], {
      cwd: d,
      encoding: 'utf8',
    });
    return r.status === 0 ? '' : r.stdout + r.stderr;
  }
  writeFileSync(join(d, 'm.py'), text);
  const r = spawnSync(
    'python3',
    ['-c', 'import sys; compile(open(sys.argv[1]).read(), "m.py", "exec")', 'm.py'],
    {
      cwd: d,
      encoding: 'utf8',
    },
  );
  return r.status === 0 ? '' : r.stderr;
}

const byKind = (ms: Mutant[]) => new Map(ms.map((m) => [m.kind, m]));
const show = (m: Mutant) => m.not_applicable ?? '(applicable)';

type Case = { name: string; path: string; lang: SourceLanguage; parent: string; fix: string };

// ---------------------------------------------------------------------------------------------
// Rule 1: empty_body and the polarity of the guard
// ---------------------------------------------------------------------------------------------

/** The body handles a bad value/state: `empty_body` must stay applicable (body emptied). */
const mustEmpty: (Case & { why: string })[] = [
  {
    name: 'Python good value used in the condition only: if p is not None and p.size > 0: n = 1',
    why: 'the body does not read p: emptying it drops `n = 1` for every good p, a wrong fix (a good-value body is exempt only when it reads the value)',
    path: 'pkg/rc.py',
    lang: 'python',
    parent: 'def rc(p):\n    n = 0\n    if p.size > 0:\n        n = 1\n    return n\n',
    fix: 'def rc(p):\n    n = 0\n    if p is not None and p.size > 0:\n        n = 1\n    return n\n',
  },
  {
    name: 'Python conditional expression: if (p.size if p is not None else 0) > 0: n = p.size',
    why: "known limit: a conditional expression on the way is not read (polarity.ts), so the body is emptied as for a bad value; asserted as today's verdict",
    path: 'pkg/t.py',
    lang: 'python',
    parent: 'def t(p):\n    n = 0\n    n = p.size\n    return n\n',
    fix: 'def t(p):\n    n = 0\n    if (p.size if p is not None else 0) > 0:\n        n = p.size\n    return n\n',
  },
  {
    name: 'C early exit for a bad state behind a good-value test (sess && sess->closed)',
    why: 'the body is the fix handling a closed session; `sess` is only a precondition',
    path: 'src/s.c',
    lang: 'c',
    parent:
      'struct s { int closed; int id; };\nint send(struct s *sess);\nint f(struct s *sess)\n{\n    return send(sess);\n}\n',
    fix: 'struct s { int closed; int id; };\nint send(struct s *sess);\nint f(struct s *sess)\n{\n    if (sess && sess->closed) {\n        return -1;\n    }\n    return send(sess);\n}\n',
  },
  {
    name: 'Go early exit for a nil field behind a non-nil test (r.G != nil && r.G.N == nil)',
    why: 'the body refuses the bad (nil) r.G.N; emptying it lets the nil dereference run',
    path: 'p/e.go',
    lang: 'go',
    parent:
      'package p\n\ntype M struct{ V string }\ntype N struct{ N *M }\ntype R struct{ G *N }\n\nfunc f(r R) string {\n\tif r.G == nil {\n\t\treturn "none"\n\t}\n\treturn r.G.N.V\n}\n',
    fix: 'package p\n\ntype M struct{ V string }\ntype N struct{ N *M }\ntype R struct{ G *N }\n\nfunc f(r R) string {\n\tif r.G == nil {\n\t\treturn "none"\n\t}\n\tif r.G != nil && r.G.N == nil {\n\t\treturn ""\n\t}\n\treturn r.G.N.V\n}\n',
  },
  {
    name: 'Python early exit for a bad state (p is not None and p.closed)',
    why: 'the body is the handling of a closed p; p is a precondition only (passes only because uses() squashes `p is` into `pis`)',
    path: 'pkg/e.py',
    lang: 'python',
    parent: 'def e(p, q):\n    return q.send(p)\n',
    fix: 'def e(p, q):\n    if p is not None and p.closed:\n        return 0\n    return q.send(p)\n',
  },
  {
    name: 'C flag reset in its own body (if (ue->paging.failed) { ue->paging.failed = 0; ... })',
    why: 'a flag (2874 sibling): the body is the fix handling the failed case; writing the flag is not a use of a good value',
    path: 'src/pg.c',
    lang: 'c',
    parent:
      'struct pg { int failed; };\nstruct u { struct pg paging; int n; };\nvoid retry(struct u *ue);\nvoid f(struct u *ue)\n{\n    ue->n = 0;\n}\n',
    fix: 'struct pg { int failed; };\nstruct u { struct pg paging; int n; };\nvoid retry(struct u *ue);\nvoid f(struct u *ue)\n{\n    ue->n = 0;\n    if (ue->paging.failed) {\n        ue->paging.failed = 0;\n        retry(ue);\n    }\n}\n',
  },
  {
    name: 'C Yoda bad value (if (NULL == p) return -1;)',
    why: 'the body handles NULL',
    path: 'src/y.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\nstruct s { int len; };\nint y(struct s *p)\n{\n    return p->len;\n}\n',
    fix: '#include <stddef.h>\nstruct s { int len; };\nint y(struct s *p)\n{\n    if (NULL == p)\n        return -1;\n    return p->len;\n}\n',
  },
  {
    name: 'Go bad value with a nested good-value if in the body (if g == nil || g.V == "" { if g != nil {...}; return "" })',
    why: 'the outer body is the bad-value handling; the nested `g != nil` is inside it',
    path: 'p/n.go',
    lang: 'go',
    parent:
      'package p\n\ntype N struct{ V string }\n\nfunc log(string) {}\n\nfunc n(g *N) string {\n\treturn g.V\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nfunc log(string) {}\n\nfunc n(g *N) string {\n\tif g == nil || g.V == "" {\n\t\tif g != nil {\n\t\t\tlog(g.V)\n\t\t}\n\t\treturn ""\n\t}\n\treturn g.V\n}\n',
  },
  {
    name: 'C double negation, bad (if (!!!p) return -1;)',
    why: 'three negations of a truth test: the body runs for NULL',
    path: 'src/d.c',
    lang: 'c',
    parent: 'struct s { int len; };\nint d(struct s *p)\n{\n    return p->len;\n}\n',
    fix: 'struct s { int len; };\nint d(struct s *p)\n{\n    if (!!!p)\n        return -1;\n    return p->len;\n}\n',
  },
];

/** The body runs for a good value that it uses: `empty_body` must be not applicable. */
const mustKeep: (Case & { why: string })[] = [
  {
    name: 'C good value returned: if (p != NULL) { return p->len; }',
    why: 'good value, used in the body (`return p->len`)',
    path: 'src/r.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\nstruct s { int len; };\nint r(struct s *p)\n{\n    return p->len;\n}\n',
    fix: '#include <stddef.h>\nstruct s { int len; };\nint r(struct s *p)\n{\n    if (p != NULL) {\n        return p->len;\n    }\n    return 0;\n}\n',
  },
  {
    name: 'Go good value returned: if g != nil { return g.V }',
    why: 'good value, used in the body (`return g.V`)',
    path: 'p/r.go',
    lang: 'go',
    parent: 'package p\n\ntype N struct{ V string }\n\nfunc r(g *N) string {\n\treturn g.V\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nfunc r(g *N) string {\n\tif g != nil {\n\t\treturn g.V\n\t}\n\treturn ""\n}\n',
  },
  {
    name: 'Python good value returned: if p is not None: return p.size',
    why: 'good value, used in the body (`return p.size`)',
    path: 'pkg/r.py',
    lang: 'python',
    parent: 'def r(p):\n    return p.size\n',
    fix: 'def r(p):\n    if p is not None:\n        return p.size\n    return 0\n',
  },
  {
    name: 'C negated disjunction (De Morgan): if (!(p == NULL || p->n == 0)) { n = p->n; }',
    why: 'the body runs only for a non-NULL p and uses p->n: same as `p != NULL && p->n != 0`',
    path: 'src/dm.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\nstruct s { int n; };\nint dm(struct s *p)\n{\n    int n = 0;\n    n = p->n;\n    return n;\n}\n',
    fix: '#include <stddef.h>\nstruct s { int n; };\nint dm(struct s *p)\n{\n    int n = 0;\n    if (!(p == NULL || p->n == 0)) {\n        n = p->n;\n    }\n    return n;\n}\n',
  },
  {
    name: 'Go negated disjunction: if !(g == nil || g.V == "") { return g.V }',
    why: 'De Morgan of `g != nil && g.V != ""` (the existing Go good-value test)',
    path: 'p/dm.go',
    lang: 'go',
    parent:
      'package p\n\ntype N struct{ V string }\n\nfunc dm(g *N) string {\n\tif g.V != "" {\n\t\treturn g.V\n\t}\n\treturn ""\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nfunc dm(g *N) string {\n\tif !(g == nil || g.V == "") {\n\t\treturn g.V\n\t}\n\treturn ""\n}\n',
  },
  {
    name: 'Python negated disjunction: if not (p is None or p.size == 0): n = p.size',
    why: 'the body runs only for p not None and uses p.size',
    path: 'pkg/dm.py',
    lang: 'python',
    parent: 'def dm(p):\n    n = 0\n    n = p.size\n    return n\n',
    fix: 'def dm(p):\n    n = 0\n    if not (p is None or p.size == 0):\n        n = p.size\n    return n\n',
  },
  {
    name: 'C Yoda good value in nested parentheses: if ((NULL != p) && (p->n)) { n = p->n; }',
    why: 'good value, used',
    path: 'src/yg.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\nstruct s { int n; };\nint yg(struct s *p)\n{\n    int n = 0;\n    n = p->n;\n    return n;\n}\n',
    fix: '#include <stddef.h>\nstruct s { int n; };\nint yg(struct s *p)\n{\n    int n = 0;\n    if ((NULL != p) && (p->n)) {\n        n = p->n;\n    }\n    return n;\n}\n',
  },
  {
    name: 'C double negation, good (if (!!p) { n = p->len; })',
    why: 'two negations of a truth test: the body runs for non-NULL p and uses it',
    path: 'src/dd.c',
    lang: 'c',
    parent:
      'struct s { int len; };\nint dd(struct s *p)\n{\n    int n = 0;\n    n = p->len;\n    return n;\n}\n',
    fix: 'struct s { int len; };\nint dd(struct s *p)\n{\n    int n = 0;\n    if (!!p) {\n        n = p->len;\n    }\n    return n;\n}\n',
  },
  {
    name: 'Go good value inside a func literal (closure)',
    why: 'good value, used in the body',
    path: 'p/cl.go',
    lang: 'go',
    parent:
      'package p\n\ntype N struct{ V string }\n\nfunc cl(g *N) func() string {\n\treturn func() string {\n\t\treturn g.V\n\t}\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nfunc cl(g *N) func() string {\n\treturn func() string {\n\t\tif g != nil && g.V != "" {\n\t\t\treturn g.V\n\t\t}\n\t\treturn ""\n\t}\n}\n',
  },
  {
    name: 'Python method of a class, good value (if self.conn is not None: self.conn.close())',
    why: 'good value, used',
    path: 'pkg/c.py',
    lang: 'python',
    parent: 'class C:\n    def close(self):\n        self.conn.close()\n        return 1\n',
    fix: 'class C:\n    def close(self):\n        if self.conn is not None:\n            self.conn.close()\n        return 1\n',
  },
];

describe('empty_body polarity', () => {
  for (const c of mustEmpty)
    it(`empties the body: ${c.name}`, async () => {
      const { mutants, sites } = await mutantsOf(c.path, c.lang, c.parent, c.fix);
      const m = byKind(mutants).get('empty_body')!;
      expect(
        m.patch,
        `${show(m)} | sites ${sites.map((s) => s.pattern.text)} | ${c.why}`,
      ).not.toBeNull();
    });
  for (const c of mustKeep)
    it(`not applicable (good value): ${c.name}`, async () => {
      const { mutants, sites } = await mutantsOf(c.path, c.lang, c.parent, c.fix);
      const m = byKind(mutants).get('empty_body')!;
      expect(
        m.not_applicable ?? '(applicable)',
        `sites ${sites.map((s) => s.pattern.text)} | ${c.why}`,
      ).toMatch(/good value/);
    });
});

// ---------------------------------------------------------------------------------------------
// Rule 2: noop / dead_code need a place inside a function body of the parent
// ---------------------------------------------------------------------------------------------

/**
 * `noop` and `dead_code` must be either not applicable (with the OUTSIDE reason or another) or
 * applicable AND compile (C, Go) / parse with the statement in the guard's function (Python).
 */
const placeNA: (Case & { why: string; kinds?: ('noop' | 'dead_code')[] })[] = [
  {
    name: 'Go closure with its own parameter added inside an existing function',
    why: 'the guard names the closure parameter `n`, which does not exist in Run at the parent: `if n == nil {}` does not compile',
    path: 'p/cl2.go',
    lang: 'go',
    parent:
      'package p\n\ntype N struct{ V string }\n\nfunc Run(ns []*N) int {\n\ttotal := 0\n\treturn total\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nfunc Run(ns []*N) int {\n\ttotal := 0\n\tget := func(n *N) int {\n\t\tif n == nil {\n\t\t\treturn 0\n\t\t}\n\t\treturn len(n.V)\n\t}\n\tfor _, x := range ns {\n\t\ttotal += get(x)\n\t}\n\treturn total\n}\n',
  },
  {
    name: 'C signature gains a parameter the guard uses (K&R brace on the next line stays context)',
    why: 'the place is in the body, but `limit` is not declared at the parent: does not compile',
    path: 'src/sig.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\nstruct s { int len; };\nint f(struct s *p)\n{\n    return p->len;\n}\n',
    fix: '#include <stddef.h>\nstruct s { int len; };\nint f(struct s *p, int limit)\n{\n    if (p == NULL || p->len > limit)\n        return -1;\n    return p->len;\n}\n',
  },
  {
    name: 'Go signature gains a parameter the guard uses (an unchanged line between head and guard)',
    why: '`limit` is undefined at the parent',
    path: 'p/sig.go',
    lang: 'go',
    parent:
      'package p\n\ntype N struct{ V string }\n\nfunc F(g *N) int {\n\tx := 1\n\treturn x + len(g.V)\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nfunc F(g *N, limit int) int {\n\tx := 1\n\tif g == nil || len(g.V) > limit {\n\t\treturn -1\n\t}\n\treturn x + len(g.V)\n}\n',
  },
  {
    name: 'C new function whose tail equals the previous function tail (could slide into a())',
    why: 'passes: git (default indent heuristic) keeps the added run after a(), so the place is outside',
    path: 'src/slide.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\nstruct s { int n; };\nstruct t { int n; };\nint a(struct s *p)\n{\n    p->n = 0;\n    return 0;\n}\n',
    fix: '#include <stddef.h>\nstruct s { int n; };\nstruct t { int n; };\nint a(struct s *p)\n{\n    p->n = 0;\n    return 0;\n}\n\nint b(struct t *q)\n{\n    if (q == NULL)\n        return -1;\n    q->n = 1;\n    return 0;\n}\n',
  },
  {
    name: 'C guard after a changed continuation line of a multi-line call',
    why: 'the change run starts at `p->id);` in the middle of a statement: the inserted `if` splits the call',
    path: 'src/mid.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\nstruct s { int id; int len; };\nint send(struct s *p, int id);\nint f(struct s *p)\n{\n    int rv = send(p,\n            p->id);\n    return rv + p->len;\n}\n',
    fix: '#include <stddef.h>\nstruct s { int id; int len; };\nint send(struct s *p, int id);\nint f(struct s *p)\n{\n    int rv = send(p,\n            0);\n    if (p == NULL)\n        return -1;\n    return rv + p->len;\n}\n',
  },
  {
    name: 'Python nested def added by the fix inside an existing function',
    why: 'the guard names the nested def parameter `x` (NameError in outer()), and is inserted with the nested indentation: IndentationError',
    path: 'pkg/nd.py',
    lang: 'python',
    kinds: ['noop'],
    parent: 'def outer(xs):\n    total = 0\n    return total\n',
    fix: 'def outer(xs):\n    total = 0\n\n    def get(x):\n        if x is None:\n            return 0\n        return x.size\n\n    for x2 in xs:\n        total += get(x2)\n    return total\n',
  },
];

/** The place IS in the guard's function at the parent: `noop` and `dead_code` must apply. */
const placeOK: (Case & { why: string; inFn: string })[] = [
  {
    name: 'Python guard added at the end of a function, another def follows',
    why: 'the parent line is the blank line / next `def`; the inserted statement, indented like the guard, continues f()',
    inFn: 'f',
    path: 'pkg/end.py',
    lang: 'python',
    parent: 'def f(p):\n    g(p)\n\n\ndef h():\n    pass\n',
    fix: 'def f(p):\n    g(p)\n    if p is not None:\n        p.n = 0\n\n\ndef h():\n    pass\n',
  },
  {
    name: 'Python guard added at the end of the last function of the file',
    why: 'the parent line is past the end of the file; the indented statement continues f()',
    inFn: 'f',
    path: 'pkg/eof.py',
    lang: 'python',
    parent: 'def f(p):\n    g(p)\n',
    fix: 'def f(p):\n    g(p)\n    if p is not None:\n        p.n = 0\n',
  },
  {
    name: 'Python guard added at the end of a method, another method follows (class)',
    why: 'same as above, inside a class',
    inFn: 'close',
    path: 'pkg/endm.py',
    lang: 'python',
    parent:
      'class C:\n    def close(self, p):\n        self.n = 0\n\n    def open(self):\n        pass\n',
    fix: 'class C:\n    def close(self, p):\n        self.n = 0\n        if p is not None:\n            p.n = 0\n\n    def open(self):\n        pass\n',
  },
  {
    name: 'Python guard added before a leading comment of the body',
    why: 'the parent line is the comment, the first line of f()`s body',
    inFn: 'f',
    path: 'pkg/cm.py',
    lang: 'python',
    parent: 'def f(p):\n    # the size\n    return p.size\n',
    fix: 'def f(p):\n    if p is None:\n        return 0\n    # the size\n    return p.size\n',
  },
  {
    name: 'Python guard in a decorated method',
    why: 'plain body of an existing method',
    inFn: 'size',
    path: 'pkg/dec.py',
    lang: 'python',
    parent:
      'class C:\n    @property\n    def size(self):\n        n = 1\n        return self.p.size + n\n',
    fix: 'class C:\n    @property\n    def size(self):\n        n = 1\n        if self.p is None:\n            return 0\n        return self.p.size + n\n',
  },
  {
    name: 'C guard at the first line of a K&R-brace body',
    why: 'the parent line is the first body line',
    inFn: 'f',
    path: 'src/kr.c',
    lang: 'c',
    parent: 'struct s { int len; };\nint f(struct s *p)\n{\n    return p->len;\n}\n',
    fix: 'struct s { int len; };\nint f(struct s *p)\n{\n    if (!p)\n        return -1;\n    return p->len;\n}\n',
  },
  {
    name: 'C guard before the closing brace',
    why: 'the parent line is the `}`, inside the body',
    inFn: 'f',
    path: 'src/cb.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\nstruct s { int n; };\nvoid g(void);\nvoid f(struct s *p)\n{\n    g();\n}\n',
    fix: '#include <stddef.h>\nstruct s { int n; };\nvoid g(void);\nvoid f(struct s *p)\n{\n    g();\n    if (p != NULL) {\n        p->n = 0;\n    }\n}\n',
  },
  {
    name: 'C guard inside an ogs_list_for_each(...) { macro block',
    why: 'inside the function body (the macro block is in it)',
    inFn: 'f',
    path: 'src/lf.c',
    lang: 'c',
    parent:
      '#include <stddef.h>\n#define ogs_list_for_each(l, n) for ((n) = (l)->first; (n); (n) = (n)->next)\nstruct sess { int id; };\nstruct node { struct node *next; struct sess *sess; };\nstruct list { struct node *first; };\nvoid use(int id);\nvoid f(struct list *list)\n{\n    struct node *node = NULL;\n    ogs_list_for_each(list, node) {\n        use(node->sess->id);\n    }\n}\n',
    fix: '#include <stddef.h>\n#define ogs_list_for_each(l, n) for ((n) = (l)->first; (n); (n) = (n)->next)\nstruct sess { int id; };\nstruct node { struct node *next; struct sess *sess; };\nstruct list { struct node *first; };\nvoid use(int id);\nvoid f(struct list *list)\n{\n    struct node *node = NULL;\n    ogs_list_for_each(list, node) {\n        if (node->sess == NULL)\n            continue;\n        use(node->sess->id);\n    }\n}\n',
  },
  {
    name: 'Go guard in an existing func init()',
    why: 'plain body',
    inFn: 'init',
    path: 'p/init.go',
    lang: 'go',
    parent:
      'package p\n\ntype N struct{ V string }\n\nvar def *N\nvar name string\n\nfunc init() {\n\tname = def.V\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nvar def *N\nvar name string\n\nfunc init() {\n\tif def == nil {\n\t\treturn\n\t}\n\tname = def.V\n}\n',
  },
  {
    name: 'Go guard added inside an existing func literal of a function',
    why: 'inside the func literal body, which exists at the parent',
    inFn: 'h',
    path: 'p/lit.go',
    lang: 'go',
    parent:
      'package p\n\ntype N struct{ V string }\n\nfunc h(g *N) func() string {\n\treturn func() string {\n\t\tv := 1\n\t\treturn g.V + string(rune(v))\n\t}\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nfunc h(g *N) func() string {\n\treturn func() string {\n\t\tv := 1\n\t\tif g == nil {\n\t\t\treturn ""\n\t\t}\n\t\treturn g.V + string(rune(v))\n\t}\n}\n',
  },
  {
    name: 'Python guard added inside an existing nested def',
    why: 'inside inner(), which exists at the parent',
    inFn: 'inner',
    path: 'pkg/nn.py',
    lang: 'python',
    parent:
      'def outer(xs):\n    def inner(x):\n        n = 1\n        return x.size + n\n    return [inner(x) for x in xs]\n',
    fix: 'def outer(xs):\n    def inner(x):\n        n = 1\n        if x is None:\n            return 0\n        return x.size + n\n    return [inner(x) for x in xs]\n',
  },
];

/** Whole new functions: `noop` and `dead_code` must be not applicable (OUTSIDE). */
const newFn: Case[] = [
  {
    name: 'Go new func init() added',
    path: 'p/ni.go',
    lang: 'go',
    parent: 'package p\n\ntype N struct{ V string }\n\nvar def *N\nvar name string\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nvar def *N\nvar name string\n\nfunc init() {\n\tif def == nil {\n\t\treturn\n\t}\n\tname = def.V\n}\n',
  },
  {
    name: 'Python decorated method added to a class, between methods',
    path: 'pkg/nm.py',
    lang: 'python',
    parent: 'class C:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n',
    fix: 'class C:\n    def a(self):\n        return 1\n\n    @staticmethod\n    def size(p):\n        if p is None:\n            return 0\n        return p.size\n\n    def b(self):\n        return 2\n',
  },
  {
    name: 'Go function renamed and rewritten from its head',
    path: 'p/rn.go',
    lang: 'go',
    parent: 'package p\n\ntype N struct{ V string }\n\nfunc Old(g *N) string {\n\treturn g.V\n}\n',
    fix: 'package p\n\ntype N struct{ V string }\n\nfunc New(g *N) string {\n\tif g == nil {\n\t\treturn ""\n\t}\n\treturn g.V\n}\n',
  },
];

/** Python: the inserted statement must be parsed inside function `fn`. */
async function pyStatementIn(text: string, fn: string, marker: RegExp): Promise<boolean> {
  const lines = text.split('\n');
  const row = lines.findIndex((l) => marker.test(l));
  if (row < 0) return false;
  const tree = await parseSource('python', text);
  try {
    const n = tree.rootNode.descendantForPosition({ row, column: lines[row]!.search(/\S/) });
    for (let x: typeof n | null = n; x; x = x.parent)
      if (x.type === 'function_definition') return x.childForFieldName('name')?.text === fn;
    return false;
  } finally {
    tree.delete();
  }
}

describe('noop / dead_code place at the parent', () => {
  for (const c of placeNA)
    it(`not applicable or compiles: ${c.name}`, async () => {
      const { dir, mutants, patch } = await mutantsOf(c.path, c.lang, c.parent, c.fix);
      for (const kind of c.kinds ?? (['noop', 'dead_code'] as const)) {
        const m = byKind(mutants).get(kind)!;
        if (m.patch === null) continue; // not applicable: right
        const text = appliedText(dir, m, c.path);
        // Python: NameError at run time is what we can show; treat an applicable no-op as wrong
        const p = await problems(c.lang, text);
        expect(
          p,
          `${kind} applicable but broken (${c.why}):\n${text}\n--- gold diff\n${patch}`,
        ).toBe('');
      }
    });
  for (const c of placeOK)
    it(`applies in ${c.inFn}(): ${c.name}`, async () => {
      const { dir, mutants } = await mutantsOf(c.path, c.lang, c.parent, c.fix);
      for (const kind of ['noop', 'dead_code'] as const) {
        const m = byKind(mutants).get(kind)!;
        expect(m.patch, `${kind}: ${show(m)} | ${c.why}`).not.toBeNull();
        const text = appliedText(dir, m, c.path);
        expect(await problems(c.lang, text), `${kind}:\n${text}`).toBe('');
        if (c.lang === 'python')
          expect(
            await pyStatementIn(text, c.inFn, kind === 'noop' ? /^\s*if .*:\s*$/ : /if False:/),
            `${kind} not in ${c.inFn}():\n${text}`,
          ).toBe(true);
      }
    });
  for (const c of newFn)
    it(`not applicable (new function): ${c.name}`, async () => {
      const { mutants } = await mutantsOf(c.path, c.lang, c.parent, c.fix);
      for (const kind of ['noop', 'dead_code'] as const) {
        const m = byKind(mutants).get(kind)!;
        expect(m.not_applicable ?? '(applicable)', kind).toMatch(
          /outside any function body|not the one it is in/,
        );
      }
    });
});
