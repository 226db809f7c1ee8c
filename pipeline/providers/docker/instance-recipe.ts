/**
 * The instance layer's recipe (the third of the layers in `recipes.ts`): the source at
 * `base_commit` at /testbed, written whole (a fresh repository holding only `base_commit`) or, when
 * the env layer already holds the repository of the environment commit, as a delta over it
 * (`stages/swe5g/build/tree-delta.ts`): the paths the base commit no longer has are removed, only
 * the files that differ are copied, with a `.git` that adds the commits after the env commit.
 */
import { hashJson } from '../../hash.js';
import { mesonStepCommand, type MesonSelection } from './meson-step.js';
import { pythonProtocCommand } from './python-recipe.js';
import type { ImageRecipe, RecipeName } from './recipes.js';

/** Image name of a layer: `<prefix>-<layer>:<first 16 hex digits of the recipe hash>`. */
export function imageName(prefix: string, layer: string, hash: string): string {
  return `${prefix}-${layer}:${hash.slice(0, 16)}`;
}

/** An instance layer written as a delta over the env layer's repository (tree-delta.ts). */
export interface InstanceDelta {
  /** Host folder of the delta: the changed files and a `.git` (`deltaContext`). */
  dir: string;
  /** NUL-terminated paths removed (`rm -rf`, relative to /testbed) before the copy. */
  deletedList: string;
  /** The copy holds a whole `.git` of its own: the env layer's repository is removed first. */
  replaceGit?: boolean;
  /** C with a registry `environment`: the kept meson build's targets, rebuilt at the base. */
  selection?: MesonSelection;
}

/**
 * The step after the source is in place: C rebuilds the kept build's selected targets; Go
 * compiles the packages and their tests once at the base commit (no network), so each test step
 * only recompiles what a patch changes, and undoes what that writes into the tree (`-mod=mod`
 * tidying go.sum, a TestMain's files: the image's /testbed has a clean `git status`, the image
 * contract). The index is refreshed first: its stat data is the host's, and `git checkout` would
 * rewrite (copy up into this layer) every file whose stat differs, not only the changed ones.
 * Python with `pyProtos` generates the base commit's protos. A failed build is fine
 * here: validation reports it.
 */
function instanceStep(
  recipe: RecipeName,
  moduleDir: string,
  selection: MesonSelection | undefined,
  pyProtos: { dirs: string[]; include: string[] } | undefined,
): string[] {
  if (recipe === 'c-meson' && selection)
    return [
      `RUN ${mesonStepCommand(selection, 'build')} || echo 'telebench: base_commit does not build here; the steps report why' >&2`,
    ];
  if (recipe === 'go')
    return [
      `RUN cd /testbed/${moduleDir} && (GOPROXY=off GOFLAGS=-mod=mod go test -count=1 -run '^$' ./... >/dev/null 2>&1 || true) && cd /testbed && (git update-index -q --refresh; git checkout -q -- .) && git clean -fdq`,
    ];
  if (recipe === 'python' && pyProtos) return [`RUN ${pythonProtocCommand(pyProtos)}`];
  return [];
}

/**
 * Instance layer: the clean repository (only `base_commit`) at /testbed, then the recipe's step
 * ({@link instanceStep}). With `delta` the env layer holds the repository of the environment
 * commit: the deleted paths go first (`rm -rf`, so a file that became a folder, or a folder that
 * became a file, is replaced), then the changed files and the `.git` are copied over it; C
 * rebuilds only what those files touch (their new mtimes). Without `delta`, a `c-meson` recipe
 * copies the whole repository and builds in each step.
 * @param cleanRepo host folder made by `exportCleanRepo` (copied whole without `delta`)
 * @param key identity of the source (repository id + base commit), which names the image
 */
export function instanceRecipe(
  prefix: string,
  recipe: RecipeName,
  envName: string,
  cleanRepo: string,
  key: string,
  moduleDir = '',
  delta?: InstanceDelta,
  pyProtos?: { dirs: string[]; include: string[] },
): ImageRecipe {
  const step = instanceStep(recipe, moduleDir, delta?.selection, pyProtos);
  if (delta) {
    const dockerfile = [
      `FROM ${envName}`,
      'COPY deleted.lst /tmp/telebench-deleted.lst',
      `RUN ${delta.replaceGit ? 'rm -rf /testbed/.git && ' : ''}cd /testbed && xargs -0 -r rm -rf -- < /tmp/telebench-deleted.lst && rm -f /tmp/telebench-deleted.lst`,
      'COPY testbed/ /testbed/',
      'WORKDIR /testbed',
      ...step,
      '',
    ].join('\n');
    const hash = hashJson({ layer: 'instance', dockerfile, key, deleted: delta.deletedList });
    return {
      layer: 'instance',
      name: imageName(prefix, 'instance', hash),
      dockerfile,
      copies: { testbed: delta.dir },
      inline: { 'deleted.lst': delta.deletedList },
      hash,
    };
  }
  const dockerfile = `FROM ${envName}\nCOPY testbed/ /testbed/\nWORKDIR /testbed\n${step.map((l) => `${l}\n`).join('')}`;
  const hash = hashJson({ layer: 'instance', dockerfile, key });
  return {
    layer: 'instance',
    name: imageName(prefix, 'instance', hash),
    dockerfile,
    copies: { testbed: cleanRepo },
    inline: {},
    hash,
  };
}
