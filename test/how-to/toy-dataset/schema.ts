// docs/how-to/add-a-dataset.md, done once (1/3): the definition of a small third dataset, "3GPP
// words": one row per 3GPP term, its definition and word count. Schema and card only.
import { z } from 'zod';
import type { DatasetDefinition, FieldSpec } from '../../../datasets/definition.js';

/** Zod schema of one released row; the row type below is inferred from it, never written again. */
export const wordsRowSchema = z.strictObject({
  term_id: z.string().regex(/^[a-z0-9-]+$/, 'term_id must be lowercase words joined by -'),
  series: z.string().regex(/^TS \d\d$/, 'series must look like "TS 23"'),
  definition: z.string().min(1, 'definition is empty'),
  words: z.number().int().min(1),
  sources: z.array(z.string()),
  license: z.string(),
});
export type WordsRow = z.output<typeof wordsRowSchema>;

const fields: FieldSpec[] = [
  { name: 'term_id', parquet: 'STRING', description: 'Term, lowercase (`amf`, `pdu-session`).' },
  { name: 'series', parquet: 'STRING', description: '3GPP specification series (`TS 23`).' },
  { name: 'definition', parquet: 'STRING', description: 'Definition of the term.' },
  { name: 'words', parquet: 'INT32', description: 'Words in the definition.' },
  { name: 'sources', parquet: 'LIST_STRING', description: 'Specifications that define it.' },
  { name: 'license', parquet: 'STRING', description: 'SPDX licence of the row.' },
];

/** The definition: one Hub config per specification series. */
export const wordsDataset: DatasetDefinition<WordsRow> = {
  id: '3gpp-words',
  aliases: ['words'],
  prettyName: '3GPP Words',
  rowSchema: wordsRowSchema,
  fields,
  key: (r) => r.term_id,
  config: (r) => r.series.replace(' ', '').toLowerCase(),
  license: (r) => r.license,
  aggregateConfigs: (configs) =>
    configs.length > 1 ? [{ name: 'all', members: [...configs] }] : [],
  split: 'test',
  taskCategories: ['text-classification'],
  tags: ['telecommunications', '3gpp'],
  summary: '3GPP Words is a toy dataset: 3GPP terms with their definitions and word counts.',
  limitations: ['A handful of hand-written definitions, for the how-to only.'],
  citation: 'None: a test dataset.',
};
