/**
 * `swe5g.build`: the three image layers of one Resolved instance (SWE-bench layering: base ->
 * env -> instance, each named from a hash of its recipe), built with a concurrency limit, reused
 * when present, with each layer's size. Records the toolchain the base image really has
 * (`go version`, `gcc -dumpfullversion`, `python3 --version`); a Go toolchain older than go.mod's
 * `go` line skips the instance as `toolchain_mismatch` before anything runs.
 */
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LimitFunction } from 'p-limit';
import type * as Zx from 'zx';
import { defineStage } from '../../../pipeline/stage.js';
import { PreflightError, SkipItem, TelebenchError } from '../../../pipeline/errors.js';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import {
  baseRecipe,
  envRecipe,
  instanceRecipe,
  writeContext,
  type CBuildSpec,
  type GoWarmSpec,
  type ImageRecipe,
  type RecipeName,
} from '../../../pipeline/providers/docker/recipes.js';
import { pythonEnvSpec, pythonRequirements, type PythonRequirements } from './python-env.js';
import {
  cEnvKey,
  mesonSelection,
  resolveSubprojects,
  type MissingSubproject,
  type ResolvedSubproject,
} from './c-env.js';
import { envRepoOnce, envRepoPath, instanceSource, type DeltaRecord } from './tree-delta.js';
import type { EnvironmentSpec, RegistryEntry } from '../registry.js';
import { filesOfPatch } from '../resolve/packages.js';
import { DockerExecutor } from '../../../pipeline/providers/docker/executor.js';
import { checkImageContract } from '../../../pipeline/providers/docker/contract.js';
import { executorFor, executorPreflight, nodeBuildOptions, pushLayers } from '../executors.js';
import { buildOnNode } from '../../../pipeline/providers/docker/swarm-build.js';
import type { SwarmExecutor } from '../../../pipeline/providers/docker/swarm.js';
import { ensureRootfs, hostGo } from '../../../pipeline/providers/docker/offline-base.js';
import { pythonEraOf, type InterpreterChoice } from './python-era.js';
import { exportCleanRepo, fileAt } from '../../../pipeline/providers/git/repo.js';
import { lazy } from '../../../pipeline/lazy.js';
import type { KeyValue } from '../../../pipeline/store/store.js';
import type { Resolved } from '../types.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import { buildConcurrency, type EnvironmentsSettings } from '../environments-config.js';
import { mirrorPath } from '../resolve/resolve.js';
import { planPerResolved, sameKeyIn } from '../resolve/plan.js';
import { withoutIssueText } from '../statement/current.js';
import { fillHostModCache, goDepFiles, goModuleFailure, type HostModCache } from './go-modules.js';
import { goImportsInImage, type GoImportsRecord } from './go-imports.js';
import { namedPythonEnvFailure, pythonLiftsInImage, type PythonLift } from './python-lifts.js';
import type { InstanceGit } from './instance-git.js';
import { testgenStage } from '../testgen/testgen.js';
import { buildContextOf } from './build-context.js';
import { evictOverBudget, touchImage } from './eviction.js';

export { hostModCache } from './go-modules.js';

const zx = lazy<typeof Zx>('zx');

/** Output of `swe5g.build` (key = instance_id). Sizes in bytes; env/instance are layer deltas. */
export interface Built {
  instance_id: string;
  image_recipe: RecipeName;
  images: { base: string; env: string; instance: string };
  /** The base image the base layer starts FROM (registry or offline). */
  base_from: string;
  toolchain: string;
  sizes: { base: number; env_layer: number; instance_layer: number; instance_total: number };
  /** Host folder with the clean source tree at base_commit (the local executor's instance). */
  source_dir: string;
  /** Subfolder of the repository the module lives in ('' for the root). */
  module_dir: string;
  build_seconds: { base: number; env: number; instance: number };
  /**
   * Python with a registry `environment.python`: how many requirements the env layer installs
   * and the overrides that replaced (`to`) or left out (`to: null`) one of the files' lines.
   */
  python_env?: {
    requirements: number;
    overrides: { from: string; to: string | null; reason: string }[];
    /** The era's base (python_era `interpreter: era`): suite, its Python, the evidence. */
    interpreter?: InterpreterChoice;
    /** The era pins' date (uv `--exclude-newer`, python_era `pins: era`). */
    exclude_newer?: string;
    /**
     * Pins of the era that did not install on the era's Python, each replaced by its oldest
     * later release that does (python_era `max_lifts`, python-lifts.ts); [] when none was;
     * absent when the env layer could lift none (`max_lifts: 0`, `pins: latest`).
     */
    lifts?: PythonLift[];
  };
  /**
   * C with a registry `environment`: the env layer's kept build (environment commit, subprojects
   * read from the mirrors, wraps that could not be had) and the instance layer's delta from it.
   */
  c_build?: {
    env_commit: string;
    subprojects: ResolvedSubproject[];
    missing_subprojects: MissingSubproject[];
    delta: { changed: number; deleted: number };
    /**
     * The instance layer's `.git` over the env layer's repository (the commits after the env
     * commit); absent when the whole clean `.git` was copied (base = env commit needs none, or
     * the history could not be made complete) or when the image was already built.
     */
    git?: InstanceGit;
  };
  /** A Go or Python monorepo folder: the instance layer as a delta over the env layer's tree. */
  delta?: DeltaRecord;
  /**
   * Go with the env layer's import check (issue 31): the modules it fetched (host) and the
   * imports no module of the go.mod provides (a warning: the steps cannot build what imports them).
   */
  go_imports?: GoImportsRecord;
}

