// What the charts of runs, deliveries and check-ins draw and say: plain functions of the series
// answers (decision 0016: every bucket present, zeros included), without the DOM, so they are
// tested alone. A chart stacks its series as bars, the first series at the bottom.
import type { CheckInSeries, DeliverySeries, RunSeries } from './api.js';
import { gateLabel } from './events.format.js';

export type SeriesInterval = RunSeries['interval'];

/** The buckets every series answer has: a start and counts. */
interface SeriesAnswer<B extends { start: string }> {
  interval: SeriesInterval;
  from: string;
  to: string;
  buckets: B[];
}

/** One series of a chart: its legend label, the CSS custom property of its colour, and its count per bucket. */
export interface SeriesLine {
  label: string;
  color: string;
  counts: number[];
  total: number;
}

export interface SeriesChart {
  interval: SeriesInterval;
  /** Each bucket's start (RFC 3339), oldest first. */
  starts: string[];
  /** Each bucket's start in seconds (the chart's x values). */
  xs: number[];
  series: SeriesLine[];
  /** Per series, the top of its bar: its count plus the series below it, so the bars stack. */
  stacked: number[][];
  total: number;
}

interface SeriesSpec<B> {
  label: string;
  color: string;
  count: (bucket: B) => number;
}

/** Any series answer as a stacked chart of `specs`, in their order (the first at the bottom). */
export function seriesChart<B extends { start: string }>(answer: SeriesAnswer<B>, specs: readonly SeriesSpec<B>[]): SeriesChart {
  const series = specs.map(({ label, color, count }): SeriesLine => {
    const counts = answer.buckets.map(count);
    return { label, color, counts, total: counts.reduce((sum, n) => sum + n, 0) };
  });
  const stacked: number[][] = [];
  for (const line of series) {
    const below = stacked.at(-1);
    stacked.push(line.counts.map((count, index) => count + (below?.[index] ?? 0)));
  }
  return {
    interval: answer.interval,
    starts: answer.buckets.map((bucket) => bucket.start),
    xs: answer.buckets.map((bucket) => Date.parse(bucket.start) / 1000),
    series,
    stacked,
    total: series.reduce((sum, line) => sum + line.total, 0),
  };
}

/** Run statuses in the order the chart stacks them: ended runs at the bottom, the ones still waiting on top. */
export const RUN_STATUSES = ['succeeded', 'failed', 'cancelled', 'running', 'queued', 'pending'] as const satisfies readonly Exclude<
  keyof RunSeries['buckets'][number],
  'start'
>[];

/** A pipeline's runs per bucket by the status they are in now. */
export const runSeriesChart = (answer: RunSeries): SeriesChart =>
  seriesChart(
    answer,
    RUN_STATUSES.map((status) => ({ label: status, color: `--series-${status}`, count: (bucket: RunSeries['buckets'][number]) => bucket[status] })),
  );

export const DELIVERY_OUTCOMES = ['succeeded', 'failed'] as const;

/** An endpoint's delivery attempts per bucket, succeeded and failed. */
export const deliverySeriesChart = (answer: DeliverySeries): SeriesChart =>
  seriesChart(
    answer,
    DELIVERY_OUTCOMES.map((outcome) => ({
      label: outcome,
      color: `--series-${outcome}`,
      count: (bucket: DeliverySeries['buckets'][number]) => bucket[outcome],
    })),
  );

/** Gates drawn one by one; the rest are added up as one series. */
export const GATES_SHOWN = 8;
export const OTHER_GATES = 'other gates';

/**
 * An event's validations per bucket, a series per gate: the gates with the most validations in the
 * range (a tie by the API's order: by name, no gate last), the rest added up as "other gates" when
 * there are more than `maxGates` + 1 (one gate more is drawn rather than hidden). Gates without a
 * validation in the range (only duplicates or undos there) are left out.
 */
export function checkInSeriesChart(answer: CheckInSeries, maxGates = GATES_SHOWN): SeriesChart {
  type Bucket = CheckInSeries['buckets'][number];
  // Every bucket lists the same gates in the same order (decision 0016); the first names them.
  const gates = (answer.buckets[0]?.gates ?? []).map(({ gate }, order) => ({
    gate,
    order,
    total: answer.buckets.reduce((sum, bucket) => sum + (bucket.gates[order]?.validated ?? 0), 0),
  }));
  const validated = gates.filter((gate) => gate.total > 0).sort((a, b) => b.total - a.total || a.order - b.order);
  const drawn = validated.length > maxGates + 1 ? validated.slice(0, maxGates) : validated;
  const rest = validated.slice(drawn.length).map((gate) => gate.order);
  const countAt = (bucket: Bucket, order: number): number => bucket.gates[order]?.validated ?? 0;
  const specs: SeriesSpec<Bucket>[] = drawn.map(({ gate, order }, index) => ({
    label: gateLabel(gate),
    color: `--series-${index + 1}`,
    count: (bucket) => countAt(bucket, order),
  }));
  if (rest.length > 0) {
    specs.push({ label: OTHER_GATES, color: '--series-other', count: (bucket) => rest.reduce((sum, order) => sum + countAt(bucket, order), 0) });
  }
  return seriesChart(answer, specs);
}

/** `the last 24 hours`, `the last 30 days`: the span of a chart's buckets. */
export function seriesSpan(chart: Pick<SeriesChart, 'interval' | 'starts'>): string {
  const count = chart.starts.length;
  return `the last ${count === 1 ? '' : `${count} `}${chart.interval}${count === 1 ? '' : 's'}`;
}

/**
 * `5 runs in the last 24 hours: 4 succeeded, 1 failed` (series without any left out), or
 * `No runs in the last 24 hours`: the chart in one sentence, its text alternative's lead.
 */
export function describeSeries(chart: SeriesChart, noun: { one: string; many: string }): string {
  const span = seriesSpan(chart);
  if (chart.total === 0) return `No ${noun.many} in ${span}`;
  const parts = chart.series.filter((line) => line.total > 0).map((line) => `${line.total} ${line.label}`);
  return `${chart.total} ${chart.total === 1 ? noun.one : noun.many} in ${span}: ${parts.join(', ')}`;
}

/** The buckets with any count, oldest first, with each series' count: the rows of the chart's table. */
export function seriesRows(chart: SeriesChart): { start: string; counts: number[] }[] {
  return chart.starts
    .map((start, index) => ({ start, counts: chart.series.map((line) => line.counts[index] ?? 0) }))
    .filter((row) => row.counts.some((count) => count > 0));
}
