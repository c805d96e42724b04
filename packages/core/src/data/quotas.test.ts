import { DEFAULT_SERVICE_QUOTA_LIMITS, parseQuotasHeader, quotaExceeded, quotaExceededDoc, quotaReached, quotasHeader, ServiceUsage } from './quotas';
import { errorBody } from '../http/errors';

describe('x-platform-quotas', () => {
  it('reads back what it writes', () => {
    const limits = { pipelines: 0, scheduled_pipelines: 7, webhook_endpoints: 2_147_483_647 };
    expect(quotasHeader(limits)).toBe('pipelines=0;scheduled_pipelines=7;webhook_endpoints=2147483647');
    expect(parseQuotasHeader(quotasHeader(limits))).toEqual(limits);
    expect(parseQuotasHeader(quotasHeader(DEFAULT_SERVICE_QUOTA_LIMITS))).toEqual(DEFAULT_SERVICE_QUOTA_LIMITS);
  });

  it.each([
    '',
    'pipelines=1',
    'scheduled_pipelines=1;pipelines=1;webhook_endpoints=1',
    'pipelines=1;scheduled_pipelines=1;webhook_endpoints=1;extra=1',
    'pipelines=-1;scheduled_pipelines=1;webhook_endpoints=1',
    'pipelines=1.5;scheduled_pipelines=1;webhook_endpoints=1',
    'pipelines=2147483648;scheduled_pipelines=1;webhook_endpoints=1',
    'pipelines=1=1;scheduled_pipelines=1;webhook_endpoints=1',
    'pipelines= 1;scheduled_pipelines=1;webhook_endpoints=1',
  ])('refuses %j', (value) => {
    expect(parseQuotasHeader(value)).toBeUndefined();
  });
});

describe('quotaExceeded', () => {
  it('is 409 conflict with quota_exceeded, quota and limit beside code', () => {
    const err = quotaExceeded('scheduled_pipelines', 100, 'schedule');
    expect(err.status).toBe(409);
    const body = errorBody(err, 'req-1') as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ code: 'conflict', quota: 'scheduled_pipelines', limit: 100 });
    expect(body.error.errors).toEqual([expect.objectContaining({ code: 'quota_exceeded', field: 'schedule' })]);
  });
});

describe('quotaReached', () => {
  it('refuses one more once usage reaches the limit, also when a lowered quota is below usage', () => {
    expect(quotaReached('pipelines', 4, 5)).toBeUndefined();
    expect(quotaReached('pipelines', 5, 5)).toEqual({ kind: 'quota_reached', quota: 'pipelines', limit: 5 });
    expect(quotaReached('webhook_endpoints', 7, 2)).toEqual({ kind: 'quota_reached', quota: 'webhook_endpoints', limit: 2 });
    expect(quotaReached('scheduled_pipelines', 0, 0)).toEqual({ kind: 'quota_reached', quota: 'scheduled_pipelines', limit: 0 });
  });
});

describe('quotaExceededDoc', () => {
  it("documents the real answer at the contract's default limit", () => {
    const { example } = quotaExceededDoc('why', 'scheduled_pipelines', 'schedule');
    const { request_id: _, ...real } = errorBody(quotaExceeded('scheduled_pipelines', 100, 'schedule'), 'x').error;
    expect(example).toEqual(real);
  });
});

describe('ServiceUsage', () => {
  it('takes the counts a service answers and nothing else', () => {
    expect(ServiceUsage.safeParse({ webhook_endpoints: 3 }).success).toBe(true);
    expect(ServiceUsage.safeParse({ pipelines: 1, scheduled_pipelines: 0, webhook_endpoints: 0 }).success).toBe(true);
    expect(ServiceUsage.safeParse({ pipelines: 1 }).success).toBe(false);
    expect(ServiceUsage.safeParse({ webhook_endpoints: -1 }).success).toBe(false);
    expect(ServiceUsage.safeParse({ webhook_endpoints: 1, idempotency_bytes: 1 }).success).toBe(false);
  });
});
