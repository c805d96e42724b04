// What the API keys tab says about a key's state, its rate limits and its usage: plain functions of
// the admin API's answers (contract sections 3 and 16), without the DOM, so they are tested alone.
import type { ApiKey, RateLimitBucket, RateLimits, StatusClass, UsageBucket } from './api.js';

/** The usage API's status classes, in the order the chart stacks them (2xx at the bottom). */
export const STATUS_CLASSES: readonly StatusClass[] = ['2xx', '3xx', '4xx', '429', '5xx'];

/** The usage chart covers the current UTC hour and the 23 before it. */
export const USAGE_HOURS = 24;
const HOUR_MS = 3_600_000;

export type KeyState = 'active' | 'expired' | 'revoked';

export function keyState(key: Pick<ApiKey, 'revoked_at' | 'expires_at'>, now: number): KeyState {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
}

/**
 * What a roll with this overlap does to the old token, for the confirmation: a roll never extends
 * a key, so one expiring within the overlap keeps its own expiry.
 */
export function oldTokenOutcome(expiresAt: string | null, overlap: { seconds: number; span: string }, now: number): string {
  if (overlap.seconds === 0) return 'stops working at once';
  if (expiresAt !== null && Date.parse(expiresAt) <= now + overlap.seconds * 1000) return 'keeps working until its own expiry, which comes sooner';
  return `keeps working for ${overlap.span}, then stops`;
}

/** `default`, or each limit of the key's own as `events 50/min`, in the order of the buckets. */
export function describeLimits(limits: RateLimits | null, buckets: readonly RateLimitBucket[]): string {
  if (!limits) return 'default';
  const known = buckets.map((bucket) => bucket.name);
  // A bucket the page's meta does not know yet (a newer gateway) is still shown, after the others.
  const names = [...known.filter((name) => name in limits), ...Object.keys(limits).filter((name) => !known.includes(name))];
  return names.map((name) => `${name} ${limits[name]}/min`).join(', ') || 'default';
}

/**
 * The limits typed in the form, one field per bucket: an empty field keeps the platform's limit,
 * and all empty is null (the platform's limits). A value must be a whole number from 1 to `max`.
 */
export function limitsFromFields(fields: readonly { bucket: string; value: string }[], max: number): { rateLimits: RateLimits | null } | { problem: string } {
  const limits: RateLimits = {};
  for (const { bucket, value } of fields) {
    const text = value.trim();
    if (text === '') continue;
    const limit = Number(text);
    if (!/^\d+$/.test(text) || limit < 1 || limit > max) {
      return { problem: `The ${bucket} limit must be a whole number of requests per minute from 1 to ${max}, or empty for the platform's limit.` };
    }
    limits[bucket] = limit;
  }
  return { rateLimits: Object.keys(limits).length > 0 ? limits : null };
}

/** The starts (ms) of the hours the usage chart shows, oldest first, the current UTC hour last. */
export function usageHours(now: number, hours = USAGE_HOURS): number[] {
  const current = Math.floor(now / HOUR_MS) * HOUR_MS;
  return Array.from({ length: hours }, (_, i) => current - (hours - 1 - i) * HOUR_MS);
}

export interface UsageChart {
  /** Each hour's start in seconds (the chart's x values). */
  xs: number[];
  /** Requests per hour by status class; 0 in an hour without traffic. */
  counts: Record<StatusClass, number[]>;
  /** Per class, the top of its bar: its count plus the classes below it, so the bars stack. */
  stacked: number[][];
  totals: Record<StatusClass, number>;
  total: number;
  /** The API's hours with traffic within the chart's hours, oldest first (the chart's text alternative). */
  rows: UsageBucket[];
}

/** The usage API's hours (only those with traffic) spread over the chart's hours. */
export function usageChart(buckets: readonly UsageBucket[], hours: readonly number[]): UsageChart {
  const at = new Map(hours.map((hour, index) => [hour, index]));
  const counts = Object.fromEntries(STATUS_CLASSES.map((status) => [status, hours.map(() => 0)])) as Record<StatusClass, number[]>;
  const rows: UsageBucket[] = [];
  for (const bucket of buckets) {
    const index = at.get(Date.parse(bucket.start));
    if (index === undefined) continue;
    rows.push(bucket);
    for (const status of STATUS_CLASSES) counts[status][index] = bucket.by_status[status] ?? 0;
  }
  const stacked: number[][] = [];
  for (const status of STATUS_CLASSES) {
    const below = stacked.at(-1);
    stacked.push(counts[status].map((count, index) => count + (below?.[index] ?? 0)));
  }
  const totals = Object.fromEntries(STATUS_CLASSES.map((status) => [status, counts[status].reduce((sum, count) => sum + count, 0)])) as Record<
    StatusClass,
    number
  >;
  const total = STATUS_CLASSES.reduce((sum, status) => sum + totals[status], 0);
  return { xs: hours.map((hour) => hour / 1000), counts, stacked, totals, total, rows };
}

/** `12 requests in the last 24 hours: 9 2xx, 1 4xx, 2 429` (classes without requests left out). */
export function describeUsage(chart: Pick<UsageChart, 'totals' | 'total'>): string {
  if (chart.total === 0) return `No requests in the last ${USAGE_HOURS} hours`;
  const parts = STATUS_CLASSES.filter((status) => chart.totals[status] > 0).map((status) => `${chart.totals[status]} ${status}`);
  return `${chart.total} ${chart.total === 1 ? 'request' : 'requests'} in the last ${USAGE_HOURS} hours: ${parts.join(', ')}`;
}
