/**
 * Charts for reports: a Vega-Lite specification rendered to a standalone SVG string in Node, with
 * no browser and no DOM (Vega's headless `View` with `renderer: 'none'` and `toSVG()`).
 *
 * Why Vega-Lite + Vega: a well-kept declarative grammar (University of Washington IDL, used by
 * Altair and Observable) whose SVG output needs no script at view time, so a report page stays
 * self-contained; every data mark is an SVG element inside a `g.role-mark` group, which lets
 * tests count marks.
 */
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { TelebenchError } from '../errors.js';

/** A Vega-Lite specification (inline `data.values`; no URLs: the page must be self-contained). */
export type ChartSpec = TopLevelSpec;

/**
 * Renders a Vega-Lite specification to SVG markup.
 * @param spec Vega-Lite v6 specification with inline data
 * @returns the `<svg>...</svg>` text (width and height from the spec)
 * @throws TelebenchError `chart_render_failed` (tier `bug`) when Vega-Lite or Vega reject the spec
 */
export async function renderChartSvg(spec: ChartSpec): Promise<string> {
  try {
    const vg = compile(spec).spec;
    const view = new View(parse(vg), { renderer: 'none' });
    const svg = await view.toSVG();
    view.finalize();
    return svg;
  } catch (err) {
    throw new TelebenchError('chart_render_failed', `chart could not be rendered: ${String(err)}`, {
      tier: 'bug',
      cause: err,
    });
  }
}
