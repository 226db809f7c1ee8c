/**
 * A go.mod without a `go` directive keeps the language version Go assumes for it (1.16, "The go
 * directive": "if the go directive is missing, go 1.16 is assumed"). Every go command telebench
 * runs on a repository uses `-mod=mod` (old go.mod and go.sum files lack requirements), and with
 * it the Go command WRITES its own version into such a go.mod (`go 1.26.8`) before building. The
 * module is then compiled as Go 1.26 code: per-iteration loop variables (1.22), and `go test`'s
 * vet checks of newer versions fail its build (real Magma `lte/cloud/go` of 2019, magma__magma-141:
 * "non-constant format string in call to ...", `build_failed_at_parent`). So before a go command,
 * a go.mod of the current folder without a `go` line gets `go 1.16`: the version the module was
 * always built as. Idempotent; a go.mod that has the line is not touched. Used by the test steps
 * (harness/spec.ts) and testgen's host checks (harness/id-spec.ts); the env layer's warm-up still
 * compiles such a module at the toolchain's version (its cache entries are then not the steps',
 * which only costs the steps compile time; changing it would rebuild every Go environment).
 */

/** The version Go assumes for a go.mod without a `go` directive. */
export const GO_ASSUMED_VERSION = '1.16';

/**
 * The shell command (always exit 0) that gives the current folder's go.mod, when it has no `go`
 * directive, the line `go 1.16`; put before `go test`, `go list` and the warm-up.
 */
export const GO_DIRECTIVE_GUARD = `{ [ ! -f go.mod ] || grep -qE '^go[[:space:]]+[0-9]' go.mod || printf '\\ngo ${GO_ASSUMED_VERSION}\\n' >> go.mod; }`;
