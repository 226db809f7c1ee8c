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
