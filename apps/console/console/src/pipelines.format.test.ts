import { describeAttempt, describeConnector, describeInterval, describeLogData, describeSchedule, fieldsOf, scheduleFromFields } from './pipelines.format';

describe('describeSchedule', () => {
  test.each([
    [60, 'every minute'],
    [90, 'every 90 seconds'],
    [120, 'every 2 minutes'],
    [3_600, 'every hour'],
    [7_200, 'every 2 hours'],
    [86_400, 'every day'],
    [1, 'every second'],
    [31_536_000, 'every 365 days'],
  ])('an interval of %i s reads "%s"', (seconds, words) => {
    expect(describeInterval(seconds)).toBe(words);
    expect(describeSchedule({ type: 'interval', every_seconds: seconds })).toBe(words);
  });

  test('a cron names its zone; no schedule says how the pipeline runs', () => {
    expect(describeSchedule({ type: 'cron', cron: '30 2 * * *', timezone: 'Europe/Berlin' })).toBe('cron 30 2 * * * (Europe/Berlin)');
    expect(describeSchedule(null)).toBe('none (runs only when triggered)');
  });
});

describe('scheduleFromFields', () => {
  const fields = { type: 'none', everySeconds: '', cron: '', timezone: '' };

  test('none is a null schedule (PATCH removes it)', () => {
    expect(scheduleFromFields(fields)).toEqual({ schedule: null });
  });

  test('an interval is a whole number of seconds; the minimum is the API’s to say', () => {
    expect(scheduleFromFields({ ...fields, type: 'interval', everySeconds: ' 300 ' })).toEqual({ schedule: { type: 'interval', every_seconds: 300 } });
    expect(scheduleFromFields({ ...fields, type: 'interval', everySeconds: '1' })).toEqual({ schedule: { type: 'interval', every_seconds: 1 } });
    for (const bad of ['', '1.5', '-5', 'ten', '1e3']) {
      expect(scheduleFromFields({ ...fields, type: 'interval', everySeconds: bad })).toEqual({ problem: expect.stringMatching(/whole number/) });
    }
  });

  test('a cron has five fields; spaces are collapsed and an empty zone is UTC', () => {
    expect(scheduleFromFields({ ...fields, type: 'cron', cron: '  0  6 * *   MON-FRI ', timezone: ' Europe/Berlin ' })).toEqual({
      schedule: { type: 'cron', cron: '0 6 * * MON-FRI', timezone: 'Europe/Berlin' },
    });
    expect(scheduleFromFields({ ...fields, type: 'cron', cron: '0 6 * * *', timezone: '' })).toEqual({
      schedule: { type: 'cron', cron: '0 6 * * *', timezone: 'UTC' },
    });
    for (const bad of ['', '0 6 * *', '0 0 6 * * *']) {
      expect(scheduleFromFields({ ...fields, type: 'cron', cron: bad })).toEqual({ problem: expect.stringMatching(/five fields/) });
    }
  });

  test('the editor shows a stored schedule as it was saved', () => {
    for (const schedule of [null, { type: 'interval', every_seconds: 90 }, { type: 'cron', cron: '*/15 * * * *', timezone: 'Asia/Tokyo' }] as const) {
      expect(scheduleFromFields(fieldsOf(schedule))).toEqual({ schedule });
    }
  });
});

describe('run log lines', () => {
  test('data in words: stats, an error by its code and message, nulls left out', () => {
    expect(describeLogData({ records_read: 500, records_written: 500 })).toBe('records_read: 500, records_written: 500');
    expect(describeLogData({ error: { code: 'source_error', message: 'the source answered 500' } })).toBe('error: source_error: the source answered 500');
    expect(describeLogData({ status: 'succeeded', records_read: 3, records_written: 3, error: null })).toBe(
      'status: succeeded, records_read: 3, records_written: 3',
    );
    expect(describeLogData({ trigger: 'schedule' })).toBe('trigger: schedule');
    expect(describeLogData(null)).toBe('');
  });

  test('attempt 0 is before the first attempt', () => {
    expect(describeAttempt(0)).toBe('before the first attempt');
    expect(describeAttempt(2)).toBe('attempt 2');
  });
});

test('describeConnector shows a connector with its config', () => {
  expect(describeConnector({ connector: 'sample', config: { records: 100, seed: 7 } })).toBe('sample (records: 100, seed: 7)');
  expect(describeConnector({ connector: 'postgres', config: {} })).toBe('postgres');
});
