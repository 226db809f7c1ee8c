/**
 * Strategy A, direct call (SWE-Bench 5G paper, "Test strategies": "we call it directly with
 * crash-triggering inputs and use Go's defer/recover mechanism to detect panics"). For a Go
 * function whose parameters can be built simply (no channel, function, inline interface or
 * struct types, no type parameters) writes a test that calls it inside a deferred `recover` and
 * fails on a panic. Inputs follow the guard the fix adds: a parameter the guard checks directly
 * (`req != nil`) is passed nil; every other parameter (and the receiver) is allocated by
 * reflection — pointers to structs and maps, {@link FILL_DEPTH} pointer hops deep, so the call reaches
 * the guarded code — and a field the guard checks (`req.Field != nil`) is set back to nil;
 * `context.Context` is `context.Background()`, a `*gin.Context` is gin's test context (a recorder).
 */
import { parseSource, type Node } from '../../../pipeline/providers/treesitter/parser.js';
import { listFunctions, type FixSite } from './patterns.js';

/**
 * Pointer hops the generated test allocates for non-guarded parameters (struct fields held by
 * value cost none; a recursive type is never entered twice on one path). Measured on real free5GC
 * fixes (docs/results/free5gc-issue16.md, "Strategy A on 30 real free5GC nil fixes"): at 4 levels counting every struct, a `RanUe.Log`
 * `*logrus.Entry` kept a nil `Logger` and the call panicked in logrus at both commits.
 */
export const FILL_DEPTH = 5;

/** A Strategy A test, or why none could be built. */
export type DirectCall =
  { ok: true; testName: string; content: string; function: string } | { ok: false; reason: string };

interface Param {
  name: string;
  type: Node;
  variadic: boolean;
}

function goImports(root: Node): Map<string, string> {
  const m = new Map<string, string>();
  const visit = (n: Node): void => {
    if (n.type === 'import_spec') {
      const path = JSON.parse(
        n.childForFieldName('path')?.text.replace(/^`|`$/g, '"') ?? '""',
      ) as string;
      const segs = path.split('/');
      const last =
        /^v\d+$/.test(segs[segs.length - 1] ?? '') && segs.length > 1
          ? segs[segs.length - 2]!
          : segs[segs.length - 1]!;
      const alias =
        n.childForFieldName('name')?.text ?? last.replace(/^go-/, '').replace(/[.-].*$/, '');
      m.set(alias, path);
      return;
    }
    for (const c of n.namedChildren)
      if (
        c &&
        (c.type === 'import_declaration' ||
          c.type === 'import_spec_list' ||
          c.type === 'import_spec')
      )
        visit(c);
  };
  for (const c of root.namedChildren) if (c?.type === 'import_declaration') visit(c);
  return m;
}

