// uPlot (a canvas chart library, copied unchanged beside the console's modules) is fetched the
// first time a chart has something to draw, so a page without charts never loads it.
import type uPlot from './uPlot.esm.js';

/** Steps between a count axis's ticks: whole numbers only. */
export const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7];

let chartLibrary: Promise<typeof uPlot> | undefined;

/** uPlot's constructor, fetched once. */
export function loadChartLibrary(): Promise<typeof uPlot> {
  chartLibrary ??= import('./uPlot.esm.js').then(
    (module) => module.default,
    (err: unknown) => {
      // A failed fetch (the network, a deploy meanwhile) is tried again on the next refresh.
      chartLibrary = undefined;
      throw err;
    },
  );
  return chartLibrary;
}

/** What both bar charts draw with: a colour read from console.css (so it follows the palette), axes, and bars. */
export function barChartStyle(UPlot: typeof uPlot, box: HTMLElement): { color: (name: string) => string; axes: uPlot.Axis[]; bars: uPlot.Series.PathBuilder } {
  const style = getComputedStyle(box);
  const color = (name: string): string => style.getPropertyValue(name).trim();
  const axis = (): uPlot.Axis => ({
    stroke: color('--muted'),
    grid: { stroke: color('--border'), width: 1 },
    ticks: { stroke: color('--border'), width: 1 },
  });
  return {
    color,
    axes: [axis(), { ...axis(), incrs: COUNT_STEPS, values: (_u, splits) => splits.map((count) => String(count)) }],
    bars: UPlot.paths.bars!({ size: [0.8, 40], align: 0 }),
  };
}
