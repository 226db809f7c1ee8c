// docs/how-to/add-a-dataset.md, done once (2/3): the stages that build the rows of 3GPP Words.
// `words.terms` yields one item per configured term; `words.count` counts its definition's words
// (an empty definition is a skip with its reason, never a row).
import { defineStage, type Pipeline } from '../../../pipeline/stage.js';
import { SkipItem } from '../../../pipeline/errors.js';

/** The configuration section the stages read. */
export interface WordsConfig {
  words: { terms: Record<string, { series: string; definition: string; sources: string[] }> };
}

type Term = { series: string; definition: string; sources: string[] };

export const termsStage = defineStage<Term, Term, WordsConfig>({
  name: 'words.terms',
  version: 1,
  needs: [],
  description: 'one item per configured term',
  *plan(ctx) {
    for (const [key, t] of Object.entries(ctx.config.words.terms)) yield { key, input: t };
  },
  async run(item) {
    return item.input;
  },
});

/** Output of `words.count`: the source of the released rows. */
export interface CountedTerm {
  term: string;
  series: string;
  definition: string;
  words: number;
  sources: string[];
}

export const countStage = defineStage<Term, CountedTerm, WordsConfig>({
  name: 'words.count',
  version: 1,
  needs: ['words.terms'],
  description: 'counts the words of every definition',
  itemNeeds: (item) => ({ 'words.terms': [item.key] }),
  *plan(ctx) {
    for (const o of ctx.store.outputs(termsStage)) yield { key: o.key, input: o.output };
  },
  async run(item) {
    const words = item.input.definition.split(/\s+/).filter(Boolean).length;
    if (words === 0) throw new SkipItem('empty_definition', `${item.key} has no definition`);
    return { term: item.key, ...item.input, words };
  },
});

/** The branch that builds 3GPP Words (the entry names it for the funnel and stage versions). */
export const wordsPipeline: Pipeline = {
  name: 'words',
  description: '3GPP Words: terms, then their word counts.',
  stages: [termsStage.name, countStage.name],
};