/** What building needs besides the Resolved record. */
export interface BuildContext {
  docker: DockerClient;
  settings: EnvironmentsSettings;
  stateDir: string;
  kv?: KeyValue;
  /** Limits concurrent image builds (shared by all items of a run). */
  limit?: LimitFunction;
  log?: (message: string) => void;
  signal?: AbortSignal;
  /** The registry by entry id (its `environment` keys); absent: recipes without them. */
  registry?: Map<string, RegistryEntry>;
  /** Local mirrors folder (meson subprojects are read there first). */
  mirrorsDir?: string;
  /** `swe5g.source: git`: no meson subproject is fetched from `git_url_base`. */
  offline?: boolean;
}

/** Recipe name of a language (registry `image` field normally says it). */
export function recipeOf(language: Resolved['language']): RecipeName {
  return language === 'go' ? 'go' : language === 'c' ? 'c-meson' : 'python';
}

/** Compares dotted versions numerically: negative when a < b. `go1.26.8` and `1.21` both work. */
export function compareVersions(a: string, b: string): number {
  const nums = (v: string): number[] => (v.match(/\d+/g) ?? []).map(Number);
  const x = nums(a);
  const y = nums(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const building = new Map<string, Promise<void>>();
const pullAttempts = new Map<string, Promise<{ ok: boolean; error?: string }>>();

/** Builds `recipe` unless its image exists; concurrent callers of the same name share one build. */
async function ensureImage(
  bc: BuildContext,
  recipe: ImageRecipe,
  labels: Record<string, string>,
): Promise<number> {
  const t0 = Date.now();
  if (await bc.docker.hasImage(recipe.name)) return 0;
  let p = building.get(recipe.name);
  if (!p) {
    const run = async (): Promise<void> => {
      if (await bc.docker.hasImage(recipe.name)) return;
      const ctxDir = mkdtempSync(join(tmpdir(), `telebench-${recipe.layer}-`));
      try {
        writeContext(recipe, ctxDir);
        const all = { 'telebench.layer': recipe.layer, 'telebench.recipe': recipe.hash, ...labels };
        const s = bc.settings;
        if (s.executor === 'swarm' && s.swarm.builds.on === 'nodes') {
          bc.log?.(`building ${recipe.layer} image ${recipe.name} on a swarm node`);
          const nb = await buildOnNode(
            bc.docker,
            executorFor(s, bc.docker) as SwarmExecutor,
            ctxDir,
            recipe.name,
            all,
            nodeBuildOptions(s),
            bc.signal,
          );
          bc.log?.(`built ${recipe.layer} image ${recipe.name} on swarm node ${nb.node}`);
        } else {
          bc.log?.(`building ${recipe.layer} image ${recipe.name}`);
          await bc.docker.build(ctxDir, recipe.name, all, bc.signal);
        }
      } finally {
        rmSync(ctxDir, { recursive: true, force: true });
      }
    };
    p = (bc.limit ? bc.limit(run) : run()).finally(() => building.delete(recipe.name));
    building.set(recipe.name, p);
  }
  await p;
  return (Date.now() - t0) / 1000;
}

/**
 * The image the base layer starts FROM, per `base_source`.
 * @throws PreflightError when the offline base is needed but missing (hint: `telebench images base`)
 * @throws TelebenchError `base_image_unavailable` (tier infra) when `registry` mode cannot pull it
 */
export async function resolveBaseFrom(
  bc: BuildContext,
  recipe: RecipeName,
  version: string,
  suite?: string,
): Promise<string> {
  const s = bc.settings;
  const goMinor = (/^(\d+\.\d+)/.exec(version)?.[1] ?? version) || 'latest';
  const registryImage = s.base_images[recipe]
    .replace('{version}', goMinor)
    .replace('{suite}', suite ?? s.offline.suite);
  const offlineImage = async (): Promise<string> => {
    // a Python era's other suite: its own rootfs, made here when missing (debootstrap, minutes)
    if (suite && suite !== s.offline.suite) return eraRootfs(bc, suite);
    let name = s.offline.rootfs_image;
    if (recipe === 'go') {
      const hg = await hostGo();
      if (!hg.found)
        throw new PreflightError(
          'go',
          `the offline Go base needs a host Go toolchain (${hg.reason})`,
          'install Go or use base_source: registry',
        );
      name = s.offline.go_image.replace('{go}', hg.version);
    }
    if (!(await bc.docker.hasImage(name))) {
      throw new PreflightError(
        'docker image ' + name,
        `the offline base image ${name} is missing`,
        'run `telebench images base` (or `node scripts/setup.mjs`)',
      );
    }
    return name;
  };
  if (s.base_source === 'offline') return offlineImage();
  if (await bc.docker.hasImage(registryImage)) return registryImage;
  // one pull attempt per image and process: a registry that is down is not asked per item
  let pull = pullAttempts.get(registryImage);
  if (!pull) {
    pull = bc.docker.tryPull(registryImage, 30_000);
    pullAttempts.set(registryImage, pull);
  }
  const pulled = await pull;
  if (pulled.ok) return registryImage;
  if (s.base_source === 'registry') {
    throw new TelebenchError(
      'base_image_unavailable',
      `cannot pull ${registryImage}: ${pulled.error}`,
      {
        tier: 'infra',
        context: { image: registryImage },
      },
    );
  }
  bc.log?.(`${registryImage} not pullable (${pulled.error}); using the offline base`);
  return offlineImage();
}

const eraRootfsBuilds = new Map<string, Promise<string>>();

/**
 * The offline rootfs image of a Python era's suite (python_era `rootfs_image`), built once per
 * process when missing ({@link ensureRootfs}: debootstrap from the host's apt mirror).
 * @throws TelebenchError `offline_base_failed` (infra) when debootstrap or the build fails
 */
function eraRootfs(bc: BuildContext, suite: string): Promise<string> {
  const e = bc.settings.python_era;
  const image = e.rootfs_image.replace('{suite}', suite);
  let p = eraRootfsBuilds.get(image);
  if (!p) {
    const dir = e.rootfs_dir.replace('{suite}', suite);
    p = ensureRootfs(bc.docker, { image, dir, suite, ...(bc.log ? { log: bc.log } : {}) }).then(
      () => image,
      (err: unknown) => {
        eraRootfsBuilds.delete(image);
        throw new TelebenchError(
          'offline_base_failed',
          `building the ${suite} rootfs ${image} failed: ${(err as Error).message}`,
          { tier: 'infra', cause: err, context: { suite, image } },
        );
      },
    );
    eraRootfsBuilds.set(image, p);
  }
  return p;
}

/**
 * The toolchain version inside `image` (`go1.26.8`, `gcc 12.2.0`, `python 3.11.2`), cached by image id.
 * @throws TelebenchError `toolchain_unknown` (tier infra) when the version command fails
 */
export async function toolchainOf(
  bc: BuildContext,
  image: string,
  recipe: RecipeName,
): Promise<string> {
  const id = (await bc.docker.inspect(image))?.Id ?? image;
  const cached = bc.kv?.get<string>('swe5g.toolchain', id);
  if (cached) return cached;
  const cmd =
    recipe === 'go'
      ? 'go env GOVERSION'
      : recipe === 'c-meson'
        ? 'echo gcc $(gcc -dumpfullversion) meson $(meson --version)'
        : 'python3 --version';
  const log = bc.log;
  const executor = new DockerExecutor(
    bc.docker,
    log ? { onCleanupError: (e) => log(e.message) } : {},
  );
  const r = await executor.run({
    step: 'toolchain',
    instance: { image, workdir: '/', sourceDir: '' },
    files: {},
    command: cmd,
    collect: [],
    limits: { memory: 512 * 2 ** 20, cpus: 1, pids: 256, timeoutMs: 60_000 },
  });
  const out = r.stdout.trim().toLowerCase();
  if (r.exitCode !== 0 || !out) {
    throw new TelebenchError(
      'toolchain_unknown',
      `cannot read the toolchain version of ${image}: ${r.stderr.trim()}`,
      {
        tier: 'infra',
        context: { image },
      },
    );
  }
  const version = recipe === 'python' ? out.replace(/^python\s+/, 'python ') : out;
  bc.kv?.set('swe5g.toolchain', id, version);
  return version;
}

/**
 * Skips an instance whose Go toolchain is older than its go.mod `go` line (`res.version`, e.g.
 * '1.21'); other recipes, and versions that are tags rather than `major.minor`, pass.
 * @param toolchain what the base image or host reports (`go1.20.3`, `go version go1.21 ...`)
 * @param where the image name, or `'host'` for the local executor
 * @throws SkipItem `toolchain_mismatch` with context { toolchain, required, image }
 */
export function assertToolchain(
  res: Pick<Resolved, 'instance_id' | 'version'>,
  recipe: RecipeName,
  toolchain: string,
  where: string,
): void {
  if (recipe !== 'go' || !/^\d+\.\d+/.test(res.version)) return;
  if (compareVersions(toolchain, res.version) >= 0) return;
  const has = where === 'host' ? 'the host has' : `${where} has`;
  throw new SkipItem(
    'toolchain_mismatch',
    `${res.instance_id}: go.mod asks go ${res.version} but ${has} ${toolchain}`,
    { toolchain, required: res.version, image: where },
  );
}

/**
 * What the image build reads of an instance: a `Resolved` record, or a released row's own fields
 * (`telebench verify`, the release check), never a record rebuilt to look like one.
 */
export type BuildSubject = Pick<
  Resolved,
  | 'instance_id'
  | 'repo'
  | 'registry_id'
  | 'language'
  | 'version'
  | 'environment_setup_commit'
  | 'base_commit'
  | 'patch'
> &
  /** Absent for a released row (it keeps no merge commit): the env layer then has no fix go.mod. */
  Partial<Pick<Resolved, 'merge_commit'>> &
  /** Files resolve found absent and unread (reads.ts): the source export goes on without them. */
  Partial<Pick<Resolved, 'absent_files'>>;

/**
 * Checks the image contract of a built instance image once per image id (kv
 * `swe5g.image_contract`): bash, git and patch present, /testbed at `base_commit` and clean,
 * no object or ref after the base.
 * @throws TelebenchError `image_contract_failed` (infra) naming every violation
 */
async function contractOnce(bc: BuildContext, image: string, baseCommit: string): Promise<void> {
  const id = (await bc.docker.inspect(image))?.Id ?? image;
  if (bc.kv?.get<string>('swe5g.image_contract', id) === baseCommit) return;
  await checkImageContract(bc.docker, image, baseCommit);
  bc.kv?.set('swe5g.image_contract', id, baseCommit);
}

/**
 * Builds (or reuses) base, env and instance images for `res`.
 * @throws SkipItem `toolchain_mismatch` when the base's Go is older than go.mod asks
 * @throws TelebenchError `image_build_failed` (infra) from a failed docker build,
 *   `image_contract_failed` (infra) when the instance image breaks the image contract
 */
export async function buildInstanceImages(res: BuildSubject, bc: BuildContext): Promise<Built> {
  const s = bc.settings;
  const recipe = recipeOf(res.language);
  const mirror = mirrorPath(bc.stateDir, res.repo);
  const module_dir = res.registry_id.includes(':') ? res.registry_id.split(':')[1]! : '';
  if (s.executor === 'local') return buildLocal(res, bc, recipe, mirror, module_dir);
  const spec = bc.registry?.get(res.registry_id)?.environment;
  const py = recipe === 'python' ? spec?.python : undefined;
  // the interpreter and pins of the environment commit's era (issue 31, python-era.ts)
  const era = py
    ? await pythonEraOf(mirror, res.environment_setup_commit, module_dir, py, s.python_era)
    : undefined;
  const from = await resolveBaseFrom(bc, recipe, res.version, era?.interpreter?.suite);
  // a Go entry with cgo gets its C compiler (registry `environment.cgo`, docs/environments.md)
  const cgo = recipe === 'go' && spec?.cgo === true;
  const packages = spec
    ? [...(recipe === 'c-meson' || cgo ? spec.compilers : []), ...spec.packages]
    : [];
  const base = baseRecipe(s.image_prefix, recipe, from, packages, { cgo });
  const tBase = await ensureImage(bc, base, { 'telebench.parent': from });
  const toolchain = await toolchainOf(bc, base.name, recipe);
  assertToolchain(res, recipe, toolchain, base.name);
  // env: dependency files at the environment commit (Go: and after the fix, when it bumps go.mod)
  const depFiles: Record<string, string> = {};
  if (recipe === 'go') Object.assign(depFiles, await goDepFiles(mirror, res, module_dir));
  let pyReqs: PythonRequirements | undefined;
  if (py) {
    pyReqs = await pythonRequirements(mirror, res.environment_setup_commit, py);
    if (pyReqs.text) depFiles['requirements.txt'] = pyReqs.text;
  } else if (recipe === 'python') {
    const n = module_dir ? `${module_dir}/requirements.txt` : 'requirements.txt';
    const text = await fileAt(mirror, res.environment_setup_commit, n);
    if (text !== undefined) depFiles['requirements.txt'] = text;
  }
  let hostCache: HostModCache | undefined;
  if (recipe === 'go' && s.go_modules === 'host' && depFiles['go.mod'] !== undefined) {
    // with the import check over the env commit's folder (issue 31, go-imports.ts)
    const tree = { mirror, commit: res.environment_setup_commit, cgo, unread: unreadOf(res) };
    hostCache = await fillHostModCache(bc.stateDir, depFiles, module_dir, bc.mirrorsDir, tree);
  }
  const goModCache = hostCache?.dir;
  const cEnv = recipe === 'c-meson' && spec ? await cEnvironment(res, bc, mirror, spec) : undefined;
  // a Go or Python monorepo folder: the env layer keeps the env commit's repository (issue 31)
  const monoTree = module_dir !== '' && recipe !== 'c-meson';
  const envRepo = envRepoPath(bc.stateDir, res.repo, res.environment_setup_commit);
  const goWarm = recipe === 'go' ? goWarmSpec(res, bc, module_dir, monoTree) : undefined;
  const env = envRecipe(s.image_prefix, recipe, base.name, depFiles, {
    goModCache,
    cBuild: cEnv?.spec,
    goWarm,
    python: py && pythonEnvSpec(py, era?.exclude_newer, s.python_era.uv, s.python_era.max_lifts),
    ...(recipe === 'python' && monoTree ? { tree: { source: envRepo, key: envTreeKey(res) } } : {}),
  });
  const repoInEnv = cEnv?.spec.source ?? (monoTree ? envRepo : undefined);
  if (repoInEnv && !(await bc.docker.hasImage(env.name))) {
    const commit = res.environment_setup_commit;
    await envRepoOnce(mirror, commit, repoInEnv, true, unreadOf(res));
  } else if (goWarm && !(await bc.docker.hasImage(env.name))) {
    // one export per env tree in this process (the items of one environment commit build at once)
    let p = envTrees.get(goWarm.source);
    if (!p) {
      p = exportEnvTree(mirror, res.environment_setup_commit, goWarm.source, bc, unreadOf(res));
      envTrees.set(goWarm.source, p);
      p.catch(() => envTrees.delete(goWarm.source));
    }
    await p;
  }
  const tEnv = await ensureImage(bc, env, { 'telebench.parent': base.name }).catch(
    (err: unknown) => {
      // a Python pin of the era that installs at no later release either: named (python-lifts.ts)
      if (recipe === 'python') throw namedPythonEnvFailure(err, env.name);
      // A module the proxy no longer (or not yet) serves: say so instead of a generic build failure.
      const f =
        recipe === 'go' ? goModuleFailure(err instanceof Error ? err.message : String(err)) : null;
      if (!f) throw err;
      throw new TelebenchError(
        'dependency_unavailable',
        `${res.instance_id}: the env layer cannot download ${f.module} (${f.reason}); ${f.permanent ? 'the proxy refuses it (permanent): ' : 'retry later, or '}use go_modules: host, which reads the host's module cache (go env GOMODCACHE, also a cache holding only .mod and .zip files) before the host's GOPROXY`,
        {
          tier: 'infra',
          context: {
            module: f.module,
            ...(f.url ? { url: f.url } : {}),
            ...(f.status !== undefined ? { status: f.status } : {}),
            permanent: f.permanent,
            fix_go_mod: depFiles['fix.go.mod'] !== undefined,
            image: env.name,
          },
          cause: err,
        },
      );
    },
  );
  // the import check's record: the host's, or the report the env build wrote (read once per image)
  const goImports =
    recipe === 'go' && depFiles['go.mod'] !== undefined
      ? (hostCache?.imports ?? (await goImportsInImage(bc.docker, env.name, bc.kv)))
      : undefined;
  // the pins of the era the env layer lifted, read back from the image (once per image)
  const pyLifts =
    py && era?.exclude_newer && s.python_era.max_lifts > 0 && pyReqs?.text
      ? await pythonLiftsInImage(bc.docker, env.name, bc.kv)
      : undefined;
  if (goImports?.unresolved.length)
    bc.log?.(
      `${res.instance_id}: warning: no module of the go.mod provides ${goImports.unresolved.map((u) => u.package).join(', ')}; the test steps cannot build what imports them`,
    );
  // instance: the base commit's clean repository, whole or as a delta over the env layer's
  const { inst, source_dir, delta } = await instanceSource({
    mirror,
    stateDir: bc.stateDir,
    res,
    unread: unreadOf(res),
    envRepo: repoInEnv,
    hasImage: (n) => bc.docker.hasImage(n),
    recipeOf: (d) =>
      instanceRecipe(
        s.image_prefix,
        recipe,
        env.name,
        join(bc.stateDir, 'swe5g', 'instances', res.instance_id, 'testbed'),
        `${res.repo}@${res.base_commit}`,
        module_dir,
        d && cEnv ? { ...d, selection: mesonSelection(spec, filesOfPatch(res.patch))! } : d,
        py?.protos,
      ),
  });
  const tInst = await ensureImage(bc, inst, {
    'telebench.instance_id': res.instance_id,
    'telebench.parent': env.name,
  });
  await contractOnce(bc, inst.name, res.base_commit);
  const [sb, se, si] = await Promise.all(
    [base.name, env.name, inst.name].map((n) => bc.docker.size(n)),
  );
  return {
    instance_id: res.instance_id,
    image_recipe: recipe,
    images: { base: base.name, env: env.name, instance: inst.name },
    base_from: from,
    toolchain,
    sizes: {
      base: sb ?? 0,
      env_layer: (se ?? 0) - (sb ?? 0),
      instance_layer: (si ?? 0) - (se ?? 0),
      instance_total: si ?? 0,
    },
    source_dir,
    module_dir,
    build_seconds: { base: tBase, env: tEnv, instance: tInst },
    ...(pyReqs
      ? {
          python_env: {
            requirements: pyReqs.text.split('\n').filter(Boolean).length,
            overrides: pyReqs.applied,
            ...(era?.interpreter ? { interpreter: era.interpreter } : {}),
            ...(era?.exclude_newer ? { exclude_newer: era.exclude_newer } : {}),
            ...(pyLifts ? { lifts: pyLifts } : {}),
          },
        }
      : {}),
    ...(cEnv && delta
      ? {
          c_build: {
            env_commit: res.environment_setup_commit,
            subprojects: cEnv.subprojects,
            missing_subprojects: cEnv.missing,
            delta: { changed: delta.changed, deleted: delta.deleted },
            ...(delta.git ? { git: delta.git } : {}),
          },
        }
      : delta
        ? { delta }
        : {}),
    ...(goImports ? { go_imports: goImports } : {}),
  };
}

const envTrees = new Map<string, Promise<void>>();

/** The files resolve recorded as absent and unread: a source export goes on without them. */
function unreadOf(res: BuildSubject): (path: string) => boolean {
  const paths = new Set((res.absent_files ?? []).map((f) => f.path));
  return (p) => paths.has(p);
}

/** Identity of an env commit's tree: `<repo>@<environment_setup_commit>`. */
const envTreeKey = (res: BuildSubject): string => `${res.repo}@${res.environment_setup_commit}`;

/**
 * Where a Go instance's env layer gets the tree whose build cache it keeps:
 * `<state>/swe5g/envsrc/<owner+name>@<environment_setup_commit>` (written by
 * {@link exportEnvTree} only when the env image is built), or for a monorepo folder (`kept`) the
 * env commit's repository (`envRepoPath`), which stays in the layer. Instances of one
 * environment commit (and module folder) share it, and so their env image.
 */
function goWarmSpec(
  res: BuildSubject,
  bc: BuildContext,
  moduleDir: string,
  kept: boolean,
): GoWarmSpec {
  const tag = `${res.repo.replace('/', '+')}@${res.environment_setup_commit}`;
  return {
    source: kept
      ? envRepoPath(bc.stateDir, res.repo, res.environment_setup_commit)
      : join(bc.stateDir, 'swe5g', 'envsrc', tag),
    moduleDir,
    key: `${envTreeKey(res)}:${moduleDir}`,
    ...(kept ? { keepTree: true } : {}),
  };
}

/**
 * Writes the tree of `commit` into `dest` without `.git` (through `exportCleanRepo`, so a mirror
 * that lacks only documents still exports; the absent files are logged). Written beside and
 * renamed, so a killed export leaves no half tree.
 * @throws TelebenchError `source_objects_missing` (content) / `git_export_failed` (infra) as
 *   `exportCleanRepo`
 */
async function exportEnvTree(
  mirror: string,
  commit: string,
  dest: string,
  bc: BuildContext,
  unread: (path: string) => boolean,
): Promise<void> {
  const part = `${dest}.part`;
  const absent = await exportCleanRepo(mirror, commit, part, unread);
  for (const f of absent)
    bc.log?.(`environment commit ${commit}: ${f.path} (${f.object}) absent from the mirror`);
  rmSync(join(part, '.git'), { recursive: true, force: true });
  rmSync(dest, { recursive: true, force: true });
  renameSync(part, dest);
}
const subprojectRuns = new Map<
  string,
  Promise<{ resolved: ResolvedSubproject[]; missing: MissingSubproject[] }>
>();

/** Subproject URLs already said to be missing in this process (the log names each once). */
const toldMissing = new Set<string>();

/**
 * The env layer's kept-build inputs of a C instance: the subprojects of its wraps (resolved once
 * per environment commit into `<state>/swe5g/subprojects/<repo>@<commit>`) and where the env tree
 * is exported (`<state>/swe5g/envsrc/<repo>@<commit>`, written only when the image is built).
 */
async function cEnvironment(
  res: BuildSubject,
  bc: BuildContext,
  mirror: string,
  spec: EnvironmentSpec,
): Promise<{ spec: CBuildSpec; subprojects: ResolvedSubproject[]; missing: MissingSubproject[] }> {
  const tag = `${res.repo.replace('/', '+')}@${res.environment_setup_commit}`;
  const subDir = join(bc.stateDir, 'swe5g', 'subprojects', tag);
  // beside the folder, not in it: the folder is copied into /testbed/subprojects
  const marker = `${subDir}.json`;
  let subs: { resolved: ResolvedSubproject[]; missing: MissingSubproject[] };
  if (existsSync(marker)) {
    subs = JSON.parse(readFileSync(marker, 'utf8')) as typeof subs;
  } else {
    let p = subprojectRuns.get(subDir);
    if (!p) {
      p = resolveSubprojects({
        mirror,
        commit: res.environment_setup_commit,
        dest: subDir,
        stateDir: bc.stateDir,
        gitUrlBase: bc.settings.git_url_base,
        mirrorsDir: bc.mirrorsDir,
        ...(bc.offline ? { offline: true } : {}),
      }).then((r) => {
        writeFileSync(marker, JSON.stringify(r));
        return r;
      });
      subprojectRuns.set(subDir, p);
      p.catch(() => subprojectRuns.delete(subDir));
    }
    subs = await p;
  }
  for (const m of subs.missing) {
    // said once per run and subproject, not once per instance of every configure state
    if (toldMissing.has(m.url)) continue;
    toldMissing.add(m.url);
    bc.log?.(
      `meson subproject ${m.directory} (${m.url}) not available (first for ${res.instance_id}): ${m.reason}; a build fails only if it needs it`,
    );
  }
  return {
    spec: {
      source: join(bc.stateDir, 'swe5g', 'envsrc', tag),
      ...(subs.resolved.length > 0 ? { subprojects: subDir } : {}),
      selection: mesonSelection(spec, [])!,
      key: cEnvKey(res.repo, res.environment_setup_commit, subs.resolved),
    },
    subprojects: subs.resolved,
    missing: subs.missing,
  };
}

/**
 * The local executor's "images": only the clean source tree at base_commit, and the host's
 * toolchain version (no Docker needed).
 * @throws SkipItem `toolchain_mismatch` when the host's Go is older than go.mod asks
 */
async function buildLocal(
  res: BuildSubject,
  bc: BuildContext,
  recipe: RecipeName,
  mirror: string,
  module_dir: string,
): Promise<Built> {
  const cmd =
    recipe === 'go'
      ? ['go', 'env', 'GOVERSION']
      : recipe === 'c-meson'
        ? ['sh', '-c', 'echo gcc $(gcc -dumpfullversion) meson $(meson --version)']
        : ['python3', '--version'];
  let toolchain: string;
  try {
    toolchain = (await zx().$({ quiet: true })`${cmd}`).stdout.trim().toLowerCase();
  } catch (err) {
    throw new PreflightError(
      'host toolchain',
      `the local executor needs ${cmd.join(' ')} on the host: ${(err as Error).message}`,
      'install the toolchain or use executor: docker',
    );
  }
  assertToolchain(res, recipe, toolchain, 'host');
  const source_dir = join(bc.stateDir, 'swe5g', 'instances', res.instance_id, 'testbed');
  await exportCleanRepo(mirror, res.base_commit, source_dir);
  return {
    instance_id: res.instance_id,
    image_recipe: recipe,
    images: { base: '', env: '', instance: '' },
    base_from: 'host',
    toolchain,
    sizes: { base: 0, env_layer: 0, instance_layer: 0, instance_total: 0 },
    source_dir,
    module_dir,
    build_seconds: { base: 0, env: 0, instance: 0 },
  };
}

/**
 * Stage `swe5g.build`: one item per Resolved instance; preflight pings the Docker engine.
 * @throws SkipItem `toolchain_mismatch`; TelebenchError `image_build_failed` |
 *   `dependency_unavailable` | `disk_budget_exceeded` | `image_contract_failed` (infra);
 *   PreflightError when the offline base is missing
 */
export const buildStage = defineStage<Resolved, Built, HasSwe5g>({
  name: 'swe5g.build',
  // 3: registry `environment` (packages, C kept build in the env layer, instance delta)
  // 2: the image contract (bash, git, patch in every recipe; checked after each build)
  // 4: the env layer also holds the modules of the fix's go.mod when the fix changes it (edits'
  // 3, merged with the registry environment's 3 above)
  // 5: a C env layer holds the env commit's clean repository; the instance layer's `.git` adds
  // only the commits after it (c-git.ts)
  // 6: the Go env layer holds the build cache of the environment commit (instance layers add
  // only what the base commit changes)
  // 7: a Go or Python monorepo folder's env layer keeps the env commit's repository and its
  // instance layer is the delta (tree-delta.ts); deletions go before the copy (all recipes)
  // 8: the Go env layer holds every module the folder's packages and tests import (issue 31,
  // the import check); Built `go_imports`
  // 9: a Python env layer lifts the pins of the era that do not install on the era's Python
  // (python_era `max_lifts`, python-lifts.ts); Built `python_env.lifts`
  version: 9,
  // testgen first: an instance whose test generation failed (no_fix_pattern, ...) is never built
  needs: ['swe5g.resolve', 'swe5g.testgen'],
  itemNeeds: sameKeyIn('swe5g.resolve', 'swe5g.testgen'),
  // no image reads the issue text: a new problem statement never re-builds (issue 31)
  cacheKey: (r) => withoutIssueText(r),
  description:
    'Builds the base, env and instance images of each resolved instance whose fail-to-pass test exists.',
  concurrency: (cfg) => buildConcurrency(swe5gSettings(cfg).environments),
  async preflight(ctx) {
    await executorPreflight(swe5gSettings(ctx.config).environments);
  },
  plan: (ctx) => planPerResolved(ctx, testgenStage),
  async run(item, ctx) {
    const settings = swe5gSettings(ctx.config).environments;
    const bc = buildContextOf(ctx, (m) => ctx.log(m));
    const docker = bc.docker;
    // Once per run, before any build: this state's images over image_budget_gib are evicted
    // (eviction.ts); then the engine-wide check (docker system df walks every layer): a run does
    // not start new builds over disk_budget_gib; the items of that run fail disk_budget_exceeded.
    if (settings.executor !== 'local') {
      await ctx.memo('swe5g.build.disk-budget', async () => {
        await evictOverBudget(ctx, docker);
        await docker.assertDiskBudget(settings.disk_budget_gib);
      });
    }
    const built = await buildInstanceImages(item.input, bc);
    for (const n of [built.images.env, built.images.instance]) touchImage(ctx.kv, n);
    if (settings.executor === 'swarm') {
      // the nodes pull from the registry: an instance is built when its images are there
      const refs = await pushLayers(settings, docker, built.images);
      ctx.log(`${item.key}: pushed to ${settings.swarm.registry} as ${refs.instance}`);
    }
    ctx.log(
      `${item.key}: images ${built.images.instance} (instance layer ${built.sizes.instance_layer} B, env layer ${built.sizes.env_layer} B)`,
    );
    return built;
  },
});
