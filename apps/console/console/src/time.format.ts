// Times as the console shows them: always with their zone, so a time read from a shared screen or
// a screenshot is never ambiguous. A timestamp is shown in the browser's zone with its short name
// ("27 Nov 2025, 03:00:05 CET", or "GMT+1" where the locale has no name for it); a schedule's time in the
// schedule's own zone with UTC beside it ("28 Nov 2025, 03:00 Europe/Berlin (02:00 UTC)").

export interface TimeOptions {
  /** The reader's locale when left out. */
  locale?: string;
  /** The browser's zone when left out. */
  timeZone?: string;
  seconds?: boolean;
}

const DATE = { year: 'numeric', month: 'short', day: 'numeric' } as const;

/** A timestamp with its date, time and zone name. */
export function formatTime(iso: string, { locale, timeZone, seconds = true }: TimeOptions = {}): string {
  return new Intl.DateTimeFormat(locale, {
    ...DATE,
    hour: '2-digit',
    minute: '2-digit',
    ...(seconds ? { second: '2-digit' } : {}),
    timeZone,
    timeZoneName: 'short',
  }).format(new Date(iso));
}

/**
 * A time of a schedule in the schedule's IANA zone, named by it, with the same instant in UTC
 * (its date too when the UTC date is another one).
 */
export function formatInZone(iso: string, zone: string, locale?: string): string {
  const date = new Date(iso);
  const inZone = new Intl.DateTimeFormat(locale, { ...DATE, hour: '2-digit', minute: '2-digit', timeZone: zone }).format(date);
  if (zone === 'UTC' || zone === 'Etc/UTC') return `${inZone} UTC`;
  const day = (timeZone: string) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
  const utc = new Intl.DateTimeFormat(locale, {
    ...(day(zone) === day('UTC') ? {} : DATE),
    hour: '2-digit',
    minute: '2-digit',
    timeZone: 'UTC',
  }).format(date);
  return `${inZone} ${zone} (${utc} UTC)`;
}

/** The browser's IANA zone, e.g. `Europe/Berlin`. */
export const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** The zone a schedule runs in, if it names one (a cron's; an interval has none). */
export const scheduleZone = (schedule: { type: string; timezone?: string } | null): string | undefined =>
  schedule?.type === 'cron' ? schedule.timezone : undefined;

/**
 * A chart bucket's start: an hour in the reader's zone ("15 Jan 2025, 03:00 CET"); a day by its
 * UTC date ("15 Jan 2025 (UTC)"), since daily buckets are UTC days and a zone would move them.
 */
export function formatBucket(iso: string, interval: 'hour' | 'day', { locale, timeZone }: Omit<TimeOptions, 'seconds'> = {}): string {
  if (interval === 'hour') return formatTime(iso, { locale, timeZone, seconds: false });
  return `${new Intl.DateTimeFormat(locale, { ...DATE, timeZone: 'UTC' }).format(new Date(iso))} (UTC)`;
}
