/**
 * The host side of a Python environment (registry `environment.python`, docs/environments.md):
 * the requirements the env layer pip-installs, read from the repository at the environment
 * commit (a `setup.py`'s `install_requires`, or a requirements file), with the registry's
 * overrides applied. The env layer is keyed by the resulting text, so instances whose
 * requirements are the same share one env image even when their `setup.py` differs elsewhere
 * (its `packages` or `scripts` lists).
 */
import { existsSync } from 'node:fs';
import { TelebenchError } from '../../../pipeline/errors.js';
import type { PythonEnvSpec } from '../../../pipeline/providers/docker/recipes.js';
import { fileAt } from '../../../pipeline/providers/git/repo.js';
import type { PythonEnvironment, PythonOverride } from '../registry.js';

/** A project name as PEP 503 compares names: lower case, runs of `-`, `_`, `.` as one `-`. */
export function normalizedName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/**
 * The project name a requirement line names (`Jinja2==2.11.3` -> `Jinja2`, `fakeredis[lua]`
 * -> `fakeredis`, `aioeventlet @ git+https://...` -> `aioeventlet`).
 * @returns undefined when the line does not start with a project name
 */
export function requirementName(req: string): string | undefined {
  return /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(req)?.[1];
}

/** One Python string literal's value (no escapes beyond `\\`, `\'` and `\"`). */
function literalValue(lit: string): string {
  return lit.slice(1, -1).replace(/\\(["'\\])/g, '$1');
}

/**
 * The `install_requires` list of a `setup.py`, read as text (the file is never run): a list
 * literal of string literals, with comments and a trailing comma allowed.
 * @param text the `setup.py` source
 * @param where `<file>@<commit>`, named in errors
 * @returns the requirement strings in file order; [] when the file has no `install_requires`
 * @throws TelebenchError `python_requirements_unreadable` (content) when `install_requires` is
 *   not a list of string literals (a variable, a call, a concatenation)
 */
export function installRequiresOf(text: string, where: string): string[] {
  const start = /\binstall_requires\s*=\s*/.exec(text);
  if (!start) return [];
  let i = start.index + start[0].length;
  const fail = (what: string): never => {
    const line = text.slice(0, i).split('\n').length;
    throw new TelebenchError(
      'python_requirements_unreadable',
      `${where}: install_requires (line ${line}) is not a list of string literals (${what}); list the requirements in a requirements file and name it in the registry's environment.python.requirements`,
      { tier: 'content', context: { where, line } },
    );
  };
  if (text[i] !== '[') fail(`it starts with ${JSON.stringify(text.slice(i, i + 20))}`);
  i++;
  const out: string[] = [];
  const token = /\s+|#[^\n]*|,|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\]/y;
  for (;;) {
    token.lastIndex = i;
    const m = token.exec(text);
    if (!m) fail(`unexpected ${JSON.stringify(text.slice(i, i + 20))}`);
    const t = m![0];
    i += t.length;
    if (t === ']') return out;
    if (t.startsWith('"') || t.startsWith("'")) out.push(literalValue(t));
  }
}

/**
 * The requirement lines of a requirements file: comments, blank lines and pip options
 * (`-r`, `--index-url`, ...) left out; environment markers kept.
 */
export function requirementsFileLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('-'));
}

/** What {@link pythonRequirements} made: the env layer's `requirements.txt` and what it changed. */
export interface PythonRequirements {
  /** One requirement a line, in the files' order, an identical line once. */
  text: string;
  /** The overrides that changed a requirement: `from` -> `to` (null: left out). */
  applied: { from: string; to: string | null; reason: string }[];
}

/**
 * Merges the requirements of `files` (content by repository-relative path) and applies the
 * overrides.
 * @throws TelebenchError `python_requirements_unreadable` (content) from {@link installRequiresOf}
 */
export function mergeRequirements(
  files: { path: string; text: string }[],
  overrides: readonly PythonOverride[],
  commit: string,
): PythonRequirements {
  const byName = new Map(overrides.map((o) => [normalizedName(o.name), o]));
  const lines: string[] = [];
  const applied: PythonRequirements['applied'] = [];
  for (const f of files) {
    const where = `${f.path}@${commit.slice(0, 12)}`;
    const reqs = /(^|\/)setup\.py$/.test(f.path)
      ? installRequiresOf(f.text, where)
      : requirementsFileLines(f.text);
    for (const r of reqs) {
      const name = requirementName(r);
      const o = name === undefined ? undefined : byName.get(normalizedName(name));
      const line = o ? (o.use ?? null) : r.trim();
      if (o && line !== r.trim() && !applied.some((a) => a.from === r.trim()))
        applied.push({ from: r.trim(), to: line, reason: o.reason });
      if (line !== null && !lines.includes(line)) lines.push(line);
    }
  }
  return { text: lines.map((l) => `${l}\n`).join(''), applied };
}

/**
 * The env layer's requirements of a Python entry: the files of `spec.requirements` at `commit`
 * in the mirror, merged ({@link mergeRequirements}).
 * @throws TelebenchError `python_requirements_missing` (content) naming the file and commit when a
 *   listed file does not exist there; `python_requirements_unreadable` (content)
 */
export async function pythonRequirements(
  mirror: string,
  commit: string,
  spec: PythonEnvironment,
): Promise<PythonRequirements> {
  const files: { path: string; text: string }[] = [];
  for (const path of spec.requirements) {
    const text = await fileAt(mirror, commit, path);
    if (text === undefined) {
      throw new TelebenchError(
        'python_requirements_missing',
        `${path} (registry environment.python.requirements) does not exist at ${commit}`,
        { tier: 'content', context: { path, commit } },
      );
    }
    files.push({ path, text });
  }
  return mergeRequirements(files, spec.overrides, commit);
}

/** The host CA bundle pip uses inside a build (`PIP_CERT`, `SSL_CERT_FILE`, else Debian's). */
function hostCaBundle(): string | undefined {
  const f = process.env['PIP_CERT'] ?? process.env['SSL_CERT_FILE'] ?? DEBIAN_CA_BUNDLE;
  return existsSync(f) ? f : undefined;
}
const DEBIAN_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * The env layer's part of a registry `environment.python` (recipes' `PythonEnvSpec`): the package
 * roots, the grpcio-tools requirement when it has protos, the host CA bundle for pip, and with
 * `excludeNewer` the era pins (uv `--exclude-newer`; the overrides' `use` pins exempt: they were
 * chosen by hand, for an interpreter, whatever their upload date).
 * @param excludeNewer ISO 8601 UTC date of the era pins (python-era.ts `eraDate`); absent: pip
 * @param uv the uv requirement (`uv==0.13.9`)
 * @param maxLifts pins of the era the env layer may lift when they do not install (python_era
 *   `max_lifts`; 0: one uv install, as before the lifts)
 */
export function pythonEnvSpec(
  py: PythonEnvironment,
  excludeNewer?: string,
  uv = 'uv==0.13.9',
  maxLifts = 0,
): PythonEnvSpec {
  const ca = hostCaBundle();
  const exempt = py.overrides
    .filter((o) => o.use !== undefined)
    .map((o) => normalizedName(requirementName(o.use!) ?? o.name));
  return {
    roots: py.roots,
    ...(py.protos ? { protocTool: py.protos.tool } : {}),
    ...(ca ? { caBundle: ca } : {}),
    ...(excludeNewer
      ? {
          era: {
            excludeNewer,
            exempt: [...new Set(exempt)].sort(),
            uv,
            ...(maxLifts > 0 ? { maxLifts } : {}),
          },
        }
      : {}),
  };
}
