/**
 * Python Strategy A, behavioural direct call (issue 30): a pytest test that imports the fixed
 * module, calls the fixed function with the crash-triggering input of its fix
 * ({@link crashInputs}: a None argument or attribute, a missing dict key, an empty list) and the
 * other inputs as stand-ins (`unittest.mock.MagicMock()`; `self` is an instance made without
 * `__init__` whose unset attributes read as MagicMocks), and fails only on the crash the fix
 * prevents: an AttributeError/TypeError naming `NoneType`, a KeyError of a guarded key, an
 * IndexError, an AttributeError of a guarded attribute; and on a NameError (UnboundLocalError),
 * code that cannot run whatever the input (a guard naming a local the parent lacks). Any other
 * outcome passes (a ValueError the
 * fix raises on purpose is the fix's answer, not a crash). A no-op guard leaves the crash, so the
 * test fails for it; a fix written differently that avoids the crash passes.
 *
 * Kept by testgen only when it fails at base_commit and passes at merge_commit (generate.ts).
 */
import { parseSource, type Node } from '../../../pipeline/providers/treesitter/parser.js';
import { listFunctions } from './patterns.js';
import type { FixSite } from './patterns.js';
import { crashInputs, formText, type CrashForm } from './py-crash-inputs.js';
import { PY_CALL_HELPERS } from './py-call-helpers.js';

/** A Python Strategy A test, or why none could be built. */
export type PyDirectCall =
  | { ok: true; testName: string; content: string; function: string; inputs: string }
  | { ok: false; reason: string };

/** Where the fixed module imports from: the package root folders and the dotted module name. */
export interface PyModule {
  module: string;
  /** Repository-relative folders put first on `sys.path` (the module's root first). */
  roots: string[];
}

/**
 * The import name of a repository Python file. The root is the first of `roots` (the registry's
 * `environment.python.roots`) holding the file, else the nearest folder with `setup.py`,
 * `setup.cfg` or `pyproject.toml`, else the topmost folder reached through `__init__.py` files.
 * @returns null when the file cannot be a module (`__init__.py`, a name that is no identifier)
 */
export function pythonModuleOf(
  file: string,
  exists: (path: string) => boolean,
  roots: readonly string[] = [],
): PyModule | null {
  if (!/\.py$/.test(file) || file.endsWith('__init__.py')) return null;
  const parts = file.replace(/\.py$/, '').split('/');
  const dirs = parts.slice(0, -1);
  let rootLen = -1;
  const inRoot = roots.find((r) => file.startsWith(`${r.replace(/\/$/, '')}/`));
  if (inRoot) rootLen = inRoot.replace(/\/$/, '').split('/').length;
  for (let i = dirs.length; rootLen < 0 && i >= 0; i--) {
    const d = dirs.slice(0, i).join('/');
    const at = (f: string): string => (d ? `${d}/${f}` : f);
    if (['setup.py', 'setup.cfg', 'pyproject.toml'].some((f) => exists(at(f)))) rootLen = i;
  }
  if (rootLen < 0) {
    rootLen = dirs.length;
    while (rootLen > 0 && exists(`${dirs.slice(0, rootLen).join('/')}/__init__.py`)) rootLen--;
  }
  const modParts = parts.slice(rootLen);
  if (!modParts.every((p) => /^[A-Za-z_]\w*$/.test(p))) return null;
  const root = dirs.slice(0, rootLen).join('/') || '.';
  return { module: modParts.join('.'), roots: [root, ...roots.filter((r) => r !== root)] };
}

/** A value to build in the test: None, [], {}, a stand-in object or a dict (see the helpers). */
type Spec =
  | { t: 'none' }
  | { t: 'list' }
  | { t: 'empty_dict' }
  | { t: 'obj'; attrs: Record<string, Spec>; absent: string[] }
  | { t: 'dict'; keys: Record<string, Spec>; absent: string[] };

const obj = (): Spec => ({ t: 'obj', attrs: {}, absent: [] });

/**
 * Puts `form` into the spec of its root (an ancestor already None or empty, or a missing key on
 * the way, wins: the form is then not applied).
 * @returns the root's spec and whether the form was applied
 */
