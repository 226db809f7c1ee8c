// bench/resilience-score: `telebench score` on all eight published models' main + aux files
// (7,160 rows of the authors' Experiments/), every mode (recorded, published, strict, lenient)
// with intervals, side by side in this run with:
//   - reading and validating the rows alone (the floor every score pays), and
//   - the authors' own scorer (their src/parsing.py through scripts/published-scorer.py, one
//     python3 process) on the same rows: what the `published` mode reimplements.
// Goal: telebench score under 5 s wall for the 7,160 rows on a loaded 2-core machine.
// The eight models and the Python column need the authors' code (TELERESILIENCEBENCH_SRC or
// TELEBENCH_MIRRORS_DIR, see test/fixtures/trb-authors.ts) and python3 with tiktoken; without
// them the bench scores the two shared models' files (test/fixtures/data-root.ts) and says the
// Python column is unavailable, and why.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readPredictions, scoreFiles } from '../stages/resilience-eval/score.js';
import { indexInstances } from '../stages/resilience-eval/eval-instance.js';
import {
  authorsCheckout,
  authorsUnavailable,
  runAuthorsScorer,
} from '../test/fixtures/trb-authors.js';
import { dataRoot, experimentFiles } from '../test/fixtures/data-root.js';
import { SHARED_MODELS } from '../test/fixtures/trb-reference.js';

const unavailable = authorsUnavailable();
const root = unavailable === null ? authorsCheckout() : null;
const exp = root && join(root, 'Experiments');
const files = exp
  ? readdirSync(exp, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => ['main', 'aux'].map((a) => join(exp, d.name, `${a}.jsonl`)))
  : SHARED_MODELS.flatMap(experimentFiles);
const aux = root
  ? join(root, 'data/AuxiliaryBenchmark.json')
  : dataRoot('teleresiliencebench/AuxiliaryBenchmark.json');

/** Wall and CPU milliseconds of `fn`, best of `runs` (the least disturbed by other load). */
function time(fn: () => unknown, runs = 3): { wall: number; cpu: number; out: unknown } {
  let best = { wall: Infinity, cpu: Infinity, out: null as unknown };
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const out = fn();
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (wall < best.wall) best = { wall, cpu: (c.user + c.system) / 1000, out };
  }
  return best;
}

const read = time(() => files.reduce((n, f) => n + readPredictions(f, new Map()).rows.length, 0));
const score = time(() => scoreFiles(files, indexInstances([aux])));
const theirs = unavailable === null ? time(() => runAuthorsScorer(files).length, 2) : null;
const rows = (score.out as ReturnType<typeof scoreFiles>).reduce((n, r) => n + r.s.rows, 0);
console.log(`telebench score, ${files.length} files, ${rows} rows (best of 3; ms wall / cpu):`);
console.log(
  `  read + validate rows only:            ${read.wall.toFixed(0)} / ${read.cpu.toFixed(0)}`,
);
console.log(
  `  score, 4 modes + intervals:           ${score.wall.toFixed(0)} / ${score.cpu.toFixed(0)}  (goal < 5000 wall; ${(score.wall / read.wall).toFixed(1)}x the read floor)`,
);
console.log(
  theirs
    ? `  the authors' scorer (python3 incl. start-up, parse only): ${theirs.wall.toFixed(0)} wall  (telebench score / theirs: ${(score.wall / theirs.wall).toFixed(2)})`
    : `  the authors' scorer: unavailable (${unavailable}); scored the ${SHARED_MODELS.length} shared models only`,
);
