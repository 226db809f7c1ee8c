/**
 * Image recipes, three layers as SWE-bench builds them (harness `docker_build.py`): base (OS and
 * toolchain) -> env (the repository's dependencies at `environment_setup_commit`) -> instance (the
 * source at `base_commit`). Each image is named from the sha256 of its recipe (the Dockerfile text
 * plus the hashes of the files it copies), so equal recipes share one image and any change makes a
 * new one.
 *
 * The instance layer copies a fresh repository that holds only `base_commit` (see
 * `providers/git/repo.ts` `exportCleanRepo`): no fix commit, no `refs/pull/*`, no later tag.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { hashJson, sha256 } from '../../hash.js';
import { TelebenchError } from '../../errors.js';
import {
  MESON_STEP_PATH,
  MESON_STEP_SCRIPT,
  mesonStepCommand,
  type MesonSelection,
} from './meson-step.js';
import { pythonEnvLines, type PythonEnvSpec } from './python-recipe.js';
import { GO_IMPORTS_REPORT, GO_IMPORTS_SCRIPT, GO_IMPORTS_SCRIPT_PATH } from './go-imports-step.js';
import { imageName } from './instance-recipe.js';

export { instanceRecipe, type InstanceDelta } from './instance-recipe.js';
export {
  PY_GEN_DIR,
  PY_PROTOC_DIR,
  pythonProtocCommand,
  type PythonEnvSpec,
} from './python-recipe.js';

/** Image recipes of the repository registry (`image:` field of config/repos.yaml). */
export type RecipeName = 'go' | 'c-meson' | 'python';

/** A recipe's build context: Dockerfile text plus files (path in context -> host path to copy). */
export interface ImageRecipe {
  layer: 'base' | 'env' | 'instance';
  /** Image name (`repository:tag`) derived from the recipe hash. */
  name: string;
  dockerfile: string;
  /** Context entries: context path -> host file or folder to copy in. */
  copies: Record<string, string>;
  /** Inline context files: context path -> content. */
  inline: Record<string, string>;
  /** sha256 of the recipe (dockerfile + inline contents + caller-given content key). */
  hash: string;
}

/** The environment every test container gets: TZ and seeds pinned, no proxy, no secrets. */
export const PINNED_ENV: Record<string, string> = {
  TZ: 'UTC',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  PYTHONHASHSEED: '0',
  PYTHONDONTWRITEBYTECODE: '1',
  GOFLAGS: '-mod=mod',
  GOPROXY: 'off',
  GOTOOLCHAIN: 'local',
  GONOSUMDB: '*',
  SOURCE_DATE_EPOCH: '0',
  // meson sets a random MALLOC_PERTURB_ per test unless it is set
  MALLOC_PERTURB_: '0',
};

/** Debian packages of the image contract: the shell, git and patch every instance image holds. */
export const CONTRACT_PACKAGES = 'bash git patch';

const named = imageName;

/**
 * Base layer: FROM the configured (or offline) image, plus the language's build tools.
 * @param from resolved base image (`golang:1.21-bookworm`, or the offline `telebench-go:go1.26.8`)
 * @param recipe which language recipe
 * @param packages Debian packages beyond the recipe's own (registry `environment`: `packages`,
 *   and `compilers` for `c-meson` or a Go entry with cgo)
 * @param options.cgo Go only (registry `environment.cgo`): `CGO_ENABLED=1` and `libc6-dev` (the C
 *   headers cgo compiles against; the compiler comes in `packages`). Without it the Go recipe is
 *   byte for byte what it was (`CGO_ENABLED=0`, no compiler), so existing images keep their names.
 */
