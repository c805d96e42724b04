// What the pipelines page says about a pipeline, a schedule, its runs and a run's log: plain
// functions of the API's answers (contract sections 10, 13, 14, 19), without the DOM, so they are tested alone.
import type { ConnectorSpec, Pipeline, Run, RunLogLine, RunStatus, Schedule } from './api.js';

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

/** `10 minutes`, `1 hour`, `90 seconds`: a span in the largest unit that divides it. */
export function describeDuration(seconds: number): string {
  for (const [size, one, many] of UNITS) {
    if (seconds % size === 0) return seconds === size ? `1 ${one}` : `${seconds / size} ${many}`;
  }
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

/** What a trigger (or a retry) does while a run of the pipeline is queued or running. */
export function describeConcurrencyPolicy(policy: Pipeline['concurrency_policy']): string {
  return policy === 'enqueue' ? 'enqueue (a trigger while a run is active waits in line as pending)' : 'reject (a trigger while a run is active is refused)';
}

/** `none` or `fail after 10 minutes running`. */
export function describeRunTimeout(seconds: number | null): string {
  return seconds === null ? 'none' : `fail after ${describeDuration(seconds)} running`;
}

/** The run settings editor's fields, as typed. */
export interface RunSettingsFields {
  policy: string;
  timeoutSeconds: string;
}

export type RunSettings = Pick<Pipeline, 'concurrency_policy' | 'run_timeout_seconds'>;

/**
 * The PATCH body of the run settings: an empty timeout is none (`null`). The range (10 to
 * 86,400 s) is the API's to say: its 400 names the field, and the page shows it.
 */
export function runSettingsFromFields(fields: RunSettingsFields): { settings: RunSettings } | { problem: string } {
  if (fields.policy !== 'reject' && fields.policy !== 'enqueue') return { problem: `Unknown concurrency policy ${fields.policy}.` };
  const text = fields.timeoutSeconds.trim();
  if (text !== '' && !/^\d+$/.test(text)) return { problem: 'Give the run timeout as a whole number of seconds, or leave it empty for none.' };
  return { settings: { concurrency_policy: fields.policy, run_timeout_seconds: text === '' ? null : Number(text) } };
}

/** The editor's fields showing a pipeline's stored run settings. */
export function runSettingsFieldsOf(pipeline: RunSettings): RunSettingsFields {
  return { policy: pipeline.concurrency_policy, timeoutSeconds: pipeline.run_timeout_seconds === null ? '' : String(pipeline.run_timeout_seconds) };
}

/** A pending, queued or running run can be cancelled (contract sections 10 and 19). */
export function canCancel(status: RunStatus): boolean {
  return status === 'pending' || status === 'queued' || status === 'running';
}

/** Only a failed or cancelled run can be retried (contract section 19). */
export function canRetry(status: RunStatus): boolean {
  return status === 'failed' || status === 'cancelled';
}

/**
 * Each pending run's place in its pipeline's line, 1 for the next to start: pending runs start
 * in trigger order, which is `(created_at, id)`.
 */
export function linePlaces(runs: readonly Pick<Run, 'id' | 'status' | 'created_at'>[]): Map<string, number> {
  const line = runs
    .filter((run) => run.status === 'pending')
    .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return new Map(line.map((run, i) => [run.id, i + 1]));
}

/** `next to start`, `3rd of 5 in line`. */
export function describeLinePlace(place: number, waiting: number): string {
  if (place === 1) return waiting === 1 ? 'next to start' : `next to start, of ${waiting} in line`;
  return `${ordinal(place)} of ${waiting} in line`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}
