/**
 * The embedded runtime (issue 12): llama.cpp in this process through `node-llama-cpp` (why: it ships
 * prebuilt llama.cpp binaries for Node, CPU and GPU, so no model server and no compiler are needed;
 * pinned to 3.21.1, whose lock file installs with `npm ci`), behind the same {@link LlmProvider}
 * contract as the server providers, so the response cache, the pool and the stages work unchanged.
 *
 * Rules (numbered; each is tested in test/pipeline/providers/llm/embedded.test.ts):
 * 1. The GGUF file comes from the endpoint's `source` list (model-source.ts); the model digest in
 *    provenance is `sha256:<file sha256>`, the server version `node-llama-cpp <v> (llama.cpp <release>
 *    <prebuilt|local build>, <cpu|cuda|vulkan|metal>)`. `<release>` is llama.cpp's own release tag
 *    (`v0.4.0` for node-llama-cpp 3.21.1: its `llama.cpp.info.json`, and `LLAMA_VERSION` 0.4.0 in the
 *    CMakeLists of the llama.cpp source it ships), not node-llama-cpp's version; the binary package
 *    (`@node-llama-cpp/linux-x64@3.21.1`) and ggml's CPU feature line are in {@link LlamaCppBuild}.
 * 2. The prompt is rendered by the model's own chat template from the GGUF metadata
 *    (`tokenizer.chat_template`, through node-llama-cpp's JinjaTemplateChatWrapper; `think` maps to
 *    the template's reasoning switch, `enable_thinking` for Qwen3). With `chat_template: auto`, or
 *    when the file has no template, node-llama-cpp's own resolution picks a wrapper. Preflight
 *    reports the wrapper, the template and its sha256.
 * 3. Thinking: the thought segments node-llama-cpp separates (`<think>...</think>` for Qwen-style
 *    templates); a `<think>` block left in the answer text is split out as for the servers; a model
 *    without a reasoning channel (SmolLM2) gives ''.
 * 4. Counts are exact, from the model's tokenizer: `promptTokens` = tokens of the rendered prompt
 *    (BOS and template tokens included), `outputTokens` = generated tokens, thinking included (the
 *    end-of-generation token excluded).
 * 5. No silent truncation: the window is the request's `providerOptions.embedded.numCtx` (or the context size). A prompt with
 *    `promptTokens + 1 > window` is refused before any evaluation (`prompt_too_long`, tier content,
 *    with the exact count); it is never cut. The output budget is `min(maxTokens, window -
 *    promptTokens)`, so llama.cpp never shifts the context; stopping there is done reason `length`,
 *    `budgetExhausted` (thought budgets are off: `maxTokens` covers thinking as Ollama's
 *    `num_predict` does).
 * 6. Concurrency: one llama.cpp context per endpoint with `concurrency` sequences, evaluated together
 *    in one batch; each request gets a sequence with its history erased, so requests never see each
 *    other's tokens and the output at temperature 0 does not depend on what runs beside it.
 * 7. Threads: `threads` (default 1). On a shared 2-core machine llama.cpp's default thread count
 *    busy-waits: 25 s per token at load average 30 with 2 threads, 20-25 ms with 1 (measured on the
 *    build machine); raise it on a machine of your own.
 * 8. A request for another model name than the endpoint serves is refused (`model_not_found`,
 *    config): the runtime never swaps models.
 * 9. The published run's behaviour, only when a request asks for it (`truncatePrompt`,
 *    `contextShift`: TeleResilienceBench `paper` profiles): the prompt is cut and the context
 *    shifted as Ollama's runner did (truncation.ts `ollamaCut`), token by token on the sequence,
 *    and every such row carries a warning (`prompt-truncated`, `context-shifted`), never silent. Rule 5
 *    holds for every other request.
 * 10. Preflight creates the context and evaluates one token on it (see `warm`), so allocation and
 *    page-in costs and an out-of-memory context show at preflight, not in the first items.
 * 11. Seed: every request samples with a known seed (the request's, else the endpoint's `seed`, else
 *    {@link DEFAULT_SEED}), returned as `ChatResult.seed` so provenance records the seed actually
 *    used (at temperature 0 sampling is greedy and the seed changes nothing).
 */
