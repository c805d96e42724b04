import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { z } from 'zod';

/**
 * Pipeline schedules (contract section 13): the `schedule` field as one zod discriminated union
 * (its validation, its type and its documentation), and when a schedule ticks. Cron expressions
 * are parsed and stepped by cron-parser; its answers around DST changes are filtered to the
 * contract's rule (a local time that does not exist is skipped; one that happens twice runs once,
 * at the first instant), see isContractTick.
 */

export const MAX_INTERVAL_S = 31_536_000;
export const DEFAULT_MIN_INTERVAL_S = 60;
export const DEFAULT_TIMEZONE = 'UTC';

/** A cron item: `*`, a value or a range (numbers or names), each with an optional step. */
const CRON_ITEM = /^(\*|[0-9]{1,2}|[A-Za-z]{3})(-([0-9]{1,2}|[A-Za-z]{3}))?(\/[0-9]{1,2})?$/;
const MAX_CRON_LENGTH = 200;

const Cron = z.string().meta({
  description:
    '5 fields: minute, hour, day of month, month, day of week; `*`, lists, ranges, steps and names (`JAN`, `MON`, any case). ' +
    'Day of week 0 and 7 are Sunday; when both day fields are restricted a day matches either (Vixie cron). A cron that never matches (`0 0 31 2 *`) is 400 `invalid_format`.',
  examples: ['0 3 * * *', '*/15 9-17 * * MON-FRI'],
});

const Timezone = z.string().meta({
  description:
    'IANA time zone name (default `UTC`). A local time that does not exist (DST gap) is skipped; one that happens twice runs once, at the first instant.',
  examples: ['Europe/Berlin'],
});

const EverySeconds = z
  .int()
  .min(1)
  .max(MAX_INTERVAL_S)
  .meta({
    description:
      'The first tick is this many seconds after the schedule was set (or the pipeline resumed), then every this many seconds. At least `PIPELINES_SCHEDULE_MIN_INTERVAL_S` (default 60), at most 31,536,000.',
    examples: [3600],
  });

export const CronSchedule = z.object({ type: z.literal('cron'), cron: Cron, timezone: Timezone.optional() });
export type CronSchedule = z.infer<typeof CronSchedule>;

export const IntervalSchedule = z
  .object({ type: z.literal('interval'), every_seconds: EverySeconds })
  .meta({ description: 'Runs every `every_seconds` seconds.' });
export type IntervalSchedule = z.infer<typeof IntervalSchedule>;

/** A schedule as sent and stored (`timezone` may be absent: it defaults to UTC). */
export const Schedule = z.discriminatedUnion('type', [CronSchedule, IntervalSchedule]);
export type Schedule = z.infer<typeof Schedule>;

/** A schedule as the API shows it: the cron's timezone spelled out. */
export const RenderedSchedule = z.discriminatedUnion('type', [
  CronSchedule.extend({ timezone: Timezone }).meta({ description: 'Runs at each match of `cron` in `timezone`.' }),
  IntervalSchedule,
]);
export type RenderedSchedule = z.infer<typeof RenderedSchedule>;

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

const invalidFormat = (message: string) => ({ message, params: { code: 'invalid_format' } });

/**
 * What a schedule must be beyond its shape: no unknown fields, a time zone the runtime knows, a
 * cron of the accepted syntax, at least `minIntervalS` seconds between interval ticks.
 * `searchTicks`: whether a cron is also checked to match some date, a search through the calendar
 * that is made once, when a schedule is set; a stored schedule is only read back (contract 20:
 * rendering a pipeline costs the same whatever its schedule).
 */
function scheduleRules(minIntervalS: number, searchTicks: boolean) {
  const timezone = Timezone.refine(isTimeZone, invalidFormat('must be an IANA time zone name, such as Europe/Berlin'));
  const cron = Cron.refine(
    (value) => parseCron(value, DEFAULT_TIMEZONE) !== null,
    invalidFormat('must be 5 fields (minute hour day-of-month month day-of-week) of *, lists, ranges, steps and names'),
  );
  return z.discriminatedUnion('type', [
    // A null timezone is the default, as an absent one is (stored schedules may hold it).
    CronSchedule.extend({ cron, timezone: timezone.nullish() })
      .strict()
      // Searched also when another field is wrong, so that one answer names every problem (a time
      // zone that is not one searches in UTC); never for a stored schedule.
      .refine((schedule: { cron: unknown; timezone?: unknown }) => !neverMatches(schedule), {
        path: ['cron'],
        ...invalidFormat('never matches a date'),
        when: () => searchTicks,
      }),
    IntervalSchedule.extend({ every_seconds: EverySeconds.min(minIntervalS) }).strict(),
  ]);
}

