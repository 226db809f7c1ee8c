#!/usr/bin/env node
// Runs every benchmark under bench/ (each prints ratios measured side by side in one run).
import { $, glob } from 'zx';

$.verbose = true;
for (const file of (await glob('bench/*.bench.ts')).sort()) {
  // tsx's ES module hooks only: its CommonJS hook resolves the imports of an ES module that
  // pipeline/lazy.ts loads with require() under the `require` condition, which fast-xml-parser's
  // dependency xml-naming does not export (ERR_PACKAGE_PATH_NOT_EXPORTED on the JUnit parser).
  await $`node --import tsx/esm ${file}`;
}
