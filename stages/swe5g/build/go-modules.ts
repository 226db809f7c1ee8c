/**
 * Go modules of an instance's env layer: the `go.mod`/`go.sum` of the environment commit and,
 * when the fix changes them (a dependency bump), the ones after the fix, so the fixed code
 * compiles in the test steps (`GOPROXY=off`); the `go_modules: host` module cache; and the one
 * reading of a failed module download as `dependency_unavailable` with the module and version.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import type * as Zx from 'zx';
import { findMirror } from '../../../pipeline/providers/git/mirror-source.js';
import { TelebenchError } from '../../../pipeline/errors.js';
import { fileAt, hostEnv } from '../../../pipeline/providers/git/repo.js';
import { hashJson } from '../../../pipeline/hash.js';
import { lazy } from '../../../pipeline/lazy.js';
import type { Resolved } from '../types.js';
import { goReplaceDirs } from '../resolve/reads.js';

const zx = lazy<typeof Zx>('zx');

/**
 * The Go dependency files of an instance's env layer: `go.mod`/`go.sum` at
 * `environment_setup_commit`, plus `fix.go.mod`/`fix.go.sum` at `merge_commit` when they differ
 * (the patch is base..merge of the non-test files, so these are the files after the fix); without
 * a `merge_commit` (a released row rebuilt by `telebench verify`) only the former. A module with
 * local `replace` folders (a Magma folder's `=> ../../../orc8r/lib/go`) also gets their go.mod
 * files as `_local/<folder>/go.mod` (`fix._local/...` after the fix), which `go mod download`
 * needs to load the module graph ({@link downloadFiles}; `go_modules: host` only).
 * @param mirror the repository's bare mirror; @param moduleDir the module's folder ('' = root)
 * @returns name -> content (absent names: the file does not exist at that commit)
 */
export async function goDepFiles(
  mirror: string,
  res: Pick<Resolved, 'environment_setup_commit'> & Partial<Pick<Resolved, 'merge_commit'>>,
  moduleDir: string,
): Promise<Record<string, string>> {
  const at = (commit: string, n: string): Promise<string | undefined> =>
    fileAt(mirror, commit, moduleDir ? `${moduleDir}/${n}` : n);
  const out: Record<string, string> = {};
  for (const n of ['go.mod', 'go.sum']) {
    const text = await at(res.environment_setup_commit, n);
    if (text !== undefined) out[n] = text;
  }
  // a monorepo module's local replace folders: their go.mod files are part of the module graph
  const locals = async (goMod: string, commit: string, prefix: string): Promise<void> => {
    for (const dir of goReplaceDirs(goMod, moduleDir)) {
      const text = await fileAt(mirror, commit, dir ? `${dir}/go.mod` : 'go.mod');
      if (text !== undefined) out[`${prefix}${LOCAL}${dir}/go.mod`] = text;
    }
  };
  if (out['go.mod'] !== undefined) await locals(out['go.mod'], res.environment_setup_commit, '');
  // no merge commit (a released row): the files at the environment commit only
  if (out['go.mod'] === undefined || !res.merge_commit) return out;
  const fixMod = await at(res.merge_commit, 'go.mod');
  const fixSum = await at(res.merge_commit, 'go.sum');
  if (
    fixMod !== undefined &&
    (fixMod !== out['go.mod'] || (fixSum ?? '') !== (out['go.sum'] ?? ''))
  ) {
    out['fix.go.mod'] = fixMod;
    out['fix.go.sum'] = fixSum ?? '';
    await locals(fixMod, res.merge_commit, 'fix.');
  }
  return out;
}

/** Folder of a download work tree holding the go.mod files of local replace targets. */
const LOCAL = '_local/';

