/**
 * The paper's figures (arXiv:2605.09929) as report blocks, for any scored runs (the evaluation
 * stages' targets or the files `telebench score` read): CFR per sub-benchmark and model
 * (Figure 3), macro CFR against mean output tokens (Figure 4) and against VRAM (Figure 5), CFR by
 * difficulty (Figures 6-7), TeleMath CR per model (the auxiliary bars). Rates are percent (0-100).
 * A figure with nothing to draw is a paragraph saying why, never an empty frame; axes are
 * labelled, percent axes run 0-100, count axes have integer ticks. A rate from fewer than
 * SMALL_SAMPLE scored rows is flagged in a note beside the figures.
 */
import type { ChartSpec } from '../../pipeline/report/charts.js';
import type { ReportBlock } from '../../pipeline/report/html.js';
import { DISCRETE_SUBSETS, SMALL_SAMPLE, subBenchmarkName, type ModeMetrics } from './metrics.js';

const VL = 'https://vega.github.io/schema/vega-lite/v6.json';

/** One model's scores in one mode, with its VRAM when known. */
export interface FigureModel {
  model: string;
  m: ModeMetrics;
  /** VRAM in GiB (or GB as the source gives it), null when unknown. */
  vram: number | null;
  /** How the VRAM was obtained (`nvidia-smi-peak`, `given`), null when unknown. */
  vram_method: string | null;
}

const PERCENT_AXIS = { scale: { domain: [0, 100] }, axis: { format: 'd', tickCount: 5 } } as const;
const COUNT_AXIS = { scale: { zero: true }, axis: { format: 'd', tickMinStep: 1 } } as const;
const base = { $schema: VL, width: 460, height: 260 } as const;

const figure = (id: string, caption: string, spec: object): ReportBlock => ({
  kind: 'figure',
  id,
  caption,
  spec: { ...base, ...spec } as ChartSpec,
});
const missing = (id: string, title: string, why: string): ReportBlock => ({
  kind: 'paragraph',
  text: `${title} (figure ${id}): not drawn: ${why}`,
});

/**
 * The figure blocks for one parse mode. Pure.
 * @param vramHint what to say when no model has a VRAM figure (how to give one)
 * @param idPrefix put before each figure id (`published:`), so a page can hold several modes
 */
