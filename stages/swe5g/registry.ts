/**
 * The repository registry of SWE-Bench 5G (`config/repos.yaml`): which repositories are mined, in
 * which language, which network function (NF) they implement, where their issues are filed, how
 * their tests run and which image recipe builds them. Adding a repository is one YAML entry.
 *
 * Source: SWE-Bench 5G paper, section "Data collection" (33 repositories: free5GC, Open5GS, Magma).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve as resolvePath } from 'node:path';
import { z } from 'zod';
import { loadConfigFile } from '../../pipeline/config/load.js';
import { ConfigError } from '../../pipeline/errors.js';
import { isSpdx } from '../../datasets/licenses.js';
import { swe5gSettings, type HasSwe5g } from './config.js';

// spdx-license-ids (why: the SPDX list itself, CC0, kept current by its maintainers; a hand list
// would go stale): current ids and the deprecated ones (`AGPL-3.0`, still what GitHub shows).
const require = createRequire(import.meta.url);
const SPDX_IDS = new Set<string>(require('spdx-license-ids') as string[]);
const SPDX_DEPRECATED = new Set<string>(require('spdx-license-ids/deprecated') as string[]);

/**
 * Network functions of the 5G core (TS 23.501 clause 6.2) and EPC / other names the registry uses;
 * another name is accepted with a warning ({@link registryWarnings}).
 */
export const KNOWN_NFS: readonly string[] = [
  'AMF',
  'SMF',
  'UPF',
  'PCF',
  'UDM',
  'UDR',
  'UDSF',
  'AUSF',
  'NRF',
  'NSSF',
  'NEF',
  'NWDAF',
  'CHF',
  'SMSF',
  'SEPP',
  'SCP',
  'N3IWF',
  'TNGF',
  'TWIF',
  'W-AGF',
  'BSF',
  'LMF',
  'GMLC',
  'NSSAAF',
  'UCMF',
  'AF',
  'EASDF',
  'NSACF',
  'MB-SMF',
  'MB-UPF',
  'MME',
  'SGW',
  'PGW',
  'HSS',
  'PCRF',
  'SGWC',
  'SGWU',
  'PGWC',
  'PGWU',
  '5GC',
  'EPC',
  'RAN',
  'AAA',
  'FEG',
  'WEBUI',
  'library',
];

/** True when `id` is an SPDX license id (current or deprecated) or a `LicenseRef-` of its own. */
export function isSpdxId(id: string): boolean {
  return SPDX_IDS.has(id) || SPDX_DEPRECATED.has(id) || /^LicenseRef-[A-Za-z0-9.-]+$/.test(id);
}

const repoName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a GitHub owner or repository name ([A-Za-z0-9_.-])');

const debianPackage = z
  .string()
  .regex(/^[a-z0-9][a-z0-9+.-]+$/, 'a Debian package name (lower case, digits, + - .)');

/** A meson suite or test left out of the existing tests, with the reason (listed in every record). */
export const excludedTestsSchema = z
  .strictObject({
    suite: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/, 'a meson suite name')
      .optional(),
    test: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]+$/, 'a meson test name')
      .optional(),
    reason: z.string().min(1),
  })
  .refine((e) => (e.suite === undefined) !== (e.test === undefined), {
    message: 'name either a suite or a test',
  });
export type ExcludedTests = z.output<typeof excludedTestsSchema>;

const repoRelative = z
  .string()
  .min(1)
  .regex(
    /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[^\s]+$/,
    'a repository-relative path (no leading /, no ..)',
  );

/**
 * A requirement of a Python environment replaced or left out (registry
 * `environment.python.overrides`): `name` is the project name as the requirement spells it
 * (compared as PEP 503 normalises names: case, `-`, `_` and `.` alike); `use` the requirement
 * installed instead, omitted to leave it out. `reason` says why (a pin with no wheel and no
 * working source build on the image's Python, a URL requirement no registry serves).
 */
