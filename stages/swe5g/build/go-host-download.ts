/**
 * The host's Go for a `go_modules: host` module cache: the Go variables it runs with (the host's
 * own module cache as a `file://` proxy ahead of the user's GOPROXY), the mirror routing of
 * refused `github.com` modules, and the one reading of a module it cannot have as
 * `dependency_unavailable`. Used by the cache's `go mod download` (go-modules.ts) and by its
 * import check (go-imports.ts).
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type * as Zx from 'zx';
import { findMirror } from '../../../pipeline/providers/git/mirror-source.js';
import { TelebenchError } from '../../../pipeline/errors.js';
import { hostEnv } from '../../../pipeline/providers/git/repo.js';
import { lazy } from '../../../pipeline/lazy.js';

const zx = lazy<typeof Zx>('zx');

/** A failed module download, read from `go` output. */
export interface GoModuleFailure {
  /** `module@version`. */
  module: string;
  /** What go said after the module (`reading https://...: 403 Forbidden`, `unknown revision ...`). */
  reason: string;
  /** The URL go was reading, when it says. */
  url?: string;
  /** HTTP status, when go says one. */
  status?: number;
  /** The version will not appear by retrying: 403/404/410, an unknown revision or version. */
  permanent: boolean;
}

/**
 * The first failed module of `go mod download` / `go build` output, or null when the text names
 * none. Reads `go: <module>@<version>: <reason>` (and the `reading <url>: <status>` inside it).
 */
export function goModuleFailure(text: string): GoModuleFailure | null {
  const m = /(?:^|\s)(?:go: )?((?:[\w.~-]+\/)*[\w.~-]+@v[\w.+-]+): ([^\n]+)/m.exec(text);
  if (!m) return null;
  const reason = m[2]!.trim();
  const r = /reading (\S+): (\d{3})\b/.exec(reason);
  const status = r ? Number(r[2]) : undefined;
  const permanent =
    (status !== undefined && [403, 404, 410].includes(status)) ||
    /unknown revision|invalid version|no matching versions|not found/.test(reason);
  return {
    module: m[1]!,
    reason,
    ...(r ? { url: r[1]!.replace(/:$/, ''), status } : {}),
    permanent,
  };
}

/** Go variables `go mod download` on the host may see (proxy, checksum database, caches). */
const GO_ENV_VARS = [
  'GOPROXY',
  'GOFLAGS',
  'GOMODCACHE',
  'GOSUMDB',
  'GONOSUMDB',
  'GONOPROXY',
  'GOPRIVATE',
  'GOINSECURE',
  'GOPATH',
  'GOCACHE',
  'GOTOOLCHAIN',
  'GOROOT',
];

/** The time a pseudo-version names (`v0.0.0-20260527123456-abcdef`), else `fallback`. */
function versionTime(version: string, fallback: Date): string {
  const m = /(\d{14})-[0-9a-f]{12}$/.exec(version);
  if (!m) return fallback.toISOString().replace(/\.\d+Z$/, 'Z');
  const t = m[1]!;
  return `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}Z`;
}

/**
 * Writes the `.info` files a module download directory lacks into `out` (same layout): Go's
 * `file://` proxy asks `<version>.info` before `.mod` and `.zip`, and a host cache filled by
 * `go build` / `go mod download` of exact versions often holds only `.mod` and `.zip`. The host
 * cache itself is never written. `Time` comes from a pseudo-version, else the `.mod` file's mtime.
 * @param downloads the host's `<GOMODCACHE>/cache/download`
 * @returns how many `.info` files were written
 */
export function infoOverlay(downloads: string, out: string): number {
  let written = 0;
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    if (dir.endsWith('@v')) {
      const have = new Set(names);
      for (const n of names) {
        if (!n.endsWith('.mod')) continue;
        const v = n.slice(0, -'.mod'.length);
        if (have.has(`${v}.info`)) continue;
        const target = join(out, relative(downloads, dir));
        mkdirSync(target, { recursive: true });
        const time = versionTime(v, statSync(join(dir, n)).mtime);
        writeFileSync(join(target, `${v}.info`), JSON.stringify({ Version: v, Time: time }));
        written++;
      }
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      if (statSync(p, { throwIfNoEntry: false })?.isDirectory()) walk(p);
    }
  };
  walk(downloads);
  return written;
}

/**
 * The first failed module of `go mod download -json` output (an object with `"Error"`), read as
 * {@link goModuleFailure} reads go's stderr; the module is the object's `Path@Version` when the
 * error does not name it (`module lookup disabled by GOPROXY=off`). Null when none failed.
 */
