/**
 * The meson subprojects of a C scratch checkout for testgen's host checks (Strategy A's direct
 * call is built by meson on the host, docs/strategy-a-c.md). A `git archive` of the commit holds
 * the `subprojects/*.wrap` files only, and meson would clone a `[wrap-git]` subproject from its
 * URL at `meson setup` (Open5GS: prometheus-client-c, freeDiameter); with `swe5g.source: git`
 * nothing may be fetched, and on a machine without GitHub the setup fails, which read as "does
 * not compile at base_commit" for every Open5GS candidate. The subprojects come from the same
 * place as the C environment layer's (stages/swe5g/build/c-env.ts `resolveSubprojects`: the
 * mirrors folder, or `git_url_base` when fetching is allowed), pinned the same way (a branch
 * wrap at its last commit at or before the checkout's commit date).
 * May import: stages/swe5g/build/c-env.ts, node.
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { resolveSubprojects, type MissingSubproject } from '../build/c-env.js';
import type { ScratchPreparer } from './generate.js';

/** Where the subprojects come from: the build stage's settings. */
export interface SubprojectSource {
  /** The state folder (subproject mirrors are kept under `<state>/git/`). */
  stateDir: string;
  /** `swe5g.environments.git_url_base`. */
  gitUrlBase: string;
  /** The configured mirrors folder, if any. */
  mirrorsDir: string | undefined;
  /** `swe5g.source: git`: nothing is fetched; a subproject outside the mirrors is missing. */
  offline: boolean;
  /** Told once per subproject URL that could not be provided. */
  onMissing?: (m: MissingSubproject) => void;
}

/** Scratch folder name for the resolved trees, inside the checkout (renamed into place). */
const STAGING = '.telebench-subprojects';

/**
 * A {@link ScratchPreparer} that puts each `[wrap-git]` subproject of a C meson checkout under
 * `subprojects/<directory>`, where meson uses it instead of cloning. Not C, no root
 * `meson.build` or no `subprojects/` folder: nothing to do. A subproject already in the tree
 * (vendored) is left as it is.
 * @throws TelebenchError from `resolveSubprojects` when the checkout's mirror cannot be read
 */
export function cSubprojectPreparer(src: SubprojectSource): ScratchPreparer {
  const told = new Set<string>();
  return async (dir, gitDir, commit, language) => {
    if (language !== 'c') return;
    if (!existsSync(join(dir, 'meson.build')) || !existsSync(join(dir, 'subprojects'))) return;
    if (!readdirSync(join(dir, 'subprojects')).some((f) => f.endsWith('.wrap'))) return;
    const staging = join(dir, STAGING);
    try {
      const r = await resolveSubprojects({
        mirror: gitDir,
        commit,
        dest: staging,
        stateDir: src.stateDir,
        gitUrlBase: src.gitUrlBase,
        mirrorsDir: src.mirrorsDir,
        ...(src.offline ? { offline: true } : {}),
      });
      for (const s of r.resolved) {
        const into = join(dir, 'subprojects', s.directory);
        if (!existsSync(into)) renameSync(join(staging, s.directory), into);
      }
      for (const m of r.missing) {
        if (told.has(m.url)) continue;
        told.add(m.url);
        src.onMissing?.(m);
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  };
}
