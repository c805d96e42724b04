import type { RateLimitBucket, UsageBucket } from './api';
import { describeLimits, describeUsage, keyState, limitsFromFields, oldTokenOutcome, usageChart, usageHours, USAGE_HOURS } from './keys.format';

const BUCKETS: RateLimitBucket[] = [
  { name: 'events', limit: 400 },
  { name: 'warehouse', limit: 600 },
  { name: 'pipelines', limit: 300 },
];

const usage = (start: string, byStatus: Partial<UsageBucket['by_status']>): UsageBucket => {
  const by_status = { '2xx': 0, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0, ...byStatus };
  return { start, requests: Object.values(by_status).reduce((a, b) => a + b, 0), by_status };
};

describe('keyState', () => {
  const now = Date.parse('2025-06-01T12:00:00.000Z');

  test('a revoked key is revoked whatever its expiry; a key past its expiry is expired; any other is active', () => {
    expect(keyState({ revoked_at: '2025-06-01T11:00:00.000Z', expires_at: '2025-06-01T10:00:00.000Z' }, now)).toBe('revoked');
    expect(keyState({ revoked_at: null, expires_at: '2025-06-01T12:00:00.000Z' }, now)).toBe('expired');
    expect(keyState({ revoked_at: null, expires_at: '2025-06-01T12:00:00.001Z' }, now)).toBe('active');
    expect(keyState({ revoked_at: null, expires_at: null }, now)).toBe('active');
  });
});

describe('oldTokenOutcome', () => {
  const now = Date.parse('2025-06-01T12:00:00.000Z');
  const hour = { seconds: 3600, span: '1 hour' };

  test('no overlap stops the old token at once; else it works for the overlap', () => {
    expect(oldTokenOutcome(null, { seconds: 0, span: 'no time' }, now)).toBe('stops working at once');
    expect(oldTokenOutcome(null, hour, now)).toBe('keeps working for 1 hour, then stops');
    expect(oldTokenOutcome('2025-06-01T13:00:00.001Z', hour, now)).toBe('keeps working for 1 hour, then stops');
  });

  test('a roll never extends a key: one expiring within the overlap keeps its expiry', () => {
    expect(oldTokenOutcome('2025-06-01T13:00:00.000Z', hour, now)).toBe('keeps working until its own expiry, which comes sooner');
    expect(oldTokenOutcome('2025-06-01T12:30:00.000Z', hour, now)).toBe('keeps working until its own expiry, which comes sooner');
  });
});

describe('describeLimits', () => {
  test('no limits of its own is "default"', () => {
    expect(describeLimits(null, BUCKETS)).toBe('default');
    expect(describeLimits({}, BUCKETS)).toBe('default');
  });

  test('its own limits in the order of the buckets, then buckets the page does not know', () => {
    expect(describeLimits({ pipelines: 10, events: 50 }, BUCKETS)).toBe('events 50/min, pipelines 10/min');
    expect(describeLimits({ future: 5, warehouse: 1 }, BUCKETS)).toBe('warehouse 1/min, future 5/min');
  });
});

describe('limitsFromFields', () => {
  const fields = (values: Record<string, string>) => BUCKETS.map(({ name }) => ({ bucket: name, value: values[name] ?? '' }));

  test('empty fields keep the platform limits: all empty is null', () => {
    expect(limitsFromFields(fields({}), 100_000)).toEqual({ rateLimits: null });
    expect(limitsFromFields(fields({ events: '  ' }), 100_000)).toEqual({ rateLimits: null });
  });

  test('each filled field is that bucket’s limit, the others left out', () => {
    expect(limitsFromFields(fields({ events: '50', pipelines: ' 100000 ' }), 100_000)).toEqual({ rateLimits: { events: 50, pipelines: 100_000 } });
    expect(limitsFromFields(fields({ warehouse: '1' }), 100_000)).toEqual({ rateLimits: { warehouse: 1 } });
  });

  test.each(['0', '-1', '1.5', '1e3', 'ten', '100001'])('refuses %p, naming the bucket and the range', (value) => {
    expect(limitsFromFields(fields({ warehouse: value }), 100_000)).toEqual({
      problem: "The warehouse limit must be a whole number of requests per minute from 1 to 100000, or empty for the platform's limit.",
    });
  });
});