function place(root: Spec, form: CrashForm): { spec: Spec; applied: boolean } {
  let applied = false;
  const leaf = (): Spec =>
    form.kind === 'none'
      ? { t: 'none' }
      : form.kind === 'empty'
        ? { t: form.container === 'list' ? 'list' : 'empty_dict' }
        : form.kind === 'missing_key'
          ? { t: 'dict', keys: {}, absent: [form.key] }
          : { t: 'obj', attrs: {}, absent: [form.attr] };
  const walk = (s: Spec, i: number): Spec => {
    if (s.t === 'none' || s.t === 'list' || s.t === 'empty_dict') return s;
    if (i === form.path.steps.length) {
      applied = true;
      if (form.kind === 'missing_key') {
        const d: Spec = s.t === 'dict' ? s : { t: 'dict', keys: {}, absent: [] };
        if (d.t === 'dict' && !d.absent.includes(form.key)) d.absent.push(form.key);
        if (d.t === 'dict') delete d.keys[form.key];
        return d;
      }
      if (form.kind === 'missing_attr' && s.t === 'obj') {
        if (!s.absent.includes(form.attr)) s.absent.push(form.attr);
        delete s.attrs[form.attr];
        return s;
      }
      return leaf();
    }
    const step = form.path.steps[i]!;
    if ('attr' in step) {
      const o = s.t === 'obj' ? s : obj();
      if (o.t !== 'obj' || o.absent.includes(step.attr)) return s;
      o.attrs[step.attr] = walk(o.attrs[step.attr] ?? obj(), i + 1);
      return o;
    }
    const d: Spec = s.t === 'dict' ? s : { t: 'dict', keys: {}, absent: [] };
    if (d.t !== 'dict' || d.absent.includes(step.key)) return s;
    d.keys[step.key] = walk(d.keys[step.key] ?? obj(), i + 1);
    return d;
  };
  const spec = walk(root, 0);
  return { spec, applied };
}

/** A spec as a Python literal (JSON without true/false/null is valid Python). */
const pyLiteral = (s: Spec): string => JSON.stringify(s);

/**
 * What the test counts as the crash: per form kind (see the helpers' `_f2p_crash`), over every
 * guard the fix adds, applied as an input or not (a key guarded below a missing one still counts).
 */
function expectation(forms: CrashForm[]): string {
  const keys = forms.flatMap((f) => (f.kind === 'missing_key' ? [f.key] : []));
  const attrs = forms.flatMap((f) => (f.kind === 'missing_attr' ? [f.attr] : []));
  return JSON.stringify({
    none: forms.some((f) => f.kind === 'none') ? 1 : 0,
    index: forms.some((f) => f.kind === 'empty' && f.container === 'list') ? 1 : 0,
    any_key: forms.some((f) => f.kind === 'empty' && f.container === 'dict') ? 1 : 0,
    keys,
    attrs,
  });
}

interface Params {
  kind: 'function' | 'instance' | 'static' | 'class';
  /** Receiver parameter name (`self`, `cls`), or null. */
  receiver: string | null;
  positional: string[];
  keyword: string[];
  /** Parameters with a default: passed by keyword only when a guard names them. */
  defaulted: string[];
  decorators: string[];
  async: boolean;
}

function paramsOf(fn: Node, nested: boolean): Params {
  const decorators =
    fn.parent?.type === 'decorated_definition'
      ? fn.parent.namedChildren
          .filter((c): c is Node => c?.type === 'decorator')
          .map((d) => d.text.replace(/^@/, '').trim())
      : [];
  const kind = decorators.includes('staticmethod')
    ? 'static'
    : decorators.includes('classmethod')
      ? 'class'
      : nested
        ? 'instance'
        : 'function';
  const positional: string[] = [];
  const keyword: string[] = [];
  const defaulted: string[] = [];
  let afterStar = false;
  for (const p of fn.childForFieldName('parameters')?.namedChildren ?? []) {
    if (!p) continue;
    if (p.type === 'list_splat_pattern' || p.type === 'keyword_separator') afterStar = true;
    if (p.type === 'default_parameter' || p.type === 'typed_default_parameter') {
      defaulted.push(p.childForFieldName('name')?.text ?? '');
      continue;
    }
    const name =
      p.type === 'identifier'
        ? p.text
        : p.type === 'typed_parameter'
          ? (p.namedChildren.find((c) => c?.type === 'identifier')?.text ?? '')
          : null;
    if (name) (afterStar ? keyword : positional).push(name);
  }
  const receiver = kind === 'instance' || kind === 'class' ? (positional.shift() ?? null) : null;
  const isAsync = fn.children.some((c) => c?.type === 'async');
  return { kind, receiver, positional, keyword, defaulted, decorators, async: isAsync };
}

/**
 * Builds the Python Strategy A test for the function of `sites[0]`.
 * @param fixSource / parentSource the file at merge_commit / base_commit (null: new file)
 * @param testPath repository-relative path of the generated test module
 * @param mod the module's import name and roots ({@link pythonModuleOf})
 * @returns the test, or `{ ok: false, reason }`: nested functions, a fix that adds no guard on
 *   an input (`no crash-triggering input: ...`), a guard only on `cls`
 */
