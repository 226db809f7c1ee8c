/**
 * `swe5g.problem_statements`: settings of the model-written problem statements (`swe5g.statement`,
 * issue 31) for fixes without a linked issue. Off by default: a released instance's statement is
 * then always a linked issue.
 */
import { z } from 'zod';
import { llmConfigSchema } from '../../../pipeline/providers/llm/config.js';
import { DEFAULT_NGRAM } from './leak.js';
import { QUALITY_DEFAULTS as Q } from './quality.js';

const share = z.number().min(0).max(1);

/**
 * The quality check (statement/quality.ts), run after the leak check: its rules refuse a statement
 * that would not let a solver find the bug; shares are of the statement's characters, 0-1.
 */
export const qualitySchema = z
  .strictObject({
    /** Run it (false: the leak check alone, and only an empty answer is refused). */
    enabled: z.boolean().default(true),
    /** Words (Unicode word segmentation) at least and at most. */
    min_words: z.number().int().min(1).default(Q.min_words),
    max_words: z.number().int().min(10).default(Q.max_words),
    /** Share in repeated sentences or repeated word 5-grams at most (Gopher's repetition filter). */
    max_repeated: share.default(Q.max_repeated),
    /** Share in sentences of only stop words and generic bug-report words at most. */
    max_boilerplate: share.default(Q.max_boilerplate),
    /** Share in hedging sentences ("might", "something", "in some cases") at most. */
    max_hedged: share.default(Q.max_hedged),
    /**
     * An LLM judge asked after the rules accept (statement/judge.ts; off when absent): it sees the
     * buggy code, the failing output and the statement, never the gold patch.
     */
    judge: llmConfigSchema
      .extend({
        /** Model name as the server knows it. */
        model: z.string().min(1),
        /** Output budget of its answer (tokens). */
        max_tokens: z.number().int().min(16).default(200),
      })
      .optional(),
  })
  .refine((q) => q.min_words < q.max_words, {
    message: 'quality.min_words must be below quality.max_words',
    path: ['min_words'],
  });

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
    /**
     * Attempts (K): a statement the leak check or the quality check refuses is asked again, at
     * most K times in all.
     */
    max_attempts: z.number().int().min(1).max(10).default(3),
    /** The leak check's n-gram length in tokens (statement/leak.ts). */
    leak_ngram: z.number().int().min(3).max(64).default(DEFAULT_NGRAM),
    /** The quality check's rules and thresholds. */
    quality: qualitySchema.prefault({}),
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
