/**
 * The offline base images, for hosts with a Docker engine but no reachable image registry
 * (`docker pull` fails): a Debian rootfs made with `debootstrap --variant=minbase` from the apt
 * mirror the host is configured with, and on top of it the host's own Go toolchain copied from its
 * GOROOT through the build context. Equivalent to `debian:bookworm` and `golang:<v>-bookworm` for
 * our recipes. `telebench images base` and `scripts/setup.mjs` call {@link ensureOfflineBase}.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  cpSync,
  mkdtempSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Zx from 'zx';
import { TelebenchError } from '../../errors.js';
import { lazy } from '../../lazy.js';
import type { DockerClient } from './client.js';

const zx = lazy<typeof Zx>('zx');

/** Names and paths of the offline base (config `swe5g.environments.offline`). */
export interface OfflineBaseOptions {
  /** Debian rootfs image name (`telebench-rootfs:bookworm`). */
  rootfsImage: string;
  /** Go toolchain image name template; `{go}` becomes the host's `go1.26.8`. */
  goImage: string;
  /** Where the debootstrap rootfs lives (kept to rebuild quickly). */
  rootfsDir: string;
  /** Debian suite. */
  suite: string;
  /** Rebuild even when the images exist. */
  force?: boolean;
  log?: (line: string) => void;
}

/**
 * The Debian mirror apt is configured with: first `URIs:` of a deb822 `.sources` file or first
 * `deb` line, under /etc/apt. Default `http://deb.debian.org/debian`.
 */
export function aptMirror(root = '/etc/apt'): string {
  const files: string[] = [];
  if (existsSync(join(root, 'sources.list'))) files.push(join(root, 'sources.list'));
  const d = join(root, 'sources.list.d');
  if (existsSync(d))
    for (const f of readdirSync(d).sort()) if (/\.(list|sources)$/.test(f)) files.push(join(d, f));
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const m =
      /^URIs:\s*(\S+\/debian)\/?\s*$/m.exec(text) ??
      /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s/m.exec(text);
    if (m?.[1]) return m[1];
  }
  return 'http://deb.debian.org/debian';
}

/**
 * Makes sure the Debian rootfs image `image` of `suite` exists: debootstrap (`--variant=minbase`,
 * from {@link aptMirror}) into `dir` unless it holds one, then `FROM scratch` + the folder as a tar.
 * Used for the offline base and for the Python era's other suites (bullseye beside bookworm).
 * @returns whether it was built
 * @throws Error from debootstrap, tar or the build (callers wrap it: `offline_base_failed`)
 */
