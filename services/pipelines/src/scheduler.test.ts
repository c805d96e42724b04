import { planTick } from './scheduler';

const at = (iso: string) => new Date(iso);
const every = (seconds: number) => ({ type: 'interval', every_seconds: seconds });

/** planTick for a pipeline of `schedule` anchored at `anchor`, due at `due`, at `now`, as ISO strings. */
function plan(schedule: unknown, anchor: string | null, due: string, now: string): { scheduledFor: string | null; nextRunAt: string | null } {
  const decided = planTick({ schedule, scheduleAnchorAt: anchor === null ? null : at(anchor), nextRunAt: at(due) }, at(now));
  return { scheduledFor: decided.scheduledFor?.toISOString() ?? null, nextRunAt: decided.nextRunAt?.toISOString() ?? null };
}

describe('planTick: what a scheduler pass does for a due pipeline', () => {
  test('on time: the run is for the due tick, the next tick is one interval later', () => {
    expect(plan(every(60), '2025-01-01T00:00:00.000Z', '2025-01-01T00:01:00.000Z', '2025-01-01T00:01:00.000Z')).toEqual({
      scheduledFor: '2025-01-01T00:01:00.000Z',
      nextRunAt: '2025-01-01T00:02:00.000Z',
    });
  });

  test('after an outage: one run, for the latest missed tick, and the next tick after now', () => {
    expect(plan(every(60), '2025-01-01T00:00:00.000Z', '2025-01-01T00:01:00.000Z', '2025-01-01T05:00:30.000Z')).toEqual({
      scheduledFor: '2025-01-01T05:00:00.000Z',
      nextRunAt: '2025-01-01T05:01:00.000Z',
    });
  });

  test('interval ticks count from the anchor (when the schedule was set or the pipeline resumed), not from the clock', () => {
    expect(plan(every(3600), '2025-01-01T00:17:42.000Z', '2025-01-01T01:17:42.000Z', '2025-01-01T02:30:00.000Z')).toEqual({
      scheduledFor: '2025-01-01T02:17:42.000Z',
      nextRunAt: '2025-01-01T03:17:42.000Z',
    });
  });

  test('a row without an anchor counts from its next_run_at', () => {
    expect(plan(every(60), null, '2025-01-01T00:01:00.000Z', '2025-01-01T00:03:30.000Z')).toEqual({
      scheduledFor: '2025-01-01T00:03:00.000Z',
      nextRunAt: '2025-01-01T00:04:00.000Z',
    });
  });

  test('a cron ticks at its local time: the latest match for the run, the next match for next_run_at', () => {
    const berlin = { type: 'cron', cron: '0 3 * * *', timezone: 'Europe/Berlin' };
    expect(plan(berlin, '2025-01-01T00:00:00.000Z', '2025-01-02T02:00:00.000Z', '2025-01-05T10:00:00.000Z')).toEqual({
      scheduledFor: '2025-01-05T02:00:00.000Z',
      nextRunAt: '2025-01-06T02:00:00.000Z',
    });
  });

  test('when no tick lies between the anchor and now, the run is for the due next_run_at', () => {
    expect(plan(every(60), '2025-01-01T00:00:30.000Z', '2025-01-01T00:00:10.000Z', '2025-01-01T00:01:00.000Z')).toEqual({
      scheduledFor: '2025-01-01T00:00:10.000Z',
      nextRunAt: '2025-01-01T00:01:30.000Z',
    });
  });

  test('a stored schedule that does not read (or none) gets no run and no next tick', () => {
    for (const schedule of [null, { type: 'weekly' }, { type: 'interval', every_seconds: 60, colour: 'red' }, { type: 'cron', cron: 'nonsense' }]) {
      expect([schedule, plan(schedule, '2025-01-01T00:00:00.000Z', '2025-01-01T00:01:00.000Z', '2025-01-01T00:01:00.000Z')]).toEqual([
        schedule,
        { scheduledFor: null, nextRunAt: null },
      ]);
    }
  });
});
