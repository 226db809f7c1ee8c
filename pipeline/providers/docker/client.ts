/**
 * The Docker engine client of telebench (dockerode, why: the maintained Node client of the Engine
 * API; no shelling out to the `docker` CLI). Builds images from a context folder, inspects sizes,
 * lists and removes telebench images by label.
 *
 * Labels on every image telebench builds: `telebench.layer` (base | env | instance),
 * `telebench.recipe` (sha256 of the recipe), and on instance images `telebench.instance_id`.
 */
import type Docker from 'dockerode';
import type TarFs from 'tar-fs';
import pRetry from 'p-retry';
import { PreflightError, TelebenchError } from '../../errors.js';
import { lazy } from '../../lazy.js';

const dockerode = lazy<typeof Docker>('dockerode');
/** tar-fs, loaded on first use (see pipeline/lazy.ts). */
export const tarFs = lazy<typeof TarFs>('tar-fs');

/** The three image layers of an instance (SWE-bench layering). */
export type Layer = 'base' | 'env' | 'instance';

/** A connected engine plus the helpers the stages need. */
export class DockerClient {
  readonly docker: Docker;

  /** @param opts dockerode options; default: `DOCKER_HOST` or /var/run/docker.sock */
  constructor(opts?: Docker.DockerOptions) {
    const Dockerode = dockerode();
    this.docker = new Dockerode(opts);
  }

  /**
   * Checks the engine answers.
   * @throws PreflightError (service `docker`) with a hint to run `node scripts/setup.mjs`
   */
  async ping(): Promise<void> {
    try {
      await this.docker.ping();
    } catch (err) {
      throw new PreflightError(
        'docker',
        `the Docker engine does not answer (${(err as Error).message})`,
        'start it: `node scripts/setup.mjs` installs docker.io and starts dockerd, or set DOCKER_HOST',
        err,
      );
    }
  }

  /** Inspect data of `name`, or undefined when the engine has no such image. */
  async inspect(name: string): Promise<Docker.ImageInspectInfo | undefined> {
    try {
      return await this.docker.getImage(name).inspect();
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw new TelebenchError(
        'docker_inspect_failed',
        `cannot inspect image ${name}: ${(err as Error).message}`,
        {
          tier: 'infra',
          context: { image: name },
          cause: err,
        },
      );
    }
  }

  /** True when the engine holds image `name`. */
  async hasImage(name: string): Promise<boolean> {
    return (await this.inspect(name)) !== undefined;
  }

  /**
   * Pulls `name` from its registry, giving up after `timeoutMs`.
   * @returns true when pulled, false when the registry was unreachable or refused (reason logged by caller)
   */
  async tryPull(name: string, timeoutMs = 30_000): Promise<{ ok: boolean; error?: string }> {
    try {
      const stream = await Promise.race([
        this.docker.pull(name),
        new Promise<never>((_, rej) =>
          setTimeout(() => rej(new Error('pull timed out')), timeoutMs).unref(),
        ),
      ]);
      await new Promise<void>((res, rej) =>
        this.docker.modem.followProgress(stream, (err: Error | null) => (err ? rej(err) : res())),
      );
      return { ok: true };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }

  /**
   * Builds image `tag` from the folder `contextDir` (which holds a `Dockerfile`). RUN steps have the
   * default bridge network (module downloads, apt); test containers never do.
   * @returns the build log (every `stream` line)
   * @throws TelebenchError `image_build_failed` (tier infra) with the log's tail
   */
  async build(
    contextDir: string,
    tag: string,
    labels: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<string> {
    const pack = tarFs().pack(contextDir);
    let log = '';
    try {
      const stream = await this.docker.buildImage(pack as unknown as NodeJS.ReadableStream, {
        t: tag,
        labels,
        rm: true,
        forcerm: true,
        ...(signal ? { abortSignal: signal } : {}),
      });
      await new Promise<void>((res, rej) =>
        this.docker.modem.followProgress(
          stream,
          (err: Error | null) => (err ? rej(err) : res()),
          (ev: { stream?: string; error?: string; errorDetail?: { message?: string } }) => {
            if (ev.stream) log += ev.stream;
            if (ev.error) log += `ERROR: ${ev.error}\n`;
          },
        ),
      );
    } catch (err) {
      log += `ERROR: ${(err as Error).message}\n`;
    }
    if (/^ERROR: /m.test(log) || !(await this.hasImage(tag))) {
      throw new TelebenchError(
        'image_build_failed',
        `docker build of ${tag} failed: ${log.split('\n').slice(-15).join('\n')}`,
        { tier: 'infra', context: { image: tag, contextDir } },
      );
    }
    return log;
  }

  /**
   * Bytes the engine's image layers take on disk (`docker system df`'s LayersSize: each layer
   * counted once, every image of the engine included).
   * @throws TelebenchError `docker_df_failed` (infra) when the engine does not answer
   */
  async imageDiskUsage(): Promise<number> {
    try {
      // The engine refuses a second `df` while one runs ("a disk usage operation is already
      // running"): wait for it and ask again (p-retry), any other error is final.
      const df = (await pRetry(() => this.docker.df() as Promise<{ LayersSize?: number }>, {
        retries: 10,
        minTimeout: 500,
        maxTimeout: 3000,
        shouldRetry: (e) => /already running/i.test(String((e as Error).message ?? e)),
      })) as { LayersSize?: number };
      return df.LayersSize ?? 0;
    } catch (err) {
      throw new TelebenchError(
        'docker_df_failed',
        `docker system df failed: ${(err as Error).message}`,
        {
          tier: 'infra',
          cause: err,
        },
      );
    }
  }

  /**
   * Refuses to build more when the image layers already exceed `budgetGiB`.
   * @throws TelebenchError `disk_budget_exceeded` (infra: retried by `--retry-failed` after
   *   `telebench images prune` or a larger `swe5g.environments.disk_budget_gib`)
   */
  async assertDiskBudget(budgetGiB: number): Promise<void> {
    const used = await this.imageDiskUsage();
    if (used > budgetGiB * 1024 ** 3) {
      throw new TelebenchError(
        'disk_budget_exceeded',
        `Docker image layers use ${(used / 1024 ** 3).toFixed(1)} GiB, over the budget of ${budgetGiB} GiB (swe5g.environments.disk_budget_gib); run \`telebench images prune\` or raise the budget, then rerun with --retry-failed`,
        { tier: 'infra', context: { used_bytes: used, budget_gib: budgetGiB } },
      );
    }
  }

  /** Size in bytes of `name` (all its layers), or undefined when absent. */
  async size(name: string): Promise<number | undefined> {
    return (await this.inspect(name))?.Size;
  }

  /** telebench images, newest first, with their labels and sizes. */
  async listTelebenchImages(): Promise<
    {
      id: string;
      tags: string[];
      layer: string;
      labels: Record<string, string>;
      size: number;
      created: number;
    }[]
  > {
    const list = await this.docker.listImages({ filters: { label: ['telebench.layer'] } });
    return list
      .map((i) => ({
        id: i.Id,
        tags: i.RepoTags ?? [],
        layer: i.Labels?.['telebench.layer'] ?? '',
        labels: i.Labels ?? {},
        size: i.Size,
        created: i.Created,
      }))
      .sort((a, b) => b.created - a.created);
  }

  /** Removes image `name` (no force: an image a container or child image uses stays). @returns whether it was removed */
  async remove(name: string): Promise<{ removed: boolean; error?: string }> {
    try {
      await this.docker.getImage(name).remove();
      return { removed: true };
    } catch (err) {
      return { removed: false, error: (err as Error).message };
    }
  }
}
