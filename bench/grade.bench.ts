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
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tarFs from 'tar-fs';
import { DockerClient } from '../pipeline/providers/docker/client.js';
import { DockerExecutor } from '../pipeline/providers/docker/executor.js';
import { writeOverlay, type Overlay } from '../pipeline/providers/docker/overlay.js';
import { PINNED_ENV } from '../pipeline/providers/docker/recipes.js';
import { buildInstanceImages } from '../stages/swe5g/build/build.js';
import { validateInstance } from '../stages/swe5g/validate/validate.js';
import { gradingFiles, runPatch, type EvalInstance } from '../stages/swe5g/evaluate/grade.js';
import { predictionsJsonl, readPredictions } from '../stages/swe5g/evaluate/predictions.js';
import { selectTestDirs, testSpec } from '../stages/swe5g/harness/spec.js';
import { goFixture } from '../test/fixtures/repos/go-nil.js';
import { cFixture } from '../test/fixtures/repos/c-null.js';
import { pyFixture } from '../test/fixtures/repos/py-none.js';
import { ensureTestBase, resolveFixture, testSettings } from '../test/fixtures/repos/harness.js';

const docker = new DockerClient();
await docker.ping();
await ensureTestBase(docker);
const root = mkdtempSync(join(tmpdir(), 'telebench-bench-grade-'));
const state = join(root, 'state');
const settings = testSettings({ limits: { timeout_s: 60, memory_mib: 1024 }, fix_runs: 1 });
const executor = new DockerExecutor(docker);

/** One container, bare: create with the same limits, copy the files in, start, wait, remove. */
async function bareRun(image: string, command: string, files: Overlay): Promise<void> {
  const c = await docker.docker.createContainer({
    Image: image,
    Cmd: ['/bin/sh', '-c', command],
    WorkingDir: '/testbed',
    Env: Object.entries(PINNED_ENV).map(([k, v]) => `${k}=${v}`),
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      Memory: settings.limits.memory_mib * 2 ** 20,
      NanoCpus: Math.round(settings.limits.cpus * 1e9),
      PidsLimit: settings.limits.pids,
    },
  });
  if (Object.keys(files).length) {
    const dir = mkdtempSync(join(tmpdir(), 'bare-'));
    writeOverlay(dir, files);
    await c.putArchive(tarFs.pack(dir) as unknown as NodeJS.ReadableStream, { path: '/testbed' });
    rmSync(dir, { recursive: true, force: true });
  }
  await c.start();
  await c.wait();
  await c.remove({ force: true });
}

/** A stale-context copy of a patch: the first context line of its first hunk edited. */
function stale(patch: string): string {
  return patch.replace(/(@@[^\n]*@@[^\n]*\n) ([^\n]*)/, '$1 $2 (stale)');
}

const instances = new Map<string, EvalInstance>();
for (const fx of [
  goFixture(join(root, 'src-go'), 'good'),
  cFixture(join(root, 'src-c')),
  pyFixture(join(root, 'src-py')),
]) {
  const res = await resolveFixture(fx, state);
  const built = await buildInstanceImages(res, { docker, settings, stateDir: state });
  const v = await validateInstance(
    { resolved: res, testgen: fx.testgen, built },
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
  for (const r of bareRuns) await bareRun(r.image, r.command, r.files);
  return performance.now() - t0;
}

await bare(); // warm-up
let pipe = Infinity;
let b = Infinity;
let last: Awaited<ReturnType<typeof pipeline>> | undefined;
for (let i = 0; i < 3; i++) {
  const order = i % 2 === 0 ? ['pipe', 'bare'] : ['bare', 'pipe'];
  for (const o of order) {
    if (o === 'pipe') {
      last = await pipeline();
      pipe = Math.min(pipe, last.ms);
    } else b = Math.min(b, await bare());
  }
}
const n = instances.size;
console.log(
  `bench/grade: a predictions file of ${n} instances x 4 predictions (gold, gold with CRLF, stale context, empty), ${bareRuns.length} container runs needed, best of 3 interleaved runs, same container limits`,
);
for (const [model, k] of last!.resolved) console.log(`  ${model.padEnd(10)} resolved ${k}/${n}`);
for (const m of [...last!.methods].sort()) console.log(`  method ${m}`);
console.log(
  `pipeline ${(pipe / 1000).toFixed(2)} s  bare ${(b / 1000).toFixed(2)} s  ratio ${(pipe / b).toFixed(3)} (goal <= 1.1)`,
);
rmSync(root, { recursive: true, force: true });