export function goJsonFailure(stdout: string): GoModuleFailure | null {
  const field = (chunk: string, name: string): string | undefined => {
    const m = new RegExp(`^\\t"${name}": ("(?:[^"\\\\]|\\\\.)*")`, 'm').exec(chunk);
    return m ? (JSON.parse(m[1]!) as string) : undefined;
  };
  for (const chunk of stdout.split(/^\{$/m)) {
    const error = field(chunk, 'Error');
    const path = field(chunk, 'Path');
    const version = field(chunk, 'Version');
    if (error === undefined || !path || !version) continue;
    const module = `${path}@${version}`;
    return goModuleFailure(error.startsWith(`${module}: `) ? error : `${module}: ${error}`);
  }
  return null;
}

/** The failed module of a failed `go` run: its stderr, else its `-json` stdout. */
function failureOf(err: unknown): GoModuleFailure | null {
  const e = err as { stderr?: string; stdout?: string };
  return goModuleFailure(String(e.stderr ?? '')) ?? goJsonFailure(String(e.stdout ?? ''));
}

/** The host's Go for one module cache ({@link hostGo}). */
export interface HostGo {
  /** The variables every `go` run gets: the user's Go variables, the proxy chain, GOMODCACHE. */
  env: Record<string, string>;
  /** The host's own module cache (`go env GOMODCACHE`), '' when Go names none. */
  hostCache: string;
  /** Its `cache/download`, '' without a host cache. */
  hostDownloads: string;
  mirrorsDir?: string;
  /** `github.com/<owner>/<name>` taken from the mirrors so far (kept for later runs). */
  routed: string[];
}

/**
 * The host's Go for the module cache `<cache>/mod`: the minimal {@link hostEnv} environment (no
 * tokens) plus the user's Go variables; GOPROXY is the host's own module cache as a `file://`
 * proxy (with the `.info` files it lacks from `<cache>/info-overlay`, {@link infoOverlay}) ahead
 * of the user's GOPROXY, GOFLAGS the user's with `-mod=mod`.
 * @param cwd a folder to run `go env` in
 */
export async function hostGo(cache: string, cwd: string, mirrorsDir?: string): Promise<HostGo> {
  const userEnv = hostEnv(GO_ENV_VARS);
  const goEnv = async (name: string): Promise<string> =>
    (await zx().$({ cwd, quiet: true, env: userEnv, nothrow: true })`go env ${name}`).stdout.trim();
  const hostCache = await goEnv('GOMODCACHE');
  const userProxy = (await goEnv('GOPROXY')) || 'https://proxy.golang.org,direct';
  const hostDownloads = hostCache ? join(hostCache, 'cache', 'download') : '';
  const proxies: string[] = [];
  if (hostDownloads && existsSync(hostDownloads)) {
    const overlay = join(cache, 'info-overlay');
    if (infoOverlay(hostDownloads, overlay) > 0) proxies.push(`file://${overlay}`);
    proxies.push(`file://${hostDownloads}`);
  }
  const userFlags = (userEnv.GOFLAGS ?? '').replace(/-mod=\S+/g, '').trim();
  return {
    env: {
      ...userEnv,
      GOPROXY: [...proxies, userProxy].join(','),
      GOMODCACHE: join(cache, 'mod'),
      GOFLAGS: `${userFlags} -mod=mod`.trim(),
    },
    hostCache,
    hostDownloads,
    ...(mirrorsDir ? { mirrorsDir } : {}),
    routed: [],
  };
}

/** How {@link goOnHost} runs and reports one `go` command. */
export interface GoOnHostRun {
  /** Which go.mod the run is for (`go.mod`, `fix.go.mod`), for the error. */
  goMod: string;
  /** Variables beyond the host setup's. */
  extra?: Record<string, string>;
  /** Time limit of each attempt, in milliseconds; none when absent. */
  timeoutMs?: number;
  /** What the run does, for the error (`go mod download`). */
  what?: string;
}

/**
 * Runs `go <args>` in `cwd` with `h`'s variables. A module the proxy and the host cache refuse,
 * whose repository the mirrors folder holds (free5GC's own modules at a pseudo-version), is then
 * taken from the mirror through git ({@link mirrorRouting}), one more module per attempt (only
 * the refused ones: a mirror may lack tags the proxy serves), at most 16 over `h`'s life.
 * @throws TelebenchError `dependency_unavailable` (tier infra) naming `module@version`, what the
 *   host cache holds of it and what the proxy said (`permanent` for 403/404/410 or an unknown
 *   revision); `go_mod_download_failed` (tier transient) for any other failure or the time limit
 */
export async function goOnHost(
  h: HostGo,
  cwd: string,
  args: readonly string[],
  o: GoOnHostRun,
): Promise<void> {
  const what = o.what ?? `go ${args.join(' ')}`;
  try {
    for (;;) {
      const env = { ...h.env, ...o.extra, ...mirrorRouting(h.mirrorsDir, h.routed) };
      const run = zx().$({
        cwd,
        quiet: true,
        env,
        ...(o.timeoutMs ? { timeout: o.timeoutMs } : {}),
      });
      const err = await run`go ${args}`.then(
        () => null,
        (e: unknown) => e,
      );
      if (err === null) return;
      const f = failureOf(err);
      const repo = f && githubRepoOf(f.module);
      const path = repo && `github.com/${repo.owner}/${repo.name}`;
      const mirrors = h.mirrorsDir;
      if (!path || !mirrors || h.routed.includes(path) || h.routed.length >= 16) throw err;
      if (!findMirror(mirrors, repo.owner, repo.name)) throw err;
      h.routed.push(path);
    }
  } catch (err) {
    const text = String((err as { stderr?: string }).stderr ?? (err as Error).message);
    const f = failureOf(err);
    if (f) throw unavailableOnHost(f, o.goMod, h, err, what);
    const timedOut = (err as { signal?: string }).signal === 'SIGTERM';
    throw new TelebenchError(
      'go_mod_download_failed',
      `${what} on the host (${o.goMod}) ${timedOut ? `took more than ${(o.timeoutMs ?? 0) / 1000} s` : 'failed'}: ${text}`,
      { tier: 'transient', cause: err },
    );
  }
}

/** Which of a module version's files the host cache holds (`.info`, `.mod`, `.zip`). */
function hostHas(downloads: string, moduleAtVersion: string): string[] {
  const at = moduleAtVersion.lastIndexOf('@');
  const escaped = moduleAtVersion.slice(0, at).replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);
  const v = moduleAtVersion.slice(at + 1);
  const dir = join(downloads, escaped, '@v');
  return ['info', 'mod', 'zip'].filter((e) => existsSync(join(dir, `${v}.${e}`)));
}

