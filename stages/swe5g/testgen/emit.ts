/**
 * Writes Strategy B tests (SWE-Bench 5G paper, "Test strategies") in the repository's own language
 * and runner, from the {@link FixSite}s of `patterns.ts`:
 * - Go: `<pkg dir>/f2p_intent_test.go` in the package, using `go/parser` + `go/ast` (comments are
 *   dropped by the parser, string literals are single tokens) — test ids `<import path>::TestF2P_<fn>`;
 * - Python: `<tests dir>/test_f2p_intent.py` using `ast` + `tokenize` — ids `<file>::test_f2p_<fn>`;
 * - C: `f2p/f2p_check.py` (a C lexer that drops comments, keeps string/char literals whole, finds
 *   the function by brace matching) plus one JSON spec per function, registered in the root
 *   `meson.build` as `test('f2p_<fn>', ..., suite: 'f2p')` (or a `Makefile` target `f2p_<fn>`) —
 *   ids `f2p::f2p_<fn>` (meson) or `make::f2p_<fn>`.
 * One assertion per site; a failure names the function and file, never the pattern.
 */
import { posix } from 'node:path';
import { SkipItem } from '../../../pipeline/errors.js';
import type { FixSite } from './patterns.js';
import { C_GUARD } from './checker-c.js';
import { GO_GUARD } from './checker-go.js';
import { PY_GUARD } from './checker-py.js';
import { C_TEXT, GO_TEXT, PY_TEXT } from './checker-text.js';

/** A generated file: repository-relative path and full new content. */
export interface GeneratedFile {
  path: string;
  content: string;
  /** Content at the commit the patch is made against (null: new file). */
  before: string | null;
}

/** Generated test files and the FAIL_TO_PASS ids they define. */
export interface GeneratedTests {
  files: GeneratedFile[];
  FAIL_TO_PASS: string[];
}

/** Reads a repository file at the commit the test is generated for; null when absent. */
export type ReadRepoFile = (path: string) => string | null;

const ident = (s: string): string => s.replace(/[^A-Za-z0-9_]/g, '_');
const goStr = (s: string): string => JSON.stringify(s);

/**
 * Go module path of the directory `dir` (walks up to the nearest go.mod).
 * @throws SkipItem `go_module_unknown` when no go.mod with a `module` line is found
 */
export function goImportPath(dir: string, read: ReadRepoFile): string {
  let d = dir;
  for (;;) {
    const mod = read(d === '.' || d === '' ? 'go.mod' : `${d}/go.mod`);
    if (mod !== null) {
      const m = /^module\s+("?)([^\s"]+)\1\s*$/m.exec(mod);
      if (!m) throw new SkipItem('go_module_unknown', `go.mod in ${d || '.'} has no module line`);
      const rel = posix.relative(d === '' ? '.' : d, dir);
      return rel === '' ? m[2]! : `${m[2]}/${rel}`;
    }
    if (d === '.' || d === '') throw new SkipItem('go_module_unknown', `no go.mod above ${dir}`);
    d = posix.dirname(d);
  }
}

/** Go package clause name of a source file, from the code (first `package` token outside comments). */
export function goPackageName(source: string): string | null {
  const noComments = source.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
  const m = /^\s*package\s+([A-Za-z_]\w*)/m.exec(noComments);
  return m ? m[1]! : null;
}

function byFunction(sites: FixSite[]): Map<string, FixSite[]> {
  const m = new Map<string, FixSite[]>();
  for (const s of sites) {
    const k = `${s.file}\u0000${s.function}`;
    m.set(k, [...(m.get(k) ?? []), s]);
  }
  return m;
}

const GO_HELPERS = `
// f2pIntentTokens joins the Go tokens of src without whitespace and comments.
func f2pIntentTokens(src []byte) string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), src, nil, 0)
	var b strings.Builder
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\\n" {
			continue
		}
		if lit != "" {
			b.WriteString(lit)
		} else {
			b.WriteString(tok.String())
		}
	}
	return b.String()
}

func f2pIntentUnparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

func f2pIntentRecv(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
`;

/** The comparison argument of a Go text count: `[]string{left, op, right}`, or `nil`. */
const goComparison = (s: FixSite): string => {
  const c = s.pattern.comparison;
  return c ? `[]string{${[c.left, c.op, c.right].map(goStr).join(', ')}}` : 'nil';
};

