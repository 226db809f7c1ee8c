/**
 * `swe5g.evaluation`: the coding-agent evaluation of SWE-Bench 5G (paper, "Agent paradigms",
 * "Specification as skill"): which models, single- and/or multi-turn, the feedback level and
 * budget, the source-context rule, the edit-application thresholds and the skills A/B run.
 */
import { z } from 'zod';
import { parseAfter } from '../../../datasets/swe-bench-5g/dates.js';
import { llmConfigSchema } from '../../../pipeline/providers/llm/config.js';

/** One model under evaluation. */
export const evalModelSchema = z.strictObject({
  /** `model_name_or_path` of its predictions (SWE-bench's field); also its label in reports. */
  name: z.string().regex(/^[\w.:@/+-]+$/, 'letters, digits and . : @ / + - only'),
  /** Model name as the server knows it (`qwen3.5:2b`). Defaults to `name`. */
  model: z.string().optional(),
  /** Endpoints, response cache and prompt-size check (pipeline/providers/llm/config.ts). */
  llm: llmConfigSchema.prefault({}),
  temperature: z.number().min(0).max(2).default(0),
  /** Output budget per turn in tokens. */
  max_tokens: z.number().int().min(16).default(2048),
  /** Context window in tokens (Ollama num_ctx). */
  num_ctx: z.number().int().min(512).default(16384),
  seed: z.number().int().optional(),
  /** Agent paradigms for this model (default: `evaluation.modes`). */
  modes: z
    .array(z.enum(['single', 'multi']))
    .min(1)
    .optional(),
});
export type EvalModel = z.output<typeof evalModelSchema>;

export const evaluationSchema = z.strictObject({
  /** Models to evaluate; none: the solve stage has no items (external predictions still grade). */
  models: z.array(evalModelSchema).default([]),
  /** Agent paradigms (paper): `single` = one prompt, one answer; `multi` = up to `turns` turns. */
  modes: z
    .array(z.enum(['single', 'multi']))
    .min(1)
    .default(['single', 'multi']),
  /** K of the multi-turn loop (paper: K = 5). */
  turns: z.number().int().min(1).max(20).default(5),
  /**
   * What a failed turn feeds back: `compile` (edit outcomes and compiler errors), `names` (plus
   * the names of failing tests), `full` (plus their output, as the paper).
   */
  feedback: z.enum(['compile', 'names', 'full']).default('full'),
  /** The feedback message is trimmed to this many cl100k tokens (head and tail kept). */
  feedback_tokens: z.number().int().min(64).default(1500),
  /** Source-context rule (stages/swe5g/evaluate/context.ts): budget and file cap. */
  context: z
    .strictObject({
      /** cl100k tokens of source code in the first prompt. */
      max_tokens: z.number().int().min(200).default(6000),
      /** Identifiers shorter than this are not searched for. */
      min_identifier_length: z.number().int().min(3).default(6),
    })
    .prefault({}),
  /** Edit application (stages/swe5g/evaluate/edits.ts): the fuzzy rule's threshold and margin. */
  edits: z
    .strictObject({
      fuzzy_threshold: z.number().min(0.5).max(1).default(0.85),
      fuzzy_margin: z.number().min(0).max(0.5).default(0.03),
    })
    .prefault({}),
  /** Specification as skill (paper, Table VI). */
  skills: z
    .strictObject({
      /** Build per-instance skills and run condition B on the A/B subset. */
      enabled: z.boolean().default(true),
      /** Folder of the area documents; default: the checkout's `skills/`. Relative to the config file. */
      dir: z.string().optional(),
      /** Accepted skill size in cl100k tokens (paper: about 350). */
      min_tokens: z.number().int().min(50).default(300),
      max_tokens: z.number().int().min(50).default(400),
      /**
       * A/B subset: the first `ab_size` complete instances with an accepted skill, by instance_id
       * (paper: 50 instances mixing generic and specification-dependent bugs).
       */
      ab_size: z.number().int().min(1).default(50),
      /** The mode the A/B conditions run in (paper: multi-turn). */
      ab_mode: z.enum(['single', 'multi']).default('multi'),
      /**
       * Who writes each skill: `template` (assembled from the area document and the issue by
       * rule) or `model` (`skills.model` writes it from the same area document and issue; paper:
       * skills "optionally written by a model"). Either way the same checks apply.
       */
      writer: z.enum(['template', 'model']).default('template'),
      /** The skill-writing model (required with `writer: model`). */
      model: evalModelSchema.optional(),
      /**
       * `writer: model` and the model's skill fails a check: `template` = use the template skill
       * instead (the rejected text and reasons are recorded and reported), `none` = no skill for
       * that instance (skipped `skill_rejected`).
       */
      fallback: z.enum(['template', 'none']).default('template'),
    })
    .prefault({})
    .superRefine((s, ctx) => {
      if (s.writer === 'model' && !s.model)
        ctx.addIssue({
          code: 'custom',
          path: ['model'],
          message: 'skills.writer is `model`: set skills.model (name and llm endpoints)',
        });
    }),
  /**
   * SWE-bench-format predictions (JSON Lines: instance_id, model_name_or_path, model_patch) to
   * grade beside the models' own (`telebench evaluate --predictions FILE` sets it). Relative to
   * the config file.
   */
  predictions: z.string().optional(),
  /**
   * A model cutoff: solve and grade only instances dated after it (`YYYY-MM-DD`: from the next
   * day on; or a time with its zone), so a model is scored on what it cannot have seen. The date
   * of an instance is the earliest of its issue's and its PR's creation
   * (datasets/swe-bench-5g/dates.ts). `telebench evaluate --after` and `$TELEBENCH_EVAL_AFTER`
   * override it.
   */
  after: z
    .string()
    .superRefine((v, c) => {
      try {
        parseAfter(v, 'swe5g.evaluation.after');
      } catch (err) {
        c.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .optional(),
});
export type EvaluationSettings = z.output<typeof evaluationSchema>;
export const evaluationDefaults: EvaluationSettings = evaluationSchema.parse({});
