/**
 * Reading the log of a step that did not build: the lines that say why (`firstErrorLines`), and
 * whether the cause is the ENVIRONMENT (a dependency that could not be obtained: the module cache,
 * the proxy, the network, a system library) rather than the code at that commit
 * (`dependencyFault`). Validation turns the first into the verdict `build_failed_at_parent` and
 * the second into the retryable failure `dependency_unavailable`; grading keeps an environment
 * fault out of a model's score. Pure: text in, lines out.
 *
 * `go test -json` logs are decoded first ({@link plainLog}): each JSON event line is replaced by
 * its `Output` text (Go 1.24+ puts build errors in `build-output` events), so no quoted line is a
 * raw JSON object.
 *
 * The environment patterns, per toolchain ({@link ENV_PATTERNS}), and what is deliberately NOT one:
 * - Go: `module lookup disabled by GOPROXY=off` (the module cache lacks a module the commit's
 *   go.mod pins: the host cache, not the code), a proxy's `reading https://.../@v/...: 403/404/410`
 *   (the module existed when the commit built upstream; the proxy here no longer serves it, as
 *   build.ts's `dependency_unavailable`), network errors (`dial tcp`, `i/o timeout`,
 *   `proxyconnect`, `no such host`, `connection refused`, `TLS handshake timeout`), `terminal
 *   prompts disabled` (a `direct` fetch of a repository that asks for credentials), and
 *   `verifying ...: checksum mismatch` / `SECURITY ERROR` (go.sum pins the bytes the commit built
 *   with; other bytes from a cache or proxy mean the pinned dependency could not be obtained here).
 *   NOT environment: `missing go.sum entry` and `updates to go.mod needed` (go.mod/go.sum as the
 *   repository has them at that commit are incomplete: a property of the commit, the same on any
 *   machine), `no required module provides package` and `cannot find module providing package X:
 *   module lookup disabled` (an import no go.mod requirement covers: Go looks it up only because
 *   the commit's go.mod lacks it), and every compiler error.
 * - C/meson: meson's `ERROR: Dependency "talloc" not found` (a required dependency(); an optional
 *   one only logs `found: NO` and is no error), a missing `pkg-config`/`Pkg-config binary`. NOT
 *   environment: `fatal error: x.h: No such file or directory` (it may be the repository's own
 *   header as well as a system one) and every compiler error (`error: 'x' undeclared`).
 * - Python: pip/uv resolution and download failures (`Could not find a version that satisfies`,
 *   `No matching distribution found`, uv's `not found in the package registry`, `Failed to
 *   download`) and network errors (`Failed to establish a new connection`, `Temporary failure in
 *   name resolution`, `ReadTimeoutError`). NOT environment: `ModuleNotFoundError` at import time,
 *   even of what looks like a third-party package: the module may be one the commit itself moved
 *   or deleted, or one the test patch imports before the fix adds it; nothing in the log tells
 *   these apart from a package the host lacks, and calling a code fault an environment fault
 *   would retry forever, so it stays a verdict (the local executor's documented limit: the host
 *   must have the packages); likewise `SyntaxError` and every other traceback.
 */
import type { RecipeName } from '../../../pipeline/providers/docker/recipes.js';
import { TelebenchError } from '../../../pipeline/errors.js';
import type { StepOutcome } from './run-step.js';

/** One pattern of an environment fault: what it matches and what it means. */
export interface EnvPattern {
  re: RegExp;
  /** Short reason (`module not in the module cache, GOPROXY=off`). */
  reason: string;
}