import { createHash } from 'node:crypto';
import type {
  ChatHistoryItem,
  ChatWrapper,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaModel,
  LlamaChatResponse,
  Token,
} from 'node-llama-cpp';
import pLimit, { type LimitFunction } from 'p-limit';
import { PreflightError, TelebenchError } from '../../errors.js';
import type { BlobStore } from '../../store/blobs.js';
import type { TelebenchEvent } from '../../events.js';
import type {
  ChatMessage,
  ChatRequest,
  ChatResult,
  EndpointModels,
  LlmProvider,
  ModelInfo,
} from './types.js';
import { estimatePromptTokens, OLLAMA_NUM_KEEP, ollamaCut, splitThinkTags } from './truncation.js';
import { resolveModel, type ModelSource } from './model-source.js';
import type { EmbeddedRuntimeInfo } from './embedded-info.js';
import { chatWarnings } from './result.js';

export type { EmbeddedRuntimeInfo, LlamaCppBuild } from './embedded-info.js';

/** Construction options of {@link EmbeddedProvider}. */
export interface EmbeddedOptions {
  /** The model name this endpoint serves (what requests and preflight ask for, e.g. `qwen3.5:2b`). */
  model: string;
  /** Where the GGUF file comes from, tried in order (all the same model). */
  sources: readonly ModelSource[];
  /** Folder relative `path` sources resolve against. */
  baseDir: string;
  /** Folder for Hub downloads (`<state>/models`). */
  modelsDir: string;
  /** Context window per sequence in tokens, or `auto` (the largest `numCtx` asked so far, 4096 at least). */
  contextSize?: number | 'auto';
  /** Sequences in the context: requests evaluated at once (default 1). */
  sequences?: number;
  /** CPU threads for evaluation (default 1, see rule 7). */
  threads?: number;
  /** Sampling seed used when a request gives none. */
  seed?: number;
  /** `auto`: use a GPU when node-llama-cpp finds one; false: CPU only. */
  gpu?: 'auto' | false;
  /** `gguf`: the file's own chat template (default); `auto`: node-llama-cpp's resolution. */
  chatTemplate?: 'gguf' | 'auto';
  blobs?: BlobStore;
  onEvent?: (event: TelebenchEvent) => void;
  env?: NodeJS.ProcessEnv;
  /** Injected fetch for Hub downloads. */
  fetch?: typeof fetch;
}

/** The sampling seed of a request that names none, on an endpoint without `seed` (rule 11). */
export const DEFAULT_SEED = 0;

/** Prebuilt binary packages by `<os> <arch> <gpu>` (node-llama-cpp 3.21.1). */
const PREBUILT_BY_GPU = new Map([
  ['mac arm64 metal', 'mac-arm64-metal'],
  ['mac x64 cpu', 'mac-x64'],
  ['linux x64 cpu', 'linux-x64'],
  ['linux x64 cuda', 'linux-x64-cuda'],
  ['linux x64 vulkan', 'linux-x64-vulkan'],
  ['win x64 cpu', 'win-x64'],
  ['win x64 cuda', 'win-x64-cuda'],
  ['win x64 vulkan', 'win-x64-vulkan'],
]);
/** Prebuilt binary packages by `<os> <arch>`, whatever the GPU (node-llama-cpp 3.21.1). */
const PREBUILT_ANY_GPU = new Map([
  ['linux arm64', 'linux-arm64'],
  ['linux arm', 'linux-armv7l'],
  ['linux riscv64', 'linux-riscv64'],
  ['win arm64', 'win-arm64'],
]);

/**
 * The npm package node-llama-cpp loads a prebuilt binary from, for a platform, architecture and GPU
 * (the mapping of node-llama-cpp 3.21.1's `getPrebuiltBinariesPackageDirectoryForBuildOptions`).
 * @param platform `process.platform`
 * @param arch `process.arch`
 * @param gpu `cpu`, `cuda`, `vulkan` or `metal`
 * @returns `@node-llama-cpp/<name>`, or null for a combination without a prebuilt package
 */
