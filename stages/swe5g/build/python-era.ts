/**
 * The interpreter and the pins of a Python environment commit's era (issue 31; docs/environments.md,
 * "The interpreter and the pins of the era"): which offline Debian base (and so which `python3`) an
 * env layer starts from, chosen from what the repository says at that commit, and the date before
 * which PyPI uploads are taken (uv's `--exclude-newer`) for requirements without an upper pin.
 * Reads the mirror only; the choice is pure ({@link chooseInterpreter}).
 */
import { TelebenchError } from '../../../pipeline/errors.js';
import { fileAt, git, gitPaths } from '../../../pipeline/providers/git/repo.js';

/** One piece of evidence of the Python a commit was written for. */
export interface PythonEvidence {
  /** What kind of file said it (strongest first, {@link EVIDENCE_ORDER}). */
  source: 'registry' | 'python-version' | 'dockerfile' | 'ci' | 'python_requires' | 'date';
  /** `<path>: <the text that said it>` (or the commit date for `date`). */
  said: string;
  /** Python `major.minor` wanted (`3.8`); a `python_requires` constraint has none. */
  version?: string;
  /** `python_requires` only: the specifier set (`>=3.6,<3.10`). */
  requires?: string;
}

/** Evidence kinds that name a version, strongest first: the first one found is the wanted Python. */
export const EVIDENCE_ORDER = ['registry', 'python-version', 'dockerfile', 'ci'] as const;

/** What {@link chooseInterpreter} decided, as the build record keeps it (`python_env.interpreter`). */
export interface InterpreterChoice {
  /** Debian suite of the base (`bullseye`). */
  suite: string;
  /** That suite's Python `major.minor` (`3.9`). */
  python: string;
  /** The Python the evidence asked for (`3.8`). */
  wanted: string;
  /** The evidence that decided `wanted`, and a `python_requires` that narrowed the suites. */
  evidence: PythonEvidence[];
}

/** `3.8.10` -> `3.8`; undefined when the text is no Python 3 version. */
export function minorOf(v: string): string | undefined {
  const m = /^\s*v?(3)\.(\d{1,2})(?![\d])/.exec(v);
  return m ? `${m[1]}.${m[2]}` : undefined;
}

/** Orders `3.9` before `3.10`. */
export function compareMinor(a: string, b: string): number {
  const [a1, a2] = a.split('.').map(Number);
  const [b1, b2] = b.split('.').map(Number);
  return a1! - b1! || a2! - b2!;
}

/**
 * Does Python `minor` (`3.9`) satisfy a PEP 440 specifier set as `python_requires` writes it
 * (`>=3.6, <3.10`, `~=3.8`, `==3.8.*`, `!=3.9.*`)? Compared at `major.minor` (a `<3.9.5` admits
 * 3.9). A clause it cannot read is ignored.
 */
export function satisfiesRequires(minor: string, requires: string): boolean {
  for (const clause of requires.split(',')) {
    const m = /^\s*(~=|==|!=|>=|<=|>|<)\s*(3(?:\.\d+)*)(\.\*)?\s*$/.exec(clause);
    if (!m) continue;
    const [, op, ver] = m;
    const parts = ver!.split('.');
    const v = `${parts[0]}.${parts[1] ?? '0'}`;
    const c = compareMinor(minor, v);
    const patch = parts.length > 2 && Number(parts[2]) > 0;
    const ok =
      op === '>='
        ? c >= 0
        : op === '>'
          ? c > 0 || (c === 0 && patch)
          : op === '<'
            ? c < 0 || (c === 0 && patch)
            : op === '<='
              ? c <= 0
              : op === '=='
                ? c === 0
                : op === '!='
                  ? c !== 0 || parts.length > 2
                  : c >= 0 && minor.split('.')[0] === parts[0]; // ~=3.8: >=3.8, ==3.*
    if (!ok) return false;
  }
  return true;
}

/**
 * Debian stable's Python at a date (the fallback when a commit names no Python): jessie 3.4,
 * stretch 3.5 (2017-06-17), buster 3.7 (2019-07-06), bullseye 3.9 (2021-08-14), bookworm 3.11
 * (2023-06-10), trixie 3.13 (2025-08-09), release dates from debian.org/releases.
 */
export function debianStablePython(dateIso: string): string {
  const d = dateIso.slice(0, 10);
  const table: [string, string][] = [
    ['2025-08-09', '3.13'],
    ['2023-06-10', '3.11'],
    ['2021-08-14', '3.9'],
    ['2019-07-06', '3.7'],
    ['2017-06-17', '3.5'],
  ];
  return table.find(([since]) => d >= since)?.[1] ?? '3.4';
}

