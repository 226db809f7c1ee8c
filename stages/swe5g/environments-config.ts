/**
 * `swe5g.environments`: settings of resolve, build and validate (the environments part of
 * SWE-Bench 5G). Composed into the swe5g section by `stages/swe5g/config.ts`.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';

/**
 * Image builds at once: `build_concurrency` when set; with executor `swarm` and builds on the
 * nodes, the cluster's `task_budget`; else the machine's cores (`os.availableParallelism()`), 1 to
 * 16.
 */
export function buildConcurrency(settings: {
  build_concurrency?: number | undefined;
  executor?: string;
  swarm?: { task_budget: number; builds: { on: string } };
}): number {
  if (settings.build_concurrency !== undefined) return settings.build_concurrency;
  // builds on the swarm's nodes: as many at once as the cluster takes tasks
  if (settings.executor === 'swarm' && settings.swarm?.builds.on === 'nodes')
    return settings.swarm.task_budget;
  return Math.max(1, Math.min(16, availableParallelism()));
}

/** Schema of `swe5g.environments` (every key has a default). */
export const environmentsSchema = z.strictObject({
  /**
   * Where repositories are cloned from when no local mirror (`swe5g.mining.mirrors_dir`) has them:
   * `<git_url_base>/<owner>/<name>.git`. Tests point it at a folder of repositories they build.
   */
  git_url_base: z.string().default('https://github.com'),
  /**
   * Base images per recipe when a registry is reachable; `{version}` becomes the go.mod `go`
   * line (`golang:1.21-bookworm`).
   */
  base_images: z
    .strictObject({
      go: z.string().default('golang:{version}-bookworm'),
      'c-meson': z.string().default('debian:bookworm'),
      /** `{suite}` becomes the era's Debian suite (python_era). */
      python: z.string().default('debian:{suite}'),
    })
    .default({
      go: 'golang:{version}-bookworm',
      'c-meson': 'debian:bookworm',
      python: 'debian:{suite}',
    }),
  /**
   * `registry`: always the images above (pulled when absent); `offline`: always the offline base
   * (`telebench images base`); `auto`: the images above when present or pullable, else offline.
   */
  base_source: z.enum(['registry', 'offline', 'auto']).default('auto'),
  offline: z
    .strictObject({
      /** Debian rootfs image built by debootstrap. */
      rootfs_image: z.string().default('telebench-rootfs:bookworm'),
      /** Offline Go image; `{go}` becomes the host's Go version (`go1.26.8`). */
      go_image: z.string().default('telebench-go:{go}'),
      /** Folder of the debootstrap rootfs (kept to rebuild the image fast). */
      rootfs_dir: z.string().default('/var/cache/telebench-rootfs-bookworm'),
      suite: z.string().default('bookworm'),
    })
    .default({
      rootfs_image: 'telebench-rootfs:bookworm',
      go_image: 'telebench-go:{go}',
      rootfs_dir: '/var/cache/telebench-rootfs-bookworm',
      suite: 'bookworm',
    }),
  /**
   * The interpreter and pins of each Python environment commit's era (issue 31, registry entries
   * with `environment.python`; docs/environments.md, "The interpreter and the pins of the era").
   */
  python_era: z
    .strictObject({
      /**
       * `era`: the base's Debian suite is chosen per environment commit from the repository's
       * evidence (`.python-version`, a Dockerfile, the CI workflows, `python_requires`), else by
       * the commit date; `base`: always the configured base (before issue 31).
       */
      interpreter: z.enum(['era', 'base']).default('era'),
      /**
       * `era`: requirements resolve to what PyPI had at the era date (uv's `--exclude-newer`);
       * `latest`: pip takes the newest release a specifier allows (before issue 31).
       */
      pins: z.enum(['era', 'latest']).default('era'),
      /** Era date: the last change of the requirement files (`requirements`) or the commit's own. */
      pins_date: z.enum(['requirements', 'commit']).default('requirements'),
      /**
       * Debian suites the offline base can be made from, with their Python `major.minor`
       * (buster, 3.7, is archived: deb.debian.org no longer serves it).
       */
      suites: z
        .record(z.string().regex(/^[a-z]+$/), z.string().regex(/^3\.\d+$/))
        .default({ bullseye: '3.9', bookworm: '3.11' }),
      /** Offline rootfs image and debootstrap folder of a suite other than `offline.suite`. */
      rootfs_image: z.string().default('telebench-rootfs:{suite}'),
      rootfs_dir: z.string().default('/var/cache/telebench-rootfs-{suite}'),
      /** The uv requirement installed apart (`/opt/telebench/uv`) to resolve the era pins. */
      uv: z
        .string()
        .regex(/^uv==[0-9][0-9.]*$/, 'uv==<version>')
        .default('uv==0.13.9'),
      /**
       * Pins of the era an env layer may lift when they do not install on the era's Python (an
       * sdist whose setup.py or build fails, no wheel for it, a build dependency that does not
       * run on it): each is replaced by its oldest later release that installs and recorded
       * (Built `python_env.lifts`); 0: none, one uv install as before. The description is the
       * JSON Schema's (config/telebench.schema.json) for editors.
       */
      max_lifts: z
        .number()
        .int()
        .min(0)
        .max(50)
        .default(10)
        .describe(
          "Pins of the era a Python env layer may lift when they do not install on the era's Python (an sdist whose setup.py or build fails, no wheel for it, a build dependency that does not run on it): each is replaced by its oldest later release that installs and recorded in Built python_env.lifts (docs/environments.md, 'A pin of the era that does not install'). 0: off, one uv install as before the lifts.",
        ),
    })
    .default({
      interpreter: 'era',
      pins: 'era',
      pins_date: 'requirements',
      suites: { bullseye: '3.9', bookworm: '3.11' },
      rootfs_image: 'telebench-rootfs:{suite}',
      rootfs_dir: '/var/cache/telebench-rootfs-{suite}',
      uv: 'uv==0.13.9',
      max_lifts: 10,
    }),
  /** Prefix of the image names (`telebench-base:<hash>`, `telebench-env:...`, `telebench-instance:...`). */
  image_prefix: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._/-]*$/)
    .default('telebench'),
  /**
   * Go modules for the env layer: `container` runs `go mod download` inside the build (bridge
   * network); `host` downloads them on the host and copies the module cache in.
   */
  go_modules: z.enum(['container', 'host']).default('container'),
  /**
   * Image builds at once. Absent (default): the machine's cores (`os.availableParallelism()`, at
   * most 16; {@link buildConcurrency}), so a bigger machine builds more at once; a value here wins.
   */
  build_concurrency: z.number().int().min(1).max(16).optional(),
  /** Disk budget for Docker image layers, GiB: `swe5g.build` refuses to build above it (`disk_budget_exceeded`); `images prune` frees what no unreleased instance needs. */
  disk_budget_gib: z.number().positive().default(200),
  /**
   * Budget for this state's own images, GiB (the env and instance layers its build records list;
   * base images are not counted). Absent (default): no eviction. Set: before building,
   * `swe5g.build` removes images no pending stage needs (instance images of items validated,
   * and audited when the audit is on; env images with no such instance left and none still to
   * build), least recently used first, until under it; a later stage that needs an evicted
   * image rebuilds it from its recipe (stages/swe5g/build/eviction.ts, on-demand.ts).
   */
  image_budget_gib: z.number().positive().optional(),
  /**
   * `docker` (default), `local` (temporary worktree + host toolchain; hosts without Docker), or
   * `swarm` (each step a Docker Swarm job on the cluster of the local engine, a manager; images
   * through `swarm.registry`).
   */
  executor: z.enum(['docker', 'local', 'swarm']).default('docker'),
  /** Executor `swarm` (issue 13). */
  swarm: z
    .strictObject({
      /** Registry (`host:port`) the coordinator pushes images to and the nodes pull from. */
      registry: z
        .string()
        .regex(/^[a-zA-Z0-9.-]+(:\d+)?$/, 'host or host:port')
        .default('localhost:5000'),
      /** Steps running at once across the cluster (`swe5g.validate` concurrency); see `telebench status`. */
      task_budget: z.number().int().min(1).max(1000).default(4),
      /** Attempts of a step whose node leaves mid-step. */
      max_attempts: z.number().int().min(1).max(10).default(3),
      /** How long a step may wait for a node and its image pull, seconds. */
      start_timeout_s: z.number().int().min(10).default(600),
      /** Placement constraints of every step (`node.labels.telebench==tests`). */
      constraints: z.array(z.string().min(1)).default([]),
      /**
       * Where images are built (issue 31): `coordinator` (here, then pushed) or `nodes` (each build a
       * Swarm task on a node, with the node's engine socket mounted, pushed by the node and pulled
       * back here; pipeline/providers/docker/swarm-build.ts, docs/scale-out.md).
       */
      builds: z
        .strictObject({
          on: z.enum(['coordinator', 'nodes']).default('coordinator'),
          /** The build task's image: `sh`, `tar`, `base64`, `timeout` and the docker CLI. */
          builder_image: z.string().min(1).default('docker:cli'),
          /** CPUs and memory reserved on the node for one build (the scheduler's placement). */
          cpus: z.number().min(0.1).default(2),
          memory_mib: z.number().int().min(64).default(4096),
          /** Wall-clock limit of one build, seconds. */
          timeout_s: z.number().int().min(60).default(14400),
        })
        .default({
          on: 'coordinator',
          builder_image: 'docker:cli',
          cpus: 2,
          memory_mib: 4096,
          timeout_s: 14400,
        }),
    })
    .default({
      registry: 'localhost:5000',
      task_budget: 4,
      max_attempts: 3,
      start_timeout_s: 600,
      constraints: [],
      builds: {
        on: 'coordinator',
        builder_image: 'docker:cli',
        cpus: 2,
        memory_mib: 4096,
        timeout_s: 14400,
      },
    }),
  limits: z
    .strictObject({
      memory_mib: z.number().int().min(64).default(4096),
      cpus: z.number().min(0.1).default(2),
      pids: z.number().int().min(16).default(1024),
      /**
       * Wall-clock limit of one fresh run of a step's tests, seconds: the test tool's own timeout
       * (`go test -timeout`), and + 15 s each run's container (or, for Go's runs in one
       * container, each process); the first run over it ends its step as `timeout` (issue 31).
       */
      timeout_s: z.number().int().min(1).default(1800),
    })
    .default({ memory_mib: 4096, cpus: 2, pids: 1024, timeout_s: 1800 }),
  /** Runs of the fixed state (paper: validation step 3; flaky tests differ between runs). */
  fix_runs: z.number().int().min(1).max(10).default(3),
  /**
   * Extra runs of the existing tests at the parent while some of them fail (validation step 1).
   * A test that fails in one run and passes in another is flaky: dropped from PASS_TO_PASS and
   * listed, never a reason to reject. With 4 (5 runs in all) a test that fails one run in three
   * fails every run, and so is taken for a real failure, with probability (1/3)^5 = 0.41% < 1%.
   */
  parent_reruns: z.number().int().min(0).max(20).default(4),
  /**
   * FRESH runs of the tests within one parent_p2p or fix step (issue 21): N separate `go test
   * -count=1` processes in one container for Go, N separate containers for meson, make and pytest
   * (stages/swe5g/harness/spec.ts); never N iterations inside one process, so a test whose global
   * state fails a second in-process iteration is not flaky. A test that passes in some of these
   * runs and fails in others is flaky: dropped from PASS_TO_PASS and listed (`dropped_flaky`),
   * never a reason to reject. A PASS_TO_PASS test is kept only if it passed in every run of step 1
   * and of the `fix_runs` fix steps: test_repeats x (1 + fix_runs) runs. A flake that fails one
   * run in three escapes (passes all of them) with probability (2/3)^(N x (1 + fix_runs)): with
   * the defaults 3 x (1 + 3) = 12 runs, (2/3)^12 = 0.77% < 1%; with 1 (one run per step, as
   * before) (2/3)^4 = 19.8%. The cost: steps 1 and 3 run the tests 3 times (Go: the test binary
   * is rebuilt from the warm build cache; other runners: 3 containers, each with its own build).
   */
  test_repeats: z.number().int().min(1).max(20).default(3),
  /**
   * `reject` (paper rule): any existing test failing at the parent rejects the instance;
   * `drop-failing` (SWE-bench): such tests are dropped from PASS_TO_PASS and listed.
   */
  pass_to_pass_policy: z.enum(['reject', 'drop-failing']).default('reject'),
  /** Which tests run: `touched` (test packages of the directories the fix touches) or `repo`. */
  test_scope: z.enum(['touched', 'repo', 'registry']).default('registry'),
});
/** Validated `swe5g.environments` settings. */
export type EnvironmentsSettings = z.output<typeof environmentsSchema>;

/** Defaults of the section (when the config file has no `swe5g.environments`). */
export const environmentsDefaults: EnvironmentsSettings = environmentsSchema.parse({});