export function baseRecipe(
  prefix: string,
  recipe: RecipeName,
  from: string,
  packages: readonly string[] = [],
  options: { cgo?: boolean } = {},
): ImageRecipe {
  const apt = (pkgs: string[]): string =>
    `RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${[...new Set(pkgs)].join(' ')} && rm -rf /var/lib/apt/lists/*`;
  const lines = [`FROM ${from}`];
  const inline: Record<string, string> = {};
  // The image contract (docs/images.md, checked by `contract.ts`): every recipe's images carry
  // bash, git and patch, which outside agents and SWE-bench's patch chain run in /testbed.
  const contract = CONTRACT_PACKAGES.split(/\s+/).filter(Boolean);
  if (recipe === 'go') {
    if (options.cgo) {
      lines.push(
        apt([...contract, 'libc6-dev', ...packages]),
        'ENV GOTOOLCHAIN=local CGO_ENABLED=1 TZ=UTC',
      );
    } else {
      lines.push(apt([...contract, ...packages]), 'ENV GOTOOLCHAIN=local CGO_ENABLED=0 TZ=UTC');
    }
  } else if (recipe === 'c-meson') {
    // make: C repositories tested through the registry's make commands (no meson.build);
    // python3: meson itself and the f2p checker; the meson step script (meson-step.ts)
    lines.push(
      apt([
        ...contract,
        'gcc',
        'libc6-dev',
        'make',
        'meson',
        'ninja-build',
        'pkg-config',
        'python3',
        ...packages,
      ]),
      'ENV TZ=UTC',
    );
    inline['meson_step.py'] = MESON_STEP_SCRIPT;
    lines.push(`COPY meson_step.py ${MESON_STEP_PATH}`);
  } else {
    lines.push(
      apt([...contract, 'python3', 'python3-pytest', 'python3-pip', ...packages]),
      'ENV TZ=UTC PYTHONHASHSEED=0',
    );
  }
  lines.push('WORKDIR /testbed');
  const dockerfile = `${lines.join('\n')}\n`;
  const hash = hashJson({ layer: 'base', dockerfile, inline });
  return {
    layer: 'base',
    name: named(prefix, 'base', hash),
    dockerfile,
    copies: {},
    inline,
    hash,
  };
}

/**
 * What a `c-meson` env layer builds (registry `environment`): the tree at the environment commit
 * at /testbed, its meson subprojects under /testbed/subprojects, and the kept build directory
 * (`.telebench/build`, meson-step.ts) holding the selected tests' executables.
 */
export interface CBuildSpec {
  /** Host folder with the tree at `environment_setup_commit` (no `.git`). */
  source: string;
  /** Host folder of resolved subprojects (`<directory>/...`), or undefined when none. */
  subprojects?: string;
  selection: MesonSelection;
  /** Identity of the tree (repository, env commit, subproject commits): names the image. */
  key: string;
}

const GO_WARM_TEST = `package warm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var _ = []any{bytes.NewBuffer, context.Background, rand.Read, json.Marshal, errors.New, fmt.Sprint,
	http.NewRequest, os.Exit, reflect.TypeOf, strings.Cut, time.Now}

var mu sync.Mutex

func TestWarm(t *testing.T) { mu.Lock(); mu.Unlock() }
`;

/**
 * The Go build cache of the env layer (issue 21, layers): the repository's tree at
 * `environment_setup_commit`, compiled with its tests in the env layer so that an instance layer
 * (and each test step) compiles only the packages its base commit changes.
 */
export interface GoWarmSpec {
  /** Host folder with the tree at the environment commit (no `.git`), copied to /testbed. */
  source: string;
  /** Subfolder of the Go module ('' for the root): the warm-up runs there. */
  moduleDir: string;
  /** Identity of the tree (`<repo>@<environment commit>`): part of the env image's name. */
  key: string;
  /**
   * A monorepo folder (issue 31): `source` is the env commit's clean repository (with `.git`) and
   * stays at /testbed after the warm-up, so the instance layer writes only the delta over it.
   */
  keepTree?: boolean;
}

/**
 * The env layer's Go warm-up (one `RUN`): `go test -count=1 -run '^$' ./...` in
 * `/testbed/<moduleDir>` with the proxy off (a compile failure is fine: the instance layer and the
 * steps compile again and validation reports why; a module the tree needs and the cache lacks
 * stopped the build before, in the import check of go-imports-step.ts), then the tree is removed (the instance layer
 * brings its own; with `keepTree` the tree stays and what the warm-up wrote into it is undone) and
 * every file of the build cache gets an mtime in 2100. Go's cache rewrites
 * the mtime of an entry it reads when that mtime is more than an hour old
 * (cmd/go/internal/cache `used`); in an image that write copies the whole file up into the
 * upper layer, so without the future mtime an instance layer built an hour after its env layer
 * would copy every cache entry it reads. The path is the same as the instance's (`/testbed/...`)
 * because the package directory is part of Go's compile action id.
 */
export function goWarmCommand(moduleDir: string, keepTree = false): string {
  return [
    `cd /testbed/${moduleDir}`,
    `(GOPROXY=off GOFLAGS=-mod=mod go test -count=1 -run '^$' ./... >/dev/null 2>&1 || true)`,
    // kept: what the warm-up wrote into the tree is undone (a clean `git status`)
    keepTree
      ? 'cd /testbed && (git update-index -q --refresh; git checkout -q -- .) && git clean -fdq'
      : 'cd / && find /testbed -mindepth 1 -delete',
    `find "$(go env GOCACHE)" -type f -exec touch -d '2100-01-01 00:00:00' {} +`,
  ].join(' && ');
}