/** The comparison argument of a Python text count: `["left", "op", "right"]`, or `None`. */
const pyComparison = (s: FixSite): string => {
  const c = s.pattern.comparison;
  return c ? JSON.stringify([c.left, c.op, c.right]) : 'None';
};

/** Go assertion of a control site: >= 1 recorded use of the operand, every one guarded. */
function goControlLines(base: string, s: FixSite, i: number, n: number): string[] {
  const sigs = `[]string{${s.guard!.signatures.map(goStr).join(', ')}}`;
  const c = s.guard!.condition;
  if (c)
    return [
      `\tif ok, found := f2pCondCheck(${goStr(base)}, ${goStr(s.receiver ?? '')}, ${goStr(s.name)}, ${goStr(s.guard!.operand)}, ${goStr(c.op)}, ${goStr(c.value)}, ${sigs}); !found {`,
      `\t\tt.Errorf("function %s not found in %s", ${goStr(s.function)}, ${goStr(s.file)})`,
      `\t} else if !ok {`,
      `\t\tt.Errorf("%s in %s does not contain the expected fix (site %d of %d: the statements its condition governs)", ${goStr(s.function)}, ${goStr(s.file)}, ${i + 1}, ${n})`,
      `\t}`,
    ];
  return [
    `\tif uses, bad, found := f2pGuardCheck(${goStr(base)}, ${goStr(s.receiver ?? '')}, ${goStr(s.name)}, ${goStr(s.guard!.operand)}, ${sigs}); !found {`,
    `\t\tt.Errorf("function %s not found in %s", ${goStr(s.function)}, ${goStr(s.file)})`,
    `\t} else if uses == 0 || bad > 0 {`,
    `\t\tt.Errorf("%s in %s does not contain the expected fix (site %d of %d: %d of %d uses unguarded)", ${goStr(s.function)}, ${goStr(s.file)}, ${i + 1}, ${n}, bad, uses)`,
    `\t}`,
  ];
}

/** Python assertion of a control site (see {@link goControlLines}). */
function pyControlLines(s: FixSite, i: number, n: number): string[] {
  const j = JSON.stringify;
  const c = s.guard!.condition;
  if (c)
    return [
      `    r = _f2p_cond(${j(s.file)}, ${j(s.function)}, ${j(s.guard!.operand)}, ${j(c.op)}, ${j(c.value)}, ${j(s.guard!.signatures)})`,
      `    assert r is not None, "function ${s.function} not found in ${s.file}"`,
      `    assert r, "${s.function} in ${s.file} does not contain the expected fix (site ${i + 1} of ${n}: the statements its condition governs)"`,
    ];
  return [
    `    r = _f2p_guard(${j(s.file)}, ${j(s.function)}, ${j(s.guard!.operand)}, ${j(s.guard!.signatures)})`,
    `    assert r is not None, "function ${s.function} not found in ${s.file}"`,
    `    assert r[0] > 0 and r[1] == 0, "${s.function} in ${s.file} does not contain the expected fix (site ${i + 1} of ${n})"`,
  ];
}

/**
 * Go Strategy B test file for the sites of one package directory.
 * @param pkgDir repository-relative package directory ('.' for the root)
 * @param pkgName package clause name of the fixed files
 */
export function goIntentTest(
  pkgDir: string,
  pkgName: string,
  sites: FixSite[],
): { content: string; tests: string[] } {
  const tests: string[] = [];
  const funcs: string[] = [];
  for (const group of byFunction(sites).values()) {
    const s0 = group[0]!;
    const base = posix.relative(pkgDir, s0.file);
    let testName = `TestF2P_${ident(s0.receiver ? `${s0.receiver}_${s0.name}` : s0.name)}`;
    while (tests.includes(testName)) testName += '_';
    tests.push(testName);
    const lines = group.map((s, i) =>
      (s.guard
        ? goControlLines(base, s, i, group.length)
        : [
            `\tif n, found := f2pIntentCount(${goStr(base)}, ${goStr(s.receiver ?? '')}, ${goStr(s.name)}, ${goStr(s.pattern.kind)}, ${goStr(s.pattern.key)}, ${goComparison(s)}); !found {`,
            `\t\tt.Errorf("function %s not found in %s", ${goStr(s.function)}, ${goStr(s.file)})`,
            `\t} else if n <= ${s.parentCount} {`,
            `\t\tt.Errorf("%s in %s does not contain the expected fix (site %d of %d)", ${goStr(s.function)}, ${goStr(s.file)}, ${i + 1}, ${group.length})`,
            `\t}`,
          ]
      ).join('\n'),
    );
    funcs.push(
      `// ${testName} checks the fix of ${s0.function} (${s0.file}).\nfunc ${testName}(t *testing.T) {\n${lines.join('\n')}\n}\n`,
    );
  }
  const content = `// Code generated by telebench swe5g.testgen (Strategy B, diff-based intent). DO NOT EDIT.

package ${pkgName}

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)
${GO_HELPERS}${GO_GUARD}${GO_TEXT}
${funcs.join('\n')}`;
  return { content, tests };
}

