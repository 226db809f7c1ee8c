/**
 * Where the embedded runtime's GGUF file comes from (issue 12, "Model resolution without
 * surprises"). An embedded endpoint lists one or more sources of the same model, tried in order;
 * the first that has the file wins and is recorded (kind, place, sha256):
 *
 * 1. `path`: an explicit GGUF file (relative paths resolve against the configuration file's folder).
 * 2. `ollama`: the model store of a local Ollama installation (`$OLLAMA_MODELS`, else
 *    `~/.ollama/models`, else `/usr/share/ollama/.ollama/models`): the manifest
 *    `manifests/<registry>/<namespace>/<name>/<tag>` names the layer of media type
 *    `application/vnd.ollama.image.model`, whose blob `blobs/sha256-<hex>` is the GGUF file itself.
 *    So a user who pulled `qwen3.5:2b` runs the very same bytes without the server.
 * 3. `hub`: a Hugging Face Hub model repository and file. First the local Hugging Face cache
 *    (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`:
 *    `models--<owner>--<name>/snapshots/<commit>/<file>`, the commit read from `refs/<revision>`),
 *    then the state's own copy (`<state>/models/hf/<owner>/<name>/<revision>/<file>` with a
 *    `.meta.json` sidecar), else a download through `@huggingface/hub` (`fileDownloadInfo`,
 *    `downloadFile`; why: the official client, whose `hubUrl` is the seam the tests use): streamed
 *    to `<file>.part`, resumed from its length with a Range request after an interruption (a
 *    `.part.json` sidecar keeps the ETag, so a changed file restarts), sha256 checked against the
 *    configured `sha256` or the Hub's LFS ETag (which is the file's sha256), then renamed.
 *
 * Never a silent swap: a source that does not have the model is a miss with its reason; when no
 * source has it, {@link resolveModel} throws a PreflightError listing every miss and naming what to
 * set. A file whose sha256 differs from the expected one is an error, not a miss.
 */
import { createReadStream, createWriteStream, existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile, stat, realpath } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { z } from 'zod';
import { hubRepoIdField, hubRevisionField, hubUrlField } from '../hub/config.js';
import type * as hubTypes from '@huggingface/hub';
import { messageWithCauses, PreflightError, TelebenchError } from '../../errors.js';
import { redact, secret } from '../../secrets.js';
import { lazy } from '../../lazy.js';

const hub = lazy<typeof hubTypes>('@huggingface/hub');

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 hex digest (64 lowercase hex)');

/** One place the GGUF file may come from (see the module comment). */
export const modelSourceSchema = z.union([
  z.strictObject({
    /** A GGUF file; relative to the configuration file's folder. */
    path: z.string().min(1),
    /** Expected sha256 of the file (checked when given). */
    sha256: sha256Hex.optional(),
  }),
  z.strictObject({
    ollama: z.strictObject({
      /** Model name as `ollama pull` takes it (`qwen3.5:2b`; the tag defaults to `latest`). */
      model: z.string().min(1),
      /** Ollama's model store (default `$OLLAMA_MODELS`, `~/.ollama/models`, `/usr/share/ollama/.ollama/models`). */
      models_dir: z.string().min(1).optional(),
    }),
  }),
  z.strictObject({
    hub: z.strictObject({
      /** Model repository `owner/name`. */
      repo: hubRepoIdField,
      /** GGUF file inside the repository. */
      file: z.string().min(1),
      revision: hubRevisionField,
      url: hubUrlField,
      /** Expected sha256 (default: the Hub's LFS ETag, which is the file's sha256). */
      sha256: sha256Hex.optional(),
      /** Look in the local Hugging Face cache first (default true). */
      use_hf_cache: z.boolean().default(true),
    }),
  }),
]);
export type ModelSource = z.output<typeof modelSourceSchema>;

