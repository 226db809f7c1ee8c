/**
 * Which directories of a fix hold code whose tests validation runs: Go packages, C and Python
 * source folders. Shared by `swe5g.resolve` (`Resolved.test_dirs`), `swe5g.validate` and
 * `telebench verify`, so all three select the same tests.
 */
import { posix } from 'node:path';
import type { RepoLanguage } from '../types.js';
import { patchFiles } from '../../../pipeline/providers/git/repo.js';

/** File names that make a directory a unit of tests, per language. */
const SOURCE_FILE: Record<RepoLanguage, RegExp> = {
  // a Go package is a directory with .go files; go.mod, go.sum, README.md, .yaml are not code
  go: /\.go$/,
  c: /\.(c|h|cc|cpp|cxx|hh|hpp|inc)$/,
  python: /\.pyi?$/,
};

/**
 * The sorted, distinct directories of `files` that hold source files of `language` (`.` for the
 * repository root). A fix that also touches `go.mod`/`go.sum` at the root does not add `.`: Go
 * would answer "no Go files" for a root without a package.
 * @param files repository-relative paths (forward slashes)
 */
export function packageDirs(files: readonly string[], language: RepoLanguage): string[] {
  const re = SOURCE_FILE[language];
  return [
    ...new Set(
      files
        .filter((f) => re.test(f))
        .map((f) => posix.dirname(f))
        .map((d) => (d === '' ? '.' : d)),
    ),
  ].sort();
}

/**
 * Repository-relative paths a unified diff names, one per file (the old path, or the new one for
 * a created file), exact names even where git quotes them (read by {@link patchFiles}).
 */
export function filesOfPatch(patch: string): string[] {
  return patchFiles(patch).map((f) => (f.oldPath ?? f.newPath)!);
}
