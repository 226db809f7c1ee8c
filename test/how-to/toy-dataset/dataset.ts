// docs/how-to/add-a-dataset.md, done once (3/3): 3GPP Words as a dataset entry. `rowOf` is the one
// mapping from the source stage's output to a row; the entry names its release stage, pipeline
// and source stage. No verifier and no images: `verify` and `--push` refuse it with the reason.
import { defineDatasetEntry } from '../../../stages/release/entry.js';
import { wordsDataset, type WordsRow } from './schema.js';
import { countStage, termsStage, wordsPipeline, type CountedTerm } from './stages.js';

/** Counted term -> released row. */
export function rowOf(t: CountedTerm): WordsRow {
  return {
    term_id: t.term,
    series: t.series,
    definition: t.definition,
    words: t.words,
    sources: t.sources,
    license: 'CC-BY-4.0',
  };
}

export const wordsEntry = defineDatasetEntry<WordsRow>({
  definition: wordsDataset,
  releaseStage: 'release.words',
  pipeline: wordsPipeline.name,
  source: countStage.name,
  collect: (outputs) => ({
    rows: outputs.map((o) => rowOf(o.output as CountedTerm)),
    leftOut: {},
    profile: null,
    settings: {},
    models: { generator: [], targets: [] },
  }),
  licenseEvidence: () => 'written for the how-to test',
  // what it brings: registered with the entry, so the entry is its one registration
  stages: [termsStage, countStage],
  pipelines: [wordsPipeline],
});
