/**
 * The environment commit of a Python instance whose registry entry names its requirement files
 * (`environment.python`, docs/environments.md "Python"), as the Go env layer follows the commit
 * that last set go.mod/go.sum (`goEnvironmentCommit`): the commit that last set the requirements,
 * when the environment it gives is the base's. The env layer reads everything it installs at the
 * environment commit (the requirements, the interpreter's evidence and date, the pins' date;
 * stages/swe5g/build/python-era.ts), so the rule checks each of them against the base.
 */
import { fileAt } from '../../../pipeline/providers/git/repo.js';
import { entryEvidence, eraDate, interpreterKey } from '../build/python-era.js';
import type { PythonEnvironment } from '../registry.js';
import { lastFirstParentChange } from './env-commit.js';

/** What {@link pythonEnvironmentCommit} reads of a registry `environment.python`. */
export type PythonEnvFiles = Pick<PythonEnvironment, 'requirements'> &
  Partial<Pick<PythonEnvironment, 'interpreter'>>;

/**
 * A Python instance's `environment_setup_commit`: the newest first-parent ancestor of `base` (or
 * `base` itself) that changed one of the entry's requirement files (a merge counts with what its
 * side branch brought in), provided the environment it gives is the base's: the requirement files
 * read the same at both commits, and the interpreter is chosen alike at both (the same wanted
 * Python and `python_requires`, python-era.ts `interpreterKey`: the registry's interpreter, else
 * the evidence of `.python-version`, Dockerfiles and CI files, else Debian stable's Python at each
 * commit's date). `base` when they differ, when no requirement file is named, or when no commit
 * names them. The instances of one requirements state share this commit, so they share one env
 * image (its installed requirements and the repository kept at /testbed), and each instance layer
 * applies only the delta to its base (tree-delta.ts); SWE-bench likewise shares one environment
 * per version. The pins' date (`pins_date: requirements`, the last change of the requirement
 * files at or before the environment commit) is then the base's too: no first-parent commit in
 * between changes those files.
 * @param mirror a git repository (bare) holding `base` and its history
 * @param folder the entry's folder in the repository ('' for the root), where evidence is read
 * @param py the entry's requirement files (repository-relative) and registry interpreter
 * @returns a full commit id: `base` or one of its first-parent ancestors
 * @throws Error naming the git command and its stderr when git fails (a commit not in the mirror)
 */
export async function pythonEnvironmentCommit(
  mirror: string,
  base: string,
  folder: string,
  py: PythonEnvFiles,
): Promise<string> {
  if (py.requirements.length === 0) return base;
  const out = await lastFirstParentChange(mirror, { base, pathspec: [...py.requirements] });
  if (!out || out === base) return base;
  for (const f of py.requirements)
    if ((await fileAt(mirror, out, f)) !== (await fileAt(mirror, base, f))) return base;
  const [at, atBase] = await Promise.all(
    [out, base].map(async (c) =>
      interpreterKey(
        await entryEvidence(mirror, c, folder, py),
        await eraDate(mirror, c, [], 'commit'),
      ),
    ),
  );
  return at === atBase ? out : base;
}