export function prebuiltBinaryPackage(
  platform: NodeJS.Platform,
  arch: string,
  gpu: string,
): string | null {
  const os = platform === 'darwin' ? 'mac' : platform === 'win32' ? 'win' : platform;
  const name = PREBUILT_BY_GPU.get(`${os} ${arch} ${gpu}`) ?? PREBUILT_ANY_GPU.get(`${os} ${arch}`);
  return name === undefined ? null : `@node-llama-cpp/${name}`;
}

/** A piece of an answer as it is generated (for streaming: `telebench serve-model`). */
export interface EmbeddedDelta {
  content?: string;
  thinking?: string;
}

type NodeLlamaCpp = typeof import('node-llama-cpp');
let moduleMemo: Promise<NodeLlamaCpp> | undefined;
const llamaMemo = new Map<string, Promise<Llama>>();
const modelMemo = new Map<string, Promise<LlamaModel>>();

/** node-llama-cpp, imported on first use (the server providers never load the native binary). */
function nodeLlamaCpp(): Promise<NodeLlamaCpp> {
  moduleMemo ??= import('node-llama-cpp');
  return moduleMemo;
}

/** One Llama binding per GPU setting and process (node-llama-cpp keeps one native library). */
async function llamaFor(gpu: 'auto' | false): Promise<Llama> {
  const key = String(gpu);
  let p = llamaMemo.get(key);
  if (!p) {
    p = nodeLlamaCpp().then((m) =>
      m.getLlama({ gpu, build: 'never', logLevel: m.LlamaLogLevel.error, progressLogs: false }),
    );
    llamaMemo.set(key, p);
    p.catch(() => llamaMemo.delete(key));
  }
  return p;
}

/** One loaded model per file and GPU setting in this process, shared by every endpoint using it. */
function modelFor(llama: Llama, file: string, gpu: 'auto' | false): Promise<LlamaModel> {
  const key = `${gpu}\0${file}`;
  let p = modelMemo.get(key);
  if (!p) {
    p = llama.loadModel({ modelPath: file, ...(gpu === false ? { gpuLayers: 0 } : {}) });
    modelMemo.set(key, p);
    p.catch(() => modelMemo.delete(key));
  }
  return p;
}

/** The model name an embedded endpoint answers to (Ollama's `:latest` rule for bare names). */
function sameName(a: string, b: string): boolean {
  const norm = (s: string) => (s.includes(':') ? s : `${s}:latest`);
  return a === b || norm(a) === norm(b);
}

/** Converts the contract's messages into node-llama-cpp's chat history plus the open model turn. */
export function toChatHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m) =>
    m.role === 'system'
      ? { type: 'system', text: m.content }
      : m.role === 'user'
        ? { type: 'user', text: m.content }
        : { type: 'model', response: [m.content] },
  );
  history.push({ type: 'model', response: [] });
  return history;
}

interface Loaded {
  info: EmbeddedRuntimeInfo;
  llama: Llama;
  model: LlamaModel;
}

/** The in-process llama.cpp provider (see the module comment). */
export class EmbeddedProvider implements LlmProvider {
  readonly specificationVersion = 'v1' as const;
  readonly provider = 'embedded';
  /** The endpoint's configured `seed` (see {@link LlmProvider.defaultSeed}); undefined when unset. */
  get defaultSeed(): number | undefined {
    return this.options.seed;
  }
  /** `embedded:<model>`: what `ChatResult.endpoint` and `ModelInfo.endpoint` say. */
  readonly endpoint: string;
  private loaded: Promise<Loaded> | undefined;
  private context: { size: number; ctx: Promise<LlamaContext> } | undefined;
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly wrappers = new Map<string, ChatWrapper>();
  private freeSequences: LlamaContextSequence[] = [];
  /** Contexts already warmed by a preflight (rule 10). */
  private readonly warmed = new WeakSet<LlamaContext>();
  private readonly limit: LimitFunction;
  private readonly sequences: number;
  private readonly threads: number;

  /** @param options see {@link EmbeddedOptions}; nothing is loaded until preflight or chat */
  constructor(private readonly options: EmbeddedOptions) {
    this.endpoint = `embedded:${options.model}`;
    this.sequences = options.sequences ?? 1;
    this.threads = options.threads ?? 1;
    this.limit = pLimit(this.sequences);
  }