/** What an env layer holds besides the dependency files ({@link envRecipe}); each is optional. */
export interface EnvLayerInputs {
  /** Go, `go_modules: host`: host folder of a module cache filled on the host, copied in. */
  goModCache?: string;
  /** C (`c-meson` with a registry `environment`): the kept meson build. */
  cBuild?: CBuildSpec;
  /** Go: the tree at the environment commit whose build cache the layer keeps. */
  goWarm?: GoWarmSpec;
  /** Python with a registry `environment.python`: grpcio-tools and the package roots. */
  python?: PythonEnvSpec;
  /**
   * Python monorepo folder (issue 31): the env commit's clean repository, copied to /testbed last,
   * so the instance layer writes only the delta over it (`stages/swe5g/build/tree-delta.ts`).
   */
  tree?: { source: string; key: string };
}

/**
 * Env layer: the dependencies at the environment commit. Go: `go.mod`/`go.sum` and
 * `go mod download` (inside the build, over the bridge network), or — `goModCache` given — a
 * module cache filled on the host and copied in; when the fix changes `go.mod` (a dependency
 * bump), `fix.go.mod`/`fix.go.sum` (the files after the fix) are downloaded into the same module
 * cache, so the fixed code compiles with the test steps' `GOPROXY=off`; with `goWarm`, every
 * module the tree's packages and tests import with either go.mod (the import check,
 * `go-imports-step.ts`: fetched in the build, or checked in a host cache; a module that cannot be
 * had fails the build naming it) and the Go build cache of the repository at the environment
 * commit (see {@link goWarmCommand}). C: the
 * kept meson build of `cBuild`. Python: a `requirements.txt` (the repository's, or with
 * `python` the registry's requirements merged on the host), and with `python` grpcio-tools and
 * the package roots ({@link PythonEnvSpec}); without `python` the recipe is as before.
 * @param depFiles dependency files at the environment commit: name -> content (Go also
 *   `fix.go.mod` / `fix.go.sum` when the fix changes them)
 * @param layers what else the layer holds, by recipe ({@link EnvLayerInputs})
 */