const PY_HELPERS = `import ast
import io
import pathlib
import re
import tokenize

_ROOT = pathlib.Path(__file__).resolve().parents[__DEPTH__]
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def _f2p_tokens(segment):
    try:
        return "".join(t.string for t in tokenize.generate_tokens(io.StringIO(segment).readline) if t.type not in _SKIP)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return "".join(segment.split())


def _f2p_find(body, parts):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == parts[0]:
            if len(parts) == 1:
                return node if not isinstance(node, ast.ClassDef) else None
            return _f2p_find(node.body, parts[1:])
    return None


def _f2p_function(file, qualified):
    """(source, def node) of the function in file; None when unreadable, unparsable or missing."""
    try:
        src = (_ROOT / file).read_text(encoding="utf-8")
        tree = ast.parse(src)
    except (OSError, SyntaxError, ValueError):
        return None
    fn = _f2p_find(tree.body, qualified.split("."))
    return None if fn is None else (src, fn)


${PY_TEXT}${PY_GUARD}`;

/**
 * Python Strategy B pytest module for all sites.
 * @param testPath repository-relative path of the generated test module
 */
export function pythonIntentTest(
  testPath: string,
  sites: FixSite[],
): { content: string; tests: string[] } {
  const depth = testPath.split('/').length - 1;
  const tests: string[] = [];
  const funcs: string[] = [];
  for (const group of byFunction(sites).values()) {
    const s0 = group[0]!;
    let name = `test_f2p_${ident(s0.function)}`;
    while (tests.includes(name)) name += '_';
    tests.push(name);
    const body = group
      .map((s, i) =>
        (s.guard
          ? pyControlLines(s, i, group.length)
          : [
              `    n = _f2p_count(${JSON.stringify(s.file)}, ${JSON.stringify(s.function)}, ${JSON.stringify(s.pattern.kind)}, ${JSON.stringify(s.pattern.key)}, ${pyComparison(s)})`,
              `    assert n is not None, "function ${s.function} not found in ${s.file}"`,
              `    assert n > ${s.parentCount}, "${s.function} in ${s.file} does not contain the expected fix (site ${i + 1} of ${group.length})"`,
            ]
        ).join('\n'),
      )
      .join('\n');
    funcs.push(
      `def ${name}():\n    """Checks the fix of ${s0.function} (${s0.file})."""\n${body}\n`,
    );
  }
  const content = `# Code generated by telebench swe5g.testgen (Strategy B, diff-based intent). DO NOT EDIT.\n${PY_HELPERS.replace('__DEPTH__', String(depth))}\n\n${funcs.join('\n\n')}`;
  return { content, tests };
}