export const pythonOverrideSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a Python project name'),
  use: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9_,.-]+\])?\s*([<>=!~]=?[^\s,;]+\s*,?\s*)*$/,
      'a requirement name[extras] and version specifiers',
    )
    .optional(),
  reason: z.string().min(1),
});
export type PythonOverride = z.output<typeof pythonOverrideSchema>;

/**
 * What a Python entry's image needs to import its packages (docs/environments.md, "Python"):
 * the requirements the env layer pip-installs, the `.proto` folders compiled in the instance
 * layer, and the package roots put on the path.
 */
export const pythonEnvironmentSchema = z.strictObject({
  /**
   * Repository-relative files whose requirements the env layer installs, read at the
   * environment commit: a `setup.py` (its `install_requires` list) or a requirements file
   * (one requirement a line). Several are merged in order, an identical line once.
   */
  requirements: z.array(repoRelative).default([]),
  /** Requirements replaced or left out, each with the reason. */
  overrides: z.array(pythonOverrideSchema).default([]),
  /**
   * Folders whose `*.proto` files (recursively) grpcio-tools' protoc compiles in the instance
   * layer, at the base commit, into `/opt/telebench/pygen` (`--python_out`, `--grpc_python_out`,
   * import root `/testbed`); `include` adds `-I` folders; `tool` is the grpcio-tools
   * requirement, installed apart from the project's packages (`/opt/telebench/protoc`).
   */
  protos: z
    .strictObject({
      dirs: z.array(repoRelative).min(1),
      include: z.array(repoRelative).default([]),
      tool: z
        .string()
        .regex(/^grpcio-tools(==|>=|~=)[0-9][0-9.]*$/, 'grpcio-tools==<version>')
        .default('grpcio-tools==1.49.1'),
    })
    .optional(),
  /**
   * The Python `major.minor` the entry's environments use (`'3.9'`), over what the repository's
   * evidence says (swe5g.environments.python_era); the base is the configured suite with the
   * oldest Python at or above it.
   */
  interpreter: z
    .string()
    .regex(/^3\.\d+$/, "a Python major.minor such as '3.9'")
    .optional(),
  /** Folders put on the interpreter's path (a `.pth` file) as package roots, in this order. */
  roots: z.array(repoRelative).default([]),
});
export type PythonEnvironment = z.output<typeof pythonEnvironmentSchema>;

/**
 * Build environment of a registry entry: what the base layer installs (every recipe), whether Go
 * builds with cgo (`cgo`, recipe `go`), how a `c-meson` env layer configures and builds the
 * repository at `environment_setup_commit` (the build directory is kept in the env layer, so an
 * instance's build at its base commit is incremental), and what a `python` image needs to import
 * the packages (`python`). docs/environments.md.
 */
export const environmentSchema = z.strictObject({
  /** Debian package names installed in the base layer (libraries with their `-dev` packages, tools). */
  packages: z.array(debianPackage).default([]),
  /**
   * Compiler packages (Debian names) of the project's languages: `gcc` for `c`, `g++` for `cpp`.
   * `gcc` is always installed.
   */
  compilers: z.array(debianPackage).default(['gcc']),
  /**
   * Go (`image: go`) only: build and test with cgo (`CGO_ENABLED=1`). The base layer then installs
   * `compilers` (default `gcc`, which is Go's default `CC`) and `libc6-dev`; without it the Go
   * recipe keeps `CGO_ENABLED=0` and installs no compiler. Magma's cloud modules need it: their
   * tests open an in-memory SQLite through `github.com/mattn/go-sqlite3`, whose driver is cgo.
   */
  cgo: z.boolean().default(false),
  /** Options of `meson setup` (`-Dfuzzing=false`, `--buildtype=debug`). */
  meson_options: z
    .array(
      z
        .string()
        .regex(
          /^-(D[A-Za-z0-9_:.-]+=\S*|-[a-z][a-z-]*(=\S+)?)$/,
          '-Dname=value or --option[=value]',
        ),
    )
    .default([]),
  /**
   * The meson suites whose tests are the existing tests (PASS_TO_PASS candidates); the generated
   * `f2p` suite always runs too. Omitted: every suite.
   */
  suites: z
    .array(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a meson suite name'))
    .min(1)
    .optional(),
  /**
   * Meson test names within those suites (omitted: all of them). Only these tests' executables
   * are built (plus the objects of the files a fix touches), never the whole project.
   */
  tests: z
    .array(z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'a meson test name'))
    .min(1)
    .optional(),
  /**
   * Suites or tests not run, each with the reason (a service, SCTP, privileges, build cost);
   * listed in every validated record, never counted as failing.
   */
  excluded: z.array(excludedTestsSchema).default([]),
  /** Recipe `python`: requirements, generated protos and package roots (see above). */
  python: pythonEnvironmentSchema.optional(),
});
export type EnvironmentSpec = z.output<typeof environmentSchema>;

