// A chart of a series answer (decision 0016) as stacked bars by uPlot, hourly over the last 24
// hours or daily over the last 30 days, with a sentence and a table of the numbers as its text
// alternative. The pipelines, webhooks and events tabs each give it how to read their series.
import { barChartStyle, loadChartLibrary } from './chart.library.js';
import { busy, cell, h } from './dom.js';
import { announce, clearError, showError } from './messages.js';
import { describeSeries, seriesRows, type SeriesChart, type SeriesInterval } from './series.format.js';
import { formatBucket } from './time.format.js';
import type uPlot from './uPlot.esm.js';

const CHART_HEIGHT = 200;
const BUCKET_S: Record<SeriesInterval, number> = { hour: 3600, day: 86_400 };

export interface SeriesChartSpec {
  /** Unique in the page: the prefix of the chart's element ids. */
  id: string;
  title: string;
  /** What a bar counts, for the sentence: `run`/`runs`. */
  noun: { one: string; many: string };
  /** Reads the series with these buckets and shapes it (series.format.ts). */
  read: (interval: SeriesInterval) => Promise<SeriesChart>;
}

export interface SeriesChartView {
  section: HTMLElement;
  /** Reads the series again and redraws; rejects with the read's error. */
  refresh(): Promise<void>;
  /** Frees the chart and ignores answers still under way. */
  destroy(): void;
}

/** The chart's options; each series' colour is a custom property of console.css, so it follows the light or dark palette. */
function chartOptions(UPlot: typeof uPlot, box: HTMLElement, chart: SeriesChart, shown: () => SeriesChart): uPlot.Options {
  const { color, axes, bars } = barChartStyle(UPlot, box);
  const half = BUCKET_S[chart.interval] / 2;
  return {
    width: box.clientWidth,
    height: CHART_HEIGHT,
    // Hours read in the browser's zone; days are UTC days, so their ticks read in UTC.
    ...(chart.interval === 'day' ? { tzDate: (seconds: number) => UPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC') } : {}),
    // Bars stack: each series' bar runs from the top of the one below it (band) to its own top.
    bands: chart.series.slice(1).map((_, index) => ({ series: [index + 2, index + 1] as [number, number] })),
    scales: {
      x: { time: true, range: (_u, min, max) => [min - half, max + half] },
      y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
    },
    axes,
    cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false } },
    series: [
      {
        label: chart.interval === 'hour' ? 'Hour' : 'Day',
        value: (_u, _seconds, _series, index) => (index === null ? '—' : formatBucket(shown().starts[index] ?? '', shown().interval)),
      },
      ...chart.series.map((line, at): uPlot.Series => ({
        label: line.label,
        fill: color(line.color),
        stroke: color(line.color),
        width: 0,
        paths: bars,
        points: { show: false },
        // The legend shows the series' own count, not the top of its stacked bar.
        value: (_u, _top, _series, index) => (index === null ? '—' : String(shown().series[at]?.counts[index] ?? 0)),
      })),
    ],
  };
}

/** The plot's shape: a new interval or other series (gates come and go) make a new plot, new counts only new data. */
const shapeOf = (chart: SeriesChart): string => JSON.stringify([chart.interval, chart.series.map((line) => line.label)]);

