import { formatInZone, formatTime, scheduleZone } from './time.format';

describe('formatTime', () => {
  test('a timestamp names its zone: the short name where the locale has one', () => {
    expect(formatTime('2025-01-15T02:00:05Z', { locale: 'en-GB', timeZone: 'Europe/Berlin' })).toBe('15 Jan 2025, 03:00:05 CET');
    expect(formatTime('2025-07-15T02:00:05Z', { locale: 'en-GB', timeZone: 'Europe/Berlin' })).toBe('15 Jul 2025, 04:00:05 CEST');
    expect(formatTime('2025-01-15T02:00:05Z', { locale: 'en-GB', timeZone: 'UTC' })).toBe('15 Jan 2025, 02:00:05 UTC');
  });

  test('and its offset where it has none; seconds can be left out', () => {
    expect(formatTime('2025-01-15T02:00:05Z', { locale: 'en-US', timeZone: 'Europe/Berlin', seconds: false })).toBe('Jan 15, 2025, 03:00 AM GMT+1');
    expect(formatTime('2025-01-15T02:00:05Z', { locale: 'en-GB', timeZone: 'Asia/Kolkata', seconds: false })).toBe('15 Jan 2025, 07:30 GMT+5:30');
  });
});

describe('formatInZone', () => {
  test("a Berlin 03:00 schedule's time reads in Berlin, with UTC beside it (winter and summer time)", () => {
    expect(formatInZone('2025-01-16T02:00:00Z', 'Europe/Berlin', 'en-GB')).toBe('16 Jan 2025, 03:00 Europe/Berlin (02:00 UTC)');
    expect(formatInZone('2025-07-16T01:00:00Z', 'Europe/Berlin', 'en-GB')).toBe('16 Jul 2025, 03:00 Europe/Berlin (01:00 UTC)');
  });

  test('the UTC date is named when it is another day; a UTC schedule says UTC once', () => {
    expect(formatInZone('2025-01-15T23:30:00Z', 'Europe/Berlin', 'en-GB')).toBe('16 Jan 2025, 00:30 Europe/Berlin (15 Jan 2025, 23:30 UTC)');
    expect(formatInZone('2025-01-15T23:30:00Z', 'UTC', 'en-GB')).toBe('15 Jan 2025, 23:30 UTC');
  });
});

test("a cron's zone is the schedule's zone; an interval or no schedule has none", () => {
  expect(scheduleZone({ type: 'cron', timezone: 'Europe/Berlin' })).toBe('Europe/Berlin');
  expect(scheduleZone({ type: 'interval' })).toBeUndefined();
  expect(scheduleZone(null)).toBeUndefined();
});
