/**
 * bench/grade: grading a predictions file of N instances (issue 22) against the bare container
 * runs it needs. The file holds, per instance, the gold patch, the gold patch with CRLF line
 * endings, one with a stale context line (applied by `patch --fuzz=5`) and an empty patch. The
 * pipeline side reads the file and grades every row through the harness (`runPatch`: SWE-bench's
 * apply chain on the host, the test patch, one fresh limited container, the log blob, the parse,
 * the agreement check, the verdict); the bare side runs, for every row that needs one, the same
 * command in the same kind of container with the same files (computed beforehand), nothing else.
 * An empty prediction needs no container (SWE-bench leaves it out of the run). Goal: <= 1.1.
 *
 * Run: `npx tsx bench/grade.bench.ts` (needs Docker and the offline base: `node scripts/setup.mjs`).
 * `BENCH_ROUNDS` (default 2): interleaved rounds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Overlay } from '../pipeline/providers/docker/overlay.js';
import { validateInstance } from '../stages/swe5g/validate/validate.js';
import { gradingFiles, runPatch, type EvalInstance } from '../stages/swe5g/evaluate/grade.js';
import { predictionsJsonl, readPredictions } from '../stages/swe5g/evaluate/predictions.js';
import { selectTestDirs, testSpec } from '../stages/swe5g/harness/spec.js';
import { benchSetup, bestOfInterleaved } from './harness-setup.js';

const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
// validation here only makes the graded instances: one fresh run, one fix run
const setup = await benchSetup('grade', { fix_runs: 1, test_repeats: 1 });
const { settings, executor, root } = setup;

/** A stale-context copy of a patch: the first context line of its first hunk edited. */
function stale(patch: string): string {
  return patch.replace(/(@@[^\n]*@@[^\n]*\n) ([^\n]*)/, '$1 $2 (stale)');
}

const instances = new Map<string, EvalInstance>();
for (const { res, testgen, built } of setup.instances) {
  const v = await validateInstance(
    { resolved: res, testgen, built },
    { executor, settings, saveLog: () => 'x' },
  );
  instances.set(v.instance_id, {
    ...v,
    image: v.images.instance,
    image_recipe: built.image_recipe,
    source_dir: built.source_dir,
    module_dir: built.module_dir,
    test_dirs: selectTestDirs({
      recipe: built.image_recipe,
      scope: 'touched',
      moduleDir: built.module_dir,
      sourceDirs: res.test_dirs,
      testPatches: [v.test_patch],
    }),
    ...(v.test_commands ? { test_commands: v.test_commands } : {}),
  });
}
const file = join(root, 'preds.jsonl');
writeFileSync(
  file,
  predictionsJsonl(
    [...instances.values()].flatMap((i) => [
      { instance_id: i.instance_id, model_name_or_path: 'gold', model_patch: i.patch },
      {
        instance_id: i.instance_id,
        model_name_or_path: 'gold-crlf',
        model_patch: i.patch.replaceAll('\n', '\r\n'),
      },
      { instance_id: i.instance_id, model_name_or_path: 'stale', model_patch: stale(i.patch) },
      { instance_id: i.instance_id, model_name_or_path: 'empty', model_patch: '' },
    ]),
  ),
);

/** The pipeline side: read the file, grade every row through the harness. */
async function pipeline(): Promise<{
  ms: number;
  resolved: Map<string, number>;
  methods: Set<string>;
}> {
  const t0 = performance.now();
  const resolved = new Map<string, number>();
  const methods = new Set<string>();
  for (const p of readPredictions(file).rows) {
    const { grade } = await runPatch(instances.get(p.instance_id)!, p.model_patch, 'grade', {
      executor,
      settings,
      saveLog: () => 'x',
    });
    resolved.set(
      p.model_name_or_path,
      (resolved.get(p.model_name_or_path) ?? 0) + (grade.resolved ? 1 : 0),
    );
    methods.add(`${p.model_name_or_path}: ${grade.patch_method}`);
  }
  return { ms: performance.now() - t0, resolved, methods };
}

// the bare runs' files and commands, computed beforehand (outside the timing)
const bareRuns: { image: string; command: string; files: Overlay }[] = [];
for (const p of readPredictions(file).rows) {
  const inst = instances.get(p.instance_id)!;
  const prepared = await gradingFiles(inst.source_dir, p.model_patch, inst.test_patch);
  if (!('files' in prepared)) continue;
  const spec = testSpec({
    recipe: inst.image_recipe,
    dirs: inst.test_dirs,
    moduleDir: inst.module_dir,
    settings,
    commands: inst.test_commands,
  });
  bareRuns.push({ image: inst.image, command: spec.command, files: prepared.files });
}
async function bare(): Promise<number> {
  const t0 = performance.now();
  for (const r of bareRuns) await setup.bareRun(r.image, r.command, r.files);
  return performance.now() - t0;
}

await bare(); // warm-up
let last: Awaited<ReturnType<typeof pipeline>> | undefined;
const best = await bestOfInterleaved(
  rounds,
  async () => {
    last = await pipeline();
    return last.ms;
  },
  bare,
);
const n = instances.size;
console.log(
  `bench/grade: a predictions file of ${n} instances x 4 predictions (gold, gold with CRLF, stale context, empty), ${bareRuns.length} container runs needed, best of ${rounds} interleaved runs, same container limits`,
);
for (const [model, k] of last!.resolved) console.log(`  ${model.padEnd(10)} resolved ${k}/${n}`);
for (const m of [...last!.methods].sort()) console.log(`  method ${m}`);
console.log(
  `pipeline ${(best.a / 1000).toFixed(2)} s  bare ${(best.b / 1000).toFixed(2)} s  ratio ${(best.a / best.b).toFixed(3)} (goal <= 1.1)`,
);
setup.cleanup();
