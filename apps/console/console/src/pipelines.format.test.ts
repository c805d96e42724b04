import {
  canCancel,
  canRetry,
  describeAttempt,
  describeConcurrencyPolicy,
  describeConnector,
  describeDuration,
  describeInterval,
  describeLinePlace,
  describeLogData,
  describeRunTimeout,
  describeSchedule,
  fieldsOf,
  linePlaces,
  runSettingsFieldsOf,
  runSettingsFromFields,
  scheduleFromFields,
} from './pipelines.format';

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

describe('run settings (contract section 19)', () => {
  test.each([
    [10, '10 seconds'],
    [1, '1 second'],
    [60, '1 minute'],
    [90, '90 seconds'],
    [600, '10 minutes'],
    [3_600, '1 hour'],
    [86_400, '1 day'],
  ])('a span of %i s reads "%s"', (seconds, words) => {
    expect(describeDuration(seconds)).toBe(words);
  });

  test('the timeout and the policy in words; no timeout is none', () => {
    expect(describeRunTimeout(null)).toBe('none');
    expect(describeRunTimeout(600)).toBe('fail after 10 minutes running');
    expect(describeConcurrencyPolicy('reject')).toMatch(/^reject \(.*refused\)$/);
    expect(describeConcurrencyPolicy('enqueue')).toMatch(/^enqueue \(.*pending\)$/);
  });

  test('an empty timeout is none (null); a whole number of seconds is sent as it is, its range left to the API', () => {
    expect(runSettingsFromFields({ policy: 'enqueue', timeoutSeconds: ' ' })).toEqual({
      settings: { concurrency_policy: 'enqueue', run_timeout_seconds: null },
    });
    expect(runSettingsFromFields({ policy: 'reject', timeoutSeconds: ' 600 ' })).toEqual({
      settings: { concurrency_policy: 'reject', run_timeout_seconds: 600 },
    });
    expect(runSettingsFromFields({ policy: 'reject', timeoutSeconds: '5' })).toEqual({ settings: { concurrency_policy: 'reject', run_timeout_seconds: 5 } });
    for (const bad of ['1.5', '-10', 'ten', '1e3']) {
      expect(runSettingsFromFields({ policy: 'reject', timeoutSeconds: bad })).toEqual({ problem: expect.stringMatching(/whole number of seconds/) });
    }
    expect(runSettingsFromFields({ policy: 'queue', timeoutSeconds: '' })).toEqual({ problem: expect.stringMatching(/policy/) });
  });

  test('the editor shows the stored settings as they were saved', () => {
    for (const settings of [
      { concurrency_policy: 'reject', run_timeout_seconds: null },
      { concurrency_policy: 'enqueue', run_timeout_seconds: 86_400 },
    ] as const) {
      expect(runSettingsFromFields(runSettingsFieldsOf(settings))).toEqual({ settings });
    }
  });
});

describe('runs an operator steers', () => {
  const statuses = ['pending', 'queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

  test('pending, queued and running runs can be cancelled; failed and cancelled ones retried', () => {
    expect(statuses.filter(canCancel)).toEqual(['pending', 'queued', 'running']);
    expect(statuses.filter(canRetry)).toEqual(['failed', 'cancelled']);
  });

  test('pending runs take their places in trigger order (created_at, then id), whatever order they are listed in', () => {
    const at = (ms: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, 0, ms)).toISOString();
    const runs = [
      { id: 'e', status: 'pending', created_at: at(40) },
      { id: 'd', status: 'pending', created_at: at(30) },
      { id: 'c2', status: 'pending', created_at: at(20) },
      { id: 'c1', status: 'pending', created_at: at(20) },
      { id: 'b', status: 'running', created_at: at(10) },
      { id: 'a', status: 'cancelled', created_at: at(0) },
    ] as const;
    expect([...linePlaces(runs)]).toEqual([
      ['c1', 1],
      ['c2', 2],
      ['d', 3],
      ['e', 4],
    ]);
    expect(linePlaces(runs.slice(4)).size).toBe(0);
  });

  test.each([
    [1, 1, 'next to start'],
    [1, 3, 'next to start, of 3 in line'],
    [2, 3, '2nd of 3 in line'],
    [3, 20, '3rd of 20 in line'],
    [4, 20, '4th of 20 in line'],
    [11, 20, '11th of 20 in line'],
    [12, 20, '12th of 20 in line'],
    [13, 20, '13th of 20 in line'],
  ])('place %i of %i reads "%s"', (place, waiting, words) => {
    expect(describeLinePlace(place, waiting)).toBe(words);
  });
});