/** Qualified package names (`models` in `*models.X`) used by a type node. */
function packagesOf(t: Node): string[] {
  const out: string[] = [];
  const walk = (n: Node): void => {
    if (n.type === 'qualified_type') {
      const p = n.childForFieldName('package')?.text;
      if (p) out.push(p);
    }
    for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(t);
  return out;
}

const UNBUILDABLE: Record<string, string> = {
  channel_type: 'a channel',
  function_type: 'a function',
  interface_type: 'an inline interface',
  struct_type: 'an inline struct',
};

function findUnbuildable(t: Node): string | null {
  if (UNBUILDABLE[t.type]) return UNBUILDABLE[t.type]!;
  for (const c of t.namedChildren) {
    if (!c) continue;
    const r = findUnbuildable(c);
    if (r) return r;
  }
  return null;
}

/**
 * Builds the Strategy A test for the function of `sites[0]` in a Go file.
 * @param source fixed file text; `pkgName` its package clause; `sites` the Strategy B sites of
 *   this function (their null-check operands choose the inputs)
 * @returns the test, or `{ ok: false, reason }` naming the parameter that cannot be built
 */
export async function goDirectCall(
  source: string,
  pkgName: string,
  sites: FixSite[],
): Promise<DirectCall> {
  const site = sites[0];
  if (!site) return { ok: false, reason: 'no fix site to call' };
  const tree = await parseSource('go', source);
  try {
    const fn = listFunctions('go', tree.rootNode).find((f) => f.qualified === site.function);
    if (!fn) return { ok: false, reason: `function ${site.function} not found in ${site.file}` };
    if (fn.node.childForFieldName('type_parameters'))
      return { ok: false, reason: `${site.function} is generic (type parameters)` };
    const imports = goImports(tree.rootNode);
    const params: Param[] = [];
    const plist = fn.node.childForFieldName('parameters');
    for (const p of plist?.namedChildren ?? []) {
      if (!p || (p.type !== 'parameter_declaration' && p.type !== 'variadic_parameter_declaration'))
        continue;
      const type = p.childForFieldName('type');
      if (!type) return { ok: false, reason: `parameter without a type in ${site.function}` };
      const names = p
        .childrenForFieldName('name')
        .filter((n): n is Node => n !== null)
        .map((n) => n.text);
      if (names.length === 0) names.push('_');
      for (const name of names)
        params.push({ name, type, variadic: p.type === 'variadic_parameter_declaration' });
    }
    const operands = sites
      .filter((s) => s.pattern.kind === 'null_check')
      .map((s) => s.pattern.operand ?? '');
    /** Deep-allocated value of type `t` for parameter `name`, guarded fields set back to nil. */
    const filled = (v: string, t: string, name: string): string[] => [
      `\tvar ${v} ${t}`,
      `\tf2pFill(reflect.ValueOf(&${v}).Elem(), ${FILL_DEPTH}, map[reflect.Type]bool{})`,
      ...operands
        .filter((op) => op.startsWith(`${name}.`) && /^[\w.]+$/.test(op))
        .map((op) => `\t${v}${op.slice(name.length)} = nil`),
    ];
    const usedPkgs = new Set<string>();
    let needHttptest = false;
    const decls: string[] = [];
    const args: string[] = [];
    params.forEach((p, i) => {
      if (p.variadic) return;
      const bad = findUnbuildable(p.type);
      if (bad)
        throw Object.assign(
          new Error(
            `parameter ${p.name} of ${site.function} is ${bad} (${p.type.text}); cannot be built simply`,
          ),
          { directCall: true },
        );
      for (const pkg of packagesOf(p.type)) {
        if (!imports.has(pkg))
          throw Object.assign(
            new Error(
              `package ${pkg} of parameter ${p.name} is not imported by name in ${site.file}`,
            ),
            { directCall: true },
          );
        usedPkgs.add(pkg);
      }
      const v = `f2pArg${i}`;
      const t = p.type.text;
      if (t === 'context.Context' && imports.get('context') === 'context') {
        decls.push(`\t${v} := context.Background()`);
      } else if (
        !operands.includes(p.name) &&
        /^\*(\w+)\.Context$/.test(t) &&
        imports.get(t.slice(1, t.indexOf('.'))) === 'github.com/gin-gonic/gin'
      ) {
        // A handler's *gin.Context: gin's own test context, so c.JSON / c.Status have a writer.
        const gin = t.slice(1, t.indexOf('.'));
        needHttptest = true;
        decls.push(
          `\t${v}, _ := ${gin}.CreateTestContext(f2phttptest.NewRecorder())`,
          `\t${v}.Request = f2phttptest.NewRequest("POST", "/", nil)`,
        );
      } else if (operands.includes(p.name)) {
        decls.push(`\tvar ${v} ${t}`);
      } else {
        decls.push(...filled(v, t, p.name));
      }
      args.push(v);
    });
    let call = `${site.name}(${args.join(', ')})`;
    if (site.receiver) {
      const recv = fn.node
        .childForFieldName('receiver')
        ?.namedChildren[0]?.childForFieldName('type');
      if (recv?.type === 'generic_type' || recv?.namedChildren[0]?.type === 'generic_type')
        return { ok: false, reason: `receiver of ${site.function} is generic` };
      const recvName =
        fn.node.childForFieldName('receiver')?.namedChildren[0]?.childForFieldName('name')?.text ??
        '_';
      const recvType = recv?.text ?? site.receiver;
      decls.push(
        ...(operands.includes(recvName)
          ? [`\tvar f2pRecv ${recvType}`]
          : filled('f2pRecv', recvType, recvName)),
      );
      call = `f2pRecv.${call}`;
    }
    const importLines = [...usedPkgs].map((p) => `\t${p} ${JSON.stringify(imports.get(p))}`);
    if (needHttptest) importLines.push('\tf2phttptest "net/http/httptest"');
    const testName = `TestF2PCall_${(site.receiver ? `${site.receiver}_${site.name}` : site.name).replace(/\W/g, '_')}`;
    const content = `// Code generated by telebench swe5g.testgen (Strategy A, direct call). DO NOT EDIT.

package ${pkgName}

import (
${[...importLines, '\tf2pfmt "fmt"', '\tf2pfilepath "path/filepath"', '\t"reflect"', '\tf2pruntime "runtime"', '\tf2pstrings "strings"', '\t"testing"'].join('\n')}
)

// f2pFill allocates the pointers to structs and the maps reachable from v, up to depth pointer
// hops (struct fields held by value cost none), never a struct type already being filled on the
// path (recursive types stay nil).
func f2pFill(v reflect.Value, depth int, path map[reflect.Type]bool) {
	if !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.Ptr:
		et := v.Type().Elem()
		if et.Kind() != reflect.Struct || path[et] {
			return
		}
		if v.IsNil() {
			if depth <= 0 {
				return
			}
			v.Set(reflect.New(et))
		}
		path[et] = true
		f2pFill(v.Elem(), depth-1, path)
		delete(path, et)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f2pFill(v.Field(i), depth, path)
		}
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	}
}

// f2pPanicSite names the function and line where the recovered panic happened.
func f2pPanicSite() string {
	pcs := make([]uintptr, 64)
	frames := f2pruntime.CallersFrames(pcs[:f2pruntime.Callers(2, pcs)])
	inPanic := false
	for {
		f, more := frames.Next()
		if inPanic && !f2pstrings.HasPrefix(f.Function, "runtime.") {
			return f2pfmt.Sprintf("%s (%s:%d)", f.Function, f2pfilepath.Base(f.File), f.Line)
		}
		if f.Function == "runtime.gopanic" {
			inPanic = true
		}
		if !more {
			return "unknown"
		}
	}
}

// ${testName} calls ${site.function} with nil/zero inputs and fails on a panic.
func ${testName}(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked on nil/zero input: %v at %s", ${JSON.stringify(site.function)}, r, f2pPanicSite())
		}
	}()
${decls.join('\n')}
	${call}
}
`;
    return { ok: true, testName, content, function: site.function };
  } catch (err) {
    if ((err as { directCall?: boolean }).directCall)
      return { ok: false, reason: (err as Error).message };
    throw err;
  } finally {
    tree.delete();
  }
}

/**
 * Python Strategy A ("a call with `None` that must not raise", issue 5): a pytest test that
 * imports the module and calls the fixed function with `None` for every required parameter — a
 * module-level function, a `@staticmethod`/`@classmethod`, or an instance method on an object
 * made without `__init__` (`object.__new__(Cls)`) — and fails when the call raises.
 * @param testPath repository-relative path of the generated test module
 * @returns the test, or `{ ok: false, reason }` (async, nested, otherwise decorated functions,
 *   files outside a package path)
 */
export async function pythonDirectCall(
  source: string,
  testPath: string,
  sites: FixSite[],
): Promise<DirectCall> {
  const site = sites[0];
  if (!site) return { ok: false, reason: 'no fix site to call' };
  if (!/^[A-Za-z_][\w/]*\.py$/.test(site.file) || site.file.endsWith('__init__.py'))
    return { ok: false, reason: `${site.file} is not importable as a module path` };
  const parts = site.function.split('.');
  if (parts.length > 2) return { ok: false, reason: `${site.function} is nested` };
  const tree = await parseSource('python', source);
  try {
    const fn = listFunctions('python', tree.rootNode).find((f) => f.qualified === site.function);
    if (!fn) return { ok: false, reason: `function ${site.function} not found in ${site.file}` };
    if (fn.node.children.some((c) => c?.type === 'async'))
      return { ok: false, reason: `${site.function} is a coroutine (async def)` };
    const decorators =
      fn.node.parent?.type === 'decorated_definition'
        ? fn.node.parent.namedChildren
            .filter((c): c is Node => c?.type === 'decorator')
            .map((d) => d.text.replace(/^@/, '').trim())
        : [];
    const kind = decorators.includes('staticmethod')
      ? 'static'
      : decorators.includes('classmethod')
        ? 'class'
        : parts.length === 2
          ? 'instance'
          : 'function';
    const other = decorators.filter((d) => d !== 'staticmethod' && d !== 'classmethod');
    if (other.length > 0)
      return { ok: false, reason: `${site.function} is decorated (@${other.join(', @')})` };
    const positional: string[] = [];
    const keyword: string[] = [];
    let afterStar = false;
    for (const p of fn.node.childForFieldName('parameters')?.namedChildren ?? []) {
      if (!p) continue;
      if (p.type === 'list_splat_pattern' || p.type === 'keyword_separator') afterStar = true;
      const name =
        p.type === 'identifier'
          ? p.text
          : p.type === 'typed_parameter'
            ? (p.namedChildren[0]?.text ?? '')
            : null;
      if (name === null) continue; // defaulted, *args, **kwargs, positional-only marker
      (afterStar ? keyword : positional).push(name);
    }
    if (kind === 'instance' || kind === 'class') positional.shift();
    const args = [...positional.map(() => 'None'), ...keyword.map((k) => `${k}=None`)].join(', ');
    const mod = site.file.replace(/\.py$/, '').replace(/\//g, '.');
    const depth = testPath.split('/').length - 1;
    const testName = `test_f2p_call_${site.function.replace(/\W/g, '_')}`;
    const target =
      kind === 'function'
        ? `mod.${parts[0]}`
        : kind === 'instance'
          ? `object.__new__(mod.${parts[0]}).${parts[1]}`
          : `mod.${parts[0]}.${parts[1]}`;
    const content = `# Code generated by telebench swe5g.testgen (Strategy A, direct call). DO NOT EDIT.
import importlib
import pathlib
import sys

_ROOT = pathlib.Path(__file__).resolve().parents[${depth}]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


def ${testName}():
    """Calls ${site.function} with None inputs; it must not raise."""
    mod = importlib.import_module(${JSON.stringify(mod)})
    try:
        ${target}(${args})
    except Exception as exc:  # noqa: BLE001 - any exception is the bug
        raise AssertionError("${site.function} raised %s on None input" % type(exc).__name__) from None
`;
    return { ok: true, testName, content, function: site.function };
  } finally {
    tree.delete();
  }
}
