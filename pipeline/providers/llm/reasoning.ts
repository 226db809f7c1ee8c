/**
 * The one place that reads the reasoning text of an OpenAI-compatible chat reply (a whole
 * `message` or one streamed `delta`). Servers name the field differently, and some send two:
 *
 * | server family | field(s) |
 * | --- | --- |
 * | Ollama `/v1` | `reasoning` |
 * | vLLM >= 0.10 | `reasoning` (and, while `reasoning_content` is deprecated, the same text there too) |
 * | vLLM < 0.10, SGLang, DeepSeek, llama.cpp `--reasoning-format deepseek` | `reasoning_content` |
 * | LM Studio | `reasoning_content` (older builds) or `reasoning` |
 * | llama.cpp `--reasoning-format none` | `<think>...</think>` inside `content` (see truncation.ts) |
 *
 * Content deltas often carry the other field as `null` or `""`. Rule: take the field that has text;
 * when both have text and it is the same, take it once; when both have different text, join them
 * (`reasoning_content` first), so nothing a server sent is dropped.
 */

/** The reasoning fields a message or delta may carry (null/absent/'' all mean "nothing here"). */
export interface ReasoningFields {
  reasoning?: string | null;
  reasoning_content?: string | null;
}

/**
 * Reasoning text of one message or delta by the rule above.
 * @returns the text ('' when neither field has any)
 */
export function reasoningText(m: ReasoningFields | null | undefined): string {
  const a = m?.reasoning_content ?? '';
  const b = m?.reasoning ?? '';
  if (a === '') return b;
  if (b === '' || b === a) return a;
  return a + b;
}
