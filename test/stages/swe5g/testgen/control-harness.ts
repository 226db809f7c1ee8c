/**
 * Runs Strategy B control checks for real on variants of one fixed file: the sites come from
 * `deriveFixSites` (tree-sitter) on a parent and a gold source; the checks are the generated files
 * of `intentTests`, run with the host toolchains — Go: one module, one package per variant,
 * `go test ./...` in a git repository; Python: the generated module's test functions run by
 * `python3`;
 * C: `python3 f2p/f2p_check.py` on each generated spec.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { intentTests } from '../../../../stages/swe5g/testgen/emit.js';
import {
  deriveFixSites,
  listFunctions,
  type FixSite,
} from '../../../../stages/swe5g/testgen/patterns.js';
import { countPattern } from '../../../../stages/swe5g/testgen/text-count.js';
import { parseSource } from '../../../../pipeline/providers/treesitter/parser.js';

/** One source to check: whether the generated check must pass on it. */
export interface Variant {
  name: string;
  source: string;
  pass: boolean;
}

/** The added lines (1-based) of `fix` against `parent`: lines of `fix` not in `parent`. */
export function addedLines(parent: string, fix: string): Set<number> {
  const old = new Set(parent.split('\n'));
  const out = new Set<number>();
  fix.split('\n').forEach((l, i) => {
    if (!old.has(l)) out.add(i + 1);
  });
  return out;
}

/** The Strategy B sites of `parent` -> `gold` for `file`. */
export async function sitesOf(
  language: 'go' | 'c' | 'python',
  file: string,
  parent: string,
  gold: string,
): Promise<FixSite[]> {
  const { sites } = await deriveFixSites({
    file,
    language,
    parentSource: parent,
    fixSource: gold,
    addedLines: addedLines(parent, gold),
  });
  return sites;
}

const write = (root: string, path: string, content: string): void => {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
};

const GO_MOD = 'module example.org/f2p\n\ngo 1.21\n';

function goResults(sites: FixSite[], variants: Variant[]): Record<string, boolean> {
  const root = mkdtempSync(join(tmpdir(), 'telebench-control-go-'));
  try {
    write(root, 'go.mod', GO_MOD);
    variants.forEach((v, i) => {
      const dir = `v${i}`;
      const file = `${dir}/handler.go`;
      write(root, file, v.source);
      const moved = sites.map((s) => ({ ...s, file }));
      const gen = intentTests(
        'go',
        moved,
        (p) => (p === 'go.mod' ? GO_MOD : p === file ? v.source : null),
        () => null,
      );
      for (const f of gen.files) write(root, f.path, f.content);
    });
    execFileSync('git', ['-C', root, 'init', '-q']);
    const r = spawnSync('go', ['test', '-count=1', './...'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GOFLAGS: '-mod=mod', GOPROXY: 'off', GOTOOLCHAIN: 'local' },
    });
    const out = `${r.stdout}\n${r.stderr}`;
    // a build failure is not a rejection
    if (/\[(build|setup) failed\]|panic:/.test(out))
      throw new Error(`go test:\n${out.slice(-3000)}`);
    const res: Record<string, boolean> = {};
    variants.forEach((v, i) => {
      const pkg = `example.org/f2p/v${i}`;
      if (new RegExp(`^ok\\s+${pkg}\\s`, 'm').test(out)) res[v.name] = true;
      else if (new RegExp(`^FAIL\\s+${pkg}\\s`, 'm').test(out)) res[v.name] = false;
      else throw new Error(`no result for ${v.name} (${pkg}):\n${out.slice(-3000)}`);
    });
    return res;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const PY_RUN = `import runpy, sys
ns = runpy.run_path(sys.argv[1])
try:
    [f() for n, f in ns.items() if n.startswith("test_")]
except AssertionError:
    sys.exit(1)
except Exception:
    import traceback
    traceback.print_exc()
    sys.exit(3)`;

function pyResult(sites: FixSite[], file: string, v: Variant): boolean {
  const root = mkdtempSync(join(tmpdir(), 'telebench-control-py-'));
  try {
    write(root, file, v.source);
    const gen = intentTests(
      'python',
      sites,
      (p) => (p === file ? v.source : null),
      () => null,
    );
    for (const f of gen.files) write(root, f.path, f.content);
    // the generated test functions, called as pytest would: one python3 a variant, not one pytest
    const r = spawnSync('python3', ['-c', PY_RUN, gen.files[0]!.path], {
      cwd: root,
      encoding: 'utf8',
    });
    if (r.status !== 0 && r.status !== 1) throw new Error(`python3: ${r.stdout}${r.stderr}`);
    return r.status === 0;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function cResult(sites: FixSite[], file: string, v: Variant): boolean {
  const root = mkdtempSync(join(tmpdir(), 'telebench-control-c-'));
  try {
    write(root, file, v.source);
    const meson = "project('f2p', 'c')\n";
    const gen = intentTests(
      'c',
      sites,
      () => null,
      (p) => (p === 'meson.build' ? meson : null),
    );
    for (const f of gen.files) write(root, f.path, f.content);
    return gen.files
      .filter((f) => f.path.endsWith('.json'))
      .every((f) => {
        const r = spawnSync('python3', ['f2p/f2p_check.py', f.path], {
          cwd: root,
          encoding: 'utf8',
        });
        // a crash of the checker (exit 1 with a traceback) is not a rejection
        if ((r.status !== 0 && r.status !== 1) || r.stderr.includes('Traceback'))
          throw new Error(`f2p_check: ${r.stdout}${r.stderr}`);
        return r.status === 0;
      });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Whether the generated check passes on each variant, by name.
 * @param file repository-relative path of the fixed file (Python, C; Go uses one package per variant)
 */
export function checkResults(
  language: 'go' | 'c' | 'python',
  sites: FixSite[],
  file: string,
  variants: Variant[],
): Record<string, boolean> {
  if (language === 'go') return goResults(sites, variants);
  const run = language === 'python' ? pyResult : cResult;
  return Object.fromEntries(variants.map((v) => [v.name, run(sites, file, v)]));
}

/** Expected results by name (for one `toEqual` that names every mismatching variant). */
export const expected = (variants: Variant[]): Record<string, boolean> =>
  Object.fromEntries(variants.map((v) => [v.name, v.pass]));

/**
 * The generation-time verdict of text sites on each variant, by name: every site's pattern counted
 * by tree-sitter (text-count.ts) in the variant's function exceeds its `parentCount`. Equal to the
 * checkers' verdicts when generation counts the parent the way the generated test counts.
 * @throws Error when a site is not `text` or its function is missing from a variant
 */
export async function derivedResults(
  language: 'go' | 'c' | 'python',
  sites: FixSite[],
  variants: Variant[],
): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  for (const v of variants) {
    const tree = await parseSource(language, v.source);
    try {
      const fns = listFunctions(language, tree.rootNode);
      out[v.name] = sites.every((s) => {
        if (s.strength !== 'text') throw new Error(`${s.function}: a ${s.strength} site`);
        const f = fns.find((x) => x.qualified === s.function);
        if (!f) throw new Error(`${s.function} missing from ${v.name}`);
        return countPattern(language, f.body, s.pattern) > s.parentCount;
      });
    } finally {
      tree.delete();
    }
  }
  return out;
}
