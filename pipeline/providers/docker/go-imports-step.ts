/**
 * The Go env layer's import check (issue 31, "environments that build for the history"): a bare
 * `go mod download` fetches the modules of the go.mod's requirement graph as `go` reads it, and
 * with `-mod=mod` a go.mod without a `go` line (Magma in 2019) is first given the toolchain's
 * (`go 1.26.8`), after which it downloads only the explicit requirements: testify's go-spew, a
 * replaced sibling's `lib/pq`, ... are never fetched and the test steps (`GOPROXY=off`) fail on
 * them. The check asks Go what the folder's packages and their tests need, the way the test steps
 * load them: `go list -e -deps -test ./...` with their Go variables (`GOPROXY=off`,
 * `GOFLAGS=-mod=mod`, `GONOSUMDB=*`, `GOTOOLCHAIN=local`) over the
 * environment commit's tree, with a copy of go.mod/go.sum as `-modfile` (the tree's own files are
 * never written). Each module version it names as missing (`go: downloading <module> <version>`)
 * is fetched with the proxy (exact versions: no lookup of `latest`, no upgrade) and the listing
 * runs again, until it names none; its last round is the test steps' view. What it reports then is
 * a package no module of the graph provides (the commit's go.mod lacks it; no environment can add
 * it without changing the tree): a warning on the item, not a failure.
 *
 * The env layer runs {@link GO_IMPORTS_SCRIPT} (`go_modules: container`); the host runs the same
 * rounds in TypeScript (`stages/swe5g/build/go-imports.ts`, with the mirror routing). Both read
 * the listing with {@link readGoList}.
 */

/** Where the env layer keeps the last listing round (read back for the item's record). */
export const GO_IMPORTS_REPORT = '/etc/telebench/go-imports.txt';

/** Where the env layer's build context puts {@link GO_IMPORTS_SCRIPT}. */
export const GO_IMPORTS_SCRIPT_PATH = '/usr/local/lib/telebench/go_imports.sh';

/** The `go list -f` template: one `@@ <import path> <error>` line per package with an error. */
export const GO_LIST_FORMAT = '{{if .Error}}@@ {{.ImportPath}} {{.Error}}{{end}}';

/** At most this many listing rounds per go.mod (each fetches the modules the last one named). */
export const GO_IMPORTS_MAX_ROUNDS = 20;

/** Time limits, in seconds: one `go list` (no network), one `go mod download` of a round. */
export const GO_LIST_TIMEOUT_S = 300;
export const GO_FETCH_TIMEOUT_S = 900;

/**
 * The import check as a POSIX shell script: `sh go_imports.sh <module folder> <report> <deps
 * folder>...`, each deps folder holding a `go.mod` and `go.sum` (the environment commit's, the
 * fix's). Proxy for the fetches: `$TELEBENCH_GOPROXY`, else `https://proxy.golang.org,direct`.
 * Exits 1 naming the modules when a fetch fails or a round names the same modules again (the
 * build fails: the env layer's `dependency_unavailable`); a listing that fails for another reason
 * (a go.mod Go cannot read) is said on stderr and left to the test steps. Appends each go.mod's
 * last round (listing output, then go's stderr) to the report.
 */