/**
 * The files of one `go mod download` work folder from {@link goDepFiles}' result (`fix`: the
 * fix's): `go.mod` with each local `replace` target (`=> ../../orc8r/lib/go`) pointed at
 * `./_local/<repository folder>`, `go.sum`, and `_local/<folder>/go.mod` for each target, so the
 * module graph of a monorepo module (Magma) loads without the rest of the repository. Without
 * local replaces: `go.mod` and `go.sum` as they are.
 * @param moduleDir the module's folder in the repository ('' for the root)
 */
export function downloadFiles(
  depFiles: Record<string, string>,
  fix: boolean,
  moduleDir: string,
): Record<string, string> {
  const p = fix ? 'fix.' : '';
  const out: Record<string, string> = { 'go.sum': depFiles[`${p}go.sum`] ?? '' };
  for (const [k, v] of Object.entries(depFiles))
    if (k.startsWith(`${p}${LOCAL}`)) out[k.slice(p.length)] = v;
  out['go.mod'] = (depFiles[`${p}go.mod`] ?? '').replace(
    /=>(\s*)(\.{1,2}\/\S*|\.{1,2})(?=\s|$)/g,
    (all, space: string, rel: string) => {
      const dir = posix.normalize(posix.join(moduleDir || '.', rel));
      return out[`${LOCAL}${dir}/go.mod`] !== undefined ? `=>${space}./${LOCAL}${dir}` : all;
    },
  );
  return out;
}

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

/** Which of a module version's files the host cache holds (`.info`, `.mod`, `.zip`). */
function hostHas(downloads: string, moduleAtVersion: string): string[] {
  const at = moduleAtVersion.lastIndexOf('@');
  const escaped = moduleAtVersion.slice(0, at).replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);
  const v = moduleAtVersion.slice(at + 1);
  const dir = join(downloads, escaped, '@v');
  return ['info', 'mod', 'zip'].filter((e) => existsSync(join(dir, `${v}.${e}`)));
}

/**
 * Fills a module cache on the host for the `go_modules: host` mode, keyed by the hash of the
 * dependency files: `go mod download` of the environment commit's go.mod (and of the fix's,
 * `fix.go.mod`, when it differs) with the host's Go in the minimal {@link hostEnv} environment
 * (no tokens) plus the user's Go variables (GOPROXY, GOFLAGS, GOMODCACHE, ...). The host's own
 * module cache (`go env GOMODCACHE`) is read first, as a `file://` proxy ahead of the user's
 * GOPROXY, with the `.info` files it lacks supplied from an overlay ({@link infoOverlay}), so a
 * module the host already holds is never downloaded again and a module the proxy refuses still
 * builds. A module both refuse whose repository is in the mirrors folder (`github.com/<owner>/<name>`
 * as `<owner>+<name>/repo`, ...: free5GC's own modules at a pseudo-version the proxy never served)
 * is then taken from the mirror through git ({@link mirrorRouting}), in a second download.
 * @param depFiles {@link goDepFiles}' result
 * @param moduleDir the module's folder (its go.mod's local `replace` targets are relative to it)
 * @param mirrorsDir the mirrors folder (`swe5g.mining.mirrors_dir`), when there is one
 * @returns the cache folder (only these go.mod files' modules: it is copied into the env image)
 * @throws TelebenchError `dependency_unavailable` (tier infra) naming `module@version`, what the
 *   host cache holds of it and what the proxy said (`permanent` for 403/404/410 or an unknown
 *   revision); `go_mod_download_failed` (tier transient) for any other failure
 */
