/**
 * The published TeleResilienceBench instance schema plus the provenance this project adds.
 *
 * Published fields (Hugging Face `prnshv/TeleResilienceBench`; ../shared/data/teleresiliencebench/
 * AuxiliaryBenchmark.json): `sample_id, sub_benchmark, question, choices, correct_answer,
 * incorrect_answer, half_reasoning_trace` (TeleMath rows have no `choices`). Everything else is
 * provenance: which generator with which options made the trace, how the answer was parsed, the
 * token counts, the difficulty and the prompt version. The release stage reads the JSON Lines
 * files the `resilience.instances` stage writes and validates each line with
 * {@link resilienceInstanceSchema}.
 */
import { z } from 'zod';

export const generatorProvenanceSchema = z.strictObject({
  model: z.string(),
  model_digest: z.string().nullable(),
  server_version: z.string().nullable(),
  provider: z.string(),
  /** `paper` (published settings) or `default` (context sized to fit every prompt). */
  profile: z.enum(['default', 'paper']),
  /** Present when the halved trace is the reply text, not a reasoning channel (`generator.trace: reply`). */
  trace: z.literal('reply').optional(),
  options: z.strictObject({
    think: z.boolean().nullable(),
    num_ctx: z.number().int().nullable(),
    num_predict: z.number().int().nullable(),
    temperature: z.number().nullable(),
    seed: z.number().int().nullable(),
  }),
});

export const resilienceInstanceSchema = z.strictObject({
  sample_id: z.string().regex(/^[a-z0-9][a-z0-9_.-]*:[a-z0-9][a-z0-9_.-]*:\d+$/),
  sub_benchmark: z.string(),
  question: z.string().min(1),
  /** Option texts (discrete-choice rows only). */
  choices: z.array(z.string()).optional(),
  correct_answer: z.string(),
  incorrect_answer: z.string(),
  half_reasoning_trace: z.string().min(1),
  // ---- provenance
  source: z.string(),
  subset: z.string(),
  row: z.number().int().nonnegative(),
  role: z.enum(['main', 'auxiliary', 'extra']),
  kind: z.enum(['mc', 'numeric']),
  difficulty: z.string().nullable(),
  /** 0-based gold and generator options (texts can repeat, so indices are kept too). */
  correct_index: z.number().int().nullable(),
  incorrect_index: z.number().int().nullable(),
  correct_value: z.number().nullable(),
  incorrect_value: z.number().nullable(),
  generator: generatorProvenanceSchema,
  prompt_template: z.string(),
  prompt_version: z.string(),
  parse_rule: z.string(),
  tokens: z.strictObject({
    prompt_server: z.number().int().nullable(),
    prompt_local: z.number().int().nullable(),
    output: z.number().int().nullable(),
    reasoning_full: z.number().int(),
    reasoning_half: z.number().int(),
    midpoint: z.number().int(),
  }),
  half_trace: z.strictObject({
    tokenizer: z.literal('cl100k_base'),
    boundary: z.enum(['reference', 'intl']),
    /** `sentence`: cut at a sentence end; `token-cut`: no sentence end, raw token midpoint kept. */
    cut: z.enum(['sentence', 'token-cut']),
    /** Shorter than `resilience.truncate.min_half_tokens` (kept under `short_half: flag`). */
    short: z.boolean().default(false),
  }),
});
export type ResilienceInstance = z.output<typeof resilienceInstanceSchema>;

/** The published fields only, in the published order (for a byte-compatible export). */
export function publishedView(i: ResilienceInstance): Record<string, unknown> {
  return {
    sample_id: i.sample_id,
    sub_benchmark: i.sub_benchmark,
    question: i.question,
    ...(i.choices ? { choices: i.choices } : {}),
    correct_answer: i.correct_answer,
    incorrect_answer: i.incorrect_answer,
    half_reasoning_trace: i.half_reasoning_trace,
  };
}
