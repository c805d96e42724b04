import { DEFAULT_WORKSPACE_LIMITS, MAX_QUOTA_VALUE } from '@platform/core';
import { EventsConfig, eventsLimits } from './config';

const base = { PLATFORM_INTERNAL_SECRET: 'x'.repeat(32) };

describe('EVENTS_WORKSPACE_MAX_EVENTS and EVENTS_WORKSPACE_MAX_TICKETS', () => {
  test("unset: core's platform defaults (10,000 events and 200,000 tickets per workspace)", () => {
    expect(eventsLimits(EventsConfig.parse(base))).toEqual({ events: DEFAULT_WORKSPACE_LIMITS.events, tickets: DEFAULT_WORKSPACE_LIMITS.tickets });
    expect(DEFAULT_WORKSPACE_LIMITS).toMatchObject({ events: 10_000, tickets: 200_000 });
  });

  test('whole numbers from 0 to MAX_QUOTA_VALUE (the counters are Postgres integers)', () => {
    const config = EventsConfig.parse({ ...base, EVENTS_WORKSPACE_MAX_EVENTS: '0', EVENTS_WORKSPACE_MAX_TICKETS: String(MAX_QUOTA_VALUE) });
    expect(eventsLimits(config)).toEqual({ events: 0, tickets: MAX_QUOTA_VALUE });
  });

  test.each(['', ' ', '-1', '2.5', '1e3', 'ten', String(MAX_QUOTA_VALUE + 1), '99999999999'])('%j is refused, naming the variable', (bad) => {
    for (const name of ['EVENTS_WORKSPACE_MAX_EVENTS', 'EVENTS_WORKSPACE_MAX_TICKETS']) {
      const parsed = EventsConfig.safeParse({ ...base, [name]: bad });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual([name]);
    }
  });
});