  /** Resolves and loads the model once (concurrent callers share the load). */
  private load(signal?: AbortSignal): Promise<Loaded> {
    if (!this.loaded) {
      this.loaded = this.doLoad(signal);
      this.loaded.catch(() => {
        this.loaded = undefined;
      });
    }
    return this.loaded;
  }

  private async doLoad(signal?: AbortSignal): Promise<Loaded> {
    const o = this.options;
    const emit = (message: string, data?: Record<string, unknown>) =>
      o.onEvent?.({ kind: 'log', message, ...(data ? { data } : {}) });
    let lastTenth = -1;
    const resolved = await resolveModel(o.sources, this.endpoint, {
      baseDir: o.baseDir,
      modelsDir: o.modelsDir,
      ...(o.env ? { env: o.env } : {}),
      ...(o.fetch ? { fetch: o.fetch } : {}),
      ...(signal ? { signal } : {}),
      onMiss: (source, reason) => emit(`${this.endpoint}: source ${source} skipped: ${reason}`),
      onProgress: (done, total) => {
        const tenth = Math.floor((done / total) * 10);
        if (tenth !== lastTenth) {
          lastTenth = tenth;
          emit(`${this.endpoint}: downloading ${tenth * 10} % of ${total} bytes`, {
            done,
            total,
          });
        }
      },
    });
    const gpu = o.gpu ?? 'auto';
    const m = await nodeLlamaCpp();
    let llama: Llama;
    let model: LlamaModel;
    try {
      llama = await llamaFor(gpu);
      model = await modelFor(llama, resolved.file, gpu);
    } catch (err) {
      throw new PreflightError(
        this.endpoint,
        `node-llama-cpp could not load ${resolved.file}: ${(err as Error).message}`,
        'check that the file is a GGUF model this llama.cpp release supports (`npx node-llama-cpp inspect gguf <file>`), and that `npm ci` installed @node-llama-cpp/<platform>',
        err,
      );
    }
    const template = model.fileInfo.metadata.tokenizer?.chat_template;
    const chatTemplate = typeof template === 'string' ? template : null;
    const version = await m.getModuleVersion();
    const device = llama.gpu === false ? 'cpu' : llama.gpu;
    const pkg =
      llama.buildType === 'prebuilt'
        ? prebuiltBinaryPackage(process.platform, process.arch, device)
        : null;
    const info: EmbeddedRuntimeInfo = {
      runtime: `node-llama-cpp ${version}`,
      llamaCpp: llama.llamaCppRelease.release,
      llamaCppBuild: {
        release: llama.llamaCppRelease.release,
        repo: llama.llamaCppRelease.repo,
        buildType: llama.buildType,
        binaryPackage: pkg === null ? null : `${pkg}@${version}`,
        systemInfo: llama.systemInfo.trim(),
      },
      device,
      threads: this.threads,
      sequences: this.sequences,
      model: resolved,
      chatWrapper: this.wrapperFor(m, model, chatTemplate, undefined).wrapperName,
      chatTemplate,
      chatTemplateSha256:
        chatTemplate === null ? null : createHash('sha256').update(chatTemplate).digest('hex'),
      trainContextSize: model.trainContextSize,
    };
    return { info, llama, model };
  }

  /** The chat wrapper for a `think` setting (rule 2), one per setting. */
  private wrapperFor(
    m: NodeLlamaCpp,
    model: LlamaModel,
    template: string | null,
    think: boolean | undefined,
  ): ChatWrapper {
    const key = String(think);
    let w = this.wrappers.get(key);
    if (!w) {
      if (template !== null && (this.options.chatTemplate ?? 'gguf') === 'gguf') {
        w = new m.JinjaTemplateChatWrapper({
          template,
          reasoning: think ?? null,
          tokenizer: model.tokenizer,
        });
      } else {
        w = m.resolveChatWrapper(model, {
          customWrapperSettings: { qwen: { thoughts: think === false ? 'discourage' : 'auto' } },
        });
      }
      this.wrappers.set(key, w);
    }
    return w;
  }

