import { CronExpression } from 'cron-parser';
import { z } from 'zod';
import { isTimeZone, latestTick, nextTick, Schedule, scheduleSchema, storedSchedule } from './schedule';

const EPOCH = new Date(0);

/** The next `count` ticks strictly after `from`. */
function ticks(schedule: Schedule, from: string, count: number, anchor = EPOCH): string[] {
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < count; i++) {
    at = nextTick(schedule, anchor, at)!;
    out.push(at.toISOString());
  }
  return out;
}

const berlin = (cron: string): Schedule => ({ type: 'cron', cron, timezone: 'Europe/Berlin' });
const utc = (cron: string): Schedule => ({ type: 'cron', cron });

/** The field errors of a schedule, as [field, code]. */
function problems(value: unknown, minIntervalS = 60): [string, string][] {
  const result = scheduleSchema(minIntervalS).safeParse(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => [issue.path.join('.'), String((issue as { params?: { code?: string } }).params?.code)]);
}

describe('Europe/Berlin spring forward (2025-03-30: 02:00 CET → 03:00 CEST at 01:00Z): a local time that does not exist is skipped', () => {
  test('30 2 * * * has no tick that night (02:30 does not exist), not one moved to 03:30', () => {
    expect(ticks(berlin('30 2 * * *'), '2025-03-28T12:00:00Z', 3)).toEqual([
      '2025-03-29T01:30:00.000Z', // 02:30 CET
      '2025-03-31T00:30:00.000Z', // 02:30 CEST: the 30th is skipped
      '2025-04-01T00:30:00.000Z',
    ]);
  });
  test('*/30 * * * *: 01:30 CET then 03:00 CEST', () => {
    expect(ticks(berlin('*/30 * * * *'), '2025-03-30T00:00:00Z', 4)).toEqual([
      '2025-03-30T00:30:00.000Z', // 01:30 CET
      '2025-03-30T01:00:00.000Z', // 03:00 CEST
      '2025-03-30T01:30:00.000Z',
      '2025-03-30T02:00:00.000Z',
    ]);
  });
  test('0 * * * *: 01:00 CET then 03:00 CEST', () => {
    expect(ticks(berlin('0 * * * *'), '2025-03-29T23:30:00Z', 3)).toEqual(['2025-03-30T00:00:00.000Z', '2025-03-30T01:00:00.000Z', '2025-03-30T02:00:00.000Z']);
  });
  test('the latest tick before 03:45 CEST is 03:30 CEST, and before that 01:30 CET', () => {
    expect(latestTick(berlin('*/30 * * * *'), EPOCH, new Date('2025-03-30T01:45:00Z'))?.toISOString()).toBe('2025-03-30T01:30:00.000Z');
    expect(latestTick(berlin('*/30 * * * *'), EPOCH, new Date('2025-03-30T00:59:59Z'))?.toISOString()).toBe('2025-03-30T00:30:00.000Z');
    expect(latestTick(berlin('30 2 * * *'), EPOCH, new Date('2025-03-30T23:00:00Z'))?.toISOString()).toBe('2025-03-29T01:30:00.000Z');
  });
});

describe('Europe/Berlin fall back (2025-10-26: 03:00 CEST → 02:00 CET at 01:00Z): a local time that happens twice runs once, at the first instant', () => {
  test('30 2 * * *: once, at 02:30 CEST', () => {
    expect(ticks(berlin('30 2 * * *'), '2025-10-25T12:00:00Z', 2)).toEqual(['2025-10-26T00:30:00.000Z', '2025-10-27T01:30:00.000Z']);
  });
  test('*/30 * * * *: 02:00 and 02:30 CEST, not again in CET, then 03:00 CET', () => {
    expect(ticks(berlin('*/30 * * * *'), '2025-10-25T23:45:00Z', 4)).toEqual([
      '2025-10-26T00:00:00.000Z',
      '2025-10-26T00:30:00.000Z',
      '2025-10-26T02:00:00.000Z',
      '2025-10-26T02:30:00.000Z',
    ]);
  });
  test('0 * * * *: 02:00 CEST, then 03:00 CET (02:00 CET is the second 02:00)', () => {
    expect(ticks(berlin('0 * * * *'), '2025-10-25T23:30:00Z', 3)).toEqual(['2025-10-26T00:00:00.000Z', '2025-10-26T02:00:00.000Z', '2025-10-26T03:00:00.000Z']);
  });
  test('the latest tick during the second 02:xx hour is the first 02:30', () => {
    expect(latestTick(berlin('*/30 * * * *'), EPOCH, new Date('2025-10-26T01:45:00Z'))?.toISOString()).toBe('2025-10-26T00:30:00.000Z');
  });
});

