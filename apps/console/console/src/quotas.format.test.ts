import type { WorkspaceQuotas } from './api';
import { describeBytes, describeState, quotaLines } from './quotas.format';

const QUOTAS: WorkspaceQuotas = {
  pipelines: null,
  scheduled_pipelines: 2,
  webhook_endpoints: null,
  idempotency_bytes: null,
  limits: { pipelines: 1000, scheduled_pipelines: 2, webhook_endpoints: 20, idempotency_bytes: 64 * 1024 * 1024 },
  usage: { pipelines: 1234, scheduled_pipelines: 2, webhook_endpoints: { events: 3, warehouse: 0, pipelines: 21 }, idempotency_bytes: 1536 },
};

describe('quotaLines', () => {
  test('one line per quota and one per service for webhook endpoints, each with its limit, usage and whether the default is in force', () => {
    expect(quotaLines(QUOTAS)).toEqual([
      { quota: 'pipelines', label: 'Pipelines', limit: '1,000', usage: '1,234', isDefault: true, state: 'over' },
      { quota: 'scheduled_pipelines', label: 'Scheduled pipelines (paused ones count)', limit: '2', usage: '2', isDefault: false, state: 'reached' },
      {
        quota: 'webhook_endpoints',
        service: 'events',
        label: 'Webhook endpoints (events)',
        limit: '20 per service',
        usage: '3',
        isDefault: true,
        state: 'below',
      },
      {
        quota: 'webhook_endpoints',
        service: 'warehouse',
        label: 'Webhook endpoints (warehouse)',
        limit: '20 per service',
        usage: '0',
        isDefault: true,
        state: 'below',
      },
      {
        quota: 'webhook_endpoints',
        service: 'pipelines',
        label: 'Webhook endpoints (pipelines)',
        limit: '20 per service',
        usage: '21',
        isDefault: true,
        state: 'over',
      },
      { quota: 'idempotency_bytes', label: 'Stored idempotent answers', limit: '64 MiB', usage: '1.5 KiB', isDefault: true, state: 'below' },
    ]);
  });

  test('a value set to 0 is not the default, and any usage is at or over it', () => {
    const zero = { ...QUOTAS, pipelines: 0, limits: { ...QUOTAS.limits, pipelines: 0 }, usage: { ...QUOTAS.usage, pipelines: 0 } };
    expect(quotaLines(zero)[0]).toMatchObject({ isDefault: false, limit: '0', state: 'reached' });
  });
});

describe('describeBytes', () => {
  test.each([
    [0, '0 bytes'],
    [1, '1 byte'],
    [1023, '1023 bytes'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [64 * 1024 * 1024, '64 MiB'],
    [1024 ** 4, '1 TiB'],
    [5 * 1024 ** 4, '5 TiB'],
  ])('%i reads "%s"', (bytes, words) => {
    expect(describeBytes(bytes)).toBe(words);
  });
});

describe('describeState', () => {
  test('says what a reached or passed quota refuses; nothing below it', () => {
    expect(describeState({ quota: 'pipelines', state: 'below' })).toBeNull();
    expect(describeState({ quota: 'pipelines', state: 'reached' })).toEqual({ mark: 'limit reached', note: 'creating more is refused' });
    expect(describeState({ quota: 'webhook_endpoints', state: 'over' })).toEqual({
      mark: 'over the limit',
      note: 'nothing was removed; creating more is refused',
    });
    expect(describeState({ quota: 'idempotency_bytes', state: 'reached' })).toEqual({
      mark: 'limit reached',
      note: 'requests with a new Idempotency-Key get 429',
    });
  });
});
