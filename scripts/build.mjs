#!/usr/bin/env node
/**
 * Compiles the CLI into one ES module, `dist/telebench.js`, with esbuild (why esbuild: it bundles
 * the whole import graph from `pipeline/cli/main.ts` in well under a second, so every module a
 * branch adds is compiled without being listed anywhere; tsc would need ~2 minutes on a busy
 * machine and emits a tree of files).
 *
 * Writes `dist/telebench.js` (+ `.map`), the chunks it imports on first use of a command
 * (`dist/chunks/`), and `dist/telebench.inputs.json` (the project files the
 * bundle was built from, relative to the project root), each through a temporary file and a
 * rename, so processes starting at the same time never read half a file. `bin/telebench.js`
 * compares the inputs' modification times with the bundle's and rebuilds a stale bundle.
 *
 * Run: `npm run build` (npm's `prepare` runs it on `npm ci`, `npm install` and `npm pack`).
 * Exported `buildCli()` is what `bin/telebench.js` calls; it throws esbuild's error on a
 * source that does not compile.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Pure-JavaScript packages every start needs, bundled into dist/telebench.js. Every other package
 * stays external (Node loads it from node_modules at run time), so a dependency a branch adds
 * (a native addon, a package that reads files beside it) works without being listed here.
 */
const BUNDLED = new Set([
  'commander',
  'zod',
  'yaml',
  'p-limit',
  'yocto-queue',
  'p-retry',
  'retry',
  'is-network-error',
  'canonicalize',
  'eventsource-parser',
]);

/** The package name of a bare import specifier (`@scope/name/sub` -> `@scope/name`). */
function packageOf(spec) {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** esbuild plugin: bare imports of packages outside {@link BUNDLED} are left external. */
const externalUnlessBundled = {
  name: 'external-unless-bundled',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      return BUNDLED.has(packageOf(args.path)) ? undefined : { path: args.path, external: true };
    });
  },
};

/**
 * esbuild plugin: zod's `locales` namespace (its error messages in 49 languages, about 300 kB of
 * the bundle, which Node would parse at every start) is replaced by English alone. zod itself
 * configures only `en`; nothing in the project selects another locale (`z.config(z.locales.xx())`
 * would now fail at build time, not silently).
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-en' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * Builds `dist/telebench.js` and its chunks. Resolves to `{ inputs, startup }`: the number of input
 * files, and the input files (project and node_modules paths) of the modules that every start loads
 * (the entry and the chunks it imports statically; the rest loads on a command's first use).
 */
export async function buildCli() {
  const { build } = await import('esbuild');
  const out = join(ROOT, 'dist', 'telebench.js');
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { telebench: 'pipeline/cli/main.ts' },
    outdir: join(ROOT, 'dist'),
    // Code splitting: every `await import()` of the sources (a command's implementation, the
    // stages) becomes a chunk in dist/chunks/ that Node parses only when that command runs, so
    // `telebench --help` does not compile the whole pipeline (bench/cli-start.bench.ts).
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Pure-JavaScript packages imported at start (commander, zod, yaml, p-limit, ...) are bundled:
    // one file loads far faster than Node resolving and reading their hundreds of small files.
    // All others stay external, as do the heavy ones loaded on first use (pipeline/lazy.ts).
    plugins: [externalUnlessBundled, zodEnglishOnly],
    banner: {
      // bundled CommonJS packages call require() for Node's built-in modules
      js: "import { createRequire as __telebenchRequire } from 'node:module'; const require = __telebenchRequire(import.meta.url);",
    },
    sourcemap: 'linked',
    minifyWhitespace: true,
    minifySyntax: true,
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const tmp = `.${process.pid}.tmp`;
  // (esbuild namespaces such as zod-en: are not project files)
  const inputs = Object.keys(result.metafile.inputs).filter(
    (f) => !f.startsWith('node_modules/') && !/^[a-z-]+:/.test(f),
  );
  const files = [
    ...result.outputFiles.map((f) => ({ path: f.path, contents: f.contents })),
    { path: join(ROOT, 'dist', 'telebench.inputs.json'), contents: JSON.stringify(inputs) },
  ];
  // the entry last: a reader that sees the new entry also sees its chunks and inputs list
  files.sort((a, b) => Number(a.path === out) - Number(b.path === out));
  mkdirSync(join(ROOT, 'dist', 'chunks'), { recursive: true });
  for (const f of files) {
    writeFileSync(f.path + tmp, f.contents);
    renameSync(f.path + tmp, f.path);
  }
  // Chunks are named by content hash. Those of earlier builds are removed once an hour old: a
  // process started from an earlier entry may still import them on first use of a command.
  const current = new Set(files.map((f) => f.path));
  const chunks = join(ROOT, 'dist', 'chunks');
  for (const name of readdirSync(chunks)) {
    const path = join(chunks, name);
    if (current.has(path) || current.has(path.replace(/\.map$/, ''))) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { force: true });
    } catch {
      // removed by a concurrent build
    }
  }
  const startup = new Set();
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const o = result.metafile.outputs[file];
    for (const i of Object.keys(o.inputs)) startup.add(i);
    for (const imp of o.imports)
      if (imp.kind === 'import-statement' && !imp.external) visit(imp.path);
  };
  visit(relative(ROOT, out));
  return { inputs: inputs.length, startup: [...startup] };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { inputs, startup } = await buildCli();
  console.error(`dist/telebench.js built from ${inputs} files (${startup.length} loaded at start)`);
}
