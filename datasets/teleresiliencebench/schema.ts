/**
 * TeleResilienceBench release rows: the published schema (`sample_id, sub_benchmark, question,
 * choices, correct_answer, incorrect_answer, half_reasoning_trace`; TeleResilienceBench paper §3 and
 * its Hub files — the auxiliary TeleMath set has no `choices`) plus provenance: option indices,
 * difficulty, source, licence, profile and a `provenance` object (generator and its options, parse
 * rule, token counts, prompt version) as the construction stage recorded it.
 */
import { z } from 'zod';
import type { DatasetDefinition, FieldSpec } from '../definition.js';

/**
 * The seven discrete-choice subsets of the main set (paper §3), fixed: the one definition, which
 * the construction stages (stages/resilience/subsets.ts) import.
 */
export const MAIN_SUBSETS = [
  'teleqna',
  'teletables',
  'telelogs',
  '3gpp_tsg',
  'oranbench',
  'srsranbench',
  'sixg_bench',
] as const;
/** The auxiliary numeric subset (TeleMath; paper §3 and section V-D). */
export const AUXILIARY_SUBSET = 'telemath';

/** Zod schema of one released TeleResilienceBench row. */
export const resilienceRowSchema = z.strictObject({
  sample_id: z.string().regex(/^[\w.-]+:[\w.-]+:\d+$/, 'sample_id must be <source>:<subset>:<row>'),
  sub_benchmark: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]*$/, 'sub_benchmark must be a lowercase subset name'),
  question: z.string().min(1),
  choices: z.array(z.string()).nullable(),
  correct_answer: z.string().min(1),
  incorrect_answer: z.string().min(1),
  half_reasoning_trace: z.string().min(1, 'half_reasoning_trace is empty'),
  role: z.enum(['main', 'auxiliary', 'extra']),
  correct_index: z.number().int().min(0).nullable(),
  incorrect_index: z.number().int().min(0).nullable(),
  difficulty: z.string().nullable(),
  source: z.string().min(1),
  license: z.string().min(1),
  profile: z.string().min(1),
  provenance: z.record(z.string(), z.unknown()),
});
export type ResilienceRow = z.output<typeof resilienceRowSchema>;

const fields: FieldSpec[] = [
  {
    name: 'sample_id',
    parquet: 'STRING',
    description:
      '`<source>:<subset>:<row>` with the 0-based row of the source split (e.g. `ot-lite:teleqna:4`).',
  },
  {
    name: 'sub_benchmark',
    parquet: 'STRING',
    description: 'Subset (lowercase config name): the Hub config of the row.',
  },
  { name: 'question', parquet: 'STRING', description: 'The question as the source published it.' },
  {
    name: 'choices',
    parquet: 'LIST_STRING',
    description: 'Answer options; null for the numeric TeleMath subset.',
  },
  {
    name: 'correct_answer',
    parquet: 'STRING',
    description: 'Gold answer: the option text, or the number for TeleMath.',
  },
  {
    name: 'incorrect_answer',
    parquet: 'STRING',
    description: 'The wrong answer the generator reached (option text or number).',
  },
  {
    name: 'half_reasoning_trace',
    parquet: 'STRING',
    description:
      "First half (cl100k tokens) of the generator's reasoning towards the wrong answer, cut back to a sentence end (paper §3, HalfTrace).",
  },
  {
    name: 'role',
    parquet: 'STRING',
    description:
      '`main` (the seven discrete-choice subsets), `auxiliary` (TeleMath) or `extra` (further sources such as the full ORAN-Bench-13K, never mixed into the main configs).',
  },
  {
    name: 'correct_index',
    parquet: 'INT32',
    description: '0-based index of the gold option (option texts can repeat); null for TeleMath.',
  },
  {
    name: 'incorrect_index',
    parquet: 'INT32',
    description: '0-based index of the wrong option; null for TeleMath.',
  },
  {
    name: 'difficulty',
    parquet: 'STRING',
    description: 'Difficulty as the source gives it, else null.',
  },
  {
    name: 'source',
    parquet: 'STRING',
    description: 'Where the question came from (`ot-lite`, `oran-bench-13k`, `srsranbench`, ...).',
  },
  { name: 'license', parquet: 'STRING', description: 'SPDX licence of the source subset.' },
  {
    name: 'profile',
    parquet: 'STRING',
    description:
      'Generation profile that made the row (`paper` reproduces the published settings).',
  },
  {
    name: 'provenance',
    parquet: 'JSON_TEXT',
    description:
      'Generator model and options, answer parse rule, full and half token counts, prompt version, truncation policy (a JSON object; JSON text in Parquet).',
  },
];

/** The TeleResilienceBench dataset definition (one config per subset, split `test`). */
export const resilienceDataset: DatasetDefinition<ResilienceRow> = {
  id: 'teleresiliencebench',
  aliases: ['resilience', 'trb'],
  prettyName: 'TeleResilienceBench',
  rowSchema: resilienceRowSchema,
  fields,
  key: (r) => r.sample_id,
  config: (r) =>
    r.role === 'extra' &&
    ([...MAIN_SUBSETS, AUXILIARY_SUBSET] as string[]).includes(r.sub_benchmark)
      ? `${r.sub_benchmark}-${r.source}`.replace(/[^\w.-]/g, '_')
      : r.sub_benchmark,
  license: (r) => r.license,
  aggregateConfigs: (configs) => {
    const main = configs.filter((c) => (MAIN_SUBSETS as readonly string[]).includes(c));
    return main.length > 0 ? [{ name: 'main', members: main }] : [];
  },
  split: 'test',
  taskCategories: ['question-answering', 'multiple-choice'],
  tags: ['telecommunications', 'reasoning', 'robustness', 'chain-of-thought', '3gpp', 'o-ran'],
  summary: [
    'TeleResilienceBench measures whether a language model recovers from a flawed line of reasoning',
    'on telecom questions: each instance holds a question, the gold answer, a wrong answer a small',
    'generator model reached, and the first half of that wrong reasoning trace. A target model',
    'continues the half trace; the correction flip rate (CFR) counts how often it still reaches the',
    'gold answer. The main set has seven discrete-choice subsets; TeleMath (numeric) is auxiliary.',
  ].join(' '),
  limitations: [
    'Half traces come from one generator model; other generators make other mistakes.',
    'The base prompts are reconstructed from the paper and the published half traces (the paper prints only the continuation template).',
    'Instances made without context truncation differ from the published ones: the published run lost about two thirds of its continuation prompts to a 2048-token context.',
    'Answers are parsed from free text: rows record which parse rule produced the wrong answer.',
  ],
  citation:
    'TeleResilienceBench: recovering from flawed reasoning on telecom questions (see the paper in the project sources).',
};
