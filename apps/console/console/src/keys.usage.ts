// A key's usage (contract section 16): its requests per hour of the last 24 hours by status class,
// drawn as stacked bars by uPlot (a canvas; the library is fetched the first time there is
// something to draw) and listed in a table, the chart's text alternative.
import { admin, type ApiKey } from './api.js';
import { barChartStyle, loadChartLibrary } from './chart.library.js';
import { busy, cell, clear, h, time } from './dom.js';
import { describeUsage, STATUS_CLASSES, usageChart, usageHours, type UsageChart } from './keys.format.js';
import { announce, clearError, showError } from './messages.js';
import { currentWorkspace, requireAdminToken } from './session.js';
import type uPlot from './uPlot.esm.js';

const CHART_HEIGHT = 220;
const HALF_HOUR_S = 1800;

export interface UsageView {
  section: HTMLElement;
  /** Reads the usage again and redraws the chart and the table. */
  refresh(): Promise<void>;
  /** Frees the chart and ignores answers still under way. */
  destroy(): void;
}

const hourLabel = (seconds: number): string => new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });

/** The chart's options; colours come from console.css (`--status-2xx` ...), so they follow the light or dark palette. */
function chartOptions(UPlot: typeof uPlot, box: HTMLElement, shown: () => UsageChart): uPlot.Options {
  const { color, axes, bars } = barChartStyle(UPlot, box);
  return {
    width: box.clientWidth,
    height: CHART_HEIGHT,
    // Bars stack: each class's bar runs from the top of the class below it (band) to its own top.
    bands: STATUS_CLASSES.slice(1).map((_, index) => ({ series: [index + 2, index + 1] as [number, number] })),
    scales: {
      x: { time: true, range: (_u, min, max) => [min - HALF_HOUR_S, max + HALF_HOUR_S] },
      y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
    },
    axes,
    cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false } },
    series: [
      { label: 'Hour', value: (_u, seconds) => (seconds === null ? '—' : hourLabel(seconds)) },
      ...STATUS_CLASSES.map((status): uPlot.Series => ({
        label: status,
        fill: color(`--status-${status}`),
        stroke: color(`--status-${status}`),
        width: 0,
        paths: bars,
        points: { show: false },
        // The legend shows the class's own count, not the top of its stacked bar.
        value: (_u, _top, _series, index) => (index === null ? '—' : String(shown().counts[status][index] ?? 0)),
      })),
    ],
  };
}

function usageTable(titleId: string): { table: HTMLTableElement; body: HTMLTableSectionElement } {
  const body = h('tbody');
  const head = h('thead', {}, h('tr', {}, ...['Hour', 'Requests', ...STATUS_CLASSES].map((label) => h('th', { scope: 'col' }, label))));
  return { table: h('table', { class: 'responsive', 'aria-labelledby': titleId }, head, body), body };
}

export function usageView(key: ApiKey): UsageView {
  const titleId = `key-${key.id}-usage-title`;
  const tableTitleId = `key-${key.id}-usage-table-title`;
  const summary = h('p', { class: 'usage-summary' }, 'Reading the usage…');
  const chartBox = h('div', { class: 'usage-chart', role: 'img', hidden: true });
  const { table, body } = usageTable(tableTitleId);
  const numbers = h(
    'details',
    { class: 'usage-numbers', hidden: true },
    h('summary', { id: tableTitleId }, 'Requests per hour'),
    h('div', { class: 'table-wrap' }, table),
  );
  const refreshButton = h('button', { type: 'button', class: 'secondary' }, 'Refresh usage');
  const section = h(
    'section',
    { class: 'usage', 'aria-labelledby': titleId },
    h('div', { class: 'list-head' }, h('h4', { id: titleId }, 'Requests in the last 24 hours'), refreshButton),
    summary,
    chartBox,
    numbers,
  );

  let shown: UsageChart | undefined;
  let plot: uPlot | undefined;
  let resize: ResizeObserver | undefined;
  /** Bumped by each read and by destroy(): only the newest answer is shown. */
  let reads = 0;

  const fitWidth = (): void => {
    // A hidden tab panel measures 0: the chart keeps its size until it is shown again.
    if (plot && chartBox.clientWidth > 0) plot.setSize({ width: chartBox.clientWidth, height: CHART_HEIGHT });
  };

  async function draw(chart: UsageChart, read: number): Promise<void> {
    if (chart.total === 0) {
      chartBox.hidden = true;
      return;
    }
    const UPlot = await loadChartLibrary();
    if (read !== reads) return;
    chartBox.hidden = false;
    chartBox.setAttribute('aria-label', `Stacked bars of the requests per hour by status class. ${describeUsage(chart)}.`);
    const data: uPlot.AlignedData = [chart.xs, ...chart.stacked];
    if (plot) return plot.setData(data);
    plot = new UPlot(
      chartOptions(UPlot, chartBox, () => shown!),
      data,
      chartBox,
    );
    resize = new ResizeObserver(fitWidth);
    resize.observe(chartBox);
  }

  function fillTable(chart: UsageChart): void {
    clear(body);
    for (const row of chart.rows) {
      body.append(
        h(
          'tr',
          { 'data-hour': row.start },
          cell('Hour', time(row.start)),
          cell('Requests', String(row.requests)),
          ...STATUS_CLASSES.map((status) => cell(status, String(row.by_status[status] ?? 0))),
        ),
      );
    }
    numbers.hidden = chart.rows.length === 0;
  }

  async function refresh(): Promise<void> {
    const read = ++reads;
    const hours = usageHours(Date.now());
    let answer: Awaited<ReturnType<typeof admin.keyUsage>>;
    try {
      answer = await admin.keyUsage(requireAdminToken(), currentWorkspace().id, key.id, new Date(hours[0]!).toISOString());
    } catch (err) {
      if (read === reads && !shown) summary.textContent = 'The usage could not be read.';
      throw err;
    }
    if (read !== reads) return;
    const chart = usageChart(answer.data, hours);
    shown = chart;
    summary.textContent = `${describeUsage(chart)}.`;
    fillTable(chart);
    await draw(chart, read);
  }

  refreshButton.addEventListener('click', () => {
    clearError();
    busy([refreshButton], refresh).then(
      () => announce(`Usage of “${key.name}”: ${summary.textContent}`),
      (err: unknown) => showError(err, 'Could not read the usage'),
    );
  });

  return {
    section,
    refresh,
    destroy: () => {
      reads++;
      resize?.disconnect();
      plot?.destroy();
      plot = undefined;
    },
  };
}
