/**
 * No silent truncation (TeleResilienceBench construction issue, "No silent truncation"; the
 * published run lost about two thirds of its prompts to Ollama's silent context cut).
 *
 * Two checks, both documented here and used by every provider:
 * 1. Before sending: the prompt is counted locally with `cl100k_base` (a different tokenizer than
 *    the model's, hence the safety margin). When `required = ceil(estimate * (1 + ratio)) + tokens`
 *    reaches the context window, the request is refused with `prompt_too_long` (tier `content`):
 *    it is never sent and never scored.
 * 2. After: the server's prompt count (`prompt_eval_count`, `usage.prompt_tokens`) at
 *    `numCtx - slackTokens` or above means the server hit the window and may have cut the prompt
 *    (older Ollama keeps exactly `num_ctx` tokens when it truncates, its runner logging
 *    `truncating input prompt limit=4096 prompt=7268 keep=4 new=4096`; v0.30 keeps `num_ctx - 1`,
 *    hence the default slack of 1): `promptTruncated`. Current Ollama cuts to about half the window
 *    instead, which no count can reveal; the Ollama provider therefore sends `truncate: false` and
 *    `shift: false`, so such servers refuse the prompt (HTTP 400 `exceed_context_size_error`, mapped
 *    to `prompt_too_long`) and stop the answer at the window (`length`). A count the server
 *    omits (some Ollama versions drop `prompt_eval_count`, others leave out tokens served from the
 *    prompt cache, so the count can be far below the real size) cannot prove anything: the flag then
 *    rests on check 1, and `promptTokensLocal` is recorded beside it. cl100k can undercount: Qwen
 *    tokenizers give every digit its own token where cl100k groups three, so a number-dense prompt
 *    (tables, TeleMath) may pass check 1 and still reach the window; check 2 catches that case.
 *    `done_reason` / `finish_reason` `length` (or, when the server gives no reason, an output count
 *    at the budget) is `budgetExhausted`.
 */
import { TelebenchError } from '../../errors.js';
import { countCl100k } from '../tokenizer/cl100k.js';
import type { ChatMessage } from './types.js';

/** Safety settings of the two checks. */
export interface TruncationPolicy {
  /** Relative margin on the local cl100k estimate (0.15 = 15 %). */
  marginRatio: number;
  /** Absolute margin in tokens (chat template tokens the estimate cannot see). */
  marginTokens: number;
  /** A server prompt count at `numCtx - slackTokens` or above flags `promptTruncated`. */
  slackTokens: number;
}

export const DEFAULT_TRUNCATION_POLICY: TruncationPolicy = {
  marginRatio: 0.15,
  marginTokens: 32,
  slackTokens: 1,
};

/**
 * Local prompt size: cl100k tokens of every message plus 5 per message (ChatML, used by Qwen:
 * `<|im_start|>`, the role, a newline, `<|im_end|>`, a newline) and 3 for the reply primer
 * (`<|im_start|>assistant` and a newline).
 * @returns tokens (integer >= 3)
 */
export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  let n = 3;
  for (const m of messages) n += 5 + countCl100k(m.content);
  return n;
}

/** Tokens the prompt is assumed to need after the safety margin (see the module comment). */
export function requiredContext(estimate: number, policy: TruncationPolicy): number {
  return Math.ceil(estimate * (1 + policy.marginRatio)) + policy.marginTokens;
}

/**
 * Refuses a prompt that cannot fit the context window (check 1).
 * @param numCtx context window in tokens; undefined skips the check (unknown window)
 * @returns the local estimate (tokens, without margin)
 * @throws TelebenchError `prompt_too_long` (tier `content`) with the estimate, the required size and
 *   the window in its context
 */