/** A GGUF file found for a source. */
export interface ResolvedModel {
  /** Absolute path of the GGUF file. */
  file: string;
  /** sha256 hex of the file's bytes (the model digest in provenance is `sha256:<this>`). */
  sha256: string;
  /** Bytes. */
  size: number;
  /** `path` | `ollama` | `hf-cache` | `hub` (a copy under the state, downloaded now or earlier). */
  kind: 'path' | 'ollama' | 'hf-cache' | 'hub';
  /** Human-readable origin, e.g. `ollama store /root/.ollama/models: qwen3.5:2b (manifest sha256:...)`. */
  origin: string;
  /** True when this call downloaded the file. */
  downloaded: boolean;
}

/** What resolution needs besides the sources. */
export interface ResolveModelOptions {
  /** Folder relative `path` sources resolve against (the configuration file's folder). */
  baseDir: string;
  /** Where Hub downloads are kept (`<state>/models`). */
  modelsDir: string;
  /** Environment (HF_HUB_CACHE, HF_HOME, OLLAMA_MODELS, HF_TOKEN); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Injected fetch for the Hub client (default global fetch). */
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** Called as a download proceeds (bytes so far, total bytes). */
  onProgress?: (done: number, total: number) => void;
  /** Called once per source that did not have the model, with the reason. */
  onMiss?: (source: string, reason: string) => void;
}

const hashMemo = new Map<string, Promise<string>>();

/**
 * sha256 of a file, streamed; memoised per process by path, size and mtime (a 1.5 GB GGUF takes
 * seconds to hash).
 * @returns 64 lowercase hex characters
 * @throws the file system's error when the file cannot be read
 */
export function fileSha256(file: string): Promise<string> {
  const st = statSync(file);
  const key = `${file}\0${st.size}\0${st.mtimeMs}`;
  let p = hashMemo.get(key);
  if (!p) {
    p = (async () => {
      const h = createHash('sha256');
      for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
      return h.digest('hex');
    })();
    hashMemo.set(key, p);
    p.catch(() => hashMemo.delete(key));
  }
  return p;
}

/** A short name of a source for messages. Pure. */
export function describeSource(s: ModelSource): string {
  if ('path' in s) return `path ${s.path}`;
  if ('ollama' in s) return `ollama ${s.ollama.model}`;
  return `hub ${s.hub.repo}@${s.hub.revision}/${s.hub.file}`;
}

class Miss extends Error {}

function shaMismatch(file: string, got: string, want: string, where: string): TelebenchError {
  return new TelebenchError(
    'model_sha256_mismatch',
    `${file} (${where}) has sha256 ${got}, expected ${want}: not used (a different or damaged file); delete it or fix the sha256 in the configuration`,
    { tier: 'config', context: { file, got, want } },
  );
}

async function fromPath(
  s: { path: string; sha256?: string | undefined },
  o: ResolveModelOptions,
): Promise<ResolvedModel> {
  const file = isAbsolute(s.path) ? s.path : resolve(o.baseDir, s.path);
  if (!existsSync(file)) throw new Miss(`no file ${file}`);
  const digest = await fileSha256(file);
  if (s.sha256 && digest !== s.sha256) throw shaMismatch(file, digest, s.sha256, 'path');
  return {
    file,
    sha256: digest,
    size: statSync(file).size,
    kind: 'path',
    origin: `file ${file}`,
    downloaded: false,
  };
}

/**
 * Manifest path parts of an Ollama model name: `qwen3.5:2b` -> registry.ollama.ai/library/qwen3.5/2b;
 * `user/m` -> registry.ollama.ai/user/m/latest; `host.example/ns/m:t` -> host.example/ns/m/t. Pure.
 * @throws TelebenchError `config_invalid` for a name with more than three path parts
 */
export function ollamaManifestParts(name: string): string[] {
  const colon = name.lastIndexOf(':');
  const slash = name.lastIndexOf('/');
  const [base, tag] =
    colon > slash ? [name.slice(0, colon), name.slice(colon + 1)] : [name, 'latest'];
  const parts = base.split('/');
  if (parts.length === 1) return ['registry.ollama.ai', 'library', parts[0]!, tag];
  if (parts.length === 2) return ['registry.ollama.ai', parts[0]!, parts[1]!, tag];
  if (parts.length === 3) return [...parts, tag];
  throw new TelebenchError('config_invalid', `not an Ollama model name: ${name}`, {
    tier: 'config',
    context: { name },
  });
}