  /**
   * Resolves the model file (downloading it when the source is the Hub), loads it and reports the
   * runtime version, the model file's sha256 and the chat template.
   * @returns `serverVersion` `node-llama-cpp <v> (llama.cpp <release>, <device>)`, `modelDigest`
   *   `sha256:<hex>`, `contextLength` the trained context, `embedded` the details
   * @throws PreflightError when `model` is not the one this endpoint serves, when no source has the
   *   file (naming what to set), or when llama.cpp cannot load it
   */
  async preflight(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    if (!sameName(model, this.options.model)) {
      throw new PreflightError(
        this.endpoint,
        `this embedded endpoint serves ${this.options.model}, not ${model}`,
        `set \`model\` of the embedded endpoint to ${model} with a source for it, or ask for ${this.options.model}`,
      );
    }
    const loaded = await this.load(signal);
    const { info } = loaded;
    await this.warm(loaded);
    return {
      endpoint: this.endpoint,
      serverVersion: `${info.runtime} (llama.cpp ${info.llamaCpp} ${info.llamaCppBuild.buildType === 'prebuilt' ? 'prebuilt' : 'local build'}, ${info.device})`,
      modelDigest: `sha256:${info.model.sha256}`,
      contextLength: info.trainContextSize,
      embedded: info,
    };
  }

  /**
   * Rule 10: creates the context a first request would use (the fixed `context_size`, else 4096
   * tokens per sequence) and evaluates one token on one of its sequences, then erases it. So
   * allocating the KV cache and compute buffers and paging the weights in happen at preflight,
   * where a context that does not fit memory stops the stage naming what to lower, and the first
   * requests of a stage run at full speed (bench/embedded.bench.ts: this was a share of the gap
   * between the stage and a bare node-llama-cpp loop). Idempotent: done once per context.
   * @throws PreflightError when llama.cpp cannot create the context or evaluate on it
   */
  private async warm(loaded: Loaded): Promise<void> {
    const fixed = this.options.contextSize ?? 'auto';
    const size = typeof fixed === 'number' ? fixed : 4096;
    try {
      const ctx = await this.contextFor(loaded, size);
      if (this.warmed.has(ctx)) return;
      this.warmed.add(ctx);
      const seq = await this.acquireSequence(ctx);
      try {
        const bos = loaded.model.tokens.bos ?? loaded.model.tokenize(' ')[0];
        if (bos !== undefined) await seq.evaluateWithoutGeneratingNewTokens([bos]);
        await seq.clearHistory();
      } finally {
        this.freeSequences.push(seq);
      }
    } catch (err) {
      if (err instanceof TelebenchError) throw err;
      throw new PreflightError(
        this.endpoint,
        `llama.cpp could not create or use a context of ${size} tokens x ${this.sequences} sequences for ${loaded.info.model.file}: ${(err as Error)?.message ?? String(err)}`,
        'lower `concurrency` or `context_size` of the embedded endpoint (the KV cache grows with both), or free memory',
        err,
      );
    }
  }

  /** The runtime details after a preflight or chat loaded the model; undefined before. */
  /** Sequences evaluated together: the requests it runs at once. */
  capacity(): number {
    return this.sequences;
  }

  /** The embedded runtime is no server to ask: none. */
  async loadedModels(): Promise<EndpointModels[]> {
    return [];
  }

  async runtimeInfo(): Promise<EmbeddedRuntimeInfo | undefined> {
    return this.loaded ? (await this.loaded).info : undefined;
  }

  /** The context with at least `size` tokens per sequence (rule 5), recreated when idle if smaller. */
  private async contextFor(loaded: Loaded, size: number): Promise<LlamaContext> {
    const fixed = this.options.contextSize ?? 'auto';
    if (typeof fixed === 'number' && size > fixed) {
      throw new TelebenchError(
        'context_too_small',
        `${this.endpoint}: the request asks for a ${size}-token window but context_size is ${fixed}: raise context_size of the embedded endpoint`,
        { tier: 'config', context: { endpoint: this.endpoint, numCtx: size, contextSize: fixed } },
      );
    }
    const want = typeof fixed === 'number' ? fixed : Math.max(size, 4096);
    while (this.context && this.context.size < size) {
      if (this.active > 0) {
        await new Promise<void>((r) => this.idleWaiters.push(r));
        continue;
      }
      const old = this.context;
      this.context = undefined;
      this.freeSequences = [];
      await (await old.ctx).dispose();
    }
    if (!this.context) {
      const ctx = loaded.model.createContext({
        contextSize: want,
        sequences: this.sequences,
        threads: this.threads,
        ...(this.options.seed !== undefined ? { seed: this.options.seed } : {}),
      });
      this.context = { size: want, ctx };
      ctx.catch(() => {
        if (this.context?.ctx === ctx) this.context = undefined;
      });
    }
    return this.context.ctx;
  }