export function seriesChartView(spec: SeriesChartSpec): SeriesChartView {
  const titleId = `${spec.id}-title`;
  const tableTitleId = `${spec.id}-table-title`;
  const intervalId = `${spec.id}-interval`;
  const interval = h(
    'select',
    { id: intervalId },
    h('option', { value: 'hour' }, 'Hourly, last 24 hours'),
    h('option', { value: 'day' }, 'Daily, last 30 days'),
  );
  const refreshButton = h('button', { type: 'button', class: 'secondary' }, 'Refresh chart');
  const summary = h('p', { class: 'series-summary' }, 'Reading…');
  const chartBox = h('div', { class: 'series-chart', role: 'img', hidden: true });
  const tableHead = h('tr');
  const tableBody = h('tbody');
  const numbers = h(
    'details',
    { class: 'series-numbers', hidden: true },
    h('summary', { id: tableTitleId }, `${spec.title}: the numbers`),
    h('div', { class: 'table-wrap' }, h('table', { class: 'responsive', 'aria-labelledby': tableTitleId }, h('thead', {}, tableHead), tableBody)),
  );
  const section = h(
    'section',
    { class: 'series', 'aria-labelledby': titleId },
    h(
      'div',
      { class: 'list-head' },
      h('h5', { id: titleId }, spec.title),
      h('div', { class: 'field inline' }, h('label', { for: intervalId }, 'Period'), interval),
      refreshButton,
    ),
    summary,
    chartBox,
    numbers,
  );

  let shown: SeriesChart | undefined;
  let plot: { uplot: uPlot; shape: string } | undefined;
  let resize: ResizeObserver | undefined;
  /** Bumped by each read and by destroy(): only the newest answer is shown. */
  let reads = 0;

  const fitWidth = (): void => {
    // A hidden panel measures 0: the chart keeps its size until it is shown again.
    if (plot && chartBox.clientWidth > 0) plot.uplot.setSize({ width: chartBox.clientWidth, height: CHART_HEIGHT });
  };

  const freePlot = (): void => {
    plot?.uplot.destroy();
    plot = undefined;
  };

  async function draw(chart: SeriesChart, read: number): Promise<void> {
    if (chart.total === 0) {
      chartBox.hidden = true;
      return;
    }
    const UPlot = await loadChartLibrary();
    if (read !== reads) return;
    chartBox.hidden = false;
    chartBox.setAttribute('aria-label', `Stacked bars of the ${spec.noun.many} per ${chart.interval}. ${describeSeries(chart, spec.noun)}.`);
    const data: uPlot.AlignedData = [chart.xs, ...chart.stacked];
    const shape = shapeOf(chart);
    if (plot?.shape === shape) return plot.uplot.setData(data);
    freePlot();
    plot = {
      uplot: new UPlot(
        chartOptions(UPlot, chartBox, chart, () => shown!),
        data,
        chartBox,
      ),
      shape,
    };
    resize ??= new ResizeObserver(fitWidth);
    resize.observe(chartBox);
  }

  function fillTable(chart: SeriesChart): void {
    tableHead.replaceChildren(
      h('th', { scope: 'col' }, chart.interval === 'hour' ? 'Hour' : 'Day'),
      ...chart.series.map((line) => h('th', { scope: 'col' }, line.label)),
    );
    const rows = seriesRows(chart);
    tableBody.replaceChildren(
      ...rows.map((row) =>
        h(
          'tr',
          { 'data-start': row.start },
          cell(chart.interval === 'hour' ? 'Hour' : 'Day', h('time', { datetime: row.start }, formatBucket(row.start, chart.interval))),
          ...row.counts.map((count, index) => cell(chart.series[index]!.label, String(count))),
        ),
      ),
    );
    numbers.hidden = rows.length === 0;
  }

  async function refresh(): Promise<void> {
    const read = ++reads;
    let chart: SeriesChart;
    try {
      chart = await spec.read(interval.value as SeriesInterval);
    } catch (err) {
      if (read === reads && !shown) summary.textContent = 'The chart could not be read.';
      throw err;
    }
    if (read !== reads) return;
    shown = chart;
    summary.textContent = `${describeSeries(chart, spec.noun)}.`;
    fillTable(chart);
    await draw(chart, read);
  }

  const refreshByHand = (): void => {
    clearError();
    busy([refreshButton], refresh).then(
      () => announce(`${spec.title}: ${summary.textContent}`),
      (err: unknown) => showError(err, `Could not read the ${spec.title.toLowerCase()}`),
    );
  };
  refreshButton.addEventListener('click', refreshByHand);
  interval.addEventListener('change', refreshByHand);

  return {
    section,
    refresh,
    destroy: () => {
      reads++;
      resize?.disconnect();
      freePlot();
    },
  };
}