/** Ollama model store folders to look in, in order. Pure over `env`. */
export function ollamaStoreDirs(env: NodeJS.ProcessEnv, explicit?: string): string[] {
  if (explicit) return [explicit];
  const dirs: string[] = [];
  if (env.OLLAMA_MODELS) dirs.push(env.OLLAMA_MODELS);
  dirs.push(join(env.HOME ?? homedir(), '.ollama', 'models'));
  dirs.push('/usr/share/ollama/.ollama/models');
  return [...new Set(dirs)];
}

const manifestSchema = z.looseObject({
  layers: z.array(z.looseObject({ mediaType: z.string(), digest: z.string() })),
});

async function fromOllama(
  s: { model: string; models_dir?: string | undefined },
  o: ResolveModelOptions,
): Promise<ResolvedModel> {
  const env = o.env ?? process.env;
  const parts = ollamaManifestParts(s.model);
  const looked: string[] = [];
  for (const dir of ollamaStoreDirs(env, s.models_dir)) {
    const manifestFile = join(dir, 'manifests', ...parts);
    looked.push(manifestFile);
    if (!existsSync(manifestFile)) continue;
    const text = await readFile(manifestFile, 'utf8');
    const parsed = manifestSchema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      throw new TelebenchError(
        'ollama_manifest_invalid',
        `${manifestFile} is not an Ollama manifest: ${parsed.error.message}`,
        { tier: 'config', context: { file: manifestFile } },
      );
    }
    const layer = parsed.data.layers.find(
      (l) => l.mediaType === 'application/vnd.ollama.image.model',
    );
    if (!layer) throw new Miss(`${manifestFile} has no model layer`);
    const hex = layer.digest.replace(/^sha256:/, '');
    const blob = join(dir, 'blobs', `sha256-${hex}`);
    if (!existsSync(blob)) throw new Miss(`${manifestFile} names ${blob}, which is missing`);
    const digest = await fileSha256(blob);
    if (digest !== hex) throw shaMismatch(blob, digest, hex, `ollama ${s.model}`);
    const manifestDigest = createHash('sha256').update(text).digest('hex');
    return {
      file: blob,
      sha256: digest,
      size: statSync(blob).size,
      kind: 'ollama',
      origin: `ollama store ${dir}: ${s.model} (manifest sha256:${manifestDigest})`,
      downloaded: false,
    };
  }
  throw new Miss(`no manifest for ${s.model} (looked at ${looked.join(', ')})`);
}

/** The local Hugging Face cache folder. Pure over `env`. */
export function hfCacheDir(env: NodeJS.ProcessEnv): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return join(env.HF_HOME, 'hub');
  return join(env.HOME ?? homedir(), '.cache', 'huggingface', 'hub');
}

type HubSource = Extract<ModelSource, { hub: unknown }>['hub'];

async function fromHfCache(s: HubSource, o: ResolveModelOptions): Promise<ResolvedModel | null> {
  const root = join(hfCacheDir(o.env ?? process.env), `models--${s.repo.replace('/', '--')}`);
  let commit = s.revision;
  const ref = join(root, 'refs', s.revision);
  if (existsSync(ref)) commit = (await readFile(ref, 'utf8')).trim();
  const file = join(root, 'snapshots', commit, ...s.file.split('/'));
  if (!existsSync(file)) return null;
  const real = await realpath(file);
  const digest = await fileSha256(real);
  // The cache names LFS blobs by their sha256: a blob whose name is a sha256 must match it.
  const named = /([0-9a-f]{64})$/.exec(real)?.[1];
  const want = s.sha256 ?? named;
  if (want && digest !== want) throw shaMismatch(real, digest, want, 'hf cache');
  return {
    file: real,
    sha256: digest,
    size: statSync(real).size,
    kind: 'hf-cache',
    origin: `hf cache ${root} ${s.repo}@${commit}/${s.file}`,
    downloaded: false,
  };
}