/** The C checker: a lexer (comments dropped, literals whole) and brace-matched function bodies. */
export const C_CHECKER = `#!/usr/bin/env python3
# Code generated by telebench swe5g.testgen (Strategy B, diff-based intent). DO NOT EDIT.
# Usage: f2p_check.py SPEC.json  (paths in the spec are relative to the source root)
# Exit 0 when every site's pattern occurs in the function more often than at the parent commit.
import json
import pathlib
import re
import sys

_TOKEN = re.compile(
    r"""(?P<ws>\\s+)|(?P<lc>//[^\\n]*)|(?P<bc>/\\*.*?\\*/)
    |(?P<str>(?:u8|[uUL])?"(?:\\\\.|[^"\\\\\\n])*")|(?P<chr>(?:u8|[uUL])?'(?:\\\\.|[^'\\\\\\n])*')
    |(?P<id>[A-Za-z_]\\w*)|(?P<num>\\.?\\d(?:[eEpP][+-]|[\\w.])*)
    |(?P<op>->|\\+\\+|--|<<=|>>=|<=|>=|==|!=|&&|\\|\\||[-+*/%&^|]=|<<|>>|\\.\\.\\.|\\#\\#|\\S)""",
    re.S | re.X,
)


def live(src):
    """Drops preprocessor directive lines and the lines of #if 0 / #elif 0 branches (dead code)."""
    lines, stack = [], []
    for line in src.split("\\n"):
        m = re.match(r"\\s*#\\s*(\\w+)\\s*(.*)", line)
        if m:
            d, rest = m.group(1), re.sub(r"/\\*.*?\\*/|//.*", "", m.group(2)).strip()
            if d in ("if", "ifdef", "ifndef"):
                stack.append(d == "if" and re.match(r"^\\(?\\s*0\\s*\\)?$", rest) is not None)
            elif d == "elif" and stack:
                stack[-1] = re.match(r"^\\(?\\s*0\\s*\\)?$", rest) is not None
            elif d == "else" and stack:
                stack[-1] = False
            elif d == "endif" and stack:
                stack.pop()
            lines.append("")
            continue
        lines.append("" if any(stack) else line)
    return "\\n".join(lines)


def tokens(src):
    src = live(src.replace("\\\\\\n", ""))
    out = []
    for m in _TOKEN.finditer(src):
        if m.lastgroup in ("ws", "lc", "bc"):
            continue
        out.append(m.group())
    return out


def functions(toks):
    """Yields (name, body tokens) for each top-level function definition."""
    depth, i = 0, 0
    while i < len(toks):
        t = toks[i]
        if t == "{" and depth == 0:
            j, name = i - 1, None
            if j >= 0 and toks[j] == ")":
                level = 0
                while j >= 0:
                    if toks[j] == ")":
                        level += 1
                    elif toks[j] == "(":
                        level -= 1
                        if level == 0:
                            break
                    j -= 1
                if j > 0 and re.match(r"^[A-Za-z_]\\w*$", toks[j - 1]):
                    name = toks[j - 1]
            k, level = i, 0
            while k < len(toks):
                if toks[k] == "{":
                    level += 1
                elif toks[k] == "}":
                    level -= 1
                    if level == 0:
                        break
                k += 1
            if name is not None:
                yield name, toks[i : k + 1]
            i = k + 1
            continue
        i += 1


${C_GUARD}
${C_TEXT}

def main():
    spec_path = pathlib.Path(sys.argv[1])
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    root = pathlib.Path(spec.get("root", "."))
    if not root.is_absolute():
        root = (spec_path.parent / root).resolve()
    ok = True
    for fn_spec in spec["functions"]:
        path = root / fn_spec["file"]
        try:
            src = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            print("file %s not found" % fn_spec["file"])
            ok = False
            continue
        bodies = [b for n, b in functions(tokens(src)) if n == fn_spec["function"]]
        if not bodies:
            print("function %s not found in %s" % (fn_spec["function"], fn_spec["file"]))
            ok = False
            continue
        sites = fn_spec["sites"]
        for i, site in enumerate(sites):
            if "condition" in site:
                passed = condition_check(bodies, site)
            elif "operand" in site:
                checks = [Guard(b, site["operand"], site["signatures"]).check() for b in bodies]
                uses, bad = sum(c[0] for c in checks), sum(c[1] for c in checks)
                passed = uses > 0 and bad == 0
            else:
                passed = sum(text_count(b, site) for b in bodies) > site["parent"]
            if not passed:
                print("%s in %s does not contain the expected fix (site %d of %d)" % (fn_spec["function"], fn_spec["file"], i + 1, len(sites)))
                ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
`;

/**
 * C Strategy B tests: the checker, one spec per function and the registration lines.
 * @param meson root `meson.build` text at the base commit (null when absent)
 * @param makefile root `Makefile` text (used when there is no meson.build)
 * @throws SkipItem `no_c_test_suite` when the repository has neither at its root
 */
