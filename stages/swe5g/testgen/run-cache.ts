/**
 * Testgen's host test runs, kept by content (issue 31: "every stage can be stopped anywhere and
 * resumed without losing or repeating work"). A flip check builds and runs a generated test at
 * base_commit and at merge_commit on the host; for C that is a meson setup and build of the
 * fixed library in a scratch checkout, 10-30 minutes per Open5GS candidate on a loaded 2-core
 * machine. A new testgen version (a Strategy B rule changed) re-runs every item, but most of its
 * runs are the same runs: the same test patch at the same commit with the same toolchain. This
 * wrapper answers such a run from the state's key-value store.
 *
 * The key is the SHA-256 of: {@link RUN_CACHE_VERSION}, the host toolchain's identity for the
 * language ({@link hostToolchain}), the commit, the test patch, the test ids, the files left out
 * of the checkout, the timeout and the variables added to the environment. Only outcomes of the code are kept: a run that was killed
 * (timeout, Ctrl-C), whose results were ambiguous, that timed out inside the test tool, or that
 * failed on a dependency the machine could not get (the environment's fault, which setup may
 * mend) runs again next time.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sha256 } from '../../../pipeline/hash.js';
import type { KeyValue } from '../../../pipeline/store/store.js';
import type { BlobStore } from '../../../pipeline/store/blobs.js';
import type { TestRun } from './executor.js';
import { dependencyFailure, type TestRunner } from './generate.js';

/** Bump when what a stored run means changes (the runner's result shape or its reading). */
export const RUN_CACHE_VERSION = 1;
/**
 * Bump a language's number when the commands its runs are made with change (its stored runs are
 * then made anew, the other languages' kept). Go 2: a go.mod without a `go` directive is built as
 * Go 1.16 (pipeline/providers/docker/go-directive.ts). Python 2: pytest ids are rooted at the
 * checkout (`--rootdir=.`, harness/id-spec.ts). Version 1 is not in the key (the keys of
 * the runs stored before these numbers existed).
 */
export const RUNNER_VERSIONS: Readonly<Record<'go' | 'c' | 'python', number>> = {
  go: 2,
  c: 1,
  python: 2,
};
/** The key-value namespace of the stored runs. */
export const RUN_CACHE_NAMESPACE = 'swe5g.testgen.host_runs';

type Language = 'go' | 'c' | 'python';
type RunResult = TestRun & { applyError: string | null };

/** What the key-value store holds per run: the result without its log, and the log's blob. */
interface StoredRun {
  run: Omit<RunResult, 'log'>;
  log: string;
}

/** Where stored runs live: the state's key-value store and blob store (`ctx.kv`, `ctx.blobs`). */
export interface RunCache {
  kv: KeyValue;
  blobs: BlobStore;
}

/** A timeout inside the test tool: Go's `-timeout` panic, meson's per-test TIMEOUT. */
const TOOL_TIMEOUT = /panic: test timed out after|^\s*\d+\/\d+ .* TIMEOUT\b/m;

/**
 * Whether a run's outcome is the code's own and can stand for a later identical run.
 * @returns false for a killed run (exit code null), an ambiguous one, a timeout inside the test
 *   tool, a missing dependency (dependencyFailure), or one that ran while `signal` was aborted
 */
export function isStorable(run: RunResult, language: Language, signal?: AbortSignal): boolean {
  if (signal?.aborted) return false;
  if (run.applyError !== null) return true; // a patch that does not apply at a commit never will
  if (run.exitCode === null || run.ambiguous) return false;
  if (TOOL_TIMEOUT.test(run.log)) return false;
  return dependencyFailure(run.log, language) === null;
}

const exec = promisify(execFile);

/** The first line of a command's output, or `absent` when it does not run. */
async function versionOf(cmd: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await exec(cmd, args, { timeout: 60_000 });
    return `${stdout}${stderr}`.trim().split('\n')[0] ?? '';
  } catch {
    return 'absent';
  }
}

const toolchains = new Map<Language, Promise<string>>();

/**
 * The host toolchain a language's runs use, as one string (versions of go; python3 and pytest;
 * meson, ninja and cc), measured once per process. A changed toolchain gives other keys, so its
 * runs are made anew.
 */
export function hostToolchain(language: Language): Promise<string> {
  let p = toolchains.get(language);
  if (!p) {
    const probes: [string, string[]][] =
      language === 'go'
        ? [['go', ['version']]]
        : language === 'python'
          ? [['python3', ['-c', 'import sys, pytest; print(sys.version, pytest.__version__)']]]
          : [
              ['meson', ['--version']],
              ['ninja', ['--version']],
              ['cc', ['--version']],
            ];
    p = Promise.all(probes.map(([c, a]) => versionOf(c, a))).then((v) => v.join(' | '));
    toolchains.set(language, p);
  }
  return p;
}

/**
 * Wraps `runner` so a run made before with the same inputs and toolchain is read back instead of
 * made again ({@link isStorable} decides what is kept).
 * @param toolchain the identity of the host toolchain per language (default {@link hostToolchain})
 * @param onReuse called with the commit of each run read back (for the item's log)
 */
export function cachedRunner(
  runner: TestRunner,
  cache: RunCache,
  toolchain: (language: Language) => Promise<string> = hostToolchain,
  onReuse?: (commit: string) => void,
): TestRunner {
  return async (gitDir, commit, patch, language, ids, timeoutMs, signal, unread, env) => {
    const key = sha256(
      JSON.stringify([
        RUN_CACHE_VERSION,
        ...(RUNNER_VERSIONS[language] > 1 ? [`runner ${RUNNER_VERSIONS[language]}`] : []),
        await toolchain(language),
        commit,
        sha256(patch),
        language,
        [...ids].sort(),
        [...(unread ?? [])].sort(),
        timeoutMs,
        // only when given, so the keys of runs without added variables stay as they were
        ...(env && Object.keys(env).length > 0
          ? [Object.entries(env).sort(([a], [b]) => a.localeCompare(b))]
          : []),
      ]),
    );
    const stored = cache.kv.get<StoredRun>(RUN_CACHE_NAMESPACE, key);
    if (stored && cache.blobs.has(stored.log)) {
      onReuse?.(commit);
      return { ...stored.run, log: cache.blobs.getText(stored.log) };
    }
    const run = await runner(gitDir, commit, patch, language, ids, timeoutMs, signal, unread, env);
    if (isStorable(run, language, signal)) {
      const { log, ...rest } = run;
      cache.kv.set(RUN_CACHE_NAMESPACE, key, { run: rest, log: cache.blobs.put(log) });
    }
    return run;
  };
}
