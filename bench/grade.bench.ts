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
 * Second (issue 30: grading is validation's step): a C instance whose registry entry keeps a meson
 * build (c-null.ts with `cKeptEntry`), graded with its gold patch (`gradePrediction`: host apply
 * chain and the container) against validation's own fix step (`validateInstance`'s `fix_1`
 * seconds, the container's), best of interleaved rounds. Goal: <= 1.2. For reference, the recipe
 * grading ran before: the instance without the registry selection, so the step configures and
 * builds the whole project (`meson setup && meson compile`).
 *
 * Run: `npx tsx bench/grade.bench.ts` (needs Docker and the offline base: `node scripts/setup.mjs`).
 * `BENCH_ROUNDS` (default 2): interleaved rounds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Overlay } from '../pipeline/providers/docker/overlay.js';
import { validateInstance } from '../stages/swe5g/validate/validate.js';
import {
  gradePrediction,
  gradingFiles,
  type EvalInstance,
} from '../stages/swe5g/evaluate/grade.js';
import { stateInstance } from '../stages/swe5g/evaluate/instances.js';
import { predictionsJsonl, readPredictions } from '../stages/swe5g/evaluate/predictions.js';
import { planSpec, registryTestsOf } from '../stages/swe5g/test-plan.js';
import { buildInstanceImages } from '../stages/swe5g/build/build.js';
import { cFixture, cKeptEntry } from '../test/fixtures/repos/c-null.js';
import { resolveFixture } from '../test/fixtures/repos/harness.js';
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
  const inputs = { resolved: res, testgen, built };
  const v = await validateInstance(inputs, { executor, settings, saveLog: () => 'x' });
  instances.set(v.instance_id, stateInstance(v, inputs, undefined, settings));
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
    const { grade } = await gradePrediction(
      { instance: instances.get(p.instance_id)!, model_patch: p.model_patch },
      { executor, settings, saveLog: () => 'x' },
    );
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
  const spec = planSpec(inst, settings, p.model_patch);
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

// --- grading = validation's fix step, on a C instance with a kept meson build
const entry = cKeptEntry();
const cfx = cFixture(join(root, 'src-c-kept'));
const cres = await resolveFixture(cfx, setup.state);
const cbuilt = await buildInstanceImages(cres, {
  docker: setup.docker,
  settings,
  stateDir: setup.state,
  registry: new Map([[entry.id, entry]]),
});
const cinputs = { resolved: cres, testgen: cfx.testgen, built: cbuilt };
const reg = registryTestsOf(entry, cres.patch)!;
const validate = () =>
  validateInstance(cinputs, {
    executor,
    settings,
    registryScope: reg.scope!,
    registryCommands: reg.commands!,
    registrySelection: reg.selection!,
    saveLog: () => 'x',
  });
const cinst = stateInstance(await validate(), cinputs, entry, settings);
const gradeMs = async (instance: EvalInstance): Promise<number> => {
  const t0 = performance.now();
  const { grade } = await gradePrediction(
    { instance, model_patch: cres.patch },
    { executor, settings, saveLog: () => 'x' },
  );
  if (!grade.resolved) throw new Error(`bench/grade: gold not resolved: ${JSON.stringify(grade)}`);
  return performance.now() - t0;
};
const fixStepMs = async (): Promise<number> => (await validate()).step_seconds.fix_1! * 1000;
const step = await bestOfInterleaved(rounds, () => gradeMs(cinst), fixStepMs);
// the recipe grading ran before issue 30: no selection, the whole project configured and built
const full = await bestOfInterleaved(
  rounds,
  () => gradeMs({ ...cinst, test_selection: { exclude: [] } }),
  fixStepMs,
);
console.log(
  `bench/grade (C, kept meson build, gold patch, best of ${rounds} interleaved): grading ${(step.a / 1000).toFixed(2)} s  validation fix step ${(step.b / 1000).toFixed(2)} s  ratio ${(step.a / step.b).toFixed(3)} (goal <= 1.2)`,
);
console.log(
  `  reference, the recipe before (meson setup + compile of the whole project): grading ${(full.a / 1000).toFixed(2)} s  ratio ${(full.a / full.b).toFixed(3)}`,
);
setup.cleanup();
