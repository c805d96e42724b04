import { DEFAULT_RETRY_SCHEDULE_MS } from './deliveries.queue';
import { retryDelay } from './deliveries.worker';

describe('retryDelay: the schedule of contract section 11, continued by a requeued retry', () => {
  const job = { endpoint_id: 'e', event: {} };

  test("a job's own attempts walk the schedule, and the last step is the last retry", () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS.map((_, i) => retryDelay(DEFAULT_RETRY_SCHEDULE_MS, i + 1, job))).toEqual([...DEFAULT_RETRY_SCHEDULE_MS]);
    expect(retryDelay(DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_RETRY_SCHEDULE_MS.length + 1, job)).toBe(-1);
  });

  test('a job added after 3 recorded attempts waits, after its first failure, the 4th step, and ends where the schedule ends', () => {
    const requeued = { ...job, attempts_made: 3 };
    expect(retryDelay(DEFAULT_RETRY_SCHEDULE_MS, 1, requeued)).toBe(7_200_000);
    expect(retryDelay(DEFAULT_RETRY_SCHEDULE_MS, 4, requeued)).toBe(36_000_000);
    expect(retryDelay(DEFAULT_RETRY_SCHEDULE_MS, 5, requeued)).toBe(-1);
  });

  test('a job of the previous version (no attempts_made) follows the schedule from its start', () => {
    expect(retryDelay([50, 100], 1, job)).toBe(50);
    expect(retryDelay([50, 100], 2, undefined)).toBe(100);
  });
});