export const GO_IMPORTS_SCRIPT = `#!/bin/sh
# telebench: fetch every module the folder's packages and tests import (see go-imports-step.ts)
set -u
mod_dir=$1
report=$2
shift 2
proxy=\${TELEBENCH_GOPROXY:-https://proxy.golang.org,direct}
work=$(mktemp -d)
mkdir -p "$(dirname "$report")" "$work/dl"
for deps in "$@"; do
  prev=
  round=0
  while :; do
    round=$((round + 1))
    cp "$deps/go.mod" "$work/go.mod"
    if [ -f "$deps/go.sum" ]; then cp "$deps/go.sum" "$work/go.sum"; else : >"$work/go.sum"; fi
    status=0
    (cd "$mod_dir" && GOPROXY=off GOFLAGS=-mod=mod GONOSUMDB='*' GOWORK=off GOTOOLCHAIN=local \\
      timeout ${GO_LIST_TIMEOUT_S} go list -e -modfile="$work/go.mod" -deps -test \\
      -f '${GO_LIST_FORMAT}' ./... >"$work/out" 2>"$work/err") || status=$?
    missing=$(sed -n -e 's/^go: downloading \\([^ ]*\\) \\([^ ]*\\)$/\\1@\\2/p' \\
      -e 's/^go: \\([^ :]*@v[^ :]*\\): .*GOPROXY=off.*$/\\1/p' "$work/err" | sort -u | tr '\\n' ' ')
    if [ -z "$missing" ]; then
      if [ "$status" -ne 0 ]; then
        echo "telebench: go list -deps -test ($deps/go.mod) failed ($status); the test steps say why:" >&2
        head -n 20 "$work/err" >&2
      fi
      break
    fi
    if [ "$missing" = "$prev" ] || [ "$round" -gt ${GO_IMPORTS_MAX_ROUNDS} ]; then
      echo "telebench: go modules still missing after $round rounds ($deps/go.mod): $missing" >&2
      exit 1
    fi
    prev=$missing
    # shellcheck disable=SC2086
    if ! (cd "$work/dl" && GOFLAGS=-mod=mod GOPROXY="$proxy" GOWORK=off GOTOOLCHAIN=local \\
      timeout ${GO_FETCH_TIMEOUT_S} go mod download $missing); then
      echo "telebench: the folder's packages or tests import modules that cannot be fetched ($deps/go.mod): $missing" >&2
      exit 1
    fi
  done
  cat "$work/out" "$work/err" >>"$report"
done
rm -rf "$work"
grep '^@@ ' "$report" | grep -e 'cannot find module providing package' -e 'no required module provides package' |
  sed 's/^@@ \\([^ ]*\\) .*/telebench: warning: no module of the go.mod provides \\1 (the test steps cannot build what imports it)/' >&2
exit 0
`;

/** A package the folder's code or tests import that no module of the go.mod's graph provides. */
export interface GoUnresolvedImport {
  /** The import path (`github.com/google/uuid`). */
  package: string;
  /** Go's error, first line (the importing file and position, `cannot find module ...`). */
  detail: string;
}

/** What one listing round says ({@link readGoList}). */
export interface GoListReading {
  /** `module@version` the listing needed and the module cache lacks, sorted, unique. */
  missing: string[];
  /** Packages no module of the graph provides, by import path (first error of each). */
  unresolved: GoUnresolvedImport[];
}

/**
 * Reads a listing round: its `go list -f` output ({@link GO_LIST_FORMAT}) and go's stderr, in
 * either order or concatenated. Missing modules come from `go: downloading <module> <version>`
 * (printed, with `GOPROXY=off`, for each module version the cache lacks) and from a graph-load
 * failure `go: <module>@<version>: ... GOPROXY=off`; unresolved packages from package errors
 * saying `cannot find module providing package` (or `no required module provides package`).
 */
export function readGoList(...texts: string[]): GoListReading {
  const missing = new Set<string>();
  const unresolved = new Map<string, GoUnresolvedImport>();
  for (const line of texts.join('\n').split('\n')) {
    const dl = /^go: downloading (\S+) (\S+)\s*$/.exec(line);
    if (dl) {
      missing.add(`${dl[1]}@${dl[2]}`);
      continue;
    }
    const load = /^go: ([^\s:]+@v[^\s:]+): .*GOPROXY=off/.exec(line);
    if (load) {
      missing.add(load[1]!);
      continue;
    }
    const pkg = /^@@ (\S+) (.*)$/.exec(line);
    if (
      pkg &&
      /cannot find module providing package|no required module provides package/.test(pkg[2]!) &&
      !unresolved.has(pkg[1]!)
    )
      unresolved.set(pkg[1]!, { package: pkg[1]!, detail: pkg[2]!.trim() });
  }
  return {
    missing: [...missing].sort(),
    unresolved: [...unresolved.values()].sort((a, b) => a.package.localeCompare(b.package)),
  };
}
