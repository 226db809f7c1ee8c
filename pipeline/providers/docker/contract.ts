/**
 * The image contract of an instance image (docs/images.md), the conventions of SWE-bench's
 * images that outside agents (mini-swe-agent, SWE-agent, OpenHands) rely on: `bash`, `git` and
 * `patch` on the PATH; the image's working directory is `/testbed`; `/testbed` is a git
 * repository whose HEAD is `base_commit` with a clean `git status`; and the fix cannot be found
 * in the image's git: every ref points at `base_commit` or an ancestor of it, and every object
 * is reachable from those refs (no loose or packed object of a later commit).
 *
 * {@link checkImageContract} runs one probe in a fresh network-less container (the image's own
 * working directory, never overridden) and {@link contractViolations} reads its output, so the
 * rule is testable without an engine.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { TelebenchError } from '../../errors.js';
import { DockerExecutor } from './executor.js';
import { tarFs, type DockerClient } from './client.js';

/** The working directory and repository location of every instance image (SWE-bench's). */
export const TESTBED = '/testbed';

/** The harness's folder inside `/testbed` (kept builds, test reports): not the repository's. */
const HARNESS_DIR = '.telebench';

/**
 * The probe, a POSIX `sh` script (bash may be the thing missing). Prints `key value` lines:
 * `missing <tool>`, `pwd <dir>`, `head <sha>`, `dirty <porcelain line>`, `ref <name> <sha>
 * <ancestor|later>`, `objects <all> <reachable>`.
 */
const PROBE = `for t in bash git patch; do command -v "$t" >/dev/null 2>&1 || echo "missing $t"; done
echo "pwd $(pwd)"
command -v git >/dev/null 2>&1 || exit 0
cd ${TESTBED} || exit 0
echo "head $(git rev-parse HEAD 2>/dev/null)"
git status --porcelain --untracked-files=all 2>&1 | head -20 | sed 's/^/dirty /'
git for-each-ref --format='%(refname) %(objectname)' | while read -r name sha; do
  c=$(git rev-parse "$sha^{commit}" 2>/dev/null || echo "$sha")
  if git merge-base --is-ancestor "$c" "$BASE" 2>/dev/null; then echo "ref $name $c ancestor"; else echo "ref $name $c later"; fi
done
all=$(git cat-file --batch-all-objects --batch-check='%(objectname)' | sort -u | wc -l)
reach=$(git rev-list --objects --all --missing=allow-any | cut -d' ' -f1 | sort -u | wc -l)
echo "objects $all $reach"
`;

/**
 * What breaks the contract in a probe's output (empty when it holds).
 * @param out the probe's stdout (`key value` lines, see the probe above)
 * @param baseCommit the row's `base_commit` (40 hex)
 * @returns one sentence per violation, e.g. `git is not on the PATH`, `/testbed has changes:  M go.sum`
 */
export function contractViolations(out: string, baseCommit: string): string[] {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const get = (k: string): string[] =>
    lines.filter((l) => l.startsWith(`${k} `)).map((l) => l.slice(k.length + 1));
  const v: string[] = [];
  for (const t of get('missing')) v.push(`${t} is not on the PATH`);
  const pwd = get('pwd')[0];
  if (pwd !== TESTBED) v.push(`the working directory is ${pwd ?? '(unknown)'}, not ${TESTBED}`);
  if (get('missing').includes('git')) return v;
  const head = get('head')[0]?.trim();
  if (head !== baseCommit)
    v.push(`${TESTBED} is at ${head || '(no git repository)'}, not base_commit ${baseCommit}`);
  const dirty = get('dirty');
  if (dirty.length > 0) v.push(`${TESTBED} has changes (git status): ${dirty.join('; ')}`);
  for (const r of get('ref')) {
    const [name, sha, rel] = r.split(' ');
    if (rel !== 'ancestor')
      v.push(`ref ${name} points at ${sha}, which is not base_commit or before it`);
  }
  const objects = get('objects')[0]?.split(' ').map(Number);
  if (objects && objects[0]! > objects[1]!)
    v.push(`${objects[0]! - objects[1]!} git object(s) are not reachable from base_commit's refs`);
  if (!objects && head === baseCommit) v.push('the object count could not be read');
  return v;
}

/**
 * Runs the contract probe in `image` (fresh network-less container, 1 CPU, 512 MiB, 120 s).
 * @param image an instance image (`telebench-instance:<hash>` or a registry digest reference)
 * @param baseCommit the instance's `base_commit`
 * @throws TelebenchError `image_contract_failed` (tier infra) naming the image and every
 *   violation; `container_failed` (infra) when the engine cannot run it
 */
export async function checkImageContract(
  docker: DockerClient,
  image: string,
  baseCommit: string,
): Promise<void> {
  const r = await new DockerExecutor(docker).run({
    step: 'image-contract',
    // workdir '' keeps the image's own working directory: that is one of the things checked
    instance: { image, workdir: '', sourceDir: '' },
    files: {},
    command: PROBE,
    env: { BASE: baseCommit },
    collect: [],
    limits: { memory: 512 * 2 ** 20, cpus: 1, pids: 256, timeoutMs: 120_000 },
  });
  const violations =
    r.exitCode === 0
      ? contractViolations(r.stdout, baseCommit)
      : [`the probe exited ${r.exitCode ?? 'on timeout'}: ${r.stderr.trim().slice(0, 300)}`];
  if (violations.length === 0) return;
  throw new TelebenchError(
    'image_contract_failed',
    `instance image ${image} breaks the image contract (docs/images.md): ${violations.join('; ')}`,
    { tier: 'infra', context: { image, base_commit: baseCommit, violations } },
  );
}

/**
 * Copies an image's `/testbed` (the repository at base_commit, `.git` included; not the harness's
 * `.telebench/` folder, e.g. a kept meson build) to the host folder `dest` (replaced), through a
 * container that is created and never started. Used where a
 * released instance is graded from its pulled image alone (no mirror of the repository).
 * @throws TelebenchError `testbed_export_failed` (tier infra) naming the image
 */
export async function exportTestbed(
  client: DockerClient,
  image: string,
  dest: string,
): Promise<void> {
  mkdirSync(dirname(dest), { recursive: true });
  const tmp = mkdtempSync(join(dirname(dest), '.testbed-'));
  let container: Awaited<ReturnType<typeof client.docker.createContainer>> | undefined;
  try {
    container = await client.docker.createContainer({
      Image: image,
      Cmd: ['true'],
      NetworkDisabled: true,
      Labels: { 'telebench.step': 'export-testbed' },
    });
    const stream = await container.getArchive({ path: TESTBED });
    // the harness's own folder (a C image's kept meson build, ~125 MiB for Open5GS) is not the
    // repository: grading copies this tree once per apply method
    const own = join(tmp, 'testbed', HARNESS_DIR);
    await streamPipeline(
      stream as unknown as Readable,
      tarFs().extract(tmp, {
        ignore: (name: string) => name === own || name.startsWith(`${own}/`),
      }),
    );
    if (!existsSync(join(tmp, 'testbed', '.git'))) throw new Error(`${TESTBED}/.git is missing`);
    rmSync(dest, { recursive: true, force: true });
    renameSync(join(tmp, 'testbed'), dest);
  } catch (err) {
    throw new TelebenchError(
      'testbed_export_failed',
      `cannot copy ${TESTBED} out of ${image}: ${(err as Error).message}`,
      { tier: 'infra', context: { image, dest }, cause: err },
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await container?.remove({ force: true }).catch(() => undefined);
  }
}
