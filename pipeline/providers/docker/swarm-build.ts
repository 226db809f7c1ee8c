/**
 * Image builds on the Swarm's nodes (issue 31: the coordinator must not build every image of a
 * whole-registry run). A build becomes one Swarm task through the {@link SwarmExecutor} (its
 * placement, node-loss retries, result frame and cleanup), run in `builder_image` (any image with
 * `sh`, `tar` and the docker CLI: `docker:cli`) with the node's engine socket bind-mounted; the
 * node's engine does the build and pushes the image to the registry, and the coordinator pulls it
 * back under its content-addressed name, so everything after the build (sizes, the image
 * contract, validation through any executor) reads it as if it had been built here.
 *
 * What travels: the build context as a one-layer image (`docker import` of the context under
 * `ctx/`: no build step on the coordinator, its engine only stores the tar) pushed to the
 * registry; each `FROM` image this engine holds, pushed and re-tagged on the node under its local
 * name (so the recipe's Dockerfile builds there unchanged). The task's command pulls them, copies
 * the context out of a created (never started) container, `docker build`s with the recipe's
 * labels plus `telebench.built_on` (the node's hostname, Swarm's `{{.Node.Hostname}}`), pushes,
 * and prints the digest on a line of its own.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TelebenchError } from '../../errors.js';
import { tarFs, type DockerClient } from './client.js';
import { pushImage, registryName } from './registry.js';
import type { SwarmExecutor } from './swarm.js';

/** Where and how node builds run (`swe5g.environments.swarm.builds`). */
export interface NodeBuildOptions {
  /** Registry (`host:port`) the coordinator and the nodes share. */
  registry: string;
  /** The task's image: `sh`, `tar`, `base64`, `timeout` and the docker CLI (`docker:cli`). */
  builderImage: string;
  /** CPUs and memory the scheduler reserves on the node for one build. */
  cpus: number;
  memoryBytes: number;
  /** Wall-clock limit of one build, ms. */
  timeoutMs: number;
  /** The node's engine socket, bind-mounted into the task. */
  socket?: string;
}

