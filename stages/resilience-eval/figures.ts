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
import {
  DISCRETE_SUBSETS,
  fmtFlipRate,
  SMALL_SAMPLE,
  subBenchmarkName,
  type ModeMetrics,
} from './metrics.js';
import { macroCfrText, macroFlip, markUndecided, type UndecidedCounts } from './tables.js';

const VL = 'https://vega.github.io/schema/vega-lite/v6.json';

/** One model's scores in one mode, with its VRAM when known. */
export interface FigureModel {
  model: string;
  m: ModeMetrics;
  /** VRAM in GiB (or GB as the source gives it), null when unknown. */
  vram: number | null;
  /** How the VRAM was obtained (`nvidia-smi-peak`, `given`), null when unknown. */
  vram_method: string | null;
  /** The run's output-token cap (`num_predict`), and how many of its rows reached it; null when unknown. */
  output_cap?: { tokens: number; rows_at_cap: number; rows: number } | null;
}

/**
 * Where to print each point's label (`label_y`, in the y axis's units, and `side`) so labels of
 * points that lie close together are stacked instead of drawn over each other: points are taken
 * from the top of the plot down, and a label whose box would overlap an earlier one (same
 * horizontal span, less than a line apart) moves to the nearest free line above or below. Geometry is the figure's:
 * `width` x `height` pixels, x on [0, xMax], y on [0, 100]. Pure.
 */
export function placeLabels<T extends { x: number; y: number; model: string }>(
  points: readonly T[],
  xMax: number,
  size: { width: number; height: number } = base,
): (T & { label_y: number; side: 'left' | 'right' })[] {
  const LINE = 13;
  const px = (p: T) => (p.x / xMax) * size.width;
  const placed: { x0: number; x1: number; y: number }[] = [];
  const out = [...points]
    .sort((a, b) => b.y - a.y || a.x - b.x)
    .map((p) => {
      const w = 6.2 * p.model.length;
      const side: 'left' | 'right' = px(p) + w > size.width ? 'left' : 'right';
      const x0 = side === 'right' ? px(p) + 8 : px(p) - 8 - w;
      const y0 = (1 - p.y / 100) * size.height;
      const free = (y: number) =>
        y >= LINE / 2 &&
        y <= size.height - LINE / 2 &&
        !placed.some((q) => q.x0 < x0 + w && x0 < q.x1 && Math.abs(q.y - y) < LINE);
      // the nearest free line: at the point, then one line above, one below, two above, ...
      let y = y0;
      for (let k = 1; !free(y) && k < 40; k++) y = y0 + (k % 2 ? -1 : 1) * Math.ceil(k / 2) * LINE;
      placed.push({ x0, x1: x0 + w, y });
      return { ...p, label_y: 100 * (1 - y / size.height), side };
    });
  return out;
}

/** Upper end of an x axis that leaves room right of the largest value (no point on the border). */
const roomyMax = (max: number): number => {
  const m = max * 1.15;
  const step = 10 ** Math.floor(Math.log10(m));
  return Math.ceil(m / step) * step;
};

/** A scatter of labelled points (`x`, `cfr`, `model`) with optional vertical rules. */
function labelledScatter(
  values: readonly { x: number; cfr: number; model: string; [k: string]: unknown }[],
  x: { title: string; format: string },
  extra: { shape?: object; rules?: { x: number; label: string }[] } = {},
): object {
  const xMax = roomyMax(
    Math.max(...values.map((v) => v.x), ...(extra.rules ?? []).map((r) => r.x)),
  );
  const labelled = placeLabels(
    values.map((v) => ({ ...v, y: v.cfr })),
    xMax,
  );
  const X = {
    field: 'x',
    type: 'quantitative',
    title: x.title,
    scale: { domain: [0, xMax], nice: false },
    axis: { format: x.format, tickMinStep: 1 },
  };
  const Y = { field: 'cfr', type: 'quantitative', title: 'macro CFR (%)', ...PERCENT_AXIS };
  const text = (side: 'left' | 'right') => ({
    data: { values: labelled.filter((l) => l.side === side) },
    mark: {
      type: 'text',
      align: side,
      baseline: 'middle',
      dx: side === 'right' ? 8 : -8,
      fontSize: 11,
    },
    encoding: { x: X, y: { ...Y, field: 'label_y' }, text: { field: 'model' } },
  });
  return {
    layer: [
      ...(extra.rules ?? []).flatMap((r) => [
        {
          data: { values: [r] },
          mark: { type: 'rule', strokeDash: [4, 3], color: '#888' },
          encoding: { x: { ...X, field: 'x' } },
        },
        {
          data: { values: [{ ...r, y: 100 }] },
          mark: { type: 'text', align: 'right', dx: -4, dy: 8, fontSize: 10, color: '#555' },
          encoding: { x: { ...X, field: 'x' }, y: { ...Y, field: 'y' }, text: { field: 'label' } },
        },
      ]),
      {
        data: { values: labelled },
        mark: { type: 'point', filled: true, size: 90 },
        encoding: {
          x: X,
          y: Y,
          color: { field: 'model', type: 'nominal', title: 'model' },
          ...(extra.shape ? { shape: extra.shape } : {}),
        },
      },
      ...(['right', 'left'] as const).filter((sd) => labelled.some((l) => l.side === sd)).map(text),
    ],
  };
}

