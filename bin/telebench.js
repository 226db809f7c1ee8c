#!/usr/bin/env node
// Entry point of the `telebench` command: runs the compiled bundle `dist/telebench.js` (built by
// `npm run build`, which npm's `prepare` runs on `npm ci` and `npm pack`; see scripts/build.mjs).
// A stale bundle never runs: in a checkout with the sources, when any file the bundle was built
// from is newer than the bundle (or the bundle is missing), it is rebuilt first (esbuild, about a
// second). An installed package ships no sources, so nothing is compared there. Stack traces point
// into the bundle; `NODE_OPTIONS=--enable-source-maps` maps them back to the sources.
import { readFileSync, statSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const bundle = new URL('dist/telebench.js', root);

/** Why the bundle must be (re)built, or null when it is current. */
function staleReason() {
  let builtAt;
  let inputs;
  try {
    builtAt = statSync(bundle).mtimeMs;
    inputs = JSON.parse(readFileSync(new URL('dist/telebench.inputs.json', root), 'utf8'));
  } catch {
    return 'dist/telebench.js is missing';
  }
  // package-lock.json: the bundle holds the pure-JavaScript packages, so a changed lock rebuilds it
  for (const file of [...inputs, 'package-lock.json']) {
    let mtime;
    try {
      mtime = statSync(new URL(file, root)).mtimeMs;
    } catch {
      continue; // an installed package has no sources
    }
    if (mtime > builtAt) return `${file} is newer than dist/telebench.js`;
  }
  return null;
}

const reason = staleReason();
if (reason) {
  try {
    const { buildCli } = await import('../scripts/build.mjs');
    await buildCli();
  } catch (err) {
    process.stderr.write(
      `telebench: ${reason} and rebuilding it failed (run \`npm run build\`):\n${err?.message ?? err}\n`,
    );
    process.exit(2);
  }
}
const { main } = await import(bundle.href);
process.exitCode = await main(process.argv.slice(2));
