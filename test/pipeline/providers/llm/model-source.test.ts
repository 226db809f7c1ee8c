/**
 * Model resolution of the embedded runtime (pipeline/providers/llm/model-source.ts): an explicit
 * path, an Ollama model store laid out by the test, the local Hugging Face cache, and the Hub
 * through the real `@huggingface/hub` client against the local Hub server (download, no request
 * on reuse, resume from a partial file, sha256 check); a missing model stops at preflight.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PreflightError, TelebenchError } from '../../../../pipeline/errors.js';
import {
  hubModelPath,
  ollamaManifestParts,
  resolveModel,
  type ModelSource,
} from '../../../../pipeline/providers/llm/model-source.js';
import { startHubServer, type HubServer } from '../../../servers/hub-server.js';
import { SMOLLM2_NAME, SMOLLM2_SHA256, smollm2Path } from '../../../fixtures/smollm2.js';
import { smollm2Provider } from '../../../fixtures/smollm2-provider.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
// A stand-in GGUF for resolution only (never loaded): GGUF magic then random bytes, binary -> LFS.
const BYTES = Buffer.concat([Buffer.from('GGUF\u0003\u0000\u0000\u0000'), randomBytes(300_000)]);
const REPO = 'telebench/tiny-model-GGUF';
const FILE = 'tiny.Q4_0.gguf';

describe('model resolution', () => {
  let dir: string;
  let hub: HubServer;
  const opts = (extra: Record<string, unknown> = {}) => ({
    baseDir: join(dir, 'config'),
    modelsDir: join(dir, 'state', 'models'),
    env: { HOME: join(dir, 'home') },
    ...extra,
  });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tb-model-source-'));
    mkdirSync(join(dir, 'config', 'models'), { recursive: true });
    writeFileSync(join(dir, 'config', 'models', 'm.gguf'), BYTES);
    hub = await startHubServer();
    hub.seedRepo({ repo: REPO, type: 'model', files: { [FILE]: BYTES, 'README.md': '# tiny' } });
  });
  afterAll(async () => {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an explicit path resolves against the configuration folder; a wrong sha256 is an error', async () => {
    const r = await resolveModel([{ path: 'models/m.gguf' }], 'embedded:t', opts());
    expect(r).toMatchObject({ kind: 'path', sha256: sha(BYTES), size: BYTES.length });
    expect(r.file).toBe(join(dir, 'config', 'models', 'm.gguf'));
    const err = await resolveModel(
      [{ path: 'models/m.gguf', sha256: 'f'.repeat(64) }],
      'embedded:t',
      opts(),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    expect(err).toMatchObject({ code: 'model_sha256_mismatch', tier: 'config' });
  });

  it('Ollama names map to the manifest layout', () => {
    expect(ollamaManifestParts('qwen3.5:2b')).toEqual([
      'registry.ollama.ai',
      'library',
      'qwen3.5',
      '2b',
    ]);
    expect(ollamaManifestParts('user/m')).toEqual(['registry.ollama.ai', 'user', 'm', 'latest']);
    expect(ollamaManifestParts('host.example:5000/ns/m:t')).toEqual([
      'host.example:5000',
      'ns',
      'm',
      't',
    ]);
  });

  it('reads the real SmolLM2 from an Ollama model store and the embedded runtime serves it', async () => {
    const store = join(dir, 'ollama');
    const gguf = readFileSync(smollm2Path());
    mkdirSync(join(store, 'blobs'), { recursive: true });
    symlinkSync(smollm2Path(), join(store, 'blobs', `sha256-${SMOLLM2_SHA256}`));
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
      config: { mediaType: 'application/vnd.docker.container.image.v1+json', digest: 'sha256:0' },
      layers: [
        { mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${SMOLLM2_SHA256}` },
        { mediaType: 'application/vnd.ollama.image.template', digest: 'sha256:1' },
      ],
    });
    const mdir = join(store, 'manifests', 'registry.ollama.ai', 'library', 'smollm2');
    mkdirSync(mdir, { recursive: true });
    writeFileSync(join(mdir, '135m'), manifest);
    const source: ModelSource[] = [{ ollama: { model: SMOLLM2_NAME } }];
    const r = await resolveModel(source, 'embedded:t', opts({ env: { OLLAMA_MODELS: store } }));
    expect(r.kind).toBe('ollama');
    expect(r.sha256).toBe(sha(gguf));
    expect(r.origin).toContain(`manifest sha256:${sha(Buffer.from(manifest))}`);

    const provider = smollm2Provider(dir, { sources: source, env: { OLLAMA_MODELS: store } });
    const info = await provider.preflight(SMOLLM2_NAME);
    expect(info.modelDigest).toBe(`sha256:${SMOLLM2_SHA256}`);
    expect(info.embedded?.model.kind).toBe('ollama');
    const answer = await provider.chat({
      model: SMOLLM2_NAME,
      messages: [{ role: 'user', content: 'Say hello.' }],
      temperature: 0,
      maxTokens: 8,
      providerOptions: { embedded: { numCtx: 512 } },
    });
    expect(answer.outputTokens).toBeGreaterThan(0);
    await provider.close();
  });

  it('downloads from the Hub once (sha256 checked), then makes no request', async () => {
    const source: ModelSource[] = [
      { hub: { repo: REPO, file: FILE, revision: 'main', url: hub.url, use_hf_cache: true } },
    ];
    const modelsDir = join(dir, 'state-a', 'models');
    const progress: number[] = [];
    const r = await resolveModel(
      source,
      'embedded:t',
      opts({ modelsDir, onProgress: (d: number) => progress.push(d) }),
    );
    expect(r).toMatchObject({ kind: 'hub', downloaded: true, sha256: sha(BYTES) });
    expect(r.file).toBe(hubModelPath(modelsDir, { repo: REPO, revision: 'main', file: FILE }));
    expect(readFileSync(r.file).equals(BYTES)).toBe(true);
    expect(progress.at(-1)).toBe(BYTES.length);
    const seen = hub.requests.length;
    const again = await resolveModel(source, 'embedded:t', opts({ modelsDir }));
    expect(again).toMatchObject({ kind: 'hub', downloaded: false, sha256: sha(BYTES) });
    expect(hub.requests.length).toBe(seen);
  });

  it('resumes a partial download with a Range request', async () => {
    const modelsDir = join(dir, 'state-b', 'models');
    const file = hubModelPath(modelsDir, { repo: REPO, revision: 'main', file: FILE });
    mkdirSync(join(file, '..'), { recursive: true });
    const half = 120_000;
    writeFileSync(`${file}.part`, BYTES.subarray(0, half));
    writeFileSync(`${file}.part.json`, JSON.stringify({ etag: sha(BYTES), size: BYTES.length }));
    const before = hub.requests.length;
    const r = await resolveModel(
      [{ hub: { repo: REPO, file: FILE, revision: 'main', url: hub.url, use_hf_cache: false } }],
      'embedded:t',
      opts({ modelsDir }),
    );
    expect(r.sha256).toBe(sha(BYTES));
    const ranged = hub.requests.slice(before).filter((q) => q.range !== undefined);
    expect(ranged.map((q) => q.range)).toContain(`bytes=${half}-${BYTES.length - 1}`);
    expect(existsSync(`${file}.part`)).toBe(false);
  });

  it('a download whose sha256 differs from the configured one is refused and not kept', async () => {
    const modelsDir = join(dir, 'state-c', 'models');
    const err = await resolveModel(
      [
        {
          hub: {
            repo: REPO,
            file: FILE,
            revision: 'main',
            url: hub.url,
            sha256: 'a'.repeat(64),
            use_hf_cache: false,
          },
        },
      ],
      'embedded:t',
      opts({ modelsDir }),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'model_sha256_mismatch' });
    expect(existsSync(hubModelPath(modelsDir, { repo: REPO, revision: 'main', file: FILE }))).toBe(
      false,
    );
  });

  it('uses the local Hugging Face cache before any request', async () => {
    const cache = join(dir, 'hf-cache');
    const root = join(cache, `models--${REPO.replace('/', '--')}`);
    const commit = 'c'.repeat(40);
    mkdirSync(join(root, 'refs'), { recursive: true });
    mkdirSync(join(root, 'blobs'), { recursive: true });
    mkdirSync(join(root, 'snapshots', commit), { recursive: true });
    writeFileSync(join(root, 'refs', 'main'), commit);
    writeFileSync(join(root, 'blobs', sha(BYTES)), BYTES);
    symlinkSync(join(root, 'blobs', sha(BYTES)), join(root, 'snapshots', commit, FILE));
    const before = hub.requests.length;
    const r = await resolveModel(
      [{ hub: { repo: REPO, file: FILE, revision: 'main', url: hub.url, use_hf_cache: true } }],
      'embedded:t',
      opts({ env: { HF_HUB_CACHE: cache } }),
    );
    expect(r).toMatchObject({ kind: 'hf-cache', sha256: sha(BYTES) });
    expect(r.origin).toContain(commit);
    expect(hub.requests.length).toBe(before);
  });

  it('no source has the model: a PreflightError lists each source and what to set', async () => {
    const err = await resolveModel(
      [
        { path: 'models/absent.gguf' },
        { ollama: { model: 'qwen3.5:2b', models_dir: join(dir, 'no-ollama') } },
        {
          hub: {
            repo: REPO,
            file: 'absent.gguf',
            revision: 'main',
            url: hub.url,
            use_hf_cache: false,
          },
        },
      ],
      'embedded:qwen3.5:2b',
      opts(),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PreflightError);
    const e = err as PreflightError;
    expect(e.message).toContain('path models/absent.gguf: no file');
    expect(e.message).toContain('ollama qwen3.5:2b: no manifest for qwen3.5:2b');
    expect(e.message).toMatch(/hub telebench\/tiny-model-GGUF@main\/absent\.gguf: .*(404|no file)/);
    expect(e.hint).toMatch(/set `source`/);
  });
});
