import { bucketStarts, SeriesQuery, seriesWindow } from './series';

const at = (iso: string) => new Date(iso);
const NOW = at('2024-12-01T09:30:00.000Z');

function windowOf(query: Parameters<typeof seriesWindow>[0]) {
  const issues: { field: string; code: string }[] = [];
  const window = seriesWindow(query, NOW, ({ field, code }) => issues.push({ field, code }));
  return { window, issues };
}

describe('seriesWindow', () => {
  test('defaults: the 24 hours up to the end of the current hour; 30 days up to the end of today', () => {
    expect(windowOf({ interval: 'hour' }).window).toEqual({
      interval: 'hour',
      from: at('2024-11-30T10:00:00.000Z'),
      to: at('2024-12-01T10:00:00.000Z'),
      count: 24,
      step: '1 hour',
    });
    expect(windowOf({ interval: 'day' }).window).toMatchObject({ from: at('2024-11-02T00:00:00.000Z'), to: at('2024-12-02T00:00:00.000Z'), count: 30 });
  });

  test('from rounds down and to rounds up to the interval (UTC); a boundary stays', () => {
    const { window } = windowOf({ interval: 'hour', from: at('2024-12-01T08:20:00.000Z'), to: at('2024-12-01T10:00:00.000Z') });
    expect(window).toMatchObject({ from: at('2024-12-01T08:00:00.000Z'), to: at('2024-12-01T10:00:00.000Z'), count: 2 });
    expect(bucketStarts(window!)).toEqual([at('2024-12-01T08:00:00.000Z'), at('2024-12-01T09:00:00.000Z')]);
  });

  test('at most 168 hourly and 90 daily buckets; an empty range and a range past year 9999 are refused', () => {
    expect(windowOf({ interval: 'hour', from: at('2024-12-01T00:00:00Z'), to: at('2024-12-08T00:00:00Z') }).window?.count).toBe(168);
    expect(windowOf({ interval: 'hour', from: at('2024-12-01T00:00:00Z'), to: at('2024-12-08T00:00:01Z') }).issues).toEqual([
      { field: 'from', code: 'too_many_buckets' },
    ]);
    expect(windowOf({ interval: 'day', from: at('2024-01-01T00:00:00Z'), to: at('2024-03-31T00:00:00Z') }).window?.count).toBe(90);
    expect(windowOf({ interval: 'day', from: at('2024-01-01T00:00:00Z'), to: at('2024-03-31T00:00:01Z') }).issues).toEqual([
      { field: 'from', code: 'too_many_buckets' },
    ]);
    expect(windowOf({ interval: 'hour', from: at('2024-12-01T10:00:00Z'), to: at('2024-12-01T10:00:00Z') }).issues).toEqual([
      { field: 'from', code: 'invalid_range' },
    ]);
    expect(windowOf({ interval: 'hour', to: at('9999-12-31T23:30:00Z') }).issues).toEqual([{ field: 'to', code: 'out_of_range' }]);
  });
});

describe('SeriesQuery', () => {
  test('parses the query strings into a window; problems are issues at their field', () => {
    const parsed = SeriesQuery.parse({ interval: 'day', from: '2024-12-01T05:00:00+02:00', to: '2024-12-03T00:00:00Z' });
    expect(parsed).toMatchObject({ interval: 'day', from: at('2024-12-01T00:00:00.000Z'), to: at('2024-12-03T00:00:00.000Z'), count: 2 });
    const failed = SeriesQuery.safeParse({ interval: 'week', to: 'soon' });
    expect(failed.error?.issues.map((issue) => issue.path.join('.')).sort()).toEqual(['interval', 'to']);
  });
});