export function assertPromptFits(
  messages: readonly ChatMessage[],
  numCtx: number | undefined,
  policy: TruncationPolicy,
  where: { endpoint: string; model: string },
): number {
  const estimate = estimatePromptTokens(messages);
  if (numCtx === undefined) return estimate;
  const required = requiredContext(estimate, policy);
  if (required >= numCtx) {
    throw new TelebenchError(
      'prompt_too_long',
      `prompt for ${where.model} at ${where.endpoint} needs about ${required} tokens ` +
        `(${estimate} cl100k tokens + ${Math.round(policy.marginRatio * 100)} % + ${policy.marginTokens} margin) ` +
        `but the context window (num_ctx) is ${numCtx}: not sent, so it cannot be cut silently; raise num_ctx`,
      {
        tier: 'content',
        context: { ...where, estimate, required, numCtx },
      },
    );
  }
  return estimate;
}

/**
 * Check 2: did the server's prompt count reach the window?
 * @param promptTokens server count or null when omitted
 * @returns true when the count is at `numCtx - slackTokens` or above
 */
export function promptReachedLimit(
  promptTokens: number | null,
  numCtx: number | undefined,
  policy: TruncationPolicy,
): boolean {
  return (
    promptTokens !== null && numCtx !== undefined && promptTokens >= numCtx - policy.slackTokens
  );
}

/**
 * Did the output budget run out? `length` stop reason, or (when the server gives no reason) an
 * output count at `maxTokens`.
 */
export function budgetRanOut(
  doneReason: string,
  outputTokens: number | null,
  maxTokens: number | undefined,
): boolean {
  if (doneReason === 'length') return true;
  if (doneReason !== '') return false;
  return outputTokens !== null && maxTokens !== undefined && outputTokens >= maxTokens;
}

/**
 * Splits `<think>...</think>` reasoning out of a content string (DeepSeek-R1, Qwen3 and others put
 * it there when the server has no separate reasoning field). Handles a missing opening tag (the
 * chat template opened it inside the prompt) and a missing closing tag (the budget ran out while
 * thinking: everything after `<think>` is reasoning).
 * @returns `{thinking, content}`; `thinking` '' when there is no tag
 */
export function splitThinkTags(text: string): { thinking: string; content: string } {
  const open = text.indexOf('<think>');
  const close = text.indexOf('</think>');
  if (open !== -1 && text.slice(0, open).trim() === '') {
    if (close === -1) return { thinking: text.slice(open + 7).trim(), content: '' };
    if (close > open) {
      return {
        thinking: text.slice(open + 7, close).trim(),
        content: text.slice(close + 8).trim(),
      };
    }
  }
  if (close !== -1 && (open === -1 || open > close)) {
    return { thinking: text.slice(0, close).trim(), content: text.slice(close + 8).trim() };
  }
  return { thinking: '', content: text };
}

/** Tokens at the start of the prompt Ollama's runner never discards (`numKeep`, default 4). */
export const OLLAMA_NUM_KEEP = 4;

/**
 * Which prompt tokens a model sees when Ollama (as in the published TeleResilienceBench run:
 * `num_ctx` 2048, context shift on, no `truncate: false`) gets a prompt of `n` tokens:
 * - truncation: a prompt over the window keeps its first `numKeep` tokens and its last
 *   `window - numKeep` (the runner's `truncating input prompt limit=... keep=4 new=...`; the
 *   published rows report `prompt_tokens` 2048 exactly);
 * - context shift: a full window then discards `floor((window - numKeep) / 2)` tokens after the
 *   first `numKeep` before the first output token (Ollama's `shiftContext`), and again whenever
 *   prompt plus output fill the window.
 * @param n prompt tokens by the model's tokenizer
 * @param window context window (`num_ctx`)
 * @returns the kept ranges `[0, head)` and `[tailStart, n)` of the original prompt at the first
 *   output token, `cut` true when any token was dropped, and `discard` (the shift size)
 */
export function ollamaCut(
  n: number,
  window: number,
  numKeep = OLLAMA_NUM_KEEP,
): { head: number; tailStart: number; cut: boolean; discard: number } {
  const discard = Math.floor((window - numKeep) / 2);
  if (n < window) return { head: n, tailStart: n, cut: false, discard };
  // truncated to exactly `window` tokens, then shifted once to make room for the first output token
  const tailStart = n - (window - numKeep) + discard;
  return { head: numKeep, tailStart, cut: true, discard };
}
