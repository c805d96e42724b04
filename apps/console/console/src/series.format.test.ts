import type { CheckInSeries, DeliverySeries, RunSeries } from './api';
import { checkInSeriesChart, deliverySeriesChart, describeSeries, OTHER_GATES, runSeriesChart, seriesRows, seriesSpan } from './series.format';
import { formatBucket } from './time.format';

const HOUR_STARTS = ['2025-06-01T08:00:00.000Z', '2025-06-01T09:00:00.000Z', '2025-06-01T10:00:00.000Z'];
const window = { interval: 'hour' as const, from: HOUR_STARTS[0]!, to: '2025-06-01T11:00:00.000Z' };
const noRuns = { pending: 0, queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };

const runs = (counts: Partial<typeof noRuns>[]): RunSeries => ({
  pipeline_id: 'p',
  ...window,
  buckets: HOUR_STARTS.map((start, i) => ({ start, ...noRuns, ...counts[i] })),
});

describe('runSeriesChart', () => {
  test('a series per status, ended runs at the bottom; each bar stacks on the one below it', () => {
    const chart = runSeriesChart(runs([{ succeeded: 2, failed: 1 }, {}, { succeeded: 1, running: 1, pending: 1 }]));
    expect(chart.xs).toEqual(HOUR_STARTS.map((start) => Date.parse(start) / 1000));
    expect(chart.series.map((line) => [line.label, line.color])).toEqual([
      ['succeeded', '--series-succeeded'],
      ['failed', '--series-failed'],
      ['cancelled', '--series-cancelled'],
      ['running', '--series-running'],
      ['queued', '--series-queued'],
      ['pending', '--series-pending'],
    ]);
    expect(chart.series[0]!.counts).toEqual([2, 0, 1]);
    expect(chart.stacked).toEqual([
      [2, 0, 1],
      [3, 0, 1],
      [3, 0, 1],
      [3, 0, 2],
      [3, 0, 2],
      [3, 0, 3],
    ]);
    expect(chart.total).toBe(6);
  });

  test('says what it counts in one sentence; statuses without runs are left out', () => {
    const noun = { one: 'run', many: 'runs' };
    expect(describeSeries(runSeriesChart(runs([{ succeeded: 2, failed: 1 }, {}, { pending: 1 }])), noun)).toBe(
      '4 runs in the last 3 hours: 2 succeeded, 1 failed, 1 pending',
    );
    expect(describeSeries(runSeriesChart(runs([{}, { failed: 1 }])), noun)).toBe('1 run in the last 3 hours: 1 failed');
    expect(describeSeries(runSeriesChart(runs([])), noun)).toBe('No runs in the last 3 hours');
  });

  test('its table lists the buckets with any count, each series in the legend order', () => {
    expect(seriesRows(runSeriesChart(runs([{ succeeded: 2 }, {}, { queued: 1 }])))).toEqual([
      { start: HOUR_STARTS[0], counts: [2, 0, 0, 0, 0, 0] },
      { start: HOUR_STARTS[2], counts: [0, 0, 0, 0, 1, 0] },
    ]);
  });
});

test('deliveries: succeeded at the bottom, failed on top', () => {
  const answer: DeliverySeries = {
    endpoint_id: 'e',
    ...window,
    buckets: HOUR_STARTS.map((start, i) => ({ start, succeeded: i, failed: i === 2 ? 3 : 0 })),
  };
  const chart = deliverySeriesChart(answer);
  expect(chart.series.map((line) => [line.label, line.total])).toEqual([
    ['succeeded', 3],
    ['failed', 3],
  ]);
  expect(chart.stacked).toEqual([
    [0, 1, 2],
    [0, 1, 5],
  ]);
  expect(describeSeries(chart, { one: 'attempt', many: 'attempts' })).toBe('6 attempts in the last 3 hours: 3 succeeded, 3 failed');
});

describe('checkInSeriesChart', () => {
  const gate = (name: string | null, validated: number, rejected = 0) => ({ gate: name, validated, unvalidated: 0, rejected_duplicates: rejected });
  /** `perBucket[i]` is the gates of bucket i, the same gates in every bucket as the API lists them. */
  const checkIns = (perBucket: ReturnType<typeof gate>[][]): CheckInSeries => ({
    event_id: 'ev',
    ...window,
    buckets: HOUR_STARTS.map((start, i) => {
      const gates = perBucket[i] ?? perBucket[0]!.map((g) => gate(g.gate, 0));
      return { start, validated: gates.reduce((s, g) => s + g.validated, 0), unvalidated: 0, rejected_duplicates: 0, gates };
    }),
  });

  test('a series per gate, the busiest first (a tie in the API’s order), no gate named; gates without a validation left out', () => {
    const chart = checkInSeriesChart(
      checkIns([
        [gate('north', 1), gate('south', 3), gate('west', 0, 2), gate(null, 1)],
        [gate('north', 2), gate('south', 0), gate('west', 0), gate(null, 0)],
      ]),
    );
    expect(chart.series.map((line) => [line.label, line.color, line.counts])).toEqual([
      ['north', '--series-1', [1, 2, 0]],
      ['south', '--series-2', [3, 0, 0]],
      ['(no gate)', '--series-3', [1, 0, 0]],
    ]);
    expect(describeSeries(chart, { one: 'validation', many: 'validations' })).toBe('7 validations in the last 3 hours: 3 north, 3 south, 1 (no gate)');
  });

  test('past the cap, the quietest gates are added up as one series; one gate over the cap is drawn instead', () => {
    const gates = (count: number) => [Array.from({ length: count }, (_, i) => gate(`g${i}`, i + 1))];
    const capped = checkInSeriesChart(checkIns(gates(5)), 3);
    expect(capped.series.map((line) => [line.label, line.total])).toEqual([
      ['g4', 5],
      ['g3', 4],
      ['g2', 3],
      [OTHER_GATES, 3],
    ]);
    expect(capped.series.at(-1)!.color).toBe('--series-other');
    expect(capped.total).toBe(15);
    expect(checkInSeriesChart(checkIns(gates(4)), 3).series.map((line) => line.label)).toEqual(['g3', 'g2', 'g1', 'g0']);
  });

  test('no check-in at all: no series, nothing counted', () => {
    const chart = checkInSeriesChart({ event_id: 'ev', ...window, buckets: [] });
    expect(chart.series).toEqual([]);
    expect(chart.total).toBe(0);
  });
});

test('the span names the buckets: hours or days', () => {
  expect(seriesSpan({ interval: 'hour', starts: Array(24).fill('') })).toBe('the last 24 hours');
  expect(seriesSpan({ interval: 'day', starts: Array(30).fill('') })).toBe('the last 30 days');
  expect(seriesSpan({ interval: 'day', starts: [''] })).toBe('the last day');
});

test("a bucket's start: an hour in the reader's zone, a day by its UTC date", () => {
  expect(formatBucket('2025-01-15T02:00:00Z', 'hour', { locale: 'en-GB', timeZone: 'Europe/Berlin' })).toBe('15 Jan 2025, 03:00 CET');
  expect(formatBucket('2025-01-15T00:00:00Z', 'day', { locale: 'en-GB', timeZone: 'America/New_York' })).toBe('15 Jan 2025 (UTC)');
});
