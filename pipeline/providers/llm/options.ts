/**
 * Provider options for a request that may reach any runtime (a pool, a fallback): the same
 * reasoning switch, context window and cut/shift permissions in each vendor's namespace, as each
 * vendor understands them. A stage that means one runtime only sets that namespace itself.
 */
import type { ProviderOptions } from './types.js';

/** Settings every runtime has a word for. Tokens; see {@link ProviderOptions} for each meaning. */
export interface PortableOptions {
  think?: boolean;
  numCtx?: number;
  /** Ollama and embedded only (an OpenAI-compatible server cannot shift). */
  contextShift?: boolean;
  /** Ollama and embedded only (an OpenAI-compatible server cannot cut: it still refuses). */
  truncatePrompt?: boolean;
}

/**
 * `o` in the `ollama`, `embedded` and `openai` namespaces (the last with `think` and `numCtx`
 * only). Fields left undefined are left out, so the request (the cache key) names only what is set.
 */
export function everyProvider(o: PortableOptions): ProviderOptions {
  const set = <T extends object>(x: T): T =>
    Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as T;
  const local = set({
    think: o.think,
    numCtx: o.numCtx,
    contextShift: o.contextShift,
    truncatePrompt: o.truncatePrompt,
  });
  return {
    ollama: local,
    embedded: { ...local },
    openai: set({ think: o.think, numCtx: o.numCtx }),
  };
}