/** Where a Hub model file is kept under `modelsDir`. Pure. */
export function hubModelPath(modelsDir: string, s: Pick<HubSource, 'repo' | 'revision' | 'file'>) {
  const safeRev = s.revision.replace(/[^\w.-]/g, '_');
  return join(modelsDir, 'hf', ...s.repo.split('/'), safeRev, ...s.file.split('/'));
}

interface HubMeta {
  repo: string;
  revision: string;
  file: string;
  commit: string | null;
  etag: string;
  size: number;
  sha256: string;
}

function hubFailure(err: unknown, s: HubSource): Error {
  const where = `${s.url}/${s.repo}/resolve/${s.revision}/${s.file}`;
  if (err instanceof TelebenchError) return err;
  if (err instanceof hub().HubApiError) {
    if (err.statusCode === 401 || err.statusCode === 403) {
      return new Miss(`the Hub refused ${where} (HTTP ${err.statusCode}): set HF_TOKEN`);
    }
    if (err.statusCode === 404) return new Miss(`${where} does not exist (HTTP 404)`);
    return new Miss(`the Hub answered HTTP ${err.statusCode} for ${where}`);
  }
  return new Miss(`cannot reach the Hub for ${where}: ${redact(messageWithCauses(err))}`);
}

async function fromHub(s: HubSource, o: ResolveModelOptions): Promise<ResolvedModel> {
  if (s.use_hf_cache) {
    const cached = await fromHfCache(s, o);
    if (cached) return cached;
  }
  const file = hubModelPath(o.modelsDir, s);
  const metaFile = `${file}.meta.json`;
  if (existsSync(file) && existsSync(metaFile)) {
    const meta = JSON.parse(await readFile(metaFile, 'utf8')) as HubMeta;
    const digest = await fileSha256(file);
    if (digest !== meta.sha256) throw shaMismatch(file, digest, meta.sha256, 'state copy');
    if (s.sha256 && digest !== s.sha256) throw shaMismatch(file, digest, s.sha256, 'state copy');
    return {
      file,
      sha256: digest,
      size: meta.size,
      kind: 'hub',
      origin: `hub ${s.url} ${s.repo}@${meta.commit ?? s.revision}/${s.file} (copy in ${file})`,
      downloaded: false,
    };
  }
  const accessToken = secret('HF_TOKEN', o.env);
  const seen = { commit: null as string | null };
  const baseFetch = o.fetch ?? fetch;
  const f: typeof fetch = async (input, init) => {
    const res = await baseFetch(input, { ...init, ...(o.signal ? { signal: o.signal } : {}) });
    const commit = res.headers.get('x-repo-commit');
    if (commit) seen.commit = commit;
    return res;
  };
  const common = {
    repo: { type: 'model' as const, name: s.repo },
    path: s.file,
    revision: s.revision,
    hubUrl: s.url,
    fetch: f,
    ...(accessToken ? { accessToken } : {}),
  };
  const part = `${file}.part`;
  const partMeta = `${file}.part.json`;
  let info;
  try {
    info = await hub().fileDownloadInfo(common);
  } catch (err) {
    throw hubFailure(err, s);
  }
  if (!info) throw new Miss(`${s.url}/${s.repo}@${s.revision} has no file ${s.file}`);
  const etag = info.etag.replace(/^(W\/)?"|"$/g, '');
  const want = s.sha256 ?? (/^[0-9a-f]{64}$/.test(etag) ? etag : undefined);
  await mkdir(dirname(file), { recursive: true });
  let offset = 0;
  if (existsSync(part) && existsSync(partMeta)) {
    const pm = JSON.parse(await readFile(partMeta, 'utf8')) as { etag: string; size: number };
    if (pm.etag === etag && pm.size === info.size) offset = (await stat(part)).size;
  }
  if (offset === 0) {
    await rm(part, { force: true });
    await writeFile(partMeta, JSON.stringify({ etag, size: info.size }));
  }
  if (offset > info.size) {
    await rm(part, { force: true });
    offset = 0;
  }
  try {
    if (offset < info.size) {
      const blob = await hub().downloadFile({ ...common, downloadInfo: info, xet: false });
      if (!blob) throw new Miss(`${s.url}/${s.repo}@${s.revision} has no file ${s.file}`);
      let done = offset;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          done += chunk.length;
          o.onProgress?.(done, info.size);
          cb(null, chunk);
        },
      });
      await pipeline(
        Readable.fromWeb(blob.slice(offset).stream() as unknown as WebReadableStream),
        counter,
        createWriteStream(part, { flags: offset > 0 ? 'a' : 'w' }),
        ...(o.signal ? [{ signal: o.signal }] : []),
      );
    }
  } catch (err) {
    if (err instanceof Miss) throw err;
    throw hubFailure(err, s);
  }
  const size = (await stat(part)).size;
  if (size !== info.size) {
    throw new TelebenchError(
      'hub_size_mismatch',
      `downloaded ${size} bytes of ${s.repo}/${s.file}, the Hub announced ${info.size}: run again to resume`,
      { tier: 'transient', context: { file: part } },
    );
  }
  const digest = await fileSha256(part);
  if (want && digest !== want) {
    await rm(part, { force: true });
    await rm(partMeta, { force: true });
    throw shaMismatch(file, digest, want, `download from ${s.url}`);
  }
  const meta: HubMeta = {
    repo: s.repo,
    revision: s.revision,
    file: s.file,
    commit: seen.commit,
    etag,
    size,
    sha256: digest,
  };
  await rename(part, file);
  await writeFile(`${metaFile}.tmp`, `${JSON.stringify(meta, null, 2)}\n`);
  await rename(`${metaFile}.tmp`, metaFile);
  await rm(partMeta, { force: true });
  return {
    file,
    sha256: digest,
    size,
    kind: 'hub',
    origin: `hub ${s.url} ${s.repo}@${seen.commit ?? s.revision}/${s.file} (downloaded to ${file})`,
    downloaded: true,
  };
}

