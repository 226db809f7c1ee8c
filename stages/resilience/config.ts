/**
 * The `resilience` section of the configuration (TeleResilienceBench construction): where the
 * subsets and prompts live, the pinned Hub revision of GSMA/ot-lite, the weak generator and its
 * profile, the HalfTrace options and the numeric tolerance.
 *
 * Profiles (issue 6): `paper` reproduces the published generation settings (paper section IV and
 * `collect_metadata.json`: Ollama, `num_ctx` 2048, `num_predict` 4096, temperature 0, `think` on);
 * `default` keeps those output settings but picks a context window that fits every prompt: the
 * largest prompt size after the providers' safety margin (cl100k count + 15 % + 32 tokens, see
 * pipeline/providers/llm/truncation.ts) plus `num_predict`, rounded up to a multiple of 1024, so no
 * prompt is cut silently and the answer budget still fits.
 */
import { z } from 'zod';
import {
  hubRepoIdField,
  hubRevisionField,
  hubTimeoutField,
  hubUrlField,
} from '../../pipeline/providers/hub/config.js';
import { llmConfigSchema } from '../../pipeline/providers/llm/config.js';
import { ANSWER_RULES, DEFAULT_ANSWER_RULES } from './parse-answer.js';

const positiveInt = z.number().int().min(1);

export const generatorConfigSchema = z.strictObject({
  /** `paper` (published settings) or `default` (context sized to fit every prompt). */
  profile: z.enum(['default', 'paper']).default('default'),
  /**
   * Endpoints serving the generator, response cache and prompt-size check (the `llm` section of
   * pipeline/providers/llm/config.ts). The stage runs as many items at once as the endpoints'
   * concurrency adds up to.
   */
  llm: llmConfigSchema.prefault({}),
  /** The weak generator (paper section III: qwen3.5:2b). */
  model: z.string().min(1).default('qwen3.5:2b'),
  think: z.boolean().default(true),
  /**
   * Which text is the reasoning trace that truncation halves: `thinking` (the reasoning channel, the
   * paper's rule) or `reply` (the answer text; for a model without a reasoning channel, such as
   * SmolLM2, whose step-by-step reasoning is in its reply). Recorded in each instance's provenance.
   */
  trace: z.enum(['thinking', 'reply']).default('thinking'),
  temperature: z.number().min(0).max(2).default(0),
  /** Output budget in tokens, thinking included. */
  num_predict: positiveInt.default(4096),
  /** Context window: `auto` (profile decides) or a fixed size in tokens. */
  num_ctx: z.union([z.literal('auto'), positiveInt]).default('auto'),
  seed: z.number().int().optional(),
  /** Answer-parser rules in order (stages/resilience/parse-answer.ts); `last-digit` is opt-in. */
  answer_rules: z
    .array(z.enum(ANSWER_RULES))
    .min(1)
    .default(() => [...DEFAULT_ANSWER_RULES]),
});
export type GeneratorConfig = z.output<typeof generatorConfigSchema>;

/** The publishers' base URL (raw.githubusercontent.com layout), `resilience.data_url_base`'s default. */
export const DEFAULT_URL_BASE = 'https://raw.githubusercontent.com';

export const resilienceConfigSchema = z.strictObject({
  /** Subset registry, relative to the configuration file. */
  subsets_file: z.string().min(1).default('subsets.yaml'),
  /** Folder of prompt templates (with its `prompts.yaml`), relative to the configuration file. */
  prompts_dir: z.string().min(1).default('prompts/resilience'),
  /**
   * Root of local source files named in the registry, relative to the configuration file. Unset:
   * `$TELEBENCH_DATA_ROOT`, else `<state>/data`, filled once from `data_url_base`.
   */
  data_root: z.string().min(1).optional(),
  /**
   * Where missing local sources are downloaded from when no data root is configured:
   * `<data_url_base>/<owner>/<repo>/<ref>/<path>` (raw.githubusercontent.com layout).
   */
  data_url_base: z.string().min(1).default(DEFAULT_URL_BASE),
  /** Milliseconds one download from `data_url_base` may take (the whole file; a hang guard). */
  data_timeout_ms: positiveInt.default(300_000),
  /** Only these subsets (by `name`, or `source:name`); empty means every enabled entry. */
  only_subsets: z.array(z.string().min(1)).default([]),
  hub: z
    .strictObject({
      url: hubUrlField,
      dataset: hubRepoIdField.default('GSMA/ot-lite'),
      /** Pinned revision: a commit sha (reproducible) or a branch or tag name. */
      revision: hubRevisionField,
      /** File name of a subset's split; `{subset}` is replaced by the subset name. */
      file_pattern: z.string().min(1).default('test_{subset}.json'),
      /** Milliseconds one Hub request may take, a subset file's download included. */
      timeout_ms: hubTimeoutField,
    })
    .prefault({}),
  prompts: z
    .strictObject({
      mc: z.string().min(1).default('base-mc'),
      numeric: z.string().min(1).default('base-numeric'),
    })
    .prefault({}),
  generator: generatorConfigSchema.prefault({}),
  truncate: z
    .strictObject({
      /**
       * `reference`: the last `.`, `!` or `?` followed by whitespace or the end of the trace (the
       * authors' rule); `intl`: the last sentence end found by `Intl.Segmenter`.
       */
      boundary: z.enum(['reference', 'intl']).default('reference'),
      /** What to do when the half has no sentence end: keep the raw token cut, or skip the item. */
      no_sentence_end: z.enum(['token-cut', 'skip']).default('token-cut'),
      /**
       * Half traces shorter than this many cl100k tokens are short (a 6-token reply cut at its
       * midpoint gave `The answer is`): counted in the report and flagged in the instance.
       */
      min_half_tokens: z.number().int().min(0).default(8),
      /**
       * `flag` (the default: the paper keeps every half trace, section III) or `drop` (skipped
       * as `short_half_trace`).
       */
      short_half: z.enum(['flag', 'drop']).default('flag'),
    })
    .prefault({}),
  /** TeleMath match (paper section V-D): |a-b| <= max(rel * max(|a|,|b|), abs). */
  numeric_tolerance: z
    .strictObject({
      rel: z.number().min(0).default(1e-3),
      abs: z.number().min(0).default(1e-5),
    })
    .prefault({}),
});
export type ResilienceConfig = z.output<typeof resilienceConfigSchema>;

/** Configurations that carry a `resilience` section (the whole app config does). */
export interface HasResilience {
  resilience?: ResilienceConfig;
}

/** The `resilience` section with defaults applied when the file has none. */
export function resilienceSettings(cfg: HasResilience): ResilienceConfig {
  return cfg.resilience ?? resilienceConfigSchema.parse({});
}
