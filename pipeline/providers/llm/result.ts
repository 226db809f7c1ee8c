/**
 * The result assembly every provider shares: thinking split from `<think>` tags when the server
 * gave none separately, the budget and truncation flags, the warnings, latency, the raw body in
 * the blob store. One place, so the Ollama, OpenAI-compatible and embedded answers read alike.
 */
import type { BlobStore } from '../../store/blobs.js';
import type { ChatResult, ChatWarning } from './types.js';
import {
  budgetRanOut,
  promptReachedLimit,
  splitThinkTags,
  type TruncationPolicy,
} from './truncation.js';

/** An answer as a provider parsed it off the wire. Counts in tokens; null when not reported. */
export interface ParsedAnswer {
  thinking: string;
  content: string;
  promptTokens: number | null;
  outputTokens: number | null;
  doneReason: string;
}

/** The warnings of an answer from what the provider knows happened. */
export function chatWarnings(facts: {
  promptTruncated: boolean;
  contextShifted: boolean;
  /** The window in tokens, for the messages. */
  window: number | undefined;
}): ChatWarning[] {
  const w: ChatWarning[] = [];
  const at = facts.window !== undefined ? ` (${facts.window} tokens)` : '';
  if (facts.promptTruncated)
    w.push({ type: 'prompt-truncated', message: `the prompt reached the context window${at}` });
  if (facts.contextShifted)
    w.push({
      type: 'context-shifted',
      message: `prompt plus output went past the context window${at}: the window slid mid-answer`,
    });
  return w;
}

/**
 * The {@link ChatResult} of a server answer.
 * @param a.started `performance.now()` when the request was sent (latency in ms from it)
 * @param a.window the context window in tokens the prompt check used (undefined: unknown)
 * @param a.cutLocally the prompt was already known to be over the window (cut as allowed)
 * @param a.contextShift the request allowed the server to shift the window
 * @param a.rawBody stored in `a.blobs` when given, its digest is `rawDigest`
 */
export function assembleResult(a: {
  parsed: ParsedAnswer;
  started: number;
  endpoint: string;
  maxTokens: number | undefined;
  window: number | undefined;
  policy: TruncationPolicy;
  cutLocally?: boolean;
  contextShift?: boolean;
  promptTokensLocal: number;
  blobs?: BlobStore | undefined;
  rawBody: string;
}): ChatResult {
  const { parsed, window } = a;
  const latencyMs = Math.round(performance.now() - a.started);
  let { thinking, content } = parsed;
  if (thinking === '') ({ thinking, content } = splitThinkTags(content));
  const { promptTokens, outputTokens } = parsed;
  const shifted =
    a.contextShift === true &&
    window !== undefined &&
    promptTokens !== null &&
    outputTokens !== null &&
    promptTokens + outputTokens > window;
  return {
    thinking,
    content,
    promptTokens,
    outputTokens,
    doneReason: parsed.doneReason,
    warnings: chatWarnings({
      promptTruncated: a.cutLocally === true || promptReachedLimit(promptTokens, window, a.policy),
      contextShifted: shifted,
      window,
    }),
    budgetExhausted: budgetRanOut(parsed.doneReason, outputTokens, a.maxTokens),
    latencyMs,
    endpoint: a.endpoint,
    cached: false,
    promptTokensLocal: a.promptTokensLocal,
    ...(a.blobs ? { rawDigest: a.blobs.put(a.rawBody) } : {}),
  };
}
