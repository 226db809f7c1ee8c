/**
 * Images through a registry (issue 13): the swarm executor's nodes pull instance, env and base
 * images from the registry named in `swe5g.environments.swarm.registry` (`host:port`). Each
 * image telebench builds is tagged `<registry>/<name>` (its content-addressed name kept) and
 * pushed through the engine (dockerode); the tasks then name it by digest
 * (`<registry>/<repo>:<tag>@sha256:...`), so every node runs the same bytes and a node that already
 * holds the layers does not pull them again (the engine's own layer store).
 */
import { PreflightError, TelebenchError } from '../../errors.js';
import type { DockerClient } from './client.js';

/** `<registry>/<name>`, unless `name` already starts with the registry. */
export function registryName(registry: string, name: string): string {
  return name.startsWith(`${registry}/`) ? name : `${registry}/${name}`;
}

/** Scheme a registry answers on: plain HTTP for loopback hosts (the engine's default), else HTTPS. */
export function registryUrl(registry: string): string {
  const host = registry.replace(/:\d+$/, '');
  const loopback = host === 'localhost' || /^127\./.test(host) || host === '[::1]';
  return `${loopback ? 'http' : 'https'}://${registry}`;
}

/**
 * Checks that the registry answers its API root (`GET /v2/`, any HTTP answer counts: 401 means it
 * is there and wants a login, which the engine has).
 * @param timeoutMs give up after this many milliseconds
 * @throws PreflightError naming the registry and the config key when it does not answer
 */
export async function pingRegistry(registry: string, timeoutMs = 10_000): Promise<void> {
  const url = `${registryUrl(registry)}/v2/`;
  try {
    await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new PreflightError(
      `registry ${registry}`,
      `the image registry ${registry} (swe5g.environments.swarm.registry) does not answer at ${url}: ${(err as Error).cause ?? (err as Error).message}`,
      'start the registry (Debian: `docker-registry serve /etc/docker/registry/config.yml`) or set swe5g.environments.swarm.registry',
      err,
    );
  }
}

const pushed = new Map<string, Promise<string>>();

/**
 * Tags `name` as `<registry>/<name>` and pushes it; concurrent and repeated calls for the same
 * image (name and id) and registry in one process share one push (a push of layers the registry holds only
 * checks them); a name the engine no longer holds answers with this process's last push of it.
 * @param name a local image (`telebench-instance:<hash>`)
 * @param configKey where the registry was named, for the error (`release --push`)
 * @returns the digest reference the nodes pull (`<registry>/<repo>:<tag>@sha256:<hex>`)
 * @throws TelebenchError `registry_push_failed` (tier infra) naming the image and the registry
 *   (connection refused when the registry is down); `image_missing` (infra) when the engine has no `name`
 */
export async function pushImage(
  client: DockerClient,
  name: string,
  registry: string,
  configKey = 'swe5g.environments.swarm.registry',
): Promise<string> {
  // keyed by the image id too: a name rebuilt since (other bytes) is pushed again
  const id = (await client.inspect(name))?.Id;
  const prefix = `${registry}\u0000${name}\u0000`;
  if (id === undefined) {
    // the engine no longer holds the image (removed after its push): nothing newer can be pushed,
    // so this process's last push of that name is the reference the nodes pull
    const earlier = [...pushed.keys()].filter((k) => k.startsWith(prefix)).pop();
    if (earlier) return pushed.get(earlier)!;
  }
  const key = `${prefix}${id ?? ''}`;
  let p = pushed.get(key);
  if (!p) {
    p = doPush(client, name, registry, configKey);
    pushed.set(key, p);
    p.catch(() => pushed.delete(key)); // a failed push is tried again by the next caller
  }
  return p;
}

