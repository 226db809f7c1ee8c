/**
 * The import check of a Go env layer (issue 31), host side: every module the folder's packages
 * and their tests import at the environment commit, as the test steps load them
 * (`pipeline/providers/docker/go-imports-step.ts` says why a bare `go mod download` misses them
 * and how the rounds go). For `go_modules: host` the rounds run here, on an export of the folder
 * and its local `replace` targets, and fetch through the host's proxy chain and the mirrors
 * (go-host-download.ts); for `go_modules: container` the env layer runs them and the item's record
 * is read back from the image ({@link goImportsInImage}).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as Zx from 'zx';
import { TelebenchError } from '../../../pipeline/errors.js';
import { lazy } from '../../../pipeline/lazy.js';
import { exportTree } from '../../../pipeline/providers/git/export-tree.js';
import { gitPaths } from '../../../pipeline/providers/git/repo.js';
import {
  GO_FETCH_TIMEOUT_S,
  GO_IMPORTS_MAX_ROUNDS,
  GO_IMPORTS_REPORT,
  GO_LIST_FORMAT,
  GO_LIST_TIMEOUT_S,
  readGoList,
  type GoUnresolvedImport,
} from '../../../pipeline/providers/docker/go-imports-step.js';
import { DockerExecutor } from '../../../pipeline/providers/docker/executor.js';
import type { DockerClient } from '../../../pipeline/providers/docker/client.js';
import type { KeyValue } from '../../../pipeline/store/store.js';
import { goOnHost, type HostGo } from './go-host-download.js';

const zx = lazy<typeof Zx>('zx');

/** What the import check found (Built `go_imports`). */
export interface GoImportsRecord {
  /** `module@version` the check fetched beyond the go.mod download, sorted (host only). */
  fetched: string[];
  /**
   * Packages the folder's code or tests import that no module of the go.mod's graph provides:
   * the test steps cannot build what imports them (the commit's go.mod lacks the requirement).
   */
  unresolved: GoUnresolvedImport[];
  /** A listing Go could not finish (a go.mod it cannot read), its first lines; steps say why. */
  list_failed?: string[];
}

/** The environment commit's tree the host check lists ({@link exportModuleTree}). */
export interface HostTree {
  /** The repository's bare mirror. */
  mirror: string;
  /** `environment_setup_commit`. */
  commit: string;
  /** The env image's `CGO_ENABLED=1` (registry `environment.cgo`): cgo files' imports count. */
  cgo?: boolean;
  /** Paths resolve found absent and unread (an instance's `absent_files`). */
  unread?: (path: string) => boolean;
}

/**
 * Writes the module folder and the local `replace` targets of its go.mod files (the `_local/...`
 * entries of `goDepFiles`, env and fix) at `tree.commit` into `dest`, at their repository paths,
 * so that the go.mod's relative `replace` lines resolve. Targets the commit lacks are left out.
 * @throws TelebenchError as `exportTree` (`source_objects_missing`, `git_export_failed`)
 */
export async function exportModuleTree(
  tree: HostTree,
  depFiles: Record<string, string>,
  moduleDir: string,
  dest: string,
): Promise<void> {
  const locals = Object.keys(depFiles)
    .map((k) => /^(?:fix\.)?_local\/(.*)\/go\.mod$/.exec(k)?.[1])
    .filter((d): d is string => d !== undefined && d !== moduleDir);
  const present = locals.length
    ? await gitPaths(tree.mirror, ['ls-tree', '-d', '--name-only', tree.commit, '--', ...locals])
    : [];
  await exportTree(tree.mirror, tree.commit, dest, tree.unread, [moduleDir, ...present]);
}

/** One go.mod the check lists with: its name for errors and its files. */
export interface GoModToList {
  goMod: 'go.mod' | 'fix.go.mod';
  mod: string;
  sum: string;
}

/**
 * The listing rounds on the host: for each go.mod, `go list -e -deps -test ./...` in `moduleSrc`
 * with `GOPROXY=off` (the test steps' variables, a fresh copy of the go.mod as `-modfile` each
 * round), then `go mod download` of the module versions it names as missing through `h` (the
 * host cache, the proxy, the mirrors), until a round names none.
 * @param moduleSrc the module's folder in the exported tree; @param work a scratch folder
 * @param cgo the env image's CGO_ENABLED
 * @throws TelebenchError `dependency_unavailable` (infra) naming the module a round needs and
 *   none can give, or one still missing after it was fetched; `go_mod_download_failed`
 *   (transient) for another fetch failure or a fetch over {@link GO_FETCH_TIMEOUT_S}
 */