/**
 * The first source that has the model (see the module comment).
 * @param sources in order of preference (all the same model)
 * @param what the endpoint's name for messages (`embedded qwen3.5:2b`)
 * @throws PreflightError when no source has the model, listing each source's reason and what to
 *   set; TelebenchError `model_sha256_mismatch` (config) when a file's sha256 is not the expected
 *   one; `hub_size_mismatch` (transient) for a short download (run again: it resumes)
 */
export async function resolveModel(
  sources: readonly ModelSource[],
  what: string,
  o: ResolveModelOptions,
): Promise<ResolvedModel> {
  const misses: string[] = [];
  for (const s of sources) {
    try {
      if ('path' in s) return await fromPath(s, o);
      if ('ollama' in s) return await fromOllama(s.ollama, o);
      return await fromHub(s.hub, o);
    } catch (err) {
      if (!(err instanceof Miss)) throw err;
      misses.push(`${describeSource(s)}: ${err.message}`);
      o.onMiss?.(describeSource(s), err.message);
    }
  }
  throw new PreflightError(
    what,
    `no source has the model file for ${what}: ${misses.join('; ')}`,
    'set `source` of this embedded endpoint in the llm configuration to a GGUF file (`- path: /models/x.gguf`), ' +
      'pull the model with Ollama (`ollama pull <name>`, read from its model store), or make the Hub reachable for the `hub` source ' +
      '(to run on the small SmolLM2 model instead, which `node scripts/setup.mjs` puts in cache/models/, use config/examples/smollm2-resilience.yaml; ' +
      'without internet also set $TELEBENCH_DATA_ROOT to a folder holding the subset files, or it cannot download them)',
  );
}
