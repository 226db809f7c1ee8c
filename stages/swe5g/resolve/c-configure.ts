/**
 * The environment commit of a C (meson) instance: the commit that last set the repository's
 * configure state before `base_commit`, as the Go branch's env layer follows the commit that last
 * set go.mod/go.sum. Instances whose bases share a configure state share one env layer (its kept
 * build), and an instance layer never makes ninja regenerate meson's build files (build.ninja,
 * compile_commands.json, a CMake subproject's trace: ~12 MB each time on Open5GS).
 *
 * What counts as a configure input ({@link isConfigureInput}) follows what meson itself lists:
 * `meson introspect --buildsystem-files` of Open5GS v2.7.0's kept build names 201 files, of which
 * 88 `meson.build`, 65 `*.in` (`configure_file` templates such as `configs/open5gs/scp.yaml.in`),
 * `meson_options.txt`, the CMake files of a subproject under `subprojects/`, 42 files copied by
 * `configure_file(copy: true)` (`configs/open5gs/tls`, `configs/open5gs/hnet`, `configs/systemd`),
 * `misc/db/open5gs-dbctl`, and host tools (git, `[`). The rule takes the first five kinds by
 * name; copied files are not taken (a changed copy is re-copied, meson does not reconfigure).
 */
import { lastFirstParentChange } from './env-commit.js';

/**
 * Whether a repository-relative path is a meson configure input: a `meson.build`,
 * `meson_options.txt` or `meson.options` anywhere, a `*.in` template, or anything under
 * `subprojects/` (wrap files and the subprojects' own build files).
 */
export function isConfigureInput(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return (
    base === 'meson.build' ||
    base === 'meson_options.txt' ||
    base === 'meson.options' ||
    base.endsWith('.in') ||
    path.startsWith('subprojects/')
  );
}

/**
 * The commit after which no configure input changes up to `baseCommit`: the newest commit of
 * `baseCommit`'s first-parent line after `tagCommit` (`tagCommit..baseCommit`, merges compared
 * with their first parent) that changes a file {@link isConfigureInput} accepts; `tagCommit`
 * when none does (the version tag's configure state is the base's).
 * @param mirror a git repository (bare) holding both commits
 * @returns a full commit id: `tagCommit`, `baseCommit` or one between them
 * @throws Error naming the git command and its stderr when git fails (a commit not in the mirror)
 */
export async function configureStateCommit(
  mirror: string,
  tagCommit: string,
  baseCommit: string,
): Promise<string> {
  return (
    (await lastFirstParentChange(mirror, {
      base: baseCommit,
      since: tagCommit,
      accept: isConfigureInput,
    })) ?? tagCommit
  );
}
