/**
 * The `resilience_eval` section: which instances to evaluate, which target models continue them,
 * with which profile, and the continuation templates.
 *
 * Profiles: `paper` reproduces the published evaluation (Ollama `num_ctx` 2048, output budget
 * 512 tokens: the largest `output_tokens` of the published experiment rows, temperature 0, think
 * on, and the server's context shift allowed as it was then; every affected row is flagged
 * `context_shifted` / `prompt_truncated` and still scored); `default` fits every prompt (context
 * sized like the construction's default profile) and never cuts: a truncated prompt or an
 * exhausted budget is an `excluded` outcome, counted.
 */
import { z } from 'zod';
import {
  hubRepoIdField,
  hubRevisionField,
  hubTimeoutField,
  hubUrlField,
} from '../../pipeline/providers/hub/config.js';
import { llmConfigSchema } from '../../pipeline/providers/llm/config.js';

const positiveInt = z.number().int().min(1);

export const targetConfigSchema = z.strictObject({
  /** Label in tables (default: the model name). */
  name: z.string().min(1).optional(),
  model: z.string().min(1),
  profile: z.enum(['default', 'paper']).default('default'),
  llm: llmConfigSchema.prefault({}),
  think: z.boolean().default(true),
  temperature: z.number().min(0).max(2).default(0),
  /** Output budget in tokens, thinking included (`paper`: 512). */
  num_predict: positiveInt.default(4096),
  /** Context window: `auto` (profile decides) or a fixed size. */
  num_ctx: z.union([z.literal('auto'), positiveInt]).default('auto'),
  seed: z.number().int().optional(),
});
export type TargetConfig = z.output<typeof targetConfigSchema>;

export const resilienceEvalConfigSchema = z.strictObject({
  input: z
    .strictObject({
      /**
       * `project`: the instances the construction stages built (this state folder);
       * `file`: JSON Lines / JSON / CSV files of instances in our schema (a released snapshot) or
       * the published schema (`sample_id, sub_benchmark, question, choices, correct_answer,
       * incorrect_answer, half_reasoning_trace`); `hub`: the published files from a Hugging Face
       * dataset repository (`hub` below).
       */
      source: z.enum(['project', 'file', 'hub']).default('project'),
      /** Files for `source: file`, relative to the configuration file. */
      files: z.array(z.string().min(1)).default([]),
      /**
       * `source: hub`: the published TeleResilienceBench files of a Hugging Face dataset
       * repository, downloaded once into `<state>/downloads/` at a pinned revision through
       * `@huggingface/hub` (pipeline/providers/hub/download.ts). The dataset card of
       * `prnshv/TeleResilienceBench` lists `TeleResilienceBench.csv` (main, multiple choice) and
       * `Auxiliary.csv` (TeleMath).
       */
      hub: z
        .strictObject({
          url: hubUrlField,
          dataset: hubRepoIdField.default('prnshv/TeleResilienceBench'),
          revision: hubRevisionField,
          /** Files of the repository to read (CSV, JSON or JSON Lines; either schema). */
          files: z
            .array(z.string().min(1))
            .min(1)
            .default(['TeleResilienceBench.csv', 'Auxiliary.csv']),
          /** Milliseconds one Hub request may take, a file's download included. */
          timeout_ms: hubTimeoutField,
        })
        .prefault({}),
    })
    .prefault({}),
  prompts: z
    .strictObject({
      mc: z.string().min(1).default('continuation-mc'),
      numeric: z.string().min(1).default('continuation-numeric'),
    })
    .prefault({}),
  /** Target models; each continues every instance. */
  targets: z.array(targetConfigSchema).default([]),
});
export type ResilienceEvalConfig = z.output<typeof resilienceEvalConfigSchema>;

export interface HasResilienceEval {
  resilience_eval?: ResilienceEvalConfig;
  resilience?: { prompts_dir: string };
}

/** The section with defaults applied when the file has none. */
export function evalSettings(cfg: HasResilienceEval): ResilienceEvalConfig {
  return cfg.resilience_eval ?? resilienceEvalConfigSchema.parse({});
}

/** The published continuation settings (paper profile). */
export const PAPER_EVAL_PROFILE = {
  numCtx: 2048,
  numPredict: 512,
  temperature: 0,
  think: true,
  contextShift: true,
} as const;

/** A target's label. */
export const targetName = (t: TargetConfig): string => t.name ?? t.model;