/** What a node build gave. */
export interface NodeBuild {
  /** `<registry>/<repo>:<tag>@sha256:...` as the node pushed it. */
  ref: string;
  /** Hostname of the node that built it (`telebench.built_on`). */
  node: string;
  /** The build's output (`docker build`), for the item's log. */
  log: string;
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
const DIGEST_LINE = 'TELEBENCH_BUILT_DIGEST=';

/** The images a Dockerfile starts FROM (stage names of earlier `AS` lines left out). */
export function fromImages(dockerfile: string): string[] {
  const stages = new Set<string>();
  const out: string[] = [];
  for (const line of dockerfile.split('\n')) {
    const m = /^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (!m) continue;
    if (!stages.has(m[1]!) && m[1] !== 'scratch' && !out.includes(m[1]!)) out.push(m[1]!);
    if (m[2]) stages.add(m[2]);
  }
  return out;
}

/** Imports `contextDir` under `ctx/` as a one-layer image `name` (no build step). */
async function importContext(client: DockerClient, contextDir: string, name: string) {
  const [repo, tag] = [name.slice(0, name.lastIndexOf(':')), name.slice(name.lastIndexOf(':') + 1)];
  const pack = tarFs().pack(contextDir, {
    map: (h) => ({ ...h, name: `ctx/${h.name}` }),
  });
  const stream = await client.docker.importImage(pack as unknown as NodeJS.ReadableStream, {
    repo,
    tag,
  });
  await new Promise<void>((res, rej) =>
    client.docker.modem.followProgress(stream, (err: Error | null) => (err ? rej(err) : res())),
  );
}

/** The task's shell command (see the module comment). */
function builderCommand(
  ctxRef: string,
  froms: [ref: string, name: string][],
  target: string,
  labels: Record<string, string>,
): string {
  const repo = target.slice(0, target.lastIndexOf(':'));
  return [
    'set -e',
    ...froms.map(
      ([ref, name]) => `docker pull -q ${shq(ref)} >/dev/null; docker tag ${shq(ref)} ${shq(name)}`,
    ),
    `docker pull -q ${shq(ctxRef)} >/dev/null`,
    `cid=$(docker create ${shq(ctxRef)} /ctx)`,
    'rm -rf /tmp/telebench-ctx; docker cp "$cid:/ctx/." /tmp/telebench-ctx; docker rm "$cid" >/dev/null',
    `docker build ${Object.entries(labels)
      .map(([k, v]) => `--label ${shq(`${k}=${v}`)}`)
      .join(
        ' ',
      )} --label "telebench.built_on=$TELEBENCH_NODE" -t ${shq(target)} /tmp/telebench-ctx`,
    `docker push ${shq(target)} >/dev/null`,
    `d=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' ${shq(target)} | grep -F ${shq(`${repo}@`)} | head -n1)`,
    `echo "${DIGEST_LINE}\${d#*@}"`,
  ].join('\n');
}

/**
 * Builds image `tag` from `contextDir` (a folder holding its `Dockerfile`) on a node of the swarm,
 * then pulls it back here under `tag`.
 * @param labels the image's labels (as `DockerClient.build` sets them)
 * @returns the digest reference, the building node's hostname and the build log
 * @throws TelebenchError `image_build_failed` (tier infra) with the node and the log's tail when
 *   the build or its push fails on the node; the executor's `swarm_*` and `registry_push_failed`
 *   errors as they are; `image_pull_failed` when the built image cannot be pulled back
 */
export async function buildOnNode(
  client: DockerClient,
  executor: SwarmExecutor,
  contextDir: string,
  tag: string,
  labels: Record<string, string>,
  opts: NodeBuildOptions,
  signal?: AbortSignal,
): Promise<NodeBuild> {
  const dockerfile = readFileSync(join(contextDir, 'Dockerfile'), 'utf8');
  const froms: [string, string][] = [];
  for (const f of fromImages(dockerfile))
    if (await client.hasImage(f)) froms.push([await pushImage(client, f, opts.registry), f]);
  const ctxName = `telebench-context:${createHash('sha256').update(tag).digest('hex').slice(0, 32)}`;
  await importContext(client, contextDir, ctxName);
  let ctxRef: string;
  try {
    ctxRef = await pushImage(client, ctxName, opts.registry);
  } finally {
    await client.docker
      .getImage(ctxName)
      .remove({ noprune: false })
      .catch(() => undefined); // the registry holds it now; a leftover tag is only disk
  }
  const target = registryName(opts.registry, tag);
  const local = await client.hasImage(opts.builderImage);
  const r = await executor.run(
    {
      step: 'build',
      instance: { image: opts.builderImage, workdir: '/', sourceDir: '' },
      files: {},
      command: builderCommand(ctxRef, froms, target, labels),
      collect: [],
      limits: {
        cpus: opts.cpus,
        memory: opts.memoryBytes,
        pids: 512,
        timeoutMs: opts.timeoutMs,
      },
      env: { TELEBENCH_NODE: '{{.Node.Hostname}}' },
    },
    signal,
    {
      mounts: [{ source: opts.socket ?? '/var/run/docker.sock', target: '/var/run/docker.sock' }],
      imageAsNamed: !local,
    },
  );
  const digest = new RegExp(`^${DIGEST_LINE}(sha256:[0-9a-f]{64})$`, 'm').exec(r.stdout)?.[1];
  if (r.exitCode !== 0 || !digest) {
    const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new TelebenchError(
      'image_build_failed',
      `docker build of ${tag} on swarm node ${r.node ?? '?'} failed (${r.timedOut ? 'timed out' : `exit ${r.exitCode}`}): ${tail}`,
      { tier: 'infra', context: { image: tag, node: r.node ?? null, registry: opts.registry } },
    );
  }
  const ref = `${target}@${digest}`;
  const pullName = `${target.slice(0, target.lastIndexOf(':'))}@${digest}`;
  const pulled = await client.tryPull(pullName, opts.timeoutMs);
  if (!pulled.ok)
    throw new TelebenchError(
      'image_pull_failed',
      `cannot pull ${pullName}, built on swarm node ${r.node ?? '?'}, from the registry ${opts.registry}: ${pulled.error}`,
      { tier: 'infra', context: { image: tag, registry: opts.registry } },
    );
  const colon = tag.lastIndexOf(':');
  await client.docker
    .getImage(pullName)
    .tag({ repo: tag.slice(0, colon), tag: tag.slice(colon + 1) });
  const info = await client.inspect(tag);
  return { ref, node: info?.Config?.Labels?.['telebench.built_on'] ?? '', log: r.stdout };
}