async function doPush(
  client: DockerClient,
  name: string,
  registry: string,
  configKey: string,
): Promise<string> {
  const docker = client.docker;
  const target = registryName(registry, name);
  const colon = target.lastIndexOf(':');
  const hasTag = colon > target.lastIndexOf('/');
  const repo = hasTag ? target.slice(0, colon) : target;
  const tag = hasTag ? target.slice(colon + 1) : 'latest';
  if (!(await client.hasImage(name))) {
    throw new TelebenchError(
      'image_missing',
      `cannot push ${name} to ${registry}: the engine has no such image`,
      { tier: 'infra', context: { image: name, registry } },
    );
  }
  const fail = (why: string, cause?: unknown): TelebenchError =>
    new TelebenchError(
      'registry_push_failed',
      `cannot push ${name} to the registry ${registry} (${configKey}): ${why}`,
      { tier: 'infra', context: { image: name, registry, target }, cause },
    );
  let digest: string | undefined;
  try {
    if (target !== name) await docker.getImage(name).tag({ repo, tag });
    const stream = await docker.getImage(`${repo}:${tag}`).push({ tag, authconfig: {} });
    await new Promise<void>((res, rej) =>
      docker.modem.followProgress(
        stream,
        (err: Error | null) => (err ? rej(err) : res()),
        (ev: { error?: string; aux?: { Digest?: string } }) => {
          if (ev.error) rej(new Error(ev.error));
          if (ev.aux?.Digest) digest = ev.aux.Digest;
        },
      ),
    );
  } catch (err) {
    throw fail((err as Error).message, err);
  }
  if (!digest) {
    const info = await client.inspect(`${repo}:${tag}`);
    digest = info?.RepoDigests?.find((d) => d.startsWith(`${repo}@`))?.split('@')[1];
  }
  if (!digest) throw fail('the registry answered no digest');
  return `${repo}:${tag}@${digest}`;
}

/**
 * Key-value namespace (the state's `kv`) where `release --push` records, per local image name,
 * the digest reference it was pushed as; `evaluate` reads it to pull an image the engine lost.
 */
export const PUSHED_IMAGES_KV = 'docker.pushed_images';

/**
 * The parts of a digest reference `<registry>/<repo>:<tag>@sha256:<hex>` (the form
 * {@link pushImage} returns and release rows carry as `image_name`), or null for a plain name.
 * `pullName` is `<registry>/<repo>@sha256:<hex>` (the engine pulls by digest; the tag only names it).
 */
export function parseDigestRef(
  ref: string,
): { registry: string; repo: string; tag: string; digest: string; pullName: string } | null {
  const m = /^([^/]+)\/(.+?)(?::([\w][\w.-]*))?@(sha256:[0-9a-f]{64})$/.exec(ref);
  if (!m) return null;
  return {
    registry: m[1]!,
    repo: m[2]!,
    tag: m[3] ?? '',
    digest: m[4]!,
    pullName: `${m[1]}/${m[2]}@${m[4]}`,
  };
}

/**
 * Makes sure the engine holds `image`: a name the engine has is returned as it is; a digest
 * reference (`REGISTRY/...@sha256:...`) the engine lacks is pulled by digest.
 * @returns the name to run (`image`, or the pulled `<registry>/<repo>@sha256:...`)
 * @throws TelebenchError `image_missing` (tier infra) for a plain name the engine lacks (nothing
 *   to pull it from: build it, or release with `--push`); `image_pull_failed` (tier infra) naming
 *   the reference and the registry's answer
 */
export async function ensureLocalImage(
  client: DockerClient,
  image: string,
  timeoutMs = 600_000,
): Promise<string> {
  if (await client.hasImage(image)) return image;
  const ref = parseDigestRef(image);
  if (!ref) {
    throw new TelebenchError(
      'image_missing',
      `the engine has no image ${image} and it names no registry to pull it from (a local name: build it with the swe5g pipeline, or use a release made with --push REGISTRY)`,
      { tier: 'infra', context: { image } },
    );
  }
  if (await client.hasImage(ref.pullName)) return ref.pullName;
  const pulled = await client.tryPull(ref.pullName, timeoutMs);
  if (!pulled.ok) {
    throw new TelebenchError(
      'image_pull_failed',
      `cannot pull ${ref.pullName} from the registry ${ref.registry}: ${pulled.error}`,
      { tier: 'infra', context: { image, registry: ref.registry } },
    );
  }
  return ref.pullName;
}