export function envRecipe(
  prefix: string,
  recipe: RecipeName,
  baseName: string,
  depFiles: Record<string, string>,
  layers: EnvLayerInputs = {},
): ImageRecipe {
  const { goModCache, cBuild, goWarm, python, tree } = layers;
  const lines = [`FROM ${baseName}`, 'WORKDIR /testbed'];
  const inline: Record<string, string> = {};
  const copies: Record<string, string> = {};
  let cacheKey = '';
  if (recipe === 'c-meson' && cBuild) {
    copies['envsrc'] = cBuild.source;
    lines.push('COPY envsrc/ /testbed/');
    if (cBuild.subprojects) {
      copies['subprojects'] = cBuild.subprojects;
      lines.push('COPY subprojects/ /testbed/subprojects/');
    }
    cacheKey = `c-build:${cBuild.key}`;
    // A failure here is not the image's: the instance layer and the steps build again and the
    // step log says why (build_failed_at_parent quotes it).
    lines.push(
      `RUN ${mesonStepCommand(cBuild.selection, 'build')} || echo 'telebench: the environment commit does not build; the instance steps report why' >&2`,
    );
  }
  const goDeps = recipe === 'go' && depFiles['go.mod'] !== undefined;
  const fix = goDeps && depFiles['fix.go.mod'] !== undefined;
  // the import check over the env tree (go-imports-step.ts) reads /tmp/deps[-fix] after the copy
  const imports = goDeps && goWarm !== undefined;
  const depDirs = `/tmp/deps${fix ? ' /tmp/deps-fix' : ''}`;
  if (goDeps) {
    inline['go.mod'] = depFiles['go.mod']!;
    inline['go.sum'] = depFiles['go.sum'] ?? '';
    lines.push('COPY go.mod go.sum /tmp/deps/');
    if (fix) {
      inline['fix.go.mod'] = depFiles['fix.go.mod']!;
      inline['fix.go.sum'] = depFiles['fix.go.sum'] ?? '';
      lines.push('COPY fix.go.mod /tmp/deps-fix/go.mod', 'COPY fix.go.sum /tmp/deps-fix/go.sum');
    }
    if (goModCache) {
      copies['gomodcache'] = goModCache;
      // the copied cache holds the fix's modules too: they name the image (unchanged without a
      // fix); `imports`: it holds every module the env tree's packages and tests import (issue 31)
      cacheKey = `host-modcache${fix ? `:${hashJson([depFiles['fix.go.mod'], depFiles['fix.go.sum'] ?? ''])}` : ''}${imports ? ':imports' : ''}`;
      // the go.mod files of a monorepo module's local replace targets (`_local/...`) are part of
      // its module graph
      const locals = Object.entries(depFiles).filter(([k]) => k.includes('_local/'));
      if (locals.length > 0) cacheKey += `:${hashJson(locals)}`;
      lines.push('COPY gomodcache /root/go/pkg/mod', 'ENV GOMODCACHE=/root/go/pkg/mod');
    } else {
      const download = (dir: string): string =>
        `cd ${dir} && GOFLAGS=-mod=mod GOPROXY=https://proxy.golang.org,direct go mod download`;
      lines.push(
        'ENV GOMODCACHE=/root/go/pkg/mod',
        `RUN ${download('/tmp/deps')}${fix ? ` && ${download('/tmp/deps-fix')}` : ''} && rm -rf ${imports ? '' : `${depDirs} `}/root/.cache/go-build`,
      );
    }
  }
  // Compile the standard library packages tests usually need once per env image, so instance
  // layers and test steps only compile the repository and its modules. After the import check,
  // which empties the build cache: before it, its entries were deleted and every instance layer
  // compiled them again (56 MB instead of 1.5 MB in the instance-delta test)
  const stdWarm = (): void => {
    inline['warm_test.go'] = GO_WARM_TEST;
    lines.push(
      'COPY warm_test.go /tmp/warm/',
      `RUN cd /tmp/warm && printf 'module warm\\n\\ngo 1.21\\n' > go.mod && GOPROXY=off go test -count=1 -run '^$' . >/dev/null && go vet . && rm -rf /tmp/warm`,
    );
  };
  if (recipe === 'go' && !goWarm) stdWarm();
  if (recipe === 'go' && goWarm) {
    copies['envsrc'] = goWarm.source;
    cacheKey += `|go-build:${goWarm.key}${goWarm.keepTree ? ':kept' : ''}`;
    lines.push('COPY envsrc/ /testbed/');
    if (imports) {
      // every module the tree's packages and tests import, fetched (container) or checked (host
      // cache) as the test steps load them; a module that cannot be had fails the build
      inline['go_imports.sh'] = GO_IMPORTS_SCRIPT;
      lines.push(
        `COPY go_imports.sh ${GO_IMPORTS_SCRIPT_PATH}`,
        `RUN sh ${GO_IMPORTS_SCRIPT_PATH} /testbed/${goWarm.moduleDir} ${GO_IMPORTS_REPORT} ${depDirs} && rm -rf ${depDirs} /root/.cache/go-build`,
      );
    }
    stdWarm();
    lines.push(`RUN ${goWarmCommand(goWarm.moduleDir, goWarm.keepTree)}`);
  }
  if (recipe === 'python' && python) {
    if (depFiles['requirements.txt'] !== undefined)
      inline['requirements.txt'] = depFiles['requirements.txt'];
    lines.push(
      ...pythonEnvLines(python, depFiles['requirements.txt'] !== undefined, copies, inline),
    );
  } else if (recipe === 'python' && depFiles['requirements.txt'] !== undefined) {
    inline['requirements.txt'] = depFiles['requirements.txt'];
    lines.push(
      'COPY requirements.txt /tmp/requirements.txt',
      'RUN python3 -m pip install --break-system-packages -r /tmp/requirements.txt',
    );
  }
  if (recipe === 'python' && tree) {
    copies['envrepo'] = tree.source;
    cacheKey += `|tree:${tree.key}`;
    lines.push('COPY envrepo/ /testbed/');
  }
  const dockerfile = `${lines.join('\n')}\n`;
  const hash = hashJson({ layer: 'env', dockerfile, inline, cacheKey });
  return { layer: 'env', name: named(prefix, 'env', hash), dockerfile, copies, inline, hash };
}

/**
 * Writes the build context of `recipe` into `dir` (emptied first): Dockerfile, inline files and
 * copies (folders copied recursively, symlinks kept).
 * @throws TelebenchError `build_context_missing` (tier infra) naming the image, layer and the
 *   missing source folder or file
 */
export function writeContext(recipe: ImageRecipe, dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'Dockerfile'), recipe.dockerfile);
  for (const [rel, content] of Object.entries(recipe.inline))
    writeFileSync(join(dir, rel), content);
  for (const [rel, src] of Object.entries(recipe.copies)) {
    if (!existsSync(src)) {
      throw new TelebenchError(
        'build_context_missing',
        `build context source ${src} of image ${recipe.name} (${recipe.layer} layer, copied as ${rel}) does not exist`,
        {
          tier: 'infra',
          context: { image: recipe.name, layer: recipe.layer, source: src, target: rel },
        },
      );
    }
    cpSync(src, join(dir, rel), { recursive: true, verbatimSymlinks: true });
  }
}

/** sha256 of a file's bytes (for recipe keys of copied files). */
export function fileHash(path: string): string {
  return sha256(readFileSync(path));
}
