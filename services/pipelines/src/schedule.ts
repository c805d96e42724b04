import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { z } from 'zod';

/**
 * Pipeline schedules (contract section 13): what `schedule` accepts, and when a schedule ticks.
 * Cron expressions are parsed and stepped by cron-parser; its answers around DST changes are
 * filtered to the contract's rule (a local time that does not exist is skipped; one that happens
 * twice runs once, at the first instant), see isContractTick.
 */

export const MAX_INTERVAL_S = 31_536_000;
export const DEFAULT_MIN_INTERVAL_S = 60;
export const DEFAULT_TIMEZONE = 'UTC';

export type CronSchedule = { type: 'cron'; cron: string; timezone?: string };
export type IntervalSchedule = { type: 'interval'; every_seconds: number };
/** A schedule as sent and stored (`timezone` may be absent: it defaults to UTC). */
export type Schedule = CronSchedule | IntervalSchedule;

/** A cron item: `*`, a value or a range (numbers or names), each with an optional step. */
const CRON_ITEM = /^(\*|[0-9]{1,2}|[A-Za-z]{3})(-([0-9]{1,2}|[A-Za-z]{3}))?(\/[0-9]{1,2})?$/;
const MAX_CRON_LENGTH = 200;

type Issue = { path: string; code: string; message: string };

/** The parsed cron: null when it is not 5 fields of `*`, lists, ranges, steps and names, or is refused by the parser. */
export function parseCron(cron: string, timezone: string, currentDate?: Date): CronExpression | null {
  if (cron.length > MAX_CRON_LENGTH) return null;
  const fields = cron.trim().split(/[ \t]+/);
  if (fields.length !== 5) return null;
  if (!fields.every((field) => field.split(',').every((item) => CRON_ITEM.test(item)))) return null;
  try {
    return CronExpressionParser.parse(fields.join(' '), { tz: timezone, ...(currentDate && { currentDate }) });
  } catch {
    return null;
  }
}

/**
 * An IANA time zone name the runtime knows (`UTC`, links such as `US/Eastern` included). Intl
 * accepts any letter case ("europe/berlin"); a name has one spelling, with each part capitalised.
 */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Z][A-Za-z0-9_+-]*(\/[A-Z][A-Za-z0-9_+-]*)*$/.test(name) || name.length > 64) return false;
  return remembered(zoneValidity, name, () => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: name });
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Answers that depend only on their input and the runtime (a zone name, a stored schedule), kept
 * so that showing a pipeline does not build a time zone formatter or parse its cron again each
 * time (about 2.5 ms a cron pipeline: a list of 100 held the service for 250 ms). Bounded: a full
 * map starts again empty, so no client can grow it.
 */
const MAX_REMEMBERED = 10_000;
const zoneValidity = new Map<string, boolean>();
const storedValidity = new Map<string, boolean>();

function remembered(cache: Map<string, boolean>, key: string, compute: () => boolean): boolean {
  let answer = cache.get(key);
  if (answer === undefined) {
    answer = compute();
    if (cache.size >= MAX_REMEMBERED) cache.clear();
    cache.set(key, answer);
  }
  return answer;
}

/**
 * `searchTicks`: whether a cron is also checked to match some date, a search through the calendar
 * that is made once, when a schedule is set; a stored schedule is only read back (contract 20:
 * rendering a pipeline costs the same whatever its schedule).
 */
function issuesOf(value: unknown, minIntervalS: number, searchTicks = true): Issue[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ path: '', code: 'invalid_type', message: 'must be null or an object' }];
  }
  const input = value as Record<string, unknown>;
  if (input.type === undefined) return [{ path: 'type', code: 'required', message: 'is required' }];
  if (input.type !== 'cron' && input.type !== 'interval') return [{ path: 'type', code: 'invalid_enum', message: 'must be one of cron, interval' }];
  const known = input.type === 'cron' ? ['type', 'cron', 'timezone'] : ['type', 'every_seconds'];
  const issues: Issue[] = Object.keys(input)
    .filter((key) => !known.includes(key))
    .map((key) => ({ path: key, code: 'unknown_field', message: 'is not a known field' }));
  if (input.type === 'interval') {
    const every = input.every_seconds;
    if (every === undefined) issues.push({ path: 'every_seconds', code: 'required', message: 'is required' });
    else if (typeof every !== 'number' || !Number.isInteger(every)) issues.push({ path: 'every_seconds', code: 'invalid_type', message: 'must be an integer' });
    else if (every < minIntervalS) issues.push({ path: 'every_seconds', code: 'too_small', message: `must be at least ${minIntervalS}` });
    else if (every > MAX_INTERVAL_S) issues.push({ path: 'every_seconds', code: 'too_big', message: `must be at most ${MAX_INTERVAL_S}` });
    return issues;
  }
  const timezone = input.timezone ?? DEFAULT_TIMEZONE;
  let timezoneOk = false;
  if (typeof timezone !== 'string') issues.push({ path: 'timezone', code: 'invalid_type', message: 'must be a string' });
  else if (!isTimeZone(timezone)) issues.push({ path: 'timezone', code: 'invalid_format', message: 'must be an IANA time zone name, such as Europe/Berlin' });
  else timezoneOk = true;
  const cron = input.cron;
  if (cron === undefined) issues.push({ path: 'cron', code: 'required', message: 'is required' });
  else if (typeof cron !== 'string') issues.push({ path: 'cron', code: 'invalid_type', message: 'must be a string' });
  else {
    const zone = timezoneOk ? (timezone as string) : DEFAULT_TIMEZONE;
    if (!parseCron(cron, zone)) {
      issues.push({
        path: 'cron',
        code: 'invalid_format',
        message: 'must be 5 fields (minute hour day-of-month month day-of-week) of *, lists, ranges, steps and names',
      });
    } else if (searchTicks && !nextCronTick({ type: 'cron', cron, timezone: zone }, new Date(0))) {
      issues.push({ path: 'cron', code: 'invalid_format', message: 'never matches a date' });
    }
  }
  return issues;
}

