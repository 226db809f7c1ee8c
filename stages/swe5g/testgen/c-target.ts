/**
 * Where a C Strategy A test (strategyA-c.ts) is built: the meson library target that compiles the
 * fixed file, read from the nearest `meson.build` above it that names the file, and the lines that
 * register the test executable at the end of that same `meson.build` (suite `f2p`, the suite of
 * the Strategy B C checks, so the harness's `f2p::<name>` ids run it unchanged): the library's
 * variables are defined there and its literal `include_directories('.')`, `files()` and
 * `-include x.h` arguments resolve against the same folder (measured: Open5GS `lib/ipfw`).
 */
import { posix } from 'node:path';
import type { ReadRepoFile } from './emit.js';

/** The library target that compiles a C file, with the arguments its objects are built with. */
export interface MesonTarget {
  /** The `meson.build` holding the target, repository-relative. */
  mesonFile: string;
  /** Variable the library is assigned to (`libcore`), linked by the test. */
  variable: string;
  /** Values of the call's keyword arguments, as written (`c_args`, `dependencies`, ...). */
  args: Record<string, string>;
}

/** `[i, j)` of the balanced parenthesis call body starting at `open` (the `(`), strings skipped. */
function callBody(text: string, open: number): string | null {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const triple = text.startsWith("'''", i);
      const close = triple ? text.indexOf("'''", i + 3) : text.indexOf("'", i + 1);
      if (close < 0) return null;
      i = close + (triple ? 2 : 0);
    } else if (c === '#') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return text.slice(open + 1, i);
    }
  }
  return null;
}

/** Top-level `key : value` arguments of a meson call body (positional arguments dropped). */
export function mesonKeywordArgs(body: string): Record<string, string> {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "'") {
      const triple = body.startsWith("'''", i);
      const close = triple ? body.indexOf("'''", i + 3) : body.indexOf("'", i + 1);
      i = close < 0 ? body.length : close + (triple ? 2 : 0);
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  const out: Record<string, string> = {};
  for (const p of parts) {
    const m = /^\s*(\w+)\s*:\s*([\s\S]*?)\s*$/.exec(p);
    if (m) out[m[1]!] = m[2]!.replace(/#[^\n']*$/gm, '').trim();
  }
  return out;
}

const LIBRARY_CALL = /(\w+)\s*=\s*(?:static_library|shared_library|both_libraries|library)\s*\(/g;

/**
 * The library target compiling `file`: the nearest `meson.build` from the file's folder upwards
 * that names the file (its path relative to that folder, or its base name in a `files()` list);
 * of its library calls, the one whose text or sources variable names the file, else the only one.
 * @returns the target, or a reason naming what is missing
 */
export function mesonTargetOf(
  file: string,
  read: ReadRepoFile,
): { ok: true; target: MesonTarget } | { ok: false; reason: string } {
  const base = posix.basename(file);
  for (let dir = posix.dirname(file); ; dir = posix.dirname(dir)) {
    const mesonFile = dir === '.' ? 'meson.build' : `${dir}/meson.build`;
    const text = read(mesonFile);
    const rel = dir === '.' ? file : posix.relative(dir, file);
    const names = (t: string): boolean =>
      t.includes(rel) ||
      new RegExp(`(^|[\\s'/])${base.replace(/\./g, '\\.')}($|[\\s',])`, 'm').test(t);
    if (text !== null && names(text)) {
      const calls: { variable: string; body: string }[] = [];
      for (const m of text.matchAll(LIBRARY_CALL)) {
        const body = callBody(text, m.index + m[0].length - 1);
        if (body !== null) calls.push({ variable: m[1]!, body });
      }
      if (calls.length === 0)
        return { ok: false, reason: `${mesonFile} names ${base} but builds no library from it` };
      // the sources variable whose files() list names the file (`libcore_sources = files(...)`)
      const sourceVars = [...text.matchAll(/(\w+)\s*\+?=\s*files\s*\(/g)]
        .filter((m) => names(callBody(text, m.index + m[0].length - 1) ?? ''))
        .map((m) => m[1]!);
      const pick =
        calls.find((c) => names(c.body)) ??
        calls.find((c) => sourceVars.some((v) => new RegExp(`\\b${v}\\b`).test(c.body))) ??
        (calls.length === 1 ? calls[0] : undefined);
      if (!pick)
        return {
          ok: false,
          reason: `${mesonFile} builds ${calls.length} libraries and none names ${base}`,
        };
      return {
        ok: true,
        target: { mesonFile, variable: pick.variable, args: mesonKeywordArgs(pick.body) },
      };
    }
    if (dir === '.') break;
  }
  return { ok: false, reason: `no meson.build names ${file}` };
}

/**
 * The `meson.build` lines that build test `name` from `source` (beside that file) with the target's
 * `c_args`, `include_directories` and `dependencies`, linked with the library, in suite `f2p`.
 */
export function mesonRegistration(name: string, source: string, target: MesonTarget): string {
  const arg = (k: string): string => (target.args[k] ? `, ${k}: ${target.args[k]}` : '');
  return [
    `${name}_exe = executable('${name}', '${source}'${arg('c_args')}${arg('include_directories')}${arg('dependencies')}, link_with: ${target.variable})`,
    `test('${name}', ${name}_exe, suite: 'f2p', timeout: 60)`,
  ].join('\n');
}