/** One repository (or one folder of a monorepo) of the registry. */
export const registryEntrySchema = z
  .strictObject({
    /** `owner/name`, or `owner/name:path/inside` for a folder of a monorepo. */
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9][A-Za-z0-9_.-]*(:[^\s:]+)?$/,
        'owner/name or owner/name:path',
      ),
    owner: repoName,
    name: repoName,
    /** Subfolder holding this entry's code (monorepos); omitted for the whole repository. */
    path: z.string().min(1).optional(),
    /**
     * A folder entry: the other folders of the repository its build and tests read (shared
     * libraries, generated-code sources). With `path`, a Go module's local `replace` folders and
     * the root's own files, they bound what a file absent from the mirror can affect: one outside
     * them is listed in the instance's `absent_files`, not `object_missing` (stages/swe5g/resolve/reads.ts).
     */
    reads: z
      .array(
        z
          .string()
          .min(1)
          .regex(/^[^/\s][^\s]*$/, 'a repository-relative folder'),
      )
      .default([]),
    language: z.enum(['go', 'c', 'python']),
    default_branch: z.string().min(1).default('main'),
    /**
     * Network function (`AMF`, `SMF`, ...) or `library`. Any name is accepted; one outside
     * {@link KNOWN_NFS} gets a warning.
     */
    nf: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'an NF name like AMF (letters, digits, - or _)'),
    /** `owner/name` where the issues are filed (free5GC: `free5gc/free5gc`). */
    issues_repo: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9][A-Za-z0-9_.-]*$/),
    /** SPDX license id (any on https://spdx.org/licenses/; a deprecated one gets a warning). */
    license: z.string().refine(isSpdxId, {
      message:
        'an SPDX license id as listed on https://spdx.org/licenses/ (e.g. Apache-2.0, AGPL-3.0-only, MIT) or LicenseRef-<name>',
    }),
    test: z.strictObject({
      /**
       * The repository's test command. Read by the C recipe (`swe5g.validate`, grading, verify):
       * given, the tests run through it (`make check`; each `make` target is one test id
       * `make::<target>`, any other command one id `command::<command>`) instead of meson; Go and
       * Python keep `go test -json` / pytest JUnit XML, where per-test results come from.
       */
      command: z.string().min(1).optional(),
      /** Command that builds the code before `command` runs (C recipe; `make`). */
      build: z.string().min(1).optional(),
      scope: z.enum(['touched', 'repo']).default('touched'),
    }),
    /** Image recipe name. */
    image: z.enum(['go', 'c-meson', 'python']),
    /**
     * What the image needs beyond its recipe's toolchain (`c-meson`; docs/environments.md):
     * Debian packages, compilers and meson options of the build kept in the env layer, and which
     * meson suites are the existing tests.
     */
    environment: environmentSchema.optional(),
    /** Free text: why this entry is in the registry. */
    note: z.string().optional(),
  })
  .superRefine((e, ctx) => {
    if (e.environment?.cgo && e.image !== 'go') {
      ctx.addIssue({
        code: 'custom',
        path: ['environment', 'cgo'],
        message: `cgo is a Go setting (image: go); this entry has image: ${e.image}`,
      });
    }
    const expected = `${e.owner}/${e.name}${e.path ? `:${e.path}` : ''}`;
    if (e.id !== expected) {
      ctx.addIssue({
        code: 'custom',
        path: ['id'],
        message: `id "${e.id}" does not match owner/name${e.path ? ':path' : ''} ("${expected}")`,
      });
    }
  });