export async function hostModCache(
  stateDir: string,
  depFiles: Record<string, string>,
  moduleDir = '',
  mirrorsDir?: string,
): Promise<string> {
  const key = hashJson(depFiles).slice(0, 16);
  const cache = join(stateDir, 'swe5g', 'gomodcache', key);
  if (existsSync(join(cache, '.complete'))) return join(cache, 'mod');
  const works = [{ dir: join(cache, 'work'), mod: 'go.mod', sum: 'go.sum' }];
  if (depFiles['fix.go.mod'] !== undefined)
    works.push({ dir: join(cache, 'work-fix'), mod: 'fix.go.mod', sum: 'fix.go.sum' });
  for (const w of works) {
    for (const [rel, text] of Object.entries(
      downloadFiles(depFiles, w.mod === 'fix.go.mod', moduleDir),
    )) {
      mkdirSync(dirname(join(w.dir, rel)), { recursive: true });
      writeFileSync(join(w.dir, rel), text);
    }
  }
  const userEnv = hostEnv(GO_ENV_VARS);
  const goEnv = async (name: string): Promise<string> =>
    (
      await zx().$({ cwd: works[0]!.dir, quiet: true, env: userEnv, nothrow: true })`go env ${name}`
    ).stdout.trim();
  const hostCache = await goEnv('GOMODCACHE');
  const userProxy = (await goEnv('GOPROXY')) || 'https://proxy.golang.org,direct';
  const hostDownloads = hostCache ? join(hostCache, 'cache', 'download') : '';
  const proxies: string[] = [];
  if (hostDownloads && existsSync(hostDownloads)) {
    const overlay = join(cache, 'info-overlay');
    if (infoOverlay(hostDownloads, overlay) > 0) proxies.push(`file://${overlay}`);
    proxies.push(`file://${hostDownloads}`);
  }
  const proxy = [...proxies, userProxy].join(',');
  const userFlags = (userEnv.GOFLAGS ?? '').replace(/-mod=\S+/g, '').trim();
  const baseEnv = {
    ...userEnv,
    GOPROXY: proxy,
    GOMODCACHE: join(cache, 'mod'),
    GOFLAGS: `${userFlags} -mod=mod`.trim(),
  };
  for (const w of works) {
    try {
      const download = (env: Record<string, string>) =>
        zx().$({ cwd: w.dir, quiet: true, env })`go mod download`;
      // a module the proxy and the host cache refuse, whose repository the mirrors folder holds
      // (free5GC's own modules at a pseudo-version): from the mirror through git, one more module
      // per round (only the refused ones: a mirror may lack tags the proxy serves)
      const routed: string[] = [];
      for (;;) {
        const err = await download({ ...baseEnv, ...mirrorRouting(mirrorsDir, routed) }).then(
          () => null,
          (e: unknown) => e,
        );
        if (err === null) break;
        const f = goModuleFailure(String((err as { stderr?: string }).stderr ?? ''));
        const repo = f && githubRepoOf(f.module);
        const path = repo && `github.com/${repo.owner}/${repo.name}`;
        if (!path || !mirrorsDir || routed.includes(path) || routed.length >= 16) throw err;
        if (!findMirror(mirrorsDir, repo.owner, repo.name)) throw err;
        routed.push(path);
      }
    } catch (err) {
      const text = String((err as { stderr?: string }).stderr ?? (err as Error).message);
      const f = goModuleFailure(text);
      if (f) throw unavailableOnHost(f, w.mod, hostCache, hostDownloads, err, mirrorsDir);
      throw new TelebenchError(
        'go_mod_download_failed',
        `go mod download on the host (${w.mod}) failed: ${text}`,
        { tier: 'transient', cause: err },
      );
    }
  }
  await zx().$({ quiet: true })`chmod -R u+w ${join(cache, 'mod')}`;
  writeFileSync(join(cache, '.complete'), '');
  return join(cache, 'mod');
}

/** The `dependency_unavailable` of a failed host download, saying what the host cache holds. */
function unavailableOnHost(
  f: GoModuleFailure,
  goMod: string,
  hostCache: string,
  hostDownloads: string,
  cause: unknown,
  mirrorsDir?: string,
): TelebenchError {
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
    `go mod download on the host (${goMod === 'go.mod' ? 'the base go.mod' : "the fix's go.mod"}): ${f.module} cannot be had: ${where}${mirrorSaid}, and the proxy: ${f.reason}; fill the host cache (go mod download in a checkout of that commit) or set GOPROXY/GOFLAGS to a proxy that serves it`,
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
