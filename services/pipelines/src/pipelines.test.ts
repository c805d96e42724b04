import { addsSchedule, createRefusal, scheduleTimes, setsSchedule, statusChange } from './pipelines';
import type { Schedule } from './schedule';

const NOW = new Date('2025-01-01T00:00:10.000Z');
const HOURLY: Schedule = { type: 'interval', every_seconds: 3600 };
const LIMITS = { pipelines: 5, scheduled_pipelines: 2, webhook_endpoints: 20 };

describe('a set schedule counts its ticks from now', () => {
  test('active: anchored now, next tick one interval later; paused: anchored now, no next tick; none: neither', () => {
    expect(scheduleTimes(HOURLY, 'active', NOW)).toEqual({ scheduleAnchorAt: NOW, nextRunAt: new Date('2025-01-01T01:00:10.000Z') });
    expect(scheduleTimes(HOURLY, 'paused', NOW)).toEqual({ scheduleAnchorAt: NOW, nextRunAt: null });
    expect(scheduleTimes(null, 'active', NOW)).toEqual({ scheduleAnchorAt: null, nextRunAt: null });
  });
});

describe('quotas (contract section 20)', () => {
  test('a create is judged by `pipelines` first, and by `scheduled_pipelines` only with a schedule', () => {
    expect(createRefusal({ pipelines: 5, scheduled_pipelines: 2 }, LIMITS, HOURLY)).toEqual({ kind: 'quota_reached', quota: 'pipelines', limit: 5 });
    expect(createRefusal({ pipelines: 4, scheduled_pipelines: 2 }, LIMITS, HOURLY)).toEqual({ kind: 'quota_reached', quota: 'scheduled_pipelines', limit: 2 });
    expect(createRefusal({ pipelines: 4, scheduled_pipelines: 2 }, LIMITS, null)).toBeUndefined();
    expect(createRefusal({ pipelines: 4, scheduled_pipelines: 1 }, LIMITS, HOURLY)).toBeUndefined();
  });

  test('only a schedule set on a pipeline that had none adds a scheduled pipeline; changing or removing one never does', () => {
    expect(addsSchedule({ schedule: null }, { schedule: HOURLY })).toBe(true);
    expect(addsSchedule({ schedule: { type: 'interval', every_seconds: 60 } }, { schedule: HOURLY })).toBe(false);
    expect(addsSchedule({ schedule: null }, { schedule: null })).toBe(false);
    expect(addsSchedule({ schedule: null }, {})).toBe(false);
    expect([setsSchedule({ schedule: HOURLY }), setsSchedule({ schedule: null }), setsSchedule({})]).toEqual([true, false, false]);
  });
});

describe('pause and resume', () => {
  test('the status it already has changes nothing', () => {
    expect(statusChange({ status: 'paused', schedule: HOURLY }, 'paused', NOW)).toBeNull();
    expect(statusChange({ status: 'active', schedule: null }, 'active', NOW)).toBeNull();
  });

  test('a pause clears the next tick, a resume counts it from now; both move the anchor to now', () => {
    expect(statusChange({ status: 'active', schedule: HOURLY }, 'paused', NOW)).toEqual({ status: 'paused', scheduleAnchorAt: NOW, nextRunAt: null });
    expect(statusChange({ status: 'paused', schedule: HOURLY }, 'active', NOW)).toEqual({
      status: 'active',
      scheduleAnchorAt: NOW,
      nextRunAt: new Date('2025-01-01T01:00:10.000Z'),
    });
  });

  test('without a schedule (or with one that no longer reads) only the status changes', () => {
    expect(statusChange({ status: 'paused', schedule: null }, 'active', NOW)).toEqual({ status: 'active' });
    expect(statusChange({ status: 'paused', schedule: { type: 'weekly' } }, 'active', NOW)).toEqual({ status: 'active' });
  });
});