describe('cron fields', () => {
  test('both day fields restricted: a day matches either (Vixie cron)', () => {
    // 1 Jan 2025 is a Wednesday: the 1st of each month OR every Monday.
    expect(ticks(utc('0 0 1 * MON'), '2025-01-01T00:00:00Z', 5)).toEqual([
      '2025-01-06T00:00:00.000Z',
      '2025-01-13T00:00:00.000Z',
      '2025-01-20T00:00:00.000Z',
      '2025-01-27T00:00:00.000Z',
      '2025-02-01T00:00:00.000Z',
    ]);
  });
  test('one day field restricted: only it counts', () => {
    expect(ticks(utc('0 0 1 * *'), '2025-01-01T00:00:00Z', 2)).toEqual(['2025-02-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z']);
  });
  test('day of week 0 and 7 are Sunday; names in any case', () => {
    const sundays = ['2025-01-05T00:00:00.000Z', '2025-01-12T00:00:00.000Z'];
    for (const cron of ['0 0 * * 0', '0 0 * * 7', '0 0 * * SUN', '0 0 * * sun', '0 0 * * Sun', '0 0 * jan-DEC sun']) {
      expect(ticks(utc(cron), '2025-01-01T00:00:00Z', 2)).toEqual(sundays);
    }
  });
  test('lists, ranges and steps', () => {
    expect(ticks(utc('5,10-12/2 */12 * * *'), '2025-01-01T00:00:00Z', 4)).toEqual([
      '2025-01-01T00:05:00.000Z',
      '2025-01-01T00:10:00.000Z',
      '2025-01-01T00:12:00.000Z',
      '2025-01-01T12:05:00.000Z',
    ]);
  });
  test('a cron in a zone ticks at that local time', () => {
    expect(ticks({ type: 'cron', cron: '0 9 * * *', timezone: 'America/New_York' }, '2025-01-01T00:00:00Z', 1)).toEqual(['2025-01-01T14:00:00.000Z']);
  });
});

describe('interval ticks', () => {
  const every = { type: 'interval', every_seconds: 60 } as const;
  const anchor = new Date('2025-01-01T00:00:10.500Z');
  test('anchor + k * n, k ≥ 1', () => {
    expect(ticks(every, anchor.toISOString(), 2, anchor)).toEqual(['2025-01-01T00:01:10.500Z', '2025-01-01T00:02:10.500Z']);
    expect(nextTick(every, anchor, new Date('2025-01-01T00:01:10.500Z'))?.toISOString()).toBe('2025-01-01T00:02:10.500Z');
  });
  test('the latest tick after an outage: one, the last missed', () => {
    expect(latestTick(every, anchor, new Date('2025-01-01T05:00:00Z'))?.toISOString()).toBe('2025-01-01T04:59:10.500Z');
    expect(latestTick(every, anchor, new Date('2025-01-01T00:01:10.499Z'))).toBeNull();
  });
});

