// What the pipelines page says about a pipeline, a schedule and a run's log: plain functions of
// the API's answers (contract sections 10, 13, 14), without the DOM, so they are tested alone.
import type { ConnectorSpec, RunLogLine, Schedule } from './api.js';

/** `sample (records: 100, seed: 7)`: a connector and its config on one line. */
export function describeConnector(connector: ConnectorSpec): string {
  const config = Object.entries(connector.config)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
  return config ? `${connector.connector} (${config})` : connector.connector;
}

const UNITS: [seconds: number, one: string, many: string][] = [
  [86_400, 'day', 'days'],
  [3_600, 'hour', 'hours'],
  [60, 'minute', 'minutes'],
];

/** `every 90 seconds`, `every 2 hours`: the largest unit that divides the interval. */
export function describeInterval(seconds: number): string {
  for (const [size, one, many] of UNITS) {
    if (seconds % size === 0) return seconds === size ? `every ${one}` : `every ${seconds / size} ${many}`;
  }
  return seconds === 1 ? 'every second' : `every ${seconds} seconds`;
}

export function describeSchedule(schedule: Schedule | null): string {
  if (schedule === null) return 'none (runs only when triggered)';
  if (schedule.type === 'interval') return describeInterval(schedule.every_seconds);
  return `cron ${schedule.cron} (${schedule.timezone})`;
}

/** The schedule editor's fields, as typed. */
export interface ScheduleFields {
  type: string;
  everySeconds: string;
  cron: string;
  timezone: string;
}

/**
 * The `schedule` of a PATCH or create body from the editor's fields. Only what the form itself
 * cannot know is left to the API (a cron that never matches, an unknown zone, the minimum
 * interval): its 400 names the field, and the page shows it.
 */
export function scheduleFromFields(fields: ScheduleFields): { schedule: Schedule | null } | { problem: string } {
  if (fields.type === 'none') return { schedule: null };
  if (fields.type === 'interval') {
    const text = fields.everySeconds.trim();
    if (!/^\d+$/.test(text)) return { problem: 'Give the interval as a whole number of seconds.' };
    return { schedule: { type: 'interval', every_seconds: Number(text) } };
  }
  if (fields.type === 'cron') {
    const cron = fields.cron.trim().replace(/\s+/g, ' ');
    if (cron.split(' ').length !== 5) return { problem: 'A cron has five fields: minute, hour, day of month, month, day of week.' };
    return { schedule: { type: 'cron', cron, timezone: fields.timezone.trim() || 'UTC' } };
  }
  return { problem: `Unknown schedule type ${fields.type}.` };
}

/** The editor's fields showing a stored schedule. */
export function fieldsOf(schedule: Schedule | null): ScheduleFields {
  if (schedule === null) return { type: 'none', everySeconds: '', cron: '', timezone: 'UTC' };
  if (schedule.type === 'interval') return { type: 'interval', everySeconds: String(schedule.every_seconds), cron: '', timezone: 'UTC' };
  return { type: 'cron', everySeconds: '', cron: schedule.cron, timezone: schedule.timezone };
}

/** A log line's `data` in words: `records_read: 500, records_written: 500`; an error by its message. */
export function describeLogData(data: RunLogLine['data']): string {
  if (data === null) return '';
  return Object.entries(data)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([key, value]) => `${key}: ${describeValue(value)}`)
    .join(', ');
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && 'message' in value && typeof value.message === 'string') {
    const code = 'code' in value && typeof value.code === 'string' ? `${value.code}: ` : '';
    return `${code}${value.message}`;
  }
  return JSON.stringify(value);
}

/** `attempt 2` (attempt 0 is before the first attempt: the run was queued). */
export function describeAttempt(attempt: number): string {
  return attempt === 0 ? 'before the first attempt' : `attempt ${attempt}`;
}
