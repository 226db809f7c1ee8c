/**
 * YAML configuration loading with zod validation. Every problem becomes a {@link ConfigError} whose
 * message names the file, the path inside it (`github.repos[3].name`), the line when known, and what
 * was expected. The `yaml` package (why: it keeps source positions, so messages can give the line).
 */
import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml';
import { distance } from 'fastest-levenshtein';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';

/** Formats a zod/yaml path as `a.b[3].c`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out === '' ? '(top level)' : out;
}

function lineOf(
  doc: Document,
  counter: LineCounter,
  path: readonly PropertyKey[],
): number | undefined {
  // Walk up the path until a node with a source range is found.
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n) as unknown[], true);
    if (isNode(node) && node.range) return counter.linePos(node.range[0]).line;
  }
  return undefined;
}

/** The line of the key `key` in the mapping at `parent` (not of its value, which may start lower). */
function keyLineOf(
  doc: Document,
  counter: LineCounter,
  parent: readonly PropertyKey[],
  key: string,
): number | undefined {
  const map = parent.length === 0 ? doc.contents : doc.getIn(parent as unknown[], true);
  if (!isMap(map)) return undefined;
  const pair = map.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
  const range = isNode(pair?.key) ? pair.key.range : undefined;
  return range ? counter.linePos(range[0]).line : undefined;
}

/**
 * The 1-based line of the key at `path` (`['swe5g', 'registry']`) in the YAML file `file`.
 * @returns undefined when the file cannot be read or parsed, or the key is not written in it
 */
export function keyLine(file: string, path: readonly string[]): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // the caller's message names the file; a line is only a help
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  return path.length ? keyLineOf(doc, counter, path.slice(0, -1), path.at(-1)!) : undefined;
}

/** The `_zod.def` fields this file walks (zod 4's internal definition of a schema). */
interface ZodDefLike {
  type?: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
  valueType?: unknown;
  options?: unknown[];
  getter?: () => unknown;
}

/**
 * The keys an object schema allows at `path` inside `schema` (through optional, default,
 * nullable, pipe, array, record, union and lazy wrappers); [] when the path leads to no object.
 */
export function allowedKeysAt(schema: unknown, path: readonly PropertyKey[]): string[] {
  const unwrap = (s: unknown): ZodDefLike[] => {
    const def = (s as { _zod?: { def?: ZodDefLike } } | undefined)?._zod?.def;
    if (!def) return [];
    if (def.type === 'object') return [def];
    if (def.type === 'union') return (def.options ?? []).flatMap(unwrap);
    if (def.type === 'lazy' && def.getter) return unwrap(def.getter());
    const inner = def.innerType ?? def.in;
    return inner !== undefined ? unwrap(inner) : [def];
  };
  let at = unwrap(schema);
  for (const key of path) {
    at = at.flatMap((d) => {
      if (d.type === 'object') return typeof key === 'string' ? unwrap(d.shape?.[key]) : [];
      if (d.type === 'array') return unwrap(d.element);
      if (d.type === 'record') return unwrap(d.valueType);
      return [];
    });
  }
  return [...new Set(at.flatMap((d) => (d.type === 'object' ? Object.keys(d.shape ?? {}) : [])))];
}

/**
 * The allowed key nearest to `key` by edit distance (fastest-levenshtein), when it is near enough
 * to be a typo: at most 2 edits, or a third of the key's length for longer keys.
 */
export function didYouMean(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const a of allowed) {
    const d = distance(key.toLowerCase(), a.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [a, d];
  }
  return best;
}

/** The value at `path` inside parsed YAML `root`, or undefined. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** The yaml package's error codes that come from a line at the wrong indentation. */
const INDENT_ERRORS = new Set<string>([
  'BAD_INDENT',
  'BLOCK_AS_IMPLICIT_KEY',
  'MULTILINE_IMPLICIT_KEY',
]);

/**
 * Parses YAML text and validates it against `schema`.
 * @param text the YAML source
 * @param file the name used in messages (usually the absolute path)
 * @returns the parsed value, typed by the schema (defaults applied)
 * @throws ConfigError for YAML syntax errors (with line and column) and schema violations (every
 *   violation listed, each with its path, line and expectation)
 */