/**
 * The evidence {@link chooseInterpreter} decides by: the strongest evidence naming a version (else
 * a `date` evidence with Debian stable's Python at `commitDate`), and the `python_requires`
 * that may narrow the suites (none when the registry named the version: it is not narrowed).
 */
function decidingEvidence(
  evidence: readonly PythonEvidence[],
  commitDate: string,
): { decided: PythonEvidence; req?: PythonEvidence } {
  const named = EVIDENCE_ORDER.map((s) => evidence.find((e) => e.source === s && e.version)).find(
    Boolean,
  );
  const decided: PythonEvidence = named ?? {
    source: 'date',
    said: `commit date ${commitDate}: Debian stable's Python then`,
    version: debianStablePython(commitDate),
  };
  const req = evidence.find((e) => e.source === 'python_requires' && e.requires);
  return { decided, ...(req && decided.source !== 'registry' ? { req } : {}) };
}

/**
 * What {@link chooseInterpreter}'s suite and Python depend on besides the configured suites, as
 * one comparable string: the wanted Python (`3.8`; Debian stable's at `commitDate` when no
 * evidence names one) and the `python_requires` specifier that may narrow the suites. Two commits
 * with equal keys get the same base whatever else their evidence's text says (`3.8` and `3.8.10`
 * in `.python-version`, a CI file that gained a job), so resolve can tell whether an earlier
 * commit's environment is the base's (`pythonEnvironmentCommit`).
 * @param evidence what {@link pythonEvidence} found (or the registry's interpreter)
 * @param commitDate ISO 8601 committer date of the commit the evidence was read at
 * @returns JSON text `{"wanted":"3.8","requires":">=3.6"}` (`requires` absent when none narrows)
 */
export function interpreterKey(evidence: readonly PythonEvidence[], commitDate: string): string {
  const { decided, req } = decidingEvidence(evidence, commitDate);
  return JSON.stringify({ wanted: decided.version, requires: req?.requires });
}

/**
 * Picks the base for an environment: the wanted Python is the strongest version evidence's
 * (registry > `.python-version` > Dockerfile > CI workflow), else Debian stable's at the commit
 * date; the suites are narrowed by `python_requires` (unless the registry named the version, or
 * none would remain); of them, the one with the oldest Python at or above the wanted one (code
 * for 3.8 may use 3.8 syntax; an older interpreter would not parse it), else the newest.
 * @param suites Debian suite -> its Python `major.minor` (`{ bullseye: '3.9', bookworm: '3.11' }`)
 * @param evidence what {@link pythonEvidence} found
 * @param commitDate ISO 8601 committer date of the environment commit
 * @throws TelebenchError `python_suites_empty` (config) when `suites` is empty
 */
export function chooseInterpreter(
  suites: Record<string, string>,
  evidence: readonly PythonEvidence[],
  commitDate: string,
): InterpreterChoice {
  const all = Object.entries(suites).sort((a, b) => compareMinor(a[1], b[1]));
  if (all.length === 0)
    throw new TelebenchError(
      'python_suites_empty',
      'swe5g.environments.python_era.suites is empty',
      {
        tier: 'config',
      },
    );
  const { decided, req } = decidingEvidence(evidence, commitDate);
  const wanted = decided.version!;
  const used: PythonEvidence[] = [decided];
  let pool = all;
  if (req?.requires) {
    const ok = all.filter(([, py]) => satisfiesRequires(py, req.requires!));
    if (ok.length > 0 && ok.length < all.length) {
      pool = ok;
      used.push(req);
    }
  }
  const [suite, python] =
    pool.find(([, py]) => compareMinor(py, wanted) >= 0) ?? pool[pool.length - 1]!;
  return { suite, python, wanted, evidence: used };
}

/**
 * Python versions a CI file names, as minors: GitHub Actions' `python-version:` (a scalar or a
 * flow list, matrix items too), Travis' `python:`, CircleCI's `(circleci|cimg)/python:3.x` images
 * and the `default:` of a `python_version` command parameter (Magma's `.circleci/config.yml`).
 */
