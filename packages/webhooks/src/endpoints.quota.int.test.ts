import request from 'supertest';
import { DEFAULT_SERVICE_QUOTA_LIMITS, INTERNAL_USAGE_PATH, type ServiceQuotaLimits } from '@platform/core';
import { expectErrorBody, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { testApp, testSql } from './test/app';

// The webhook_endpoints quota (contract section 20): per workspace and per service, signed by the
// gateway beside each request; the service counts its own endpoints under a lock per workspace.

const { pool, sql } = testSql();
const app = testApp(sql, { allowPrivate: true });

afterAll(async () => {
  await pool.end();
});

function client(quotas: Partial<ServiceQuotaLimits> = {}): ServiceClient {
  return serviceClient('events', app, { ...testIdentity(), quotas });
}

const ENDPOINT = { url: 'https://hooks.example/in', events: ['*'] };

async function endpointIds(c: ServiceClient): Promise<string[]> {
  return ((await c.get('/webhook-endpoints?limit=100').expect(200)).body.data as { id: string }[]).map((e) => e.id);
}

function quotaExceededBody(limit: number) {
  return {
    error: {
      code: 'conflict',
      message: expect.any(String),
      quota: 'webhook_endpoints',
      limit,
      errors: [{ in: 'body', field: '', code: 'quota_exceeded', message: expect.any(String) }],
      request_id: expect.any(String),
    },
  };
}

describe('the webhook endpoints quota', () => {
  test('creates are 201 below the quota; the one that would pass it is 409 quota_exceeded and creates nothing; a delete makes room', async () => {
    const c = client({ webhook_endpoints: 2 });
    const first = (await c.post('/webhook-endpoints', ENDPOINT).expect(201)).body.id as string;
    await c.post('/webhook-endpoints', ENDPOINT).expect(201);
    const refused = await c.post('/webhook-endpoints', ENDPOINT).expect(409);
    expect(refused.body).toEqual(quotaExceededBody(2));
    expectErrorBody(refused.body, 'conflict');
    expect(await endpointIds(c)).toHaveLength(2);

    await c.delete(`/webhook-endpoints/${first}`).expect(204);
    await c.post('/webhook-endpoints', ENDPOINT).expect(201);
  });

  test("the contract's default is 20 endpoints per service", async () => {
    expect(DEFAULT_SERVICE_QUOTA_LIMITS.webhook_endpoints).toBe(20);
    const c = client();
    for (let i = 0; i < 20; i++) await c.post('/webhook-endpoints', ENDPOINT).expect(201);
    expect((await c.post('/webhook-endpoints', ENDPOINT).expect(409)).body).toEqual(quotaExceededBody(20));
  });

  test('a quota of 0 refuses the first endpoint', async () => {
    const c = client({ webhook_endpoints: 0 });
    expect((await c.post('/webhook-endpoints', ENDPOINT).expect(409)).body).toEqual(quotaExceededBody(0));
    expect(await endpointIds(c)).toEqual([]);
  });

  test('a quota set below what the workspace has removes nothing; existing endpoints stay usable, further creates are refused', async () => {
    const c = client();
    const kept = [];
    for (let i = 0; i < 3; i++) kept.push((await c.post('/webhook-endpoints', ENDPOINT).expect(201)).body.id as string);
    const lowered = serviceClient('events', app, { ...c.identity, quotas: { webhook_endpoints: 1 } });
    expect((await lowered.post('/webhook-endpoints', ENDPOINT).expect(409)).body).toEqual(quotaExceededBody(1));
    expect(await endpointIds(lowered)).toEqual(kept);
    await lowered.patch(`/webhook-endpoints/${kept[0]}`, { enabled: false }).expect(200);
    await lowered.post(`/webhook-endpoints/${kept[1]}/rotate-secret`).expect(200);
  });

  test('under 20 concurrent creates with a quota of 5, exactly 5 are created', async () => {
    const c = client({ webhook_endpoints: 5 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => c.post('/webhook-endpoints', ENDPOINT)));
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(5).fill(201), ...Array(15).fill(409)]);
    expect(await endpointIds(c)).toHaveLength(5);
  });
});

describe(`GET ${INTERNAL_USAGE_PATH}`, () => {
  test("answers the signed workspace's endpoints, never another's", async () => {
    const c = client();
    const other = client();
    expect((await c.get(INTERNAL_USAGE_PATH).expect(200)).body).toEqual({ webhook_endpoints: 0 });
    await c.post('/webhook-endpoints', ENDPOINT).expect(201);
    await c.post('/webhook-endpoints', { ...ENDPOINT, enabled: false }).expect(201);
    await other.post('/webhook-endpoints', ENDPOINT).expect(201);
    expect((await c.get(INTERNAL_USAGE_PATH).expect(200)).body).toEqual({ webhook_endpoints: 2 });
    expect((await other.get(INTERNAL_USAGE_PATH).expect(200)).body).toEqual({ webhook_endpoints: 1 });
  });

  test('without the gateway signature it is 401', async () => {
    expectErrorBody((await request(app).get(INTERNAL_USAGE_PATH).expect(401)).body, 'unauthorized');
  });
});