/** The `dependency_unavailable` of a failed host run, saying what the host cache holds. */
function unavailableOnHost(
  f: GoModuleFailure,
  goMod: string,
  h: HostGo,
  cause: unknown,
  what: string,
): TelebenchError {
  const { hostCache, hostDownloads, mirrorsDir } = h;
  const held = hostDownloads ? hostHas(hostDownloads, f.module) : [];
  const repo = githubRepoOf(f.module);
  const mirror = repo && mirrorsDir ? findMirror(mirrorsDir, repo.owner, repo.name) : undefined;
  const mirrorSaid = !repo
    ? ''
    : mirror
      ? `, nor its mirror ${repo.owner}/${repo.name} (that version's commit is not there)`
      : mirrorsDir
        ? `, nor the mirrors folder (no mirror of ${repo.owner}/${repo.name})`
        : '';
  const where = !hostCache
    ? 'the host has no module cache'
    : held.length === 0
      ? `the host module cache (${hostCache}) does not hold it`
      : `the host module cache (${hostCache}) holds only its ${held.map((e) => `.${e}`).join(', ')}`;
  return new TelebenchError(
    'dependency_unavailable',
    `${what} on the host (${goMod === 'go.mod' ? 'the base go.mod' : "the fix's go.mod"}): ${f.module} cannot be had: ${where}${mirrorSaid}, and the proxy: ${f.reason}; fill the host cache (go mod download in a checkout of that commit) or set GOPROXY/GOFLAGS to a proxy that serves it`,
    {
      tier: 'infra',
      context: {
        module: f.module,
        ...(f.url ? { url: f.url } : {}),
        ...(f.status !== undefined ? { status: f.status } : {}),
        hostCache,
        host_cache_files: held,
        go_mod: goMod,
        permanent: f.permanent,
      },
      cause,
    },
  );
}

/** `github.com/<owner>/<name>` of a module path (`@version` and subfolders aside), else null. */
function githubRepoOf(moduleAtVersion: string): { owner: string; name: string } | null {
  const m = /^github\.com\/([^/@]+)\/([^/@]+)/.exec(moduleAtVersion);
  return m ? { owner: m[1]!, name: m[2]! } : null;
}

/**
 * The Go environment that takes the `github.com` repositories `paths` (`github.com/owner/name`)
 * from the mirrors folder: fetched by git (`GONOPROXY`, `GONOSUMDB`, `GOPRIVATE`; go.sum still
 * checks the bytes) from the mirror, through a `url.<mirror>.insteadOf` of the GitHub URL given
 * as `GIT_CONFIG_*` variables.
 * @returns the variables to add (none without a mirrors folder or paths)
 */
export function mirrorRouting(
  mirrorsDir: string | undefined,
  paths: readonly string[],
): Record<string, string> {
  if (!mirrorsDir || paths.length === 0) return {};
  const env: Record<string, string> = {};
  paths.forEach((path, i) => {
    const r = githubRepoOf(path)!;
    env[`GIT_CONFIG_KEY_${i}`] = `url.${findMirror(mirrorsDir, r.owner, r.name)}.insteadOf`;
    env[`GIT_CONFIG_VALUE_${i}`] = `https://${path}`;
  });
  env.GIT_CONFIG_COUNT = String(paths.length);
  for (const k of ['GONOPROXY', 'GONOSUMDB', 'GOPRIVATE']) env[k] = paths.join(',');
  return env;
}