export function ciPythonVersions(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\b(?:circleci|cimg)\/python:(3\.\d+)/g)) out.push(m[1]!);
  for (const m of text.matchAll(
    /python[_-]version:\s*\n(?:[ \t]+[\w-]+:.*\n){0,4}?[ \t]+default:\s*["']?(3\.\d+)/g,
  ))
    out.push(m[1]!);
  for (const m of text.matchAll(/^\s*-?\s*python(?:-version|_version)?\s*:\s*(.+)$/gm)) {
    const v = m[1]!.replace(/#.*$/, '');
    for (const item of v.replace(/[[\]]/g, '').split(','))
      if (/^\s*["']?3\./.test(item)) out.push(minorOf(item.replace(/["'\s]/g, '')) ?? '');
  }
  return out.filter(Boolean);
}

/** The Python a Dockerfile installs: `FROM python:3.x...`, or an apt/apk `python3.X` package. */
export function dockerfilePython(text: string): { version: string; said: string } | undefined {
  const from = /^\s*FROM\s+(?:\S+\/)?python:(3\.\d+)\S*/im.exec(text);
  if (from) return { version: minorOf(from[1]!)!, said: from[0].trim() };
  const pkg = /\bpython(3\.\d+)(?:-[a-z]+)?\b/.exec(text);
  if (pkg && /apt(-get)?\s+install|apk\s+add/.test(text))
    return { version: minorOf(pkg[1]!)!, said: pkg[0] };
  return undefined;
}

/** `python_requires='>=3.6'` of a setup.py, `python_requires = >=3.6` of a setup.cfg, `requires-python` of a pyproject.toml. */
export function requiresPythonOf(text: string): string | undefined {
  const m =
    /\bpython_requires\s*=\s*["']([^"']+)["']/.exec(text) ??
    /^\s*python_requires\s*=\s*(\S[^\n#]*)$/m.exec(text) ??
    /^\s*requires-python\s*=\s*["']([^"']+)["']/m.exec(text);
  return m?.[1]?.trim();
}

/** `a/b/c` -> [`a/b/c`, `a/b`, `a`, ``]: the folder and its parents up to the root. */
function chain(folder: string): string[] {
  const parts = folder.split('/').filter(Boolean);
  return parts.map((_, i) => parts.slice(0, parts.length - i).join('/')).concat('');
}

/** A file's text at `commit`, or undefined when absent or unreadable (a partial clone's missing blob). */
async function readOr(mirror: string, commit: string, path: string): Promise<string | undefined> {
  try {
    return await fileAt(mirror, commit, path);
  } catch {
    return undefined;
  }
}

/** Paths directly in `dir` at `commit` ('' is the root); [] when the folder is absent. */
async function ls(mirror: string, commit: string, dir: string): Promise<string[]> {
  try {
    return await gitPaths(mirror, ['ls-tree', '--name-only', commit, ...(dir ? [`${dir}/`] : [])]);
  } catch {
    return [];
  }
}

/**
 * What the repository at `commit` says about its Python, for the folder `folder` (a registry
 * entry's path; '' for the root): a `.python-version` in the folder or its nearest parent; a
 * Dockerfile there (`FROM python:3.x`, an installed `python3.X`); the CI files' Python
 * ({@link ciPythonVersions}: `.github/workflows/*.yml`, `.travis.yml`, `.circleci/config.yml`):
 * the most frequent minor (ties: the older), counting only the files that name the folder when
 * some do (a monorepo's other
 * projects have their own Pythons); `python_requires` of the `setup.py`/`setup.cfg`/
 * `pyproject.toml` in the folder chain and of `requirementFiles` that are a `setup.py`.
 * Files that cannot be read (a partial clone's missing blob) are passed over.
 * @returns evidence, strongest kind first (one per kind)
 */
export async function pythonEvidence(
  mirror: string,
  commit: string,
  folder: string,
  requirementFiles: readonly string[],
): Promise<PythonEvidence[]> {
  const out: PythonEvidence[] = [];
  const dirs = chain(folder);
  const listings = await Promise.all(dirs.map((d) => ls(mirror, commit, d)));
  const named = (re: RegExp): string[] => listings.flatMap((l) => l.filter((p) => re.test(p)));
  for (const p of named(/(^|\/)\.python-version$/)) {
    const t = await readOr(mirror, commit, p);
    const v = t && minorOf(t.split('\n')[0]!);
    if (v) {
      out.push({ source: 'python-version', said: `${p}: ${t.split('\n')[0]!.trim()}`, version: v });
      break;
    }
  }
  for (const p of named(/(^|\/)(Dockerfile[^/]*|[^/]+\.Dockerfile)$/)) {
    const t = await readOr(mirror, commit, p);
    const d = t && dockerfilePython(t);
    if (d) {
      out.push({ source: 'dockerfile', said: `${p}: ${d.said}`, version: d.version });
      break;
    }
  }
  const ci = await ciEvidence(mirror, commit, folder);
  if (ci) out.push(ci);
  const setupFiles = [
    ...requirementFiles.filter((f) => /(^|\/)setup\.py$/.test(f)),
    ...named(/(^|\/)(setup\.py|setup\.cfg|pyproject\.toml)$/),
  ];
  for (const p of [...new Set(setupFiles)]) {
    const t = await readOr(mirror, commit, p);
    const r = t && requiresPythonOf(t);
    if (r) {
      out.push({ source: 'python_requires', said: `${p}: ${r}`, requires: r });
      break;
    }
  }
  return out;
}

/** The CI workflows' Python (see {@link pythonEvidence}); undefined when none names one. */
async function ciEvidence(
  mirror: string,
  commit: string,
  folder: string,
): Promise<PythonEvidence | undefined> {
  const files = [
    ...(await ls(mirror, commit, '.github/workflows')).filter((p) => /\.ya?ml$/.test(p)),
    ...(await ls(mirror, commit, '')).filter((p) => p === '.travis.yml'),
    ...(await ls(mirror, commit, '.circleci')).filter((p) => /\/config\.ya?ml$/.test(p)),
  ];
  const found: { path: string; versions: string[]; names: boolean }[] = [];
  for (const path of files) {
    const t = await readOr(mirror, commit, path);
    const versions = t ? ciPythonVersions(t) : [];
    if (versions.length > 0)
      found.push({ path, versions, names: folder !== '' && t!.includes(folder) });
  }
  const pick = found.some((f) => f.names) ? found.filter((f) => f.names) : found;
  const counts = new Map<string, number>();
  for (const v of pick.flatMap((f) => f.versions)) counts.set(v, (counts.get(v) ?? 0) + 1);
  const best = [...counts].sort((a, b) => b[1] - a[1] || compareMinor(a[0], b[0]))[0];
  if (!best) return undefined;
  const where = pick.filter((f) => f.versions.includes(best[0])).map((f) => f.path);
  return {
    source: 'ci',
    said: `${where.slice(0, 3).join(', ')}${where.length > 3 ? ', ...' : ''}: python-version ${best[0]} (${best[1]} of ${[...counts.values()].reduce((a, b) => a + b, 0)})`,
    version: best[0],
  };
}

/**
 * The date of the era pins: the committer date (UTC, `2022-07-01T10:00:00Z`) of the last commit
 * at or before `commit` that changed one of `files` (the requirements text was written then, so
 * instances sharing that text share one env image, as before), or of `commit` itself with
 * `mode: 'commit'` or when no such commit is found.
 */
export async function eraDate(
  mirror: string,
  commit: string,
  files: readonly string[],
  mode: 'requirements' | 'commit',
): Promise<string> {
  const args = ['log', '-1', '--format=%cI', commit];
  let out = '';
  if (mode === 'requirements' && files.length > 0) {
    out = (
      await git(mirror)
        .raw([...args, '--', ...files])
        .catch(() => '')
    ).trim();
  }
  if (!out) out = (await git(mirror).raw(args)).trim();
  return new Date(out).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The interpreter evidence of a Python entry at `commit`: the registry's
 * `environment.python.interpreter` alone when it names one (it wins; nothing is read), else what
 * {@link pythonEvidence} finds for `folder` and the entry's requirement files.
 */
export async function entryEvidence(
  mirror: string,
  commit: string,
  folder: string,
  py: { requirements: readonly string[]; interpreter?: string | undefined },
): Promise<PythonEvidence[]> {
  if (py.interpreter)
    return [
      {
        source: 'registry',
        said: `environment.python.interpreter: '${py.interpreter}'`,
        version: py.interpreter,
      },
    ];
  return pythonEvidence(mirror, commit, folder, py.requirements);
}

/** What {@link pythonEraOf} decided for one environment (the build record's part of it). */
export interface PythonEra {
  /** The chosen base (absent with `interpreter: base`: the configured base, as before). */
  interpreter?: InterpreterChoice;
  /** The `--exclude-newer` date (absent with `pins: latest`). */
  exclude_newer?: string;
}

/**
 * The era of a Python entry's environment commit per `swe5g.environments.python_era`: the
 * interpreter ({@link pythonEvidence} + {@link chooseInterpreter}; the registry's
 * `environment.python.interpreter` wins over the evidence) and the pins' date ({@link eraDate}).
 * @param folder the registry entry's folder ('' for the root)
 * @param py the entry's `environment.python` (its requirement files and `interpreter`)
 */
export async function pythonEraOf(
  mirror: string,
  commit: string,
  folder: string,
  py: { requirements: readonly string[]; interpreter?: string | undefined },
  settings: {
    interpreter: 'era' | 'base';
    pins: 'era' | 'latest';
    pins_date: 'requirements' | 'commit';
    suites: Record<string, string>;
  },
): Promise<PythonEra> {
  const out: PythonEra = {};
  if (settings.interpreter === 'era') {
    const evidence = await entryEvidence(mirror, commit, folder, py);
    const date = await eraDate(mirror, commit, [], 'commit');
    out.interpreter = chooseInterpreter(settings.suites, evidence, date);
  }
  if (settings.pins === 'era')
    out.exclude_newer = await eraDate(mirror, commit, py.requirements, settings.pins_date);
  return out;
}