const PERCENT_AXIS = { scale: { domain: [0, 100] }, axis: { format: 'd', tickCount: 5 } } as const;
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
 * @param vramUnit the unit of `vram` (`GiB` measured here; `GB` as the authors give theirs)
 */
export function paperFigures(
  models: readonly FigureModel[],
  mode: string,
  vramHint: string,
  idPrefix = '',
  vramUnit = 'GiB',
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
  const capped = macro.filter((e) => e.output_cap);
  const caps = [...new Set(capped.map((e) => e.output_cap!.tokens))];
  const capText = capped.length
    ? ` Dashed line: the output cap (num_predict ${caps.join(', ')} tokens); rows that reached it: ${capped.map((e) => `${e.model} ${e.output_cap!.rows_at_cap} of ${e.output_cap!.rows}`).join(', ')}. A mean near the cap is the cap's, not the model's length.`
    : '';
  out.push(
    withTokens.length
      ? figure(
          `${idPrefix}cfr-vs-tokens`,
          `${t4}.${capText}`,
          labelledScatter(
            withTokens.map((w) => ({ x: w.tokens!, cfr: w.cfr!, model: w.model })),
            { title: 'mean output tokens', format: 'd' },
            { rules: caps.map((c) => ({ x: c, label: `output cap ${c} tokens` })) },
          ),
        )
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
      ? figure(
          `${idPrefix}cfr-vs-vram`,
          `${t5}; the VRAM method is the point's shape.`,
          labelledScatter(
            withVram.map((w) => ({ x: w.vram!, cfr: w.cfr!, model: w.model, method: w.method })),
            { title: `VRAM (${vramUnit})`, format: '.1f' },
            { shape: { field: 'method', type: 'nominal', title: 'VRAM method' } },
          ),
        )
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

/**
 * Table I of several models in one mode (rates in percent, one decimal; TeleMath CR last). A CFR
 * cell holding rows the scorer could not decide says how many (`undecided`, by model then
 * subset); NFR/WFR read `n/a` where every row is a parse failure; the macro CFR carries its 95%
 * interval. Pure.
 */
export const tableOneBlock = (
  caption: string,
  entries: readonly { model: string; m: ModeMetrics }[],
  undecided: UndecidedCounts = new Map(),
): ReportBlock => {
  const subs = DISCRETE_SUBSETS.filter((s) => entries.some((e) => e.m.by_subset[s]));
  const one = (x: number | null) => (x === null ? null : x.toFixed(1));
  return {
    kind: 'table',
    caption,
    header: [
      'model',
      ...subs.flatMap((s) => [`${subBenchmarkName(s)} CFR`, 'NFR', 'WFR']),
      'macro CFR [95% CI]',
      'NFR',
      'WFR',
      'TeleMath CR',
    ],
    rows: entries.map(({ model, m }) => {
      const u = undecided.get(model) ?? {};
      const total = subs.reduce((a, s) => a + (u[s] ?? 0), 0);
      return [
        model,
        ...subs.flatMap((s) => {
          const g = m.by_subset[s];
          if (!g) return [null, null, null];
          const cfr = one(g.cfr);
          return [
            cfr === null ? null : markUndecided(cfr, u[s] ?? 0),
            fmtFlipRate(g, 'nfr'),
            fmtFlipRate(g, 'wfr'),
          ];
        }),
        markUndecided(macroCfrText(m), total),
        macroFlip(m, 'nfr'),
        macroFlip(m, 'wfr'),
        one(m.telemath?.cfr ?? null),
      ];
    }),
  };
};
