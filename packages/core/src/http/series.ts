import { z } from 'zod';
import { isStorableInstant, Timestamp, TIMESTAMP_RANGE_MESSAGE, UtcTimestamp } from './validation';

/**
 * Time series for charts (decision 0016): one query and one answer shape for every series. Buckets
 * are aligned to UTC hours or days; an answer holds at most `maxBuckets` of them, every one present
 * (zero counts included), so a chart needs no gap filling.
 */
export const SERIES_INTERVALS = {
  hour: { ms: 3_600_000, maxBuckets: 168, defaultBuckets: 24, sql: '1 hour' },
  day: { ms: 86_400_000, maxBuckets: 90, defaultBuckets: 30, sql: '1 day' },
} as const;
export type SeriesInterval = keyof typeof SERIES_INTERVALS;

/** The buckets an answer covers: [from, to), `count` buckets of `interval` each, aligned to UTC. */
export interface SeriesWindow {
  interval: SeriesInterval;
  from: Date;
  to: Date;
  count: number;
  /** The bucket width as a PostgreSQL interval (`1 hour`): `generate_series($from, $to - step, step)`. */
  step: string;
}

const floorTo = (date: Date, ms: number) => new Date(Math.floor(date.getTime() / ms) * ms);
const ceilTo = (date: Date, ms: number) => new Date(Math.ceil(date.getTime() / ms) * ms);

/**
 * The window a query asks for: `from` rounded down and `to` rounded up to the interval (UTC), `to`
 * now and `from` the default span before `to` when absent. Null with an issue added when it is
 * empty, wider than the interval allows, or ends past the storable years.
 */
export function seriesWindow(
  query: { interval: SeriesInterval; from?: Date; to?: Date },
  now: Date,
  addIssue: (issue: { field: 'from' | 'to'; code: string; message: string }) => void,
): SeriesWindow | null {
  const { ms, maxBuckets, defaultBuckets, sql } = SERIES_INTERVALS[query.interval];
  const to = ceilTo(query.to ?? now, ms);
  if (!isStorableInstant(to)) {
    addIssue({ field: 'to', code: 'out_of_range', message: TIMESTAMP_RANGE_MESSAGE });
    return null;
  }
  const from = query.from ? floorTo(query.from, ms) : new Date(to.getTime() - defaultBuckets * ms);
  if (from.getTime() >= to.getTime()) {
    addIssue({ field: 'from', code: 'invalid_range', message: 'must be before `to`' });
    return null;
  }
  const count = (to.getTime() - from.getTime()) / ms;
  if (count > maxBuckets) {
    addIssue({ field: 'from', code: 'too_many_buckets', message: `spans ${count} ${query.interval} buckets; at most ${maxBuckets} per answer` });
    return null;
  }
  return { interval: query.interval, from, to, count, step: sql };
}

const SPAN_DOC = 'At most 168 hourly or 90 daily buckets per answer (400 `too_many_buckets` on `from`); `from` must be before `to` (400 `invalid_range`).';

/** `?interval=hour|day&from=&to=` of every series; parses to the SeriesWindow (every problem a 400 on the query). */
export const SeriesQuery = z
  .object({
    interval: z.enum(['hour', 'day']).default('hour').meta({ description: 'Bucket width, aligned to UTC hours or days. Default `hour`.' }),
    from: Timestamp.optional().meta({
      description: `Start (RFC 3339), rounded down to its bucket. Default: 24 hourly or 30 daily buckets before \`to\`. ${SPAN_DOC}`,
    }),
    to: Timestamp.optional().meta({
      description: 'End (RFC 3339, exclusive), rounded up to a bucket boundary. Default: now, so the last bucket is the current one.',
    }),
  })
  .transform((query, ctx) => {
    const window = seriesWindow(query, new Date(), ({ field, code, message }) => ctx.addIssue({ code: 'custom', path: [field], message, params: { code } }));
    return window ?? z.NEVER;
  });
export type SeriesQuery = z.output<typeof SeriesQuery>;

/** The start of every bucket of the window, oldest first. */
export function bucketStarts(window: SeriesWindow): Date[] {
  const { ms } = SERIES_INTERVALS[window.interval];
  return Array.from({ length: window.count }, (_, i) => new Date(window.from.getTime() + i * ms));
}

/**
 * A series answer: `{ <owner>_id, interval, from, to, buckets: [{ start, ...counts }] }`, named `id`
 * in the API reference. `fields`: what sits beside `interval` (the owner's id); `bucket`: the counts.
 */
export function seriesOf<F extends z.ZodRawShape, B extends z.ZodRawShape>(id: string, description: string, fields: F, bucket: B, example?: unknown) {
  return z
    .object({
      ...fields,
      interval: z.enum(['hour', 'day']),
      from: UtcTimestamp.meta({ description: 'Start of the first bucket.' }),
      to: UtcTimestamp.meta({ description: 'End of the last bucket (exclusive).' }),
      buckets: z
        .array(z.object({ start: UtcTimestamp.meta({ description: "The bucket's start; it ends where the next one starts." }), ...bucket }))
        .meta({ description: 'Every bucket from `from` to `to`, oldest first, zero counts included.' }),
    })
    .meta({ id, description, ...(example === undefined ? {} : { examples: [example] }) });
}

/** What the series answer's frame renders as: interval, from and to. */
export function seriesFrame(window: SeriesWindow): { interval: SeriesInterval; from: string; to: string } {
  return { interval: window.interval, from: window.from.toISOString(), to: window.to.toISOString() };
}