export async function hostImports(
  h: HostGo,
  moduleSrc: string,
  lists: readonly GoModToList[],
  work: string,
  cgo = false,
): Promise<GoImportsRecord> {
  const fetched = new Set<string>();
  const unresolved = new Map<string, GoUnresolvedImport>();
  const failed: string[] = [];
  const dl = join(work, 'dl');
  mkdirSync(dl, { recursive: true });
  const listEnv = {
    ...h.env,
    GOPROXY: 'off',
    GONOSUMDB: '*',
    GOWORK: 'off',
    GOTOOLCHAIN: 'local',
    CGO_ENABLED: cgo ? '1' : '0',
  };
  for (const l of lists) {
    const modFile = join(work, l.goMod, 'go.mod');
    mkdirSync(join(work, l.goMod), { recursive: true });
    let prev = '';
    for (let round = 1; ; round++) {
      writeFileSync(modFile, l.mod);
      writeFileSync(join(work, l.goMod, 'go.sum'), l.sum);
      const r = await zx().$({
        cwd: moduleSrc,
        quiet: true,
        nothrow: true,
        env: listEnv,
        timeout: GO_LIST_TIMEOUT_S * 1000,
      })`go list -e -modfile=${modFile} -deps -test -f ${GO_LIST_FORMAT} ./...`;
      const reading = readGoList(r.stdout, r.stderr);
      if (reading.missing.length === 0) {
        if (r.exitCode !== 0) {
          const why = r.signal ? [`timed out after ${GO_LIST_TIMEOUT_S} s`] : [];
          failed.push(`${l.goMod}:`, ...why, ...r.stderr.trim().split('\n').slice(0, 10));
        }
        for (const u of reading.unresolved)
          if (!unresolved.has(u.package)) unresolved.set(u.package, u);
        break;
      }
      const key = reading.missing.join(' ');
      if (key === prev || round > GO_IMPORTS_MAX_ROUNDS) {
        throw new TelebenchError(
          'dependency_unavailable',
          `the import check (${l.goMod}): ${reading.missing.join(', ')} still missing from the module cache after ${round - 1} fetch round(s)`,
          {
            tier: 'infra',
            context: { module: reading.missing[0]!, go_mod: l.goMod, rounds: round },
          },
        );
      }
      prev = key;
      await goOnHost(h, dl, ['mod', 'download', '-json', ...reading.missing], {
        goMod: l.goMod,
        timeoutMs: GO_FETCH_TIMEOUT_S * 1000,
        what: "go mod download of what the folder's packages and tests import",
      });
      for (const m of reading.missing) fetched.add(m);
    }
  }
  return {
    fetched: [...fetched].sort(),
    unresolved: [...unresolved.values()].sort((a, b) => a.package.localeCompare(b.package)),
    ...(failed.length ? { list_failed: failed } : {}),
  };
}

/**
 * The import check's record of an env image built with it (`go_modules: container`): its report
 * ({@link GO_IMPORTS_REPORT}) read in a container of `image`, once per image id (kv
 * `swe5g.go_imports`). An image without the report (built before the check) reads as none.
 * @returns the record (`fetched` is empty: the build fetched, the report keeps the last round)
 * @throws TelebenchError from the Docker engine (`docker_*`, infra)
 */
export async function goImportsInImage(
  docker: DockerClient,
  image: string,
  kv?: KeyValue,
): Promise<GoImportsRecord> {
  const id = (await docker.inspect(image))?.Id ?? image;
  const cached = kv?.get<GoImportsRecord>('swe5g.go_imports', id);
  if (cached) return cached;
  const r = await new DockerExecutor(docker).run({
    step: 'go-imports',
    instance: { image, workdir: '/', sourceDir: '' },
    files: {},
    command: `cat ${GO_IMPORTS_REPORT} 2>/dev/null || true`,
    collect: [],
    limits: { memory: 256 * 2 ** 20, cpus: 1, pids: 64, timeoutMs: 60_000 },
  });
  const record: GoImportsRecord = { fetched: [], unresolved: readGoList(r.stdout).unresolved };
  kv?.set('swe5g.go_imports', id, record);
  return record;
}