export function paperFigures(
  models: readonly FigureModel[],
  mode: string,
  vramHint: string,
  idPrefix = '',
): ReportBlock[] {
  const perSubset = models.flatMap((e) =>
    DISCRETE_SUBSETS.flatMap((sub) => {
      const g = e.m.by_subset[sub];
      return g && g.cfr !== null
        ? [{ model: e.model, subset: subBenchmarkName(sub), cfr: g.cfr, n: g.scored }]
        : [];
    }),
  );
  const macro = models.filter((e) => e.m.macro.cfr !== null);
  const withTokens = macro
    .filter((e) => e.m.mean_output_tokens !== null)
    .map((e) => ({ model: e.model, cfr: e.m.macro.cfr, tokens: e.m.mean_output_tokens }));
  const withVram = macro
    .filter((e) => e.vram !== null)
    .map((e) => ({ model: e.model, cfr: e.m.macro.cfr, vram: e.vram, method: e.vram_method }));
  const byDiff = models.flatMap((e) =>
    Object.entries(e.m.by_difficulty).flatMap(([d, g]) =>
      g.cfr === null ? [] : [{ model: e.model, difficulty: d, cfr: g.cfr, n: g.scored }],
    ),
  );
  const telemath = models.flatMap((e) =>
    e.m.telemath && e.m.telemath.cfr !== null
      ? [{ model: e.model, cr: e.m.telemath.cfr, n: e.m.telemath.scored }]
      : [],
  );
  const colour = { field: 'model', type: 'nominal', title: 'model' };
  const out: ReportBlock[] = [];
  const t3 = `CFR per sub-benchmark and model (${mode}), the paper's Figure 3`;
  out.push(
    perSubset.length
      ? figure(`${idPrefix}cfr-by-subset`, `${t3}.`, {
          data: { values: perSubset },
          mark: 'bar',
          encoding: {
            x: { field: 'subset', type: 'nominal', title: 'sub-benchmark', sort: null },
            xOffset: { field: 'model' },
            y: { field: 'cfr', type: 'quantitative', title: 'CFR (%)', ...PERCENT_AXIS },
            color: colour,
          },
        })
      : missing(
          `${idPrefix}cfr-by-subset`,
          t3,
          'no model has a scored row in the seven discrete sub-benchmarks.',
        ),
  );
  const t4 = `Macro CFR against mean output tokens per model (${mode}), the paper's Figure 4`;
  out.push(
    withTokens.length
      ? figure(`${idPrefix}cfr-vs-tokens`, `${t4}.`, {
          data: { values: withTokens },
          mark: { type: 'point', filled: true, size: 90 },
          encoding: {
            x: {
              field: 'tokens',
              type: 'quantitative',
              title: 'mean output tokens',
              ...COUNT_AXIS,
            },
            y: { field: 'cfr', type: 'quantitative', title: 'macro CFR (%)', ...PERCENT_AXIS },
            color: colour,
          },
        })
      : missing(
          `${idPrefix}cfr-vs-tokens`,
          t4,
          macro.length
            ? 'no row carries an output token count.'
            : 'no model has a macro CFR (no scored discrete row).',
        ),
  );
  const t5 = `Macro CFR against VRAM per model (${mode}), the paper's Figure 5`;
  out.push(
    withVram.length
      ? figure(`${idPrefix}cfr-vs-vram`, `${t5}; the VRAM method is the point's shape.`, {
          data: { values: withVram },
          mark: { type: 'point', filled: true, size: 90 },
          encoding: {
            x: {
              field: 'vram',
              type: 'quantitative',
              title: 'VRAM (GiB)',
              axis: { format: '.1f' },
            },
            y: { field: 'cfr', type: 'quantitative', title: 'macro CFR (%)', ...PERCENT_AXIS },
            color: colour,
            shape: { field: 'method', type: 'nominal', title: 'VRAM method' },
          },
        })
      : missing(
          `${idPrefix}cfr-vs-vram`,
          t5,
          macro.length ? vramHint : 'no model has a macro CFR.',
        ),
  );
  const t6 = `CFR by source difficulty label (${mode}), the paper's Figures 6-7`;
  out.push(
    byDiff.length
      ? figure(`${idPrefix}cfr-by-difficulty`, `${t6}.`, {
          data: { values: byDiff },
          mark: 'bar',
          encoding: {
            x: { field: 'difficulty', type: 'nominal', title: 'difficulty' },
            xOffset: { field: 'model' },
            y: { field: 'cfr', type: 'quantitative', title: 'CFR (%)', ...PERCENT_AXIS },
            color: colour,
          },
        })
      : missing(
          `${idPrefix}cfr-by-difficulty`,
          t6,
          'no scored discrete row has a difficulty label (the published experiment files carry none; instances with `difficulty`, e.g. ORANBench and SixG_Bench rows, give them).',
        ),
  );
  const tm = `TeleMath correction rate per model (${mode}), the auxiliary set`;
  out.push(
    telemath.length
      ? figure(`${idPrefix}telemath-cr`, `${tm}.`, {
          data: { values: telemath },
          mark: 'bar',
          encoding: {
            x: { field: 'model', type: 'nominal', title: 'model' },
            y: { field: 'cr', type: 'quantitative', title: 'TeleMath CR (%)', ...PERCENT_AXIS },
            color: colour,
          },
        })
      : missing(`${idPrefix}telemath-cr`, tm, 'no TeleMath row was scored.'),
  );
  const small = [
    ...perSubset
      .filter((p) => p.n < SMALL_SAMPLE)
      .map((p) => `${p.model} ${p.subset} (n = ${p.n})`),
    ...byDiff
      .filter((p) => p.n < SMALL_SAMPLE)
      .map((p) => `${p.model} ${p.difficulty} (n = ${p.n})`),
    ...telemath.filter((p) => p.n < SMALL_SAMPLE).map((p) => `${p.model} TeleMath (n = ${p.n})`),
  ];
  if (small.length)
    out.push({
      kind: 'paragraph',
      text: `Small samples (fewer than ${SMALL_SAMPLE} scored rows; their rates and 95% intervals say little, an interval of one point at n = 2 is no certainty): ${small.join('; ')}.`,
    });
  return out;
}

/** Table I of several models in one mode (rates in percent, one decimal; TeleMath CR last). Pure. */
export const tableOneBlock = (
  caption: string,
  entries: readonly { model: string; m: ModeMetrics }[],
): ReportBlock => {
  const subs = DISCRETE_SUBSETS.filter((s) => entries.some((e) => e.m.by_subset[s]));
  return {
    kind: 'table',
    caption,
    header: [
      'model',
      ...subs.flatMap((s) => [`${subBenchmarkName(s)} CFR`, 'NFR', 'WFR']),
      'macro CFR',
      'NFR',
      'WFR',
      'TeleMath CR',
    ],
    rows: entries.map(({ model, m }) => [
      model,
      ...subs.flatMap((s) => {
        const g = m.by_subset[s];
        return [g?.cfr ?? null, g?.nfr ?? null, g?.wfr ?? null].map((x) =>
          x === null ? null : x.toFixed(1),
        );
      }),
      ...[m.macro.cfr, m.macro.nfr, m.macro.wfr, m.telemath?.cfr ?? null].map((x) =>
        x === null ? null : x.toFixed(1),
      ),
    ]),
  };
};
