#!/usr/bin/env node
// Runs every benchmark under bench/ (each prints ratios measured side by side in one run).
import { $, glob } from 'zx';

$.verbose = true;
for (const file of (await glob('bench/*.bench.ts')).sort()) {
  await $`npx tsx ${file}`;
}