export async function pythonDirectCall(
  fixSource: string,
  parentSource: string | null,
  testPath: string,
  sites: FixSite[],
  mod: PyModule,
): Promise<PyDirectCall> {
  const site = sites[0];
  if (!site) return { ok: false, reason: 'no fix site to call' };
  const parts = site.function.split('.');
  if (parts.length > 2) return { ok: false, reason: `${site.function} is nested` };
  const tree = await parseSource('python', fixSource);
  let p: Params;
  try {
    const fn = listFunctions('python', tree.rootNode).find((f) => f.qualified === site.function);
    if (!fn) return { ok: false, reason: `function ${site.function} not found in ${site.file}` };
    const top = fn.node.parent?.type === 'decorated_definition' ? fn.node.parent : fn.node;
    if (parts.length === 2 && top.parent?.parent?.type !== 'class_definition')
      return { ok: false, reason: `${site.function} is a function inside a function` };
    p = paramsOf(fn.node, parts.length === 2);
  } finally {
    tree.delete();
  }
  const inputs = [...p.positional, ...p.keyword, ...p.defaulted];
  if (p.kind === 'instance' && p.receiver) inputs.push(p.receiver);
  const found = await crashInputs(fixSource, parentSource, site.function, inputs);
  if (found.forms.length === 0)
    return {
      ok: false,
      reason: `no crash-triggering input: the fix adds no None/key/empty/attribute guard on an input of ${site.function}${found.skipped.length ? ` (${found.skipped.join('; ')})` : ''}`,
    };
  const specs = new Map<string, Spec>();
  const forms: CrashForm[] = [];
  // shortest paths first: a None or missing key on the way wins over the forms below it
  for (const f of [...found.forms].sort((a, b) => a.path.steps.length - b.path.steps.length)) {
    const { spec, applied } = place(specs.get(f.path.root) ?? obj(), f);
    specs.set(f.path.root, spec);
    if (applied) forms.push(f);
  }
  const arg = (n: string): string => {
    const s = specs.get(n);
    return s ? `_f2p_build(${pyLiteral(s)})` : 'mock.MagicMock()';
  };
  const args = [
    ...p.positional.map(arg),
    ...p.keyword.map((k) => `${k}=${arg(k)}`),
    ...p.defaulted.filter((d) => specs.has(d)).map((d) => `${d}=${arg(d)}`),
  ].join(', ');
  const lines: string[] = [];
  let target: string;
  if (p.kind === 'function') target = `mod.${parts[0]}`;
  else if (p.kind === 'instance') {
    const recv = p.receiver ? specs.get(p.receiver) : undefined;
    lines.push(`    obj = _f2p_build(${pyLiteral(recv ?? obj())}, _f2p_instance(mod.${parts[0]}))`);
    target = `obj.${parts[1]}`;
  } else target = `mod.${parts[0]}.${parts[1]}`;
  const isProperty = p.decorators.includes('property');
  const call = isProperty ? target : `${target}(${args})`;
  const inputsText = forms.map(formText).join(', ');
  const testName = `test_f2p_call_${site.function.replace(/\W/g, '_')}`;
  const depth = testPath.split('/').length - 1;
  const content = `# Code generated by telebench swe5g.testgen (Strategy A, direct call). DO NOT EDIT.
${PY_CALL_HELPERS.replace('__DEPTH__', String(depth)).replace('__ROOTS__', JSON.stringify(mod.roots))}

def ${testName}():
    """Calls ${site.function} with ${inputsText.replace(/"/g, "'")}; fails on the crash the fix prevents."""
    mod = importlib.import_module(${JSON.stringify(mod.module)})
${lines.join('\n')}${lines.length ? '\n' : ''}    _f2p_check(lambda: ${call}, ${JSON.stringify(site.function)}, ${JSON.stringify(inputsText)}, ${expectation(found.forms)})
`;
  return { ok: true, testName, content, function: site.function, inputs: inputsText };
}

/**
 * The import failure in a pytest log of the generated test (`No module named 'grpc'`, `cannot
 * import name 'X' from 'y'`), or null: the call never ran, so the run says nothing about the fix
 * (on the host, Magma's generated protos and setup.py dependencies are often absent).
 */
export function pythonImportFailure(log: string): string | null {
  const m =
    /ModuleNotFoundError: (No module named '[^']+')/.exec(log) ??
    /ImportError: (cannot import name '[^']+'(?: from '[^']+')?)/.exec(log) ??
    /ImportError: ([^\n]{1,160})/.exec(log);
  return m ? m[1]! : null;
}

/**
 * Why a Python Strategy A test's host flip check says nothing of the test, or null: the fixed
 * module did not import on the host at base_commit or at merge_commit ({@link pythonImportFailure}
 * of either run's log; a fix may add the import the host lacks). Such a test is kept as the
 * record's `deferred_a` (types.ts `DeferredStrategyA`) and decided in the instance image by
 * `swe5g.validate`; a check that ran the call (failed on another reason, or flipped) is decided.
 * @param check the flip check's runs (generate.ts `FlipCheck`): `parent` and, when it ran, `fix`
 */
export function pythonDeferral(check: {
  ok: boolean;
  parent?: { log: string };
  fix?: { log: string };
}): string | null {
  if (check.ok) return null;
  return pythonImportFailure(check.parent?.log ?? '') ?? pythonImportFailure(check.fix?.log ?? '');
}
