/**
 * The stages of the `swe5g` pipeline, in order: one list for the pipeline's definition
 * (stages/index.ts) and for what reads it by position (a refresh retries the failed items of
 * every stage after `swe5g.filter`, stages/swe5g/refresh.ts), so a stage added here is both run
 * and retried.
 */
export const SWE5G_STAGES = [
  'swe5g.mine',
  'swe5g.link',
  'swe5g.filter',
  'swe5g.resolve',
  'swe5g.testgen',
  'swe5g.build',
  'swe5g.validate',
  'swe5g.statement',
  'swe5g.audit',
] as const;
