/**
 * Source selection and shared clients of `swe5g.mine` / `swe5g.link`: the GitHub client (one per
 * run), whether the API is reachable (probed once per run), and where a repository's git mirror is.
 */
import { resolve, dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { ensureMirror } from '../../../pipeline/providers/git/repo.js';
import type { StageContext } from '../../../pipeline/stage.js';
import { GithubClient, tokensFromEnv } from '../../../pipeline/providers/github/client.js';
import { findMirror } from '../../../pipeline/providers/git/mirror-source.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import { loadRegistry, selectRepos, type RegistryEntry } from '../registry.js';

/** The run's GitHub client (shared by mine and link through `ctx.memo`). */
export function githubClient(ctx: StageContext<HasSwe5g>): GithubClient {
  return ctx.memo('swe5g.github', () => {
    const g = swe5gSettings(ctx.config).mining.github;
    return new GithubClient({
      baseUrl: g.base_url,
      tokens: tokensFromEnv(),
      kv: ctx.kv,
      blobs: ctx.blobs,
      requestTimeoutMs: g.request_timeout_ms,
      maxRetries: g.max_retries,
      retryBaseMs: g.retry_base_ms,
      maxWaitSeconds: g.max_wait_seconds,
      onEvent: (e) => ctx.emit(e),
      signal: ctx.signal,
    });
  });
}

/** Result of probing the API once per run. `why` explains an unusable API. */
export interface ApiProbe {
  usable: boolean;
  why: string;
}

/**
 * Probes `GET /rate_limit` once per run (free of charge).
 * @returns usable=false with the reason when there is no token (and unauthenticated use is not
 *   allowed) or the API cannot be reached
 */
export function probeApi(ctx: StageContext<HasSwe5g>): Promise<ApiProbe> {
  return ctx.memo('swe5g.github.probe', async (): Promise<ApiProbe> => {
    const g = swe5gSettings(ctx.config).mining.github;
    if (tokensFromEnv().length === 0 && !g.allow_unauthenticated) {
      return {
        usable: false,
        why: 'no GITHUB_TOKEN or GITHUB_TOKENS is set, and swe5g.mining.github.allow_unauthenticated is false',
      };
    }
    try {
      const probe = new GithubClient({
        baseUrl: g.base_url,
        tokens: tokensFromEnv(),
        kv: ctx.kv,
        blobs: ctx.blobs,
        requestTimeoutMs: g.preflight_timeout_ms,
        maxRetries: 0,
      });
      const rl = await probe.rateLimit();
      ctx.log(
        `GitHub API ${g.base_url} reachable: ${rl.remaining}/${rl.limit} requests left${probe.authenticated ? '' : ' (unauthenticated: 60 requests/hour)'}`,
      );
      return { usable: true, why: '' };
    } catch (err) {
      return {
        usable: false,
        why: `GitHub API ${g.base_url} unreachable: ${(err as Error).message}`,
      };
    }
  });
}

/** Environment variable naming a folder of bare mirrors when `swe5g.mining.mirrors_dir` is unset. */
export const MIRRORS_DIR_ENV = 'TELEBENCH_MIRRORS_DIR';

/**
 * The mirrors folder the user configured: `swe5g.mining.mirrors_dir` (relative to the config
 * file), else `$TELEBENCH_MIRRORS_DIR` (relative to the working directory), else undefined.
 */
export function configuredMirrorsDir(ctx: StageContext<HasSwe5g>): string | undefined {
  const d = swe5gSettings(ctx.config).mining.mirrors_dir;
  if (d) return resolve(dirname(ctx.configFile), d);
  const env = process.env[MIRRORS_DIR_ENV];
  return env ? resolve(env) : undefined;
}

/**
 * Absolute mirrors folder: the configured one ({@link configuredMirrorsDir}), else
 * `<state>/mirrors` (filled by {@link cloneMirrors} with `git clone --mirror` from `git_url_base`).
 */
export function mirrorsDir(ctx: StageContext<HasSwe5g>): string {
  return configuredMirrorsDir(ctx) ?? join(ctx.stateDir, 'mirrors');
}

/** `swe5g.environments.git_url_base`: a URL as is, a folder relative to the config file. */
export function gitUrlBase(ctx: StageContext<HasSwe5g>): string {
  const b = swe5gSettings(ctx.config).environments.git_url_base;
  return /^[a-z]+:\/\//.test(b) || b.startsWith('git@')
    ? b.replace(/\/$/, '')
    : resolve(dirname(ctx.configFile), b);
}

/**
 * What to do when no mirror is available, with a clone example naming the first one or two
 * selected repositories that have no mirror (the ones the run needs, never a fixed example).
 * @param missing the `owner/name` of each selected repository without a mirror, in registry order
 *   (repeats, from entries sharing a repository, are counted once)
 * @param base    `swe5g.environments.git_url_base` as the clone would use it (a URL or a folder)
 * @returns the hint, e.g. `... (git clone --mirror https://github.com/free5gc/udm.git free5gc/udm.git)`
 */
export function mirrorHint(missing: readonly string[], base: string): string {
  const repos = [...new Set(missing)];
  const shown = repos.slice(0, 2).map((r) => `git clone --mirror ${base}/${r}.git ${r}.git`);
  const more = repos.length > 2 ? `; and the same for ${repos.length - 2} more` : '';
  const example = shown.length ? ` (${shown.join('; ')}${more})` : '';
  return `make swe5g.environments.git_url_base (now ${base}) reachable so that the mine stage clones the repositories into <state>/mirrors, or set swe5g.mining.mirrors_dir (or ${'$'}TELEBENCH_MIRRORS_DIR) to a folder of bare clones laid out as <owner>+<name>/repo or <owner>/<name>.git${example}`;
}

/** A repository that could not be cloned into `<state>/mirrors`. */
export interface CloneFailure {
  repo: string;
  url: string;
  message: string;
}

/**
 * When no mirrors folder is configured: clones each selected repository with `git clone --mirror
 * <git_url_base>/<owner>/<name>.git` into `<state>/mirrors/<owner>/<name>.git` (first run), or
 * fetches an existing clone (later runs; a failed fetch is logged and the old clone is used).
 * Logs one line per repository. Does nothing when a mirrors folder is configured.
 * @returns the repositories whose first clone failed, each with its URL and git's message
 */
export async function cloneMirrors(
  ctx: StageContext<HasSwe5g>,
  entries: readonly RegistryEntry[],
): Promise<CloneFailure[]> {
  if (configuredMirrorsDir(ctx)) return [];
  const base = gitUrlBase(ctx);
  const failures: CloneFailure[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    const repo = `${e.owner}/${e.name}`;
    if (seen.has(repo)) continue;
    seen.add(repo);
    const url = `${base}/${repo}.git`;
    const dir = join(mirrorsDir(ctx), e.owner, `${e.name}.git`);
    const had = existsSync(join(dir, 'HEAD'));
    ctx.log(
      had
        ? `updating mirror ${dir} from ${url}`
        : `cloning ${url} into ${dir} (git clone --mirror)`,
    );
    try {
      await ensureMirror(url, dir, [], { refresh: true });
    } catch (err) {
      const message = (err as Error).message;
      if (had)
        ctx.log(
          `warning: could not update ${dir} from ${url}, mining the existing clone: ${message}`,
        );
      else failures.push({ repo, url, message });
    }
  }
  return failures;
}

/** The git mirror of a registry entry, if one exists under the mirrors folder. */
export function mirrorOf(ctx: StageContext<HasSwe5g>, e: RegistryEntry): string | undefined {
  const dir = mirrorsDir(ctx);
  return dir && existsSync(dir) ? findMirror(dir, e.owner, e.name) : undefined;
}

/**
 * The registry entries selected by `swe5g.registry` and `swe5g.repos`.
 * @throws ConfigError when the registry is invalid or `repos` names an unknown id
 */
export function selectedEntries(ctx: StageContext<HasSwe5g>): RegistryEntry[] {
  const s = swe5gSettings(ctx.config);
  // a missing registry file is reported before the run, with key and line (stages/config-paths.ts)
  return ctx.memo('swe5g.registry', () =>
    selectRepos(loadRegistry(resolve(dirname(ctx.configFile), s.registry)), s.repos),
  );
}