describe('usageHours', () => {
  test('the current UTC hour and the 23 before it, oldest first', () => {
    const hours = usageHours(Date.parse('2025-06-01T10:42:13.500Z'));
    expect(hours).toHaveLength(USAGE_HOURS);
    expect(new Date(hours[0]!).toISOString()).toBe('2025-05-31T11:00:00.000Z');
    expect(new Date(hours.at(-1)!).toISOString()).toBe('2025-06-01T10:00:00.000Z');
    expect(hours.every((hour, i) => i === 0 || hour - hours[i - 1]! === 3_600_000)).toBe(true);
  });

  test('on the hour, that hour is the last', () => {
    expect(new Date(usageHours(Date.parse('2025-06-01T10:00:00.000Z')).at(-1)!).toISOString()).toBe('2025-06-01T10:00:00.000Z');
  });
});

describe('usageChart', () => {
  const hours = usageHours(Date.parse('2025-06-01T10:42:00.000Z'), 4); // 07:00 .. 10:00

  test('the hours with traffic land in their slot; the others are 0; x values are seconds', () => {
    const chart = usageChart([usage('2025-06-01T08:00:00.000Z', { '2xx': 3, '429': 2 }), usage('2025-06-01T10:00:00.000Z', { '4xx': 1 })], hours);
    expect(chart.xs).toEqual(hours.map((h) => h / 1000));
    expect(chart.counts).toEqual({ '2xx': [0, 3, 0, 0], '3xx': [0, 0, 0, 0], '4xx': [0, 0, 0, 1], '429': [0, 2, 0, 0], '5xx': [0, 0, 0, 0] });
    expect(chart.totals).toEqual({ '2xx': 3, '3xx': 0, '4xx': 1, '429': 2, '5xx': 0 });
    expect(chart.total).toBe(6);
    expect(chart.rows.map((row) => row.start)).toEqual(['2025-06-01T08:00:00.000Z', '2025-06-01T10:00:00.000Z']);
  });

  test('the bars stack: each class tops the classes before it, the last reaching the hour’s total', () => {
    const chart = usageChart([usage('2025-06-01T09:00:00.000Z', { '2xx': 5, '3xx': 1, '4xx': 2, '429': 3, '5xx': 4 })], hours);
    expect(chart.stacked.map((series) => series[2])).toEqual([5, 6, 8, 11, 15]);
    expect(chart.stacked.map((series) => series[0])).toEqual([0, 0, 0, 0, 0]);
  });

  test('an hour outside the chart’s (the API’s boundary) is left out of the bars, the totals and the rows', () => {
    const chart = usageChart([usage('2025-06-01T06:00:00.000Z', { '2xx': 9 }), usage('2025-06-01T07:00:00.000Z', { '5xx': 1 })], hours);
    expect(chart.total).toBe(1);
    expect(chart.rows).toHaveLength(1);
  });
});

describe('describeUsage', () => {
  const hours = usageHours(Date.parse('2025-06-01T10:42:00.000Z'));

  test('no traffic says so', () => {
    expect(describeUsage(usageChart([], hours))).toBe('No requests in the last 24 hours');
  });

  test('the total and each class with requests', () => {
    const chart = usageChart([usage('2025-06-01T09:00:00.000Z', { '2xx': 9, '429': 2 }), usage('2025-06-01T10:00:00.000Z', { '4xx': 1 })], hours);
    expect(describeUsage(chart)).toBe('12 requests in the last 24 hours: 9 2xx, 1 4xx, 2 429');
    expect(describeUsage(usageChart([usage('2025-06-01T10:00:00.000Z', { '5xx': 1 })], hours))).toBe('1 request in the last 24 hours: 1 5xx');
  });
});