export function cIntentTests(
  sites: FixSite[],
  meson: string | null,
  makefile: string | null,
): GeneratedTests {
  if (meson === null && makefile === null) {
    throw new SkipItem(
      'no_c_test_suite',
      'C repository without a root meson.build or Makefile to register the f2p test in',
    );
  }
  const files: GeneratedFile[] = [{ path: 'f2p/f2p_check.py', content: C_CHECKER, before: null }];
  const ids: string[] = [];
  const reg: string[] = [];
  for (const group of byFunction(sites).values()) {
    const s0 = group[0]!;
    let name = `f2p_${ident(s0.function)}`;
    while (ids.some((i) => i.endsWith(`::${name}`))) name += '_';
    const spec = {
      root: '..',
      functions: [
        {
          file: s0.file,
          function: s0.name,
          sites: group.map((s) =>
            s.guard
              ? {
                  operand: s.guard.operand,
                  signatures: s.guard.signatures,
                  ...(s.guard.condition ? { condition: s.guard.condition } : {}),
                }
              : {
                  variants: s.pattern.variants ?? [],
                  parent: s.parentCount,
                  ...(s.pattern.alias ? { alias: s.pattern.alias } : {}),
                },
          ),
        },
      ],
    };
    files.push({
      path: `f2p/${name}.json`,
      content: JSON.stringify(spec, null, 1) + '\n',
      before: null,
    });
    if (meson !== null) {
      reg.push(
        `test('${name}', f2p_python, args: [files('f2p/f2p_check.py'), files('f2p/${name}.json')], suite: 'f2p')`,
      );
      ids.push(`f2p::${name}`);
    } else {
      reg.push(`.PHONY: ${name}\n${name}:\n\tpython3 f2p/f2p_check.py f2p/${name}.json\n`);
      ids.push(`make::${name}`);
    }
  }
  if (meson !== null) {
    const add = `\n# telebench swe5g.testgen: fail-to-pass checks (Strategy B)\nf2p_python = find_program('python3')\n${reg.join('\n')}\n`;
    files.push({ path: 'meson.build', before: meson, content: meson.replace(/\n*$/, '\n') + add });
  } else {
    const add = `\n# telebench swe5g.testgen: fail-to-pass checks (Strategy B)\n${reg.join('\n')}`;
    files.push({
      path: 'Makefile',
      before: makefile,
      content: makefile!.replace(/\n*$/, '\n') + add,
    });
  }
  return { files, FAIL_TO_PASS: ids };
}

/**
 * Where a generated pytest module goes: an existing `tests/` or `test/` folder of `under`, else
 * `under` itself.
 * @param under the registry entry's folder (`path`: a monorepo folder such as Magma's
 *   `lte/gateway/python/magma/mobilityd`, where validation's steps run pytest), '' for the root
 * @returns a repository-relative folder, `.` for the root
 */
export function pythonTestDir(exists: (path: string) => boolean, under = ''): string {
  const at = (d: string): string => (under ? `${under}/${d}` : d);
  for (const d of ['tests', 'test'])
    if (exists(`${at(d)}/__init__.py`) || exists(`${at(d)}/conftest.py`)) return at(d);
  return under || '.';
}

/**
 * Strategy B tests for all sites of an instance, grouped per language.
 * @param language the repository language (registry)
 * @throws SkipItem `go_module_unknown`, `go_package_unknown`, `no_c_test_suite`
 */
export function intentTests(
  language: 'go' | 'c' | 'python',
  sites: FixSite[],
  readFix: ReadRepoFile,
  readBase: ReadRepoFile,
  /** Python: the registry entry's folder the test goes under ({@link pythonTestDir}). */
  pythonUnder = '',
): GeneratedTests {
  if (language === 'go') {
    const files: GeneratedFile[] = [];
    const ids: string[] = [];
    const byPkg = new Map<string, FixSite[]>();
    for (const s of sites)
      byPkg.set(posix.dirname(s.file), [...(byPkg.get(posix.dirname(s.file)) ?? []), s]);
    for (const [dir, group] of byPkg) {
      const src = readFix(group[0]!.file) ?? '';
      const pkg = goPackageName(src);
      if (!pkg) throw new SkipItem('go_package_unknown', `no package clause in ${group[0]!.file}`);
      const imp = goImportPath(dir, readFix);
      const { content, tests } = goIntentTest(dir, pkg, group);
      const path = dir === '.' ? 'f2p_intent_test.go' : `${dir}/f2p_intent_test.go`;
      files.push({ path, content, before: readBase(path) });
      ids.push(...tests.map((t) => `${imp}::${t}`));
    }
    return { files, FAIL_TO_PASS: ids };
  }
  if (language === 'python') {
    const dir = pythonTestDir((p) => readBase(p) !== null, pythonUnder);
    const path = dir === '.' ? 'test_f2p_intent.py' : `${dir}/test_f2p_intent.py`;
    const { content, tests } = pythonIntentTest(path, sites);
    return {
      files: [{ path, content, before: readBase(path) }],
      FAIL_TO_PASS: tests.map((t) => `${path}::${t}`),
    };
  }
  return cIntentTests(sites, readBase('meson.build'), readBase('Makefile'));
}