  /**
   * One chat completion in this process (see {@link LlmProvider.chat} and rules 2-6).
   * @throws TelebenchError `model_not_found` (config) for another model name; `prompt_too_long`
   *   (content) when the prompt does not fit the window by the model's own count; `context_too_small`
   *   (config) when `numCtx` exceeds a fixed `context_size`; `llm_runtime_error` (infra) when
   *   llama.cpp fails; PreflightError when the model cannot be found or loaded
   */
  async chat(
    request: ChatRequest,
    options: { signal?: AbortSignal; onDelta?: (delta: EmbeddedDelta) => void } = {},
  ): Promise<ChatResult> {
    if (!sameName(request.model, this.options.model)) {
      throw new TelebenchError(
        'model_not_found',
        `${this.endpoint} serves ${this.options.model}, not ${request.model}: the embedded runtime never swaps models`,
        {
          tier: 'config',
          context: { endpoint: this.endpoint, model: request.model, serves: this.options.model },
        },
      );
    }
    const loaded = await this.load(options.signal);
    return this.limit(() => this.generate(loaded, request, options.signal, options.onDelta));
  }

  private async generate(
    loaded: Loaded,
    request: ChatRequest,
    signal: AbortSignal | undefined,
    onDelta: ((delta: EmbeddedDelta) => void) | undefined,
  ): Promise<ChatResult> {
    const m = await nodeLlamaCpp();
    const own = request.providerOptions?.embedded ?? {};
    const wrapper = this.wrapperFor(m, loaded.model, loaded.info.chatTemplate, own.think);
    const history = toChatHistory(request.messages);
    const rendered = wrapper.generateContextState({ chatHistory: history }).contextText;
    const promptTokenList = rendered.tokenize(loaded.model.tokenizer);
    const promptTokens = promptTokenList.length;
    const promptTokensLocal = estimatePromptTokens(request.messages);
    const window =
      own.numCtx ??
      (typeof this.options.contextSize === 'number' ? this.options.contextSize : 4096);
    if (own.truncatePrompt === true || own.contextShift === true) {
      if (promptTokens + 1 > window && own.truncatePrompt !== true)
        throw this.tooLong(request, promptTokens, window, promptTokensLocal);
      return this.generateAsOllama(loaded, request, {
        tokens: promptTokenList,
        rendered: rendered.toString(),
        window,
        promptTokensLocal,
        wrapperName: wrapper.wrapperName,
        signal,
        onDelta,
      });
    }
    if (promptTokens + 1 > window)
      throw this.tooLong(request, promptTokens, window, promptTokensLocal);
    const { sequence, started } = await this.checkOut(loaded, window, request);
    const chat = new m.LlamaChat({ contextSequence: sequence, chatWrapper: wrapper });
    const room = window - promptTokens;
    const maxTokens = Math.min(request.maxTokens ?? room, room);
    let outputTokens = 0;
    let response: LlamaChatResponse;
    const sampling = this.sampling(request);
    const { seed } = sampling;
    try {
      response = await chat.generateResponse(history, {
        maxTokens,
        ...sampling,
        budgets: { thoughtTokens: Infinity, commentTokens: Infinity },
        onResponseChunk: (chunk) => {
          outputTokens += chunk.tokens.length;
          if (onDelta && chunk.text !== '') {
            if (chunk.type === 'segment') {
              if (chunk.segmentType === 'thought') onDelta({ thinking: chunk.text });
            } else onDelta({ content: chunk.text });
          }
        },
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw this.runtimeError(err, request);
    } finally {
      chat.dispose({ disposeSequence: false });
      this.checkIn(sequence);
    }
    const latencyMs = Math.round(performance.now() - started);
    const thought = response.fullResponse
      .filter((r) => typeof r !== 'string' && r.segmentType === 'thought')
      .map((r) => (r as { text: string }).text)
      .join('');
    let thinking = thought.trim();
    let content = response.response;
    if (thinking === '') ({ thinking, content } = splitThinkTags(content));
    const stop = response.metadata.stopReason;
    const doneReason = stop === 'maxTokens' ? 'length' : stop === 'abort' ? 'abort' : 'stop';
    const raw = JSON.stringify({
      runtime: loaded.info.runtime,
      model: request.model,
      modelSha256: loaded.info.model.sha256,
      chatWrapper: wrapper.wrapperName,
      prompt: rendered.toString(),
      fullResponse: response.fullResponse,
      stopReason: stop,
      seed,
      promptTokens,
      outputTokens,
    });
    return {
      thinking,
      content,
      promptTokens,
      outputTokens,
      doneReason,
      warnings: [],
      budgetExhausted: stop === 'maxTokens',
      latencyMs,
      endpoint: this.endpoint,
      cached: false,
      seed,
      promptTokensLocal,
      ...(this.options.blobs ? { rawDigest: this.options.blobs.put(raw) } : {}),
    };
  }

  private tooLong(
    request: ChatRequest,
    promptTokens: number,
    window: number,
    estimate: number,
  ): TelebenchError {
    return new TelebenchError(
      'prompt_too_long',
      `${this.endpoint}: the prompt for ${request.model} is ${promptTokens} tokens by the model's own tokenizer, ` +
        `the window (num_ctx) is ${window}: not evaluated, so it cannot be cut silently; raise num_ctx`,
      {
        tier: 'content',
        context: {
          endpoint: this.endpoint,
          model: request.model,
          numCtx: window,
          promptTokens,
          estimate,
        },
      },
    );
  }

  /**
   * Rule 9, the published run's behaviour (TeleResilienceBench `paper` profiles: `truncatePrompt`
   * and/or `contextShift`), token by token on one sequence: the prompt is cut as Ollama's runner
   * cut it ({@link ollamaCut}: the first 4 tokens and the tail, after truncation to the window and
   * the first shift) with a `prompt-truncated` warning; with `contextShift`, whenever prompt plus
   * output fill the window, `floor((window - 4) / 2)` tokens after the first 4 are erased (Ollama's
   * shift, through node-llama-cpp's sequence `contextShift` strategy) with a `context-shifted` warning.
   * `promptTokens` is what Ollama reported for a cut prompt (the window), else the exact count.
   * Thinking is split from `<think>` tags in the text (no segment parser on this path). Greedy at
   * temperature 0 as the chat path.
   */
  private async generateAsOllama(
    loaded: Loaded,
    request: ChatRequest,
    p: {
      tokens: readonly Token[];
      rendered: string;
      window: number;
      promptTokensLocal: number;
      wrapperName: string;
      signal: AbortSignal | undefined;
      onDelta: ((delta: EmbeddedDelta) => void) | undefined;
    },
  ): Promise<ChatResult> {
    const { window } = p;
    const cut = ollamaCut(p.tokens.length, window);
    const input = cut.cut
      ? [...p.tokens.slice(0, cut.head), ...p.tokens.slice(cut.tailStart)]
      : [...p.tokens];
    const shift = request.providerOptions?.embedded?.contextShift === true;
    const budget = request.maxTokens ?? window;
    // without the shift the answer stops at the window, as Ollama's `shift: false` does
    const maxOut = shift ? budget : Math.max(0, Math.min(budget, window - input.length));
    const { sequence, started } = await this.checkOut(loaded, window, request);
    const out: Token[] = [];
    let stop: 'stop' | 'length' | 'abort' = 'length';
    let shifts = 0;
    const sampling = this.sampling(request);
    const { seed } = sampling;
    try {
      if (maxOut > 0) {
        stop = 'stop';
        const it = sequence.evaluate(input, {
          ...sampling,
          contextShift: {
            size: cut.discard,
            strategy: ({ size }) => {
              shifts++;
              return [{ start: OLLAMA_NUM_KEEP, end: OLLAMA_NUM_KEEP + size }];
            },
          },
        });
        for await (const token of it) {
          if (p.signal?.aborted) {
            stop = 'abort';
            break;
          }
          out.push(token);
          if (p.onDelta)
            p.onDelta({ content: loaded.model.detokenize([token], false, out.slice(-9, -1)) });
          if (out.length >= maxOut) {
            stop = 'length';
            break;
          }
          if (!shift && input.length + out.length >= window) {
            stop = 'length';
            break;
          }
        }
      }
    } catch (err) {
      if (p.signal?.aborted) throw err;
      throw this.runtimeError(err, request);
    } finally {
      this.checkIn(sequence);
    }
    const latencyMs = Math.round(performance.now() - started);
    // special tokens kept: a `<think>` tag is one for Qwen3, and the reasoning split needs it
    const { thinking, content } = splitThinkTags(loaded.model.detokenize(out, true));
    const raw = JSON.stringify({
      runtime: loaded.info.runtime,
      model: request.model,
      modelSha256: loaded.info.model.sha256,
      chatWrapper: p.wrapperName,
      prompt: p.rendered,
      ollamaCut: { promptTokens: p.tokens.length, window, ...cut, shifts },
      output: out,
      stopReason: stop,
      seed,
    });
    return {
      thinking: thinking.trim(),
      content,
      promptTokens: cut.cut ? window : p.tokens.length,
      outputTokens: out.length,
      doneReason: stop,
      warnings: chatWarnings({
        promptTruncated: cut.cut,
        contextShifted: shift && (cut.cut || shifts > 0 || input.length + out.length > window),
        window,
      }),
      budgetExhausted: stop === 'length',
      latencyMs,
      endpoint: this.endpoint,
      cached: false,
      seed,
      promptTokensLocal: p.promptTokensLocal,
      ...(this.options.blobs ? { rawDigest: this.options.blobs.put(raw) } : {}),
    };
  }

  /**
   * A sequence of the context with no tokens in it: a reused one (its history erased, so no request
   * sees another's tokens) or a new one while the context has some left. The p-limit around
   * {@link generate} keeps at most `sequences` requests here at once. (Disposing a sequence frees
   * its slot only later, so sequences are kept and reused rather than disposed per request.)
   */
  private async acquireSequence(ctx: LlamaContext): Promise<LlamaContextSequence> {
    const reused = this.freeSequences.pop();
    if (reused && !reused.disposed) {
      // Erasing takes the context's lock, so it waits for the batch the other sequences are
      // evaluating: skip it when there is nothing to erase (a warmed or just-created sequence).
      if (reused.nextTokenIndex > 0) await reused.clearHistory();
      return reused;
    }
    return ctx.getSequence();
  }

  /**
   * Counts a request as active and takes a sequence of the `window`-token context for it (both
   * generation paths; give it back with {@link checkIn}). `started` is the latency clock's start.
   * @throws TelebenchError `llm_runtime_error` when llama.cpp cannot give a sequence
   */
  private async checkOut(
    loaded: Loaded,
    window: number,
    request: ChatRequest,
  ): Promise<{ sequence: LlamaContextSequence; started: number }> {
    const ctx = await this.contextFor(loaded, window);
    this.active++;
    const started = performance.now();
    try {
      return { sequence: await this.acquireSequence(ctx), started };
    } catch (err) {
      this.release();
      throw this.runtimeError(err, request);
    }
  }

  /** Gives back a sequence taken by {@link checkOut} and ends the request's active count. */
  private checkIn(sequence: LlamaContextSequence): void {
    this.freeSequences.push(sequence);
    this.release();
  }

  /** Rule 11: the request's sampling options, with the seed it actually samples with. */
  private sampling(request: ChatRequest): { temperature?: number; topP?: number; seed: number } {
    return {
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
      seed: request.seed ?? this.options.seed ?? DEFAULT_SEED,
    };
  }

  private release(): void {
    this.active--;
    if (this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private runtimeError(err: unknown, request: ChatRequest): TelebenchError {
    if (err instanceof TelebenchError) return err;
    return new TelebenchError(
      'llm_runtime_error',
      `${this.endpoint}: llama.cpp failed on a request for ${request.model}: ${(err as Error)?.message ?? String(err)}`,
      { tier: 'infra', context: { endpoint: this.endpoint }, cause: err },
    );
  }

  /** Frees the context (the model stays loaded for other endpoints of this process). */
  async close(): Promise<void> {
    const c = this.context;
    this.context = undefined;
    this.freeSequences = [];
    if (c) await (await c.ctx).dispose();
  }
}
