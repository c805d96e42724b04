import { queueKeyPrefix } from '@platform/core';
import { byWorkspace, deliveryPriority, MAX_PRIORITY, pendingHorizonMs, pendingKey, workspaceOf } from './deliveries.fairness';
import { DEFAULT_DELIVERY_TIMEOUT_MS, DEFAULT_RETRY_SCHEDULE_MS } from './deliveries.queue';

describe('deliveryPriority: the k-th pending delivery of a workspace gets priority k', () => {
  test('the rank is the priority', () => {
    expect([1, 2, 3, 40].map(deliveryPriority)).toEqual([1, 2, 3, 40]);
  });

  test('never 0, which BullMQ serves before every prioritized job, and never above its limit (2^21 - 1)', () => {
    expect(deliveryPriority(0)).toBe(1);
    expect(deliveryPriority(-5)).toBe(1);
    expect(MAX_PRIORITY).toBe(2_097_151);
    expect(deliveryPriority(MAX_PRIORITY)).toBe(MAX_PRIORITY);
    expect(deliveryPriority(5_000_000)).toBe(MAX_PRIORITY);
  });

  test("served as BullMQ serves them (lowest priority first, then in add order), the workspaces take turns: a newcomer is served next, whatever another's backlog", () => {
    const added = [
      ...Array.from({ length: 40 }, (_, i) => ({ workspace: 'A', n: i + 1, priority: deliveryPriority(i + 1) })),
      ...Array.from({ length: 3 }, (_, i) => ({ workspace: 'C', n: i + 1, priority: deliveryPriority(i + 1) })),
      { workspace: 'B', n: 1, priority: deliveryPriority(1) },
    ];
    const served = added
      .map((job, order) => ({ ...job, order }))
      .sort((x, y) => x.priority - y.priority || x.order - y.order)
      .map((job) => `${job.workspace}${job.n}`);
    expect(served.slice(0, 9)).toEqual(['A1', 'C1', 'B1', 'A2', 'C2', 'A3', 'C3', 'A4', 'A5']);
  });
});

describe('pendingHorizonMs: how long a delivery can stay pending', () => {
  test('every attempt at its timeout, every delay of the schedule, and an hour of waiting: about 29 h by default', () => {
    const horizon = pendingHorizonMs(DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_DELIVERY_TIMEOUT_MS);
    const schedule = DEFAULT_RETRY_SCHEDULE_MS.reduce((sum, delay) => sum + delay, 0);
    expect(horizon).toBe(schedule + 8 * 10_000 + 3_600_000);
    expect(horizon / 3_600_000).toBeCloseTo(28.63, 1);
  });

  test('a schedule without retries: one attempt and the hour', () => {
    expect(pendingHorizonMs([], 2000)).toBe(2000 + 3_600_000);
  });
});

describe("pendingKey: a workspace's pending set lives in its queue's hash slot, under the deployment's prefix", () => {
  const workspaceId = '7d9f1b3d-5f7a-4e3a-9b5c-2e4c6a8b0d1f';

  test("the queue's hash tag is the key's first, so a Redis Cluster puts the set beside the queue's jobs", () => {
    const qualifiedName = `${queueKeyPrefix('platform', 'webhooks-events')}:webhooks-events`;
    const key = pendingKey(qualifiedName, workspaceId);
    expect(key).toBe(`platform:{webhooks-events}:webhooks-events:fair:${workspaceId}`);
    expect(key.match(/\{([^}]*)\}/)?.[1]).toBe('webhooks-events');
  });

  test('each queue, each workspace a set of its own', () => {
    const events = `${queueKeyPrefix('platform', 'webhooks-events')}:webhooks-events`;
    const warehouse = `${queueKeyPrefix('platform', 'webhooks-warehouse')}:webhooks-warehouse`;
    expect(pendingKey(events, workspaceId)).not.toBe(pendingKey(warehouse, workspaceId));
    expect(pendingKey(events, workspaceId)).not.toBe(pendingKey(events, '2e4c6a8b-0d1f-4e3a-9b5c-7d9f1b3d5f7a'));
  });
});

describe("workspaceOf: a job's workspace, read before its payload is parsed", () => {
  test("the event's workspace_id; a malformed job's is the one shared by every malformed job", () => {
    expect(workspaceOf({ endpoint_id: 'e', event: { workspace_id: 'w-1' } })).toBe('w-1');
    for (const bad of [undefined, null, {}, { event: null }, { event: { workspace_id: 7 } }, { event: { workspace_id: '' } }])
      expect(workspaceOf(bad)).toBe('-');
  });
});

describe('byWorkspace', () => {
  test("each workspace's jobs in their order, with their places in the batch", () => {
    const groups = byWorkspace(['a1', 'b1', 'a2', 'c1', 'b2'], (job) => job[0]!);
    expect([...groups]).toEqual([
      [
        'a',
        [
          { index: 0, job: 'a1' },
          { index: 2, job: 'a2' },
        ],
      ],
      [
        'b',
        [
          { index: 1, job: 'b1' },
          { index: 4, job: 'b2' },
        ],
      ],
      ['c', [{ index: 3, job: 'c1' }]],
    ]);
  });
});