/** Whether a cron of the accepted syntax matches no date at all (`0 0 31 2 *`). */
function neverMatches({ cron, timezone }: { cron: unknown; timezone?: unknown }): boolean {
  if (typeof cron !== 'string' || !parseCron(cron, DEFAULT_TIMEZONE)) return false;
  const zone = typeof timezone === 'string' && isTimeZone(timezone) ? timezone : DEFAULT_TIMEZONE;
  return !nextCronTick({ type: 'cron', cron, timezone: zone }, new Date(0));
}

type Issue = { path: string; code: string; message: string };

/** Unknown fields first, then `timezone` before `cron`: the order in which a schedule's problems have always been listed. */
function listingRank(issue: Issue): number {
  if (issue.code === 'unknown_field') return 0;
  return issue.path === 'timezone' ? 1 : 2;
}

/**
 * The problems zod found, in the contract's words: `required` for a missing field, `invalid_enum`
 * for an unknown type, `unknown_field` for each unknown field, `too_small` / `too_big` with the
 * configured bounds, and the rules' own codes. One problem per field (the first: a wrong type
 * says more than the bounds it also breaks).
 */
function contractIssues(error: z.ZodError, value: unknown, minIntervalS: number): Issue[] {
  const issues: Issue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'invalid_type' && path === '') return [{ path, code: 'invalid_type', message: 'must be null or an object' }];
    const sent = (value as Record<string, unknown>)[path];
    switch (issue.code) {
      case 'invalid_union': {
        const options = (issue as { options?: unknown[] }).options ?? [];
        issues.push(
          sent === undefined
            ? { path, code: 'required', message: 'is required' }
            : { path, code: 'invalid_enum', message: `must be one of ${options.join(', ')}` },
        );
        break;
      }
      case 'unrecognized_keys':
        issues.push(...issue.keys.map((key) => ({ path: key, code: 'unknown_field', message: 'is not a known field' })));
        break;
      case 'invalid_type':
        if (sent === undefined) issues.push({ path, code: 'required', message: 'is required' });
        else issues.push({ path, code: 'invalid_type', message: issue.expected === 'string' ? 'must be a string' : 'must be an integer' });
        break;
      case 'too_small':
        issues.push({ path, code: 'too_small', message: `must be at least ${minIntervalS}` });
        break;
      case 'too_big':
        issues.push({ path, code: 'too_big', message: `must be at most ${MAX_INTERVAL_S}` });
        break;
      default:
        issues.push({ path, code: String((issue as { params?: { code?: unknown } }).params?.code), message: issue.message });
    }
  }
  const firstPerField = issues.filter((issue, i) => issue.code === 'unknown_field' || issues.findIndex((other) => other.path === issue.path) === i);
  return firstPerField.sort((a, b) => listingRank(a) - listingRank(b));
}

/**
 * The `schedule` field (built from the config's minimum interval): null, or a cron or interval
 * schedule. The rules run first and report every problem at its own field (`schedule.cron`...),
 * with the contract's codes; the union then gives the value its type and the API reference its
 * documentation (zod documents a preprocessed input by the schema after it).
 */
export function scheduleSchema(minIntervalS: number) {
  const rules = scheduleRules(minIntervalS, true);
  return z.preprocess((value, ctx) => {
    if (value === null) return value;
    const result = rules.safeParse(value);
    if (result.success) return result.data.type === 'cron' && result.data.timezone === null ? { type: 'cron', cron: result.data.cron } : result.data;
    for (const issue of contractIssues(result.error, value, minIntervalS)) {
      ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path ? [issue.path] : [], params: { code: issue.code } });
    }
    return value;
  }, Schedule.nullable());
}

const storedRules = scheduleRules(1, false);

/** The schedule as stored (validated when it was set); anything else reads as no schedule. */
export function storedSchedule(value: unknown): Schedule | null {
  if (value === null || value === undefined) return null;
  return remembered(storedValidity, JSON.stringify(value), () => storedRules.safeParse(value).success) ? (value as Schedule) : null;
}

/** The schedule as the API shows it: the cron's timezone spelled out. */
export function renderSchedule(schedule: Schedule | null): RenderedSchedule | null {
  if (!schedule) return null;
  if (schedule.type === 'interval') return { type: 'interval', every_seconds: schedule.every_seconds };
  return { type: 'cron', cron: schedule.cron, timezone: schedule.timezone ?? DEFAULT_TIMEZONE };
}

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
