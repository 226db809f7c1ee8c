/**
 * How a TeleResilienceBench item asks its model: the settings it records in its stage input, and
 * the provider request built from them. The `paper` profile (paper section IV, collect_metadata.json:
 * num_ctx 2048, num_predict 4096, temperature 0, think on, Ollama's context shift allowed, an
 * over-long prompt cut as Ollama cut it) is this benchmark's rule: it is built here, in the
 * vendors' provider options, never in the shared LLM contract.
 *
 * {@link GenerationRequest} keeps the shape these stages stored before provider options existed,
 * so the input hashes of finished items, and so the items themselves, stay valid.
 */
import type { ChatMessage, ChatRequest } from '../../pipeline/providers/llm/types.js';
import { everyProvider } from '../../pipeline/providers/llm/options.js';

/** The request settings an item records (tokens for the counts). */
export interface GenerationRequest {
  model: string;
  messages: ChatMessage[];
  think?: boolean;
  numCtx?: number;
  maxTokens?: number;
  temperature?: number;
  seed?: number;
  topP?: number;
  /** paper: the window may slide mid-answer (Ollama `shift`), each such reply flagged. */
  contextShift?: boolean;
  /** paper (evaluation): an over-long prompt is cut as Ollama cut it, and flagged. */
  truncatePrompt?: boolean;
}

/** The provider request for `g`: the vendor settings in every runtime's namespace. Pure. */
export function chatRequestOf(g: GenerationRequest): ChatRequest {
  const { think, numCtx, contextShift, truncatePrompt, ...common } = g;
  return {
    ...common,
    providerOptions: everyProvider({ think, numCtx, contextShift, truncatePrompt }),
  };
}
