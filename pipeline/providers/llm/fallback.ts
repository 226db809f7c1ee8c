/**
 * "Ollama when it answers, else the embedded runtime for the same model" as a reusable piece of the
 * `llm` configuration (`llm.fallback`, issue 12). The preflight tries the primary endpoints; when
 * they fail their preflight (the server is not running, the model is not pulled), it preflights the
 * fallback endpoints and, when those pass, every later call goes there. The switch is a `log` event
 * naming both sides, and the answering provider's kind (`embedded`) and model digest are what the
 * cache key and provenance record, so the same model through another runtime is never mistaken for
 * the server's answers. A model the fallback does not have stops the preflight naming both causes.
 * Errors after the choice (a request failing) never switch runtimes mid-run.
 */
import { PreflightError } from '../../errors.js';
import type { TelebenchEvent } from '../../events.js';
import type { ChatRequest, ChatResult, EndpointModels, LlmProvider, ModelInfo } from './types.js';

/** A provider that uses `fallback` when `primary` fails its preflight. */
export class FallbackProvider implements LlmProvider {
  readonly specificationVersion = 'v1' as const;
  private chosen: LlmProvider | undefined;
  private choosing = new Map<string, Promise<ModelInfo>>();

  /**
   * @param primary tried first (the pool of `llm.endpoints`)
   * @param fallback used when the primary's preflight fails (the pool of `llm.fallback`)
   * @param onEvent receives the `log` event of a switch
   */
  constructor(
    readonly primary: LlmProvider,
    readonly fallback: LlmProvider,
    private readonly onEvent?: (event: TelebenchEvent) => void,
  ) {}

  /** The provider that answers: the primary until a preflight chose the fallback. */
  get active(): LlmProvider {
    return this.chosen ?? this.primary;
  }

  /** Kind of the answering provider (`ollama` before and after a passing primary preflight, `embedded` after a switch). */
  get provider(): string {
    return this.active.provider;
  }

  /** The answering provider's capacity (the primary's until a preflight chose the fallback). */
  capacity(): number {
    return this.active.capacity();
  }

  /** The answering provider's loaded models. @throws as its */
  loadedModels(signal?: AbortSignal): Promise<EndpointModels[]> {
    return this.active.loadedModels(signal);
  }

  /** The answering provider's configured default seed (see {@link LlmProvider.defaultSeed}). */
  get defaultSeed(): number | undefined {
    return this.active.defaultSeed;
  }

  /**
   * Preflights the primary; on a PreflightError, the fallback (once per model and provider).
   * @returns the answering side's ModelInfo
   * @throws PreflightError naming both causes when neither passes; any non-preflight error of the
   *   primary as is
   */
  preflight(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    let p = this.choosing.get(model);
    if (!p) {
      p = this.choose(model, signal);
      this.choosing.set(model, p);
      p.catch(() => this.choosing.delete(model));
    }
    return p;
  }

  private async choose(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    let primaryError: PreflightError;
    try {
      const info = await this.primary.preflight(model, signal);
      this.chosen = this.primary;
      return info;
    } catch (err) {
      if (!(err instanceof PreflightError)) throw err;
      primaryError = err;
    }
    let info: ModelInfo;
    try {
      info = await this.fallback.preflight(model, signal);
    } catch (err) {
      if (!(err instanceof PreflightError)) throw err;
      throw new PreflightError(
        primaryError.service,
        `${primaryError.message}; the fallback failed too: ${err.message}`,
        `${primaryError.hint}; or, for the fallback: ${err.hint}`,
        primaryError,
      );
    }
    this.chosen = this.fallback;
    this.onEvent?.({
      kind: 'log',
      message: `${model}: ${primaryError.message}; using the fallback ${this.fallback.provider} ${info.endpoint} for the same model (digest ${info.modelDigest ?? 'unknown'})`,
      data: {
        model,
        primary: primaryError.message,
        fallback: info.endpoint,
        provider: this.fallback.provider,
        modelDigest: info.modelDigest,
      },
    });
    return info;
  }

  /**
   * Sends the request to the chosen side; before any preflight, runs one for `request.model`.
   * @throws what the chosen provider throws, or the preflight's PreflightError
   */
  async chat(request: ChatRequest, options: { signal?: AbortSignal } = {}): Promise<ChatResult> {
    if (!this.chosen) await this.preflight(request.model, options.signal);
    return this.active.chat(request, options);
  }
}
