// bench/cli-start: how long the `telebench` command takes to start, over a bare `node -e ''`
// (goal <= 3x). Measured side by side in this one run, alternating, best of ROUNDS each (these
// machines are noisy): `telebench --help` and `telebench status` on an empty state folder, both
// through bin/telebench.js and the compiled bundle dist/telebench.js (scripts/build.mjs), and, for
// comparison, the sources through tsx (what every start cost before the bundle).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../pipeline/manifest.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const state = mkdtempSync(join(tmpdir(), 'bench-cli-'));
const bin = join(PROJECT_ROOT, 'bin', 'telebench.js');

function wall(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    env: { ...process.env, TELEBENCH_HOME: state },
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const cases: Record<string, string[]> = {
  "node -e ''": ['-e', ''],
  'telebench --help': [bin, '--help'],
  'telebench status': [bin, 'status'],
  'sources via tsx: --help': [
    '--import',
    'tsx',
    '-e',
    `const { main } = await import(${JSON.stringify(join(PROJECT_ROOT, 'pipeline/cli/main.ts'))}); process.exitCode = await main(['--help']);`,
  ],
};

wall([bin, '--help']); // builds the bundle when it is stale, outside the measurement
const best: Record<string, number> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, args] of Object.entries(cases)) {
    const ms = name.startsWith('sources') && round > 1 ? Infinity : wall(args);
    best[name] = Math.min(best[name] ?? Infinity, ms);
  }
}
rmSync(state, { recursive: true, force: true });
const base = best["node -e ''"]!;
console.log(`bench/cli-start: best of ${ROUNDS} wall times (tsx: best of 2)`);
for (const [name, ms] of Object.entries(best)) {
  console.log(
    `  ${name.padEnd(26)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / base).toFixed(2)}x node -e ''`,
  );
}