export async function ensureRootfs(
  docker: DockerClient,
  opts: { image: string; dir: string; suite: string; force?: boolean; log?: (l: string) => void },
): Promise<{ built: boolean }> {
  const log = opts.log ?? (() => undefined);
  if (!opts.force && (await docker.hasImage(opts.image))) return { built: false };
  if (opts.force || !existsSync(join(opts.dir, 'bin'))) {
    const mirror = aptMirror();
    log(`debootstrap --variant=minbase ${opts.suite} ${opts.dir} ${mirror}`);
    rmSync(opts.dir, { recursive: true, force: true });
    mkdirSync(opts.dir, { recursive: true });
    await zx().$({
      quiet: true,
    })`debootstrap --variant=minbase ${opts.suite} ${opts.dir} ${mirror}`;
  }
  const ctx = mkdtempSync(join(tmpdir(), 'telebench-rootfs-'));
  try {
    log(`packing ${opts.dir} into ${opts.image}`);
    await zx().$({
      quiet: true,
    })`tar -C ${opts.dir} --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -cf ${join(ctx, 'rootfs.tar')} .`;
    writeFileSync(join(ctx, 'Dockerfile'), 'FROM scratch\nADD rootfs.tar /\nCMD ["bash"]\n');
    await docker.build(ctx, opts.image, { 'telebench.layer': 'os', 'telebench.suite': opts.suite });
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
  return { built: true };
}

/** The host's Go toolchain, or why there is none usable. */
export type HostGo =
  { found: true; goroot: string; version: string } | { found: false; reason: string };

/**
 * The host's Go: `{ found: true, goroot, version }` (`go1.26.8`), or `{ found: false, reason }`
 * where `reason` is the failure of `go env` (e.g. `go` not on PATH, a broken GOROOT), so callers
 * can show it instead of guessing "no Go".
 */
export async function hostGo(): Promise<HostGo> {
  try {
    const goroot = (await zx().$({ quiet: true })`go env GOROOT`).stdout.trim();
    const version = (await zx().$({ quiet: true })`go env GOVERSION`).stdout.trim();
    if (!goroot || !version)
      return { found: false, reason: `go env printed GOROOT='${goroot}' GOVERSION='${version}'` };
    return { found: true, goroot, version };
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    const why = (e.stderr ?? '').trim() || (e.message ?? String(err)).trim();
    return { found: false, reason: `go env failed: ${why.split('\n').slice(0, 3).join(' ')}` };
  }
}

/**
 * Makes sure the offline rootfs image and the Go toolchain image exist; builds what is missing.
 * @returns the two image names and what was built
 * @throws TelebenchError `offline_base_failed` (tier infra) when debootstrap or the build fails,
 *   `host_go_missing` (tier preflight) when the host has no Go toolchain
 */
export async function ensureOfflineBase(
  docker: DockerClient,
  opts: OfflineBaseOptions,
): Promise<{ rootfs: string; go: string; built: string[]; go_version: string }> {
  const log = opts.log ?? (() => undefined);
  const built: string[] = [];
  const hg = await hostGo();
  if (!hg.found) {
    throw new TelebenchError(
      'host_go_missing',
      `the host has no usable \`go\` to copy into the offline Go base image (${hg.reason})`,
      {
        tier: 'preflight',
        context: {
          reason: hg.reason,
          hint: 'install Go (https://go.dev/dl) or use a registry image golang:<v>-bookworm',
        },
      },
    );
  }
  const goImage = opts.goImage.replace('{go}', hg.version);
  const work = mkdtempSync(join(tmpdir(), 'telebench-base-'));
  try {
    const r = await ensureRootfs(docker, {
      image: opts.rootfsImage,
      dir: opts.rootfsDir,
      suite: opts.suite,
      force: opts.force ?? false,
      log,
    });
    if (r.built) built.push(opts.rootfsImage);
    if (opts.force || !(await docker.hasImage(goImage))) {
      const ctx = join(work, 'go');
      mkdirSync(ctx);
      log(`copying ${hg.goroot} (${hg.version}) into ${goImage}`);
      cpSync(hg.goroot, join(ctx, 'go'), {
        recursive: true,
        verbatimSymlinks: true,
        filter: (src) => !/^\/(test|doc|misc)$/.test(src.slice(hg.goroot.length)),
      });
      const caFile = '/etc/ssl/certs/ca-certificates.crt';
      if (existsSync(caFile)) cpSync(caFile, join(ctx, 'ca-certificates.crt'));
      else writeFileSync(join(ctx, 'ca-certificates.crt'), '');
      writeFileSync(
        join(ctx, 'Dockerfile'),
        [
          `FROM ${opts.rootfsImage}`,
          'COPY go /usr/local/go',
          'COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt',
          'ENV PATH=/usr/local/go/bin:/root/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOPATH=/root/go GOTOOLCHAIN=local',
          'RUN go version',
          '',
        ].join('\n'),
      );
      await docker.build(ctx, goImage, { 'telebench.layer': 'os', 'telebench.go': hg.version });
      built.push(goImage);
    }
  } catch (err) {
    if (err instanceof TelebenchError) throw err;
    throw new TelebenchError(
      'offline_base_failed',
      `building the offline base failed: ${(err as Error).message}`,
      {
        tier: 'infra',
        cause: err,
      },
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { rootfs: opts.rootfsImage, go: goImage, built, go_version: hg.version };
}