/** The environment patterns of each recipe's toolchain (see the module comment for the choices). */
export const ENV_PATTERNS: Readonly<Record<RecipeName, readonly EnvPattern[]>> = {
  go: [
    {
      // a module go.mod requires, absent from the cache; `cannot find module providing package
      // X: module lookup disabled` is an import no requirement covers: the code's
      re: /^(?!.*cannot find module providing package).*module lookup disabled by GOPROXY=off/,
      reason: 'a module go.mod requires is not in the module cache and GOPROXY=off',
    },
    {
      re: /reading \S+\/@(?:v|latest)\S*: (?:403|404|410)\b/,
      reason: 'the module proxy does not serve a module',
    },
    {
      // only on the go command's own lines (a fetch of a module): a test's `dial tcp ...:
      // connection refused` is the test's
      re: /(?:^go: |@v[\w.+-]*: |Get "https?:\/\/).*\b(?:dial tcp|i\/o timeout|proxyconnect|no such host|connection refused|TLS handshake timeout|network is unreachable)\b/,
      reason: 'the network to the module proxy failed',
    },
    {
      re: /terminal prompts disabled/,
      reason: 'a direct module fetch asks for credentials',
    },
    {
      re: /verifying \S+: checksum mismatch|SECURITY ERROR/,
      reason: "a module's bytes differ from what go.sum pins",
    },
  ],
  'c-meson': [
    {
      // a required dependency() or find_library(); an optional one only logs `found: NO`
      re: /ERROR: (?:Dependency|C\+{0,2} (?:shared |static )?library) ["']?[\w.+-]+["']? not found/,
      reason: 'a required system dependency is not installed',
    },
    {
      re: /ERROR: .*\b[Pp]kg-config\b.*\bnot found|pkg-config: (?:command )?not found/,
      reason: 'pkg-config is not installed',
    },
  ],
  python: [
    {
      re: /Could not find a version that satisfies the requirement|No matching distribution found for/,
      reason: 'a Python package cannot be obtained from the index',
    },
    {
      re: /was not found in the package registry|Failed to download [`'"]?\S+|Failed to fetch: /,
      reason: 'a Python package cannot be downloaded',
    },
    {
      // only pip's own lines: a test's requests error is the test's
      re: /^(?:WARNING: Retrying \(Retry\(|ERROR: Could not install packages due to an OSError).*(?:Failed to establish a new connection|Temporary failure in name resolution|ReadTimeoutError|ConnectTimeoutError|Max retries exceeded)/,
      reason: 'the network to the package index failed',
    },
  ],
};

/** An environment fault found in a log: why, and the log lines that say it. */
export interface DependencyFault {
  reason: string;
  /** The matching lines (at most 5, each at most 300 characters), in log order. */
  lines: string[];
}

const COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/**
 * The log as text: each `go test -json` event line (a JSON object with `Action`) replaced by its
 * `Output` (events without output dropped), other lines kept; terminal colour codes removed.
 * @param opts.buildOnly keep only what the build said: the `build-output` events (Go 1.24+) and
 *   the lines that are no event (the go command's stderr, where older Go puts build errors),
 *   never a test's own output (a test logging `dial tcp ...: connection refused` is no build)
 * @returns the lines, trailing white space cut
 */
export function plainLog(log: string, opts: { buildOnly?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const raw of log.split('\n')) {
    const line = raw.replace(COLOUR, '');
    if (line.startsWith('{') && line.includes('"Action"')) {
      let ev: unknown;
      try {
        ev = JSON.parse(line);
      } catch {
        ev = undefined;
      }
      if (ev && typeof ev === 'object' && 'Action' in ev) {
        const { Output: o, Action: action } = ev as { Output?: unknown; Action?: unknown };
        if (opts.buildOnly && action !== 'build-output') continue;
        if (typeof o === 'string') out.push(...o.replace(/\n$/, '').split('\n'));
        continue;
      }
    }
    out.push(line.trimEnd());
  }
  return out.map((l) => l.trimEnd());
}

const cut = (l: string): string => (l.length > 300 ? `${l.slice(0, 297)}...` : l);

/**
 * Whether a failed build's log says a dependency could not be obtained (see the module comment
 * for the patterns of each toolchain and what is deliberately left to the code).
 * @param log the step's stdout and stderr (`go test -json` lines are decoded, tests' own output
 *   left out: {@link plainLog} `buildOnly`)
 * @param recipe whose patterns apply
 * @returns the first pattern's reason with every line any pattern matched, or null
 */
export function dependencyFault(log: string, recipe: RecipeName): DependencyFault | null {
  const patterns = ENV_PATTERNS[recipe];
  let reason: string | undefined;
  const lines: string[] = [];
  for (const l of plainLog(log, { buildOnly: true })) {
    if (/^# command:/.test(l)) continue;
    const p = patterns.find((x) => x.re.test(l));
    if (!p) continue;
    reason ??= p.reason;
    if (lines.length < 5 && !lines.includes(cut(l))) lines.push(cut(l));
  }
  return reason ? { reason, lines } : null;
}

const ERROR_LINE =
  /^FAILED: |\b(error|ERROR|fatal error|undefined reference|cannot find|No such file or directory|Dependency .* not found|not found or not usable|SyntaxError)\b|\bundefined: |: module lookup disabled|checksum mismatch|\bmissing go\.sum entry/;

/**
 * The first lines of a build log that say what failed, at most `max`, each cut to 300
 * characters: an environment cause ({@link dependencyFault} of any toolchain) first, then ninja
 * `FAILED:`, compiler `error:`, meson `ERROR:`, linker `undefined reference`, `fatal error`, Go
 * `cannot find`/`undefined:`; the last non-empty lines when none matches. Go's `go: downloading`
 * progress lines and `go test -json` events are never quoted raw (events are decoded first).
 */
export function firstErrorLines(log: string, max = 5): string[] {
  const lines = plainLog(log).filter((l) => !/^# command:/.test(l) && !/^go: downloading /.test(l));
  const env = (Object.keys(ENV_PATTERNS) as RecipeName[]).flatMap(
    (r) => dependencyFault(log, r)?.lines ?? [],
  );
  const hits = [...env, ...lines.filter((l) => ERROR_LINE.test(l)).map(cut)];
  const unique = [...new Set(hits)];
  const pick =
    unique.length > 0
      ? unique
      : lines
          .filter((l) => l.trim() !== '')
          .slice(-max)
          .map(cut);
  return pick.slice(0, max);
}

/**
 * The error of a step that did not build because a dependency could not be obtained: no verdict
 * on the instance (nor on a model's patch), but the environment's failure, recorded by the runner
 * as a failed item and retried (a refresh holds its cutoff at it). Validation, grading and the
 * release check all raise this one.
 * @param out the step's outcome (its build failures and stored stdout/stderr)
 * @param at the instance, the step's name, the recipe whose patterns apply, and extra `context`
 * @returns TelebenchError `dependency_unavailable` (tier infra) naming the instance, the step, the
 *   reason and quoting the cause lines (`context.lines`); null when the step built or failed for
 *   the code's own reasons
 */
export function dependencyUnavailable(
  out: Pick<StepOutcome, 'parsed' | 'stored'>,
  at: { instanceId: string; step: string; recipe: RecipeName; context?: Record<string, unknown> },
): TelebenchError | null {
  if (out.parsed.build_failures.length === 0) return null;
  const fault = dependencyFault(
    out.stored.map((r) => `${r.stdout}\n${r.stderr}`).join('\n'),
    at.recipe,
  );
  if (!fault) return null;
  return new TelebenchError(
    'dependency_unavailable',
    `${at.instanceId} step ${at.step}: ${out.parsed.build_failures.join(', ')} do not build because ${fault.reason} (an environment fault to retry, not a verdict): ${fault.lines.join(' | ')}`,
    {
      tier: 'infra',
      context: {
        step: at.step,
        reason: fault.reason,
        lines: fault.lines,
        build_failures: out.parsed.build_failures,
        ...at.context,
      },
    },
  );
}
