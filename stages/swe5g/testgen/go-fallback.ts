/**
 * Go host checks whose modules the proxy will not serve (issue 30: a behavioural test where one
 * flips). testgen runs a Go direct call on the host with the user's module proxy; free5GC's own
 * modules at main-branch pseudo-versions are refused there (403, real `free5gc__amf-210`:
 * `github.com/free5gc/util@v1.3.2-0.2026...`), so Strategy A read "dependencies unavailable" and
 * the instance fell back to a Strategy B text test. The environment layer already gets such
 * modules from the mirrors folder (`go_modules: host`, build/go-modules.ts); this wrapper does
 * the same for testgen: when a Go run fails on a dependency, the commit's module cache is filled
 * by that same code (the host cache as a proxy, the mirrors through git for refused `github.com`
 * modules, every module the folder's packages and tests import) and the run is made again with
 * it, offline, as the test steps run (`GOPROXY=off`).
 */
import { fillHostModCache, goDepFiles } from '../build/go-modules.js';
import { TelebenchError } from '../../../pipeline/errors.js';
import { dependencyFailure, type TestRunner } from './generate.js';

/** What the wrapper needs of the instance and the run. */
export interface GoFallbackContext {
  /** The state folder (the module caches live under `<state>/swe5g/gomodcache/`). */
  stateDir: string;
  /** The mirrors folder (`swe5g.mining.mirrors_dir`), when there is one. */
  mirrorsDir?: string;
  /** The module's folder in the repository ('' for the root; a Magma folder's path). */
  moduleDir: string;
  /** The registry entry's cgo (its cgo files' imports count). */
  cgo?: boolean;
  /** Called once per commit whose cache could not be filled, with why (the item's log). */
  onUnavailable?: (commit: string, why: string) => void;
}

/** The variables of a run from a filled cache: that cache, nothing from the network. */
export function offlineGoEnv(modCache: string): Record<string, string> {
  return { GOMODCACHE: modCache, GOPROXY: 'off', GOFLAGS: '-mod=mod', GONOSUMDB: '*' };
}

/**
 * Wraps `runner` so a Go run that fails on a dependency is made again with the commit's module
 * cache filled through the mirrors (module comment). Runs of other languages, runs that did not
 * fail on a dependency and runs given their own variables pass through unchanged; when the cache
 * cannot be filled either (a module nobody serves: `dependency_unavailable`), the first run's
 * result stands.
 * @throws what `runner` throws; TelebenchError other than `dependency_unavailable` from the fill
 */
export function withGoModuleFallback(runner: TestRunner, c: GoFallbackContext): TestRunner {
  return async (gitDir, commit, patch, language, ids, timeoutMs, signal, unread, env) => {
    const run = await runner(gitDir, commit, patch, language, ids, timeoutMs, signal, unread, env);
    if (language !== 'go' || env || !run.buildFailed || dependencyFailure(run.log, 'go') === null)
      return run;
    if (signal?.aborted) return run;
    let modCache: string;
    try {
      const depFiles = await goDepFiles(gitDir, { environment_setup_commit: commit }, c.moduleDir);
      if (depFiles['go.mod'] === undefined) return run;
      const unreadSet = new Set(unread ?? []);
      modCache = (
        await fillHostModCache(c.stateDir, depFiles, c.moduleDir, c.mirrorsDir, {
          mirror: gitDir,
          commit,
          ...(c.cgo ? { cgo: true } : {}),
          unread: (p) => unreadSet.has(p),
        })
      ).dir;
    } catch (err) {
      if (err instanceof TelebenchError && err.code === 'dependency_unavailable') {
        c.onUnavailable?.(commit, err.message);
        return run;
      }
      throw err;
    }
    const again = await runner(
      gitDir,
      commit,
      patch,
      language,
      ids,
      timeoutMs,
      signal,
      unread,
      offlineGoEnv(modCache),
    );
    // the log says the run was made again from a filled cache
    return {
      ...again,
      log: `${again.log}\n[telebench] the first run could not get its modules from the proxy; this run used a module cache filled from the host cache and the mirrors folder\n`,
    };
  };
}