export type RegistryEntry = z.output<typeof registryEntrySchema>;

export const registrySchema = z
  .strictObject({
    version: z.literal(1),
    repositories: z.array(registryEntrySchema).min(1),
  })
  .superRefine((r, ctx) => {
    const seen = new Map<string, number>();
    r.repositories.forEach((e, i) => {
      const prev = seen.get(e.id);
      if (prev !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['repositories', i, 'id'],
          message: `duplicate id "${e.id}" (first at repositories[${prev}])`,
        });
      } else seen.set(e.id, i);
    });
  });
export type Registry = z.output<typeof registrySchema>;

/**
 * Loads and validates `config/repos.yaml`.
 * @param file path of the registry YAML
 * @returns the entries in file order
 * @throws ConfigError naming the file, the entry path (`repositories[3].nf`) and line
 */
export function loadRegistry(file: string): RegistryEntry[] {
  return loadConfigFile(file, registrySchema).repositories;
}

/**
 * What a user registering a repository should know but that does not stop the run: an NF name
 * outside {@link KNOWN_NFS}, a licence the release table (`datasets/licenses.ts`) does not know
 * (its rows would say `unknown`; a deprecated SPDX id is named as such).
 * @returns one sentence per finding, naming the entry (`repositories[3] free5gc/amf: ...`)
 */
export function registryWarnings(entries: readonly RegistryEntry[]): string[] {
  const out: string[] = [];
  const known = new Set(KNOWN_NFS.map((n) => n.toUpperCase()));
  entries.forEach((e, i) => {
    const at = `repositories[${i}] ${e.id}`;
    if (!known.has(e.nf.toUpperCase()))
      out.push(
        `${at}: nf "${e.nf}" is not a known network function (${KNOWN_NFS.slice(0, 8).join(', ')}, ...); it is used as given`,
      );
    if (!isSpdx(e.license))
      out.push(
        `${at}: license "${e.license}" is not one the release table knows (datasets/licenses.ts): its released rows would carry "unknown"${SPDX_DEPRECATED.has(e.license) ? '; it is also a deprecated SPDX id' : ''}`,
      );
  });
  return out;
}

/**
 * Restricts the registry to `ids` (config `swe5g.repos`), keeping file order.
 * @throws ConfigError when an id is not in the registry (lists the known ids)
 */
export function selectRepos(
  entries: readonly RegistryEntry[],
  ids: readonly string[] | undefined,
  where = 'swe5g.repos',
): RegistryEntry[] {
  if (!ids || ids.length === 0) return [...entries];
  const known = new Set(entries.map((e) => e.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length > 0) {
    throw new ConfigError(
      `${where}: unknown repository id(s) ${missing.map((m) => `"${m}"`).join(', ')}; known: ${[...known].join(', ')}`,
      { path: where },
    );
  }
  const want = new Set(ids);
  return entries.filter((e) => want.has(e.id));
}

/** `owner/name` of the GitHub repository an entry lives in (without the `:path`). */
export function githubRepoOf(entry: RegistryEntry): string {
  return `${entry.owner}/${entry.name}`;
}

/**
 * The registry of a run's configuration (`swe5g.registry`, relative to the config file) by entry
 * id; empty when the file does not exist (stages that only refine what the registry says).
 * @throws ConfigError from {@link loadRegistry} when the file is invalid
 */
export function registryById(cfg: HasSwe5g, configFile: string): Map<string, RegistryEntry> {
  const file = resolvePath(dirname(configFile), swe5gSettings(cfg).registry);
  if (!existsSync(file)) return new Map();
  return new Map(loadRegistry(file).map((e) => [e.id, e]));
}