describe('validation', () => {
  test('valid schedules are kept as sent', () => {
    for (const value of [
      null,
      { type: 'cron', cron: '0 3 * * *' },
      { type: 'cron', cron: '*/15 9-17 * JAN-mar mon-FRI', timezone: 'Europe/Berlin' },
      { type: 'interval', every_seconds: 60 },
      { type: 'interval', every_seconds: 31_536_000 },
    ]) {
      expect(scheduleSchema(60).parse(value)).toEqual(value);
    }
  });
  test('the codes of the contract, at their fields', () => {
    expect(problems('daily')).toEqual([['', 'invalid_type']]);
    expect(problems({})).toEqual([['type', 'required']]);
    expect(problems({ type: 'weekly' })).toEqual([['type', 'invalid_enum']]);
    expect(problems({ type: 'cron' })).toEqual([['cron', 'required']]);
    expect(problems({ type: 'cron', cron: 5 })).toEqual([['cron', 'invalid_type']]);
    expect(problems({ type: 'cron', cron: '0 0 * * *', colour: 'red' })).toEqual([['colour', 'unknown_field']]);
    expect(problems({ type: 'interval', every_seconds: 60, timezone: 'UTC' })).toEqual([['timezone', 'unknown_field']]);
    expect(problems({ type: 'interval' })).toEqual([['every_seconds', 'required']]);
    expect(problems({ type: 'interval', every_seconds: 59 })).toEqual([['every_seconds', 'too_small']]);
    expect(problems({ type: 'interval', every_seconds: 5 }, 5)).toEqual([]);
    expect(problems({ type: 'interval', every_seconds: 31_536_001 })).toEqual([['every_seconds', 'too_big']]);
    for (const bad of [60.5, '60', null, true]) expect(problems({ type: 'interval', every_seconds: bad })).toEqual([['every_seconds', 'invalid_type']]);
    expect(problems({ type: 'cron', cron: '0 0 * * *', timezone: 'Mars/Olympus' })).toEqual([['timezone', 'invalid_format']]);
    expect(problems({ type: 'cron', cron: 'nonsense', timezone: 'europe/berlin' })).toEqual([
      ['timezone', 'invalid_format'],
      ['cron', 'invalid_format'],
    ]);
  });
  test('a cron that is not 5 fields of *, lists, ranges, steps and names is invalid_format', () => {
    for (const cron of [
      '0 0 * * * *',
      '0 0 * *',
      '@daily',
      '',
      '60 * * * *',
      '* 24 * * *',
      '* * 0 * *',
      '* * * 13 *',
      '* * * * 8',
      '0 0 L * *',
      '0 0 ? * *',
      '0 0 * * 1#2',
      'H 0 * * *',
      '0 0 * * MONDAY',
      '*/0 * * * *',
    ]) {
      expect([cron, problems({ type: 'cron', cron })]).toEqual([cron, [['cron', 'invalid_format']]]);
    }
  });
  test('a cron that never matches is invalid_format', () => {
    for (const cron of ['0 0 31 2 *', '0 0 30 2 *', '0 0 31 4,6,9,11 *'])
      expect([cron, problems({ type: 'cron', cron })]).toEqual([cron, [['cron', 'invalid_format']]]);
    // With a day of week too, Vixie cron's OR makes it match on Mondays.
    expect(problems({ type: 'cron', cron: '0 0 31 2 MON' })).toEqual([]);
  });
  test('a null timezone is the default, as an absent one (stored without it)', () => {
    expect(scheduleSchema(60).parse({ type: 'cron', cron: '0 3 * * *', timezone: null })).toStrictEqual({ type: 'cron', cron: '0 3 * * *' });
    expect(storedSchedule({ type: 'cron', cron: '0 3 * * *', timezone: null })).not.toBeNull();
  });
  test('the field validates by the union it is documented and typed with: its JSON Schema is the union', () => {
    const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' });
    expect(json(scheduleSchema(60))).toEqual(json(Schedule.nullable()));
    expect(JSON.stringify(json(Schedule))).toContain('"every_seconds"');
  });
  test('time zones: IANA names as spelled, links included', () => {
    for (const name of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'US/Eastern', 'Etc/GMT+5', 'Asia/Calcutta'])
      expect([name, isTimeZone(name)]).toEqual([name, true]);
    for (const name of ['europe/berlin', 'utc', 'Mars/Base', 'Europe/', '+01:00', '']) expect([name, isTimeZone(name)]).toEqual([name, false]);
  });
});

describe('a stored schedule is read back, not searched (contract 20)', () => {
  test('reading a stored cron schedule walks no calendar; setting one does, once', () => {
    const next = jest.spyOn(CronExpression.prototype, 'next');
    try {
      const stored = { type: 'cron', cron: '0 3 29 2 *', timezone: 'Europe/Berlin' };
      expect(storedSchedule(stored)).toEqual(stored);
      expect(next).not.toHaveBeenCalled();
      expect(scheduleSchema(60).parse(stored)).toEqual(stored);
      expect(next).toHaveBeenCalled();
    } finally {
      next.mockRestore();
    }
  });
});