export function parseConfigText<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
): z.output<S> {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    let pos = first.linePos?.[0] ?? counter.linePos(first.pos[0]);
    // the yaml package places an item's error at the comments above it: move to the item's line
    const lines = text.split('\n');
    let at = pos.line;
    while (at < lines.length && /^\s*(#.*)?$/.test(lines[at - 1] ?? '')) at++;
    if (at !== pos.line) pos = { line: at, col: (lines[at - 1]!.search(/\S/) ?? 0) + 1 };
    const where = `${file}:${pos.line}:${pos.col}`;
    let hint = '';
    if (/\bflow (map|sequence|collection)/i.test(first.message)) {
      hint = ' (a { or [ that is not closed?)';
    } else if (INDENT_ERRORS.has(first.code)) {
      const end = Math.max(
        pos.line,
        ...doc.errors
          .filter((e) => INDENT_ERRORS.has(e.code))
          .map((e) => counter.linePos(e.pos[1]).line),
      );
      hint = ` (an indentation mistake near line${end > pos.line ? `s ${pos.line}-${end}` : ` ${pos.line}`}? the keys of one mapping start at the same column, a nested mapping's keys further right than its key, and a key with a value on its line has nothing indented under it)`;
    }
    throw new ConfigError(`${where}: invalid YAML: ${first.message.split('\n')[0]}${hint}`, {
      file,
      line: pos.line,
    });
  }
  const value: unknown = doc.toJS() ?? {};
  const result = schema.safeParse(value);
  if (result.success) return result.data as z.output<S>;
  const lines: string[] = [];
  let firstPath = '';
  let firstLine: number | undefined;
  for (const issue of result.error.issues) {
    let path = [...issue.path];
    let what = issue.message;
    if (issue.code === 'unrecognized_keys') {
      const keys = (issue as unknown as { keys: string[] }).keys;
      path = [...path, keys[0]!];
      const allowed = allowedKeysAt(schema, issue.path);
      const guesses = keys
        .map((k) => [k, didYouMean(k, allowed)] as const)
        .filter(([, g]) => g !== undefined)
        .map(([k, g]) => (keys.length > 1 ? `"${k}" -> "${g}"` : `"${g}"`));
      // a key of an enclosing mapping: most likely indented one level too far
      const outer = keys.flatMap((k) => {
        for (let n = issue.path.length - 1; n >= 0; n--)
          if (allowedKeysAt(schema, issue.path.slice(0, n)).includes(k))
            return [`"${k}" is a key of ${formatPath(issue.path.slice(0, n))}: indented too far?`];
        return [];
      });
      what = `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}${
        guesses.length ? ` (did you mean ${guesses.join(', ')}?)` : ''
      }${outer.length ? ` (${outer.join('; ')})` : ''}; allowed here: ${allowed.length ? allowed.join(', ') : 'see config/telebench.schema.json'}`;
    }
    if (['invalid_type', 'invalid_value', 'invalid_union'].includes(issue.code)) {
      // the value the user wrote, and for a choice the nearest allowed one
      const got = valueAt(value, issue.path);
      const secretLike = /(^|_)(token|secret|password|api_key)$/i.test(
        String(issue.path.at(-1) ?? ''),
      );
      if (got !== undefined && !secretLike && (typeof got !== 'object' || got === null)) {
        what += ` (got ${JSON.stringify(got)}`;
        const choices = [...issue.message.matchAll(/["']([^"']+)["']/g)].map((m) => m[1]!);
        const near = typeof got === 'string' ? didYouMean(got, choices) : undefined;
        what += near !== undefined && near !== got ? `; did you mean "${near}"?)` : ')';
      }
    }
    const line =
      (issue.code === 'unrecognized_keys'
        ? keyLineOf(doc, counter, issue.path, String(path.at(-1)))
        : undefined) ?? lineOf(doc, counter, path);
    const p = formatPath(path);
    if (!firstPath) {
      firstPath = p;
      firstLine = line;
    }
    lines.push(`  ${file}${line ? `:${line}` : ''}: ${p}: ${what}`);
  }
  throw new ConfigError(`invalid configuration in ${file}:\n${lines.join('\n')}`, {
    file,
    path: firstPath,
    ...(firstLine ? { line: firstLine } : {}),
  });
}

/**
 * Reads and validates a YAML file.
 * @param file path (resolved against the current directory)
 * @throws ConfigError when the file is missing or unreadable, or as {@link parseConfigText}
 */
export function loadConfigFile<S extends z.ZodType>(file: string, schema: S): z.output<S> {
  const abs = resolve(file);
  if (!existsSync(abs)) {
    throw new ConfigError(`configuration file not found: ${abs}`, { file: abs });
  }
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read configuration file ${abs}: ${(err as Error).message}`, {
      file: abs,
    });
  }
  return parseConfigText(text, abs, schema);
}
