/**
 * What the embedded runtime (embedded.ts) reports about itself at preflight: types only, so the
 * provider contract (types.ts) can name them without importing the runtime.
 */
import type { ResolvedModel } from './model-source.js';

/** Which llama.cpp build runs (rule 1). */
export interface LlamaCppBuild {
  /** llama.cpp's release tag the binary was built from (`v0.4.0`). */
  release: string;
  /** Its GitHub repository (`ggml-org/llama.cpp`). */
  repo: string;
  /** `prebuilt`: a binary package from npm; `localBuild`: compiled on this machine. */
  buildType: 'prebuilt' | 'localBuild';
  /** The npm package that holds a prebuilt binary (`@node-llama-cpp/linux-x64@3.21.1`), else null. */
  binaryPackage: string | null;
  /** ggml's system info line (`CPU : SSE3 = 1 | ... | AVX2 = 1 | ...`): the CPU features it uses. */
  systemInfo: string;
}

/** What the preflight of an embedded endpoint learned, beside {@link ModelInfo}. */
export interface EmbeddedRuntimeInfo {
  /** `node-llama-cpp 3.21.1`. */
  runtime: string;
  /** llama.cpp's release tag of the binary (`v0.4.0`). */
  llamaCpp: string;
  /** The llama.cpp build in detail (repository, prebuilt or local, binary package, CPU features). */
  llamaCppBuild: LlamaCppBuild;
  /** `cpu`, `cuda`, `vulkan` or `metal`. */
  device: string;
  threads: number;
  sequences: number;
  model: ResolvedModel;
  /** node-llama-cpp wrapper name (`JinjaTemplate`, `ChatML`, `Qwen`, ...). */
  chatWrapper: string;
  /** The GGUF's `tokenizer.chat_template`, null when the file has none. */
  chatTemplate: string | null;
  chatTemplateSha256: string | null;
  /** The model's trained context length (GGUF metadata). */
  trainContextSize: number;
}