/**
 * The `schedule` field (built from the config's minimum interval): null, or a cron or interval
 * schedule, kept as sent. Every problem is reported at its own field (`schedule.cron`...), with
 * the contract's codes.
 */
export function scheduleSchema(minIntervalS: number) {
  return z.unknown().transform((value, ctx): Schedule | null => {
    if (value === null) return null;
    const issues = issuesOf(value, minIntervalS);
    for (const issue of issues) {
      ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path ? [issue.path] : [], params: { code: issue.code } });
    }
    return issues.length > 0 ? z.NEVER : (value as Schedule);
  });
}

/** The schedule as stored (validated when it was set); anything else reads as no schedule. */
export function storedSchedule(value: unknown): Schedule | null {
  if (value === null || value === undefined) return null;
  return remembered(storedValidity, JSON.stringify(value), () => issuesOf(value, 1, false).length === 0) ? (value as Schedule) : null;
}

/** The schedule as the API shows it: the cron's timezone spelled out. */
export function renderSchedule(schedule: Schedule | null): RenderedSchedule | null {
  if (!schedule) return null;
  if (schedule.type === 'interval') return { type: 'interval', every_seconds: schedule.every_seconds };
  return { type: 'cron', cron: schedule.cron, timezone: schedule.timezone ?? DEFAULT_TIMEZONE };
}
export type RenderedSchedule = { type: 'cron'; cron: string; timezone: string } | { type: 'interval'; every_seconds: number };

const zoneParts = new Map<string, Intl.DateTimeFormat>();

/** The local wall time of `at` in `timezone`, as "YYYY-MM-DD HH:mm". */
function wallTime(at: Date, timezone: string): string {
  let format = zoneParts.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    zoneParts.set(timezone, format);
  }
  return format.format(at);
}

// Every DST change in the tz database moves clocks by 30, 60 or 120 minutes.
const DST_SHIFTS_MS = [30, 60, 120].map((minutes) => minutes * 60_000);

/**
 * Whether a match cron-parser gave is a tick by the contract. A local time that does not exist
 * (the DST gap) comes back moved past the gap (02:30 → 03:30): its local hour and minute then are
 * not in the expression, so it is no tick. A local time that happens twice (fall back) comes back
 * for both instants: only the first is a tick (the same wall time did not occur shortly before).
 */
function isContractTick(expression: CronExpression, at: Date, timezone: string): boolean {
  const wall = wallTime(at, timezone);
  const hour = Number(wall.slice(-5, -3));
  const minute = Number(wall.slice(-2));
  if (!expression.fields.hour.values.includes(hour as never) || !expression.fields.minute.values.includes(minute as never)) return false;
  return !DST_SHIFTS_MS.some((shift) => wallTime(new Date(at.getTime() - shift), timezone) === wall);
}

// Enough for every DST night (each drops at most a few matches) and far below the parser's own search bound.
const MAX_SKIPPED = 1_000;

function nextCronTick(schedule: CronSchedule, after: Date): Date | null {
  const timezone = schedule.timezone ?? DEFAULT_TIMEZONE;
  const expression = parseCron(schedule.cron, timezone, after);
  if (!expression) return null;
  try {
    for (let i = 0; i < MAX_SKIPPED; i++) {
      const at = expression.next().toDate();
      if (at.getTime() > after.getTime() && isContractTick(expression, at, timezone)) return at;
    }
  } catch {
    // No match within the parser's search bound: a cron that never matches.
  }
  return null;
}

function latestCronTick(schedule: CronSchedule, atOrBefore: Date, notBefore: Date): Date | null {
  const timezone = schedule.timezone ?? DEFAULT_TIMEZONE;
  const expression = parseCron(schedule.cron, timezone, new Date(atOrBefore.getTime() + 1));
  if (!expression) return null;
  try {
    for (let i = 0; i < MAX_SKIPPED; i++) {
      const at = expression.prev().toDate();
      if (at.getTime() < notBefore.getTime()) return null;
      if (at.getTime() <= atOrBefore.getTime() && isContractTick(expression, at, timezone)) return at;
    }
  } catch {
    // No earlier match.
  }
  return null;
}

/**
 * The first tick strictly after `after`. `anchor` is when the schedule was set or the pipeline
 * resumed: interval ticks are anchor + k * every_seconds (k ≥ 1). Null: the cron never matches.
 */
export function nextTick(schedule: Schedule, anchor: Date, after: Date): Date | null {
  if (schedule.type === 'cron') return nextCronTick(schedule, after);
  const every = schedule.every_seconds * 1000;
  const k = Math.max(1, Math.floor((after.getTime() - anchor.getTime()) / every) + 1);
  return new Date(anchor.getTime() + k * every);
}

/**
 * The latest tick at or before `atOrBefore` and after `anchor` (null when there is none): after an
 * outage, the one tick that gets a run (contract: not one run per missed tick).
 */
export function latestTick(schedule: Schedule, anchor: Date, atOrBefore: Date): Date | null {
  if (schedule.type === 'cron') return latestCronTick(schedule, atOrBefore, anchor);
  const every = schedule.every_seconds * 1000;
  const k = Math.floor((atOrBefore.getTime() - anchor.getTime()) / every);
  return k >= 1 ? new Date(anchor.getTime() + k * every) : null;
}
