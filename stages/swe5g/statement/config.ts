/**
 * `swe5g.problem_statements`: settings of the model-written problem statements (`swe5g.statement`,
 * issue 31) for fixes without a linked issue. Off by default: a released instance's statement is
 * then always a linked issue.
 */
import { z } from 'zod';
import { llmConfigSchema } from '../../../pipeline/providers/llm/config.js';
import { DEFAULT_NGRAM } from './leak.js';

export const modelWrittenSchema = z
  .strictObject({
    /** Ask a model to write a statement for each validated instance without a linked issue. */
    enabled: z.boolean().default(false),
    /** The model (OpenAI-compatible, Ollama or the embedded runtime) and its endpoints. */
    llm: llmConfigSchema
      .extend({
        /** Model name as the server knows it (recorded in the row's `problem_statement_model`). */
        model: z.string().min(1),
        /** Output budget per answer (tokens). */
        max_tokens: z.number().int().min(32).default(400),
        /** Context window asked of the server (tokens). */
        num_ctx: z.number().int().min(512).optional(),
      })
      .optional(),
    /** Attempts (K): a statement the leak check refuses is asked again, at most K times in all. */
    max_attempts: z.number().int().min(1).max(10).default(3),
    /** The leak check's n-gram length in tokens (statement/leak.ts). */
    leak_ngram: z.number().int().min(3).max(64).default(DEFAULT_NGRAM),
    /** Characters of buggy code and of failing test output put into the prompt. */
    code_chars: z.number().int().min(200).default(3000),
    output_chars: z.number().int().min(100).default(1500),
  })
  .refine((s) => !s.enabled || s.llm !== undefined, {
    message: 'model_written.enabled needs model_written.llm (the model and its endpoints)',
    path: ['llm'],
  });

export const problemStatementsSchema = z.strictObject({
  model_written: modelWrittenSchema.prefault({}),
});
export type ModelWrittenSettings = z.output<typeof modelWrittenSchema>;
export type ProblemStatementsSettings = z.output<typeof problemStatementsSchema>;
export const problemStatementsDefaults: ProblemStatementsSettings = problemStatementsSchema.parse(
  {},
);
