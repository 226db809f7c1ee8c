#!/usr/bin/env node
/**
 * Compiles the CLI into one ES module, `dist/telebench.js`, with esbuild (why esbuild: it bundles
 * the whole import graph from `pipeline/cli/main.ts` in well under a second, so every module a
 * branch adds is compiled without being listed anywhere; tsc would need ~2 minutes on a busy
 * machine and emits a tree of files).
 *
 * Writes `dist/telebench.js` (+ `.map`) and `dist/telebench.inputs.json` (the project files the
 * bundle was built from, relative to the project root), each through a temporary file and a
 * rename, so processes starting at the same time never read half a file. `bin/telebench.js`
 * compares the inputs' modification times with the bundle's and rebuilds a stale bundle.
 *
 * Run: `npm run build` (npm's `prepare` runs it on `npm ci`, `npm install` and `npm pack`).
 * Exported `buildCli()` is what `bin/telebench.js` calls; it throws esbuild's error on a
 * source that does not compile.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Packages left to Node at run time: native addons and packages that read files beside them. */
const EXTERNAL = [
  'better-sqlite3',
  'web-tree-sitter',
  'tree-sitter-wasms',
  // node-llama-cpp picks its prebuilt binary package at run time (optional per-platform imports)
  'node-llama-cpp',
  // loaded on first use by the report and its browser check
  'vega',
  'vega-lite',
  'puppeteer-core',
];

/** Builds `dist/telebench.js`; resolves to the number of input files. */
export async function buildCli() {
  const { build } = await import('esbuild');
  const out = join(ROOT, 'dist', 'telebench.js');
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['pipeline/cli/main.ts'],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Pure-JavaScript packages imported at start (commander, zod, yaml, p-limit, ...) are bundled:
    // one file loads far faster than Node resolving and reading their hundreds of small files.
    // Native or file-relative packages stay external, as do the heavy ones loaded on first use
    // (pipeline/lazy.ts: `require` calls, which esbuild leaves alone).
    external: EXTERNAL,
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
  const inputs = Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('node_modules/'));
  const files = [
    ...result.outputFiles.map((f) => ({ path: f.path, contents: f.contents })),
    { path: join(ROOT, 'dist', 'telebench.inputs.json'), contents: JSON.stringify(inputs) },
  ];
  // the bundle last: a reader that sees the new bundle also sees its inputs list
  files.sort((a, b) => Number(a.path === out) - Number(b.path === out));
  for (const f of files) {
    writeFileSync(f.path + tmp, f.contents);
    renameSync(f.path + tmp, f.path);
  }
  return inputs.length;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const n = await buildCli();
  console.error(`dist/telebench.js built from ${n} files`);
}
