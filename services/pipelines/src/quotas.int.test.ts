import pg from 'pg';
import request from 'supertest';
import { INTERNAL_USAGE_PATH, InternalHeaders, QUOTA_LOCK_TIMEOUT_MS, type ServiceQuotaLimits } from '@platform/core';
import { expectErrorBody, gatewayHeaders, serviceClient, testDatabaseUrl, testIdentity, type ServiceClient } from '@platform/testing';
import { startTestApp, type TestApp } from './test/app';

// Quotas per workspace (contract section 20): the gateway signs the limits in force beside each
// request; the pipelines service enforces pipelines, scheduled_pipelines and its webhook_endpoints.

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

/** A client of a fresh workspace whose requests carry these quotas (the others: the contract's defaults). */
function client(quotas: Partial<ServiceQuotaLimits> = {}): ServiceClient {
  return serviceClient('pipelines', app.server, { ...testIdentity(), quotas });
}

/** The same workspace under other quotas (an operator changed them through the admin API). */
function withQuotas(c: ServiceClient, quotas: Partial<ServiceQuotaLimits>): ServiceClient {
  return serviceClient('pipelines', app.server, { ...c.identity, quotas });
}

const HOURLY = { type: 'interval', every_seconds: 3600 } as const;

function pipelineBody(schedule?: object) {
  return {
    name: 'Sample sync',
    source: { connector: 'sample', config: { records: 1 } },
    destination: { connector: 'postgres', config: { table: 'quota_records' } },
    ...(schedule ? { schedule } : {}),
  };
}

async function create(c: ServiceClient, schedule?: object): Promise<{ id: string; schedule: unknown }> {
  return (await c.post('/pipelines', pipelineBody(schedule)).expect(201)).body as { id: string; schedule: unknown };
}

async function listed(c: ServiceClient): Promise<{ id: string; name: string; schedule: unknown }[]> {
  return (await c.get('/pipelines?limit=100').expect(200)).body.data as { id: string; name: string; schedule: unknown }[];
}

/** The 409 body the contract gives a create or change that would pass `quota`. */
function quotaExceededBody(quota: string, limit: number, field: string) {
  return {
    error: {
      code: 'conflict',
      message: expect.any(String),
      quota,
      limit,
      errors: [{ in: 'body', field, code: 'quota_exceeded', message: expect.any(String) }],
      request_id: expect.any(String),
    },
  };
}

describe('the pipelines quota', () => {
  test('creates are 201 below the quota; the one that would pass it is 409 quota_exceeded and creates nothing', async () => {
    const c = client({ pipelines: 2 });
    await create(c);
    await create(c, HOURLY);
    const refused = await c.post('/pipelines', pipelineBody()).expect(409);
    expect(refused.body).toEqual(quotaExceededBody('pipelines', 2, ''));
    expectErrorBody(refused.body, 'conflict');
    expect(await listed(c)).toHaveLength(2);
  });

  test('a quota of 0 refuses the first pipeline', async () => {
    const c = client({ pipelines: 0 });
    expect((await c.post('/pipelines', pipelineBody()).expect(409)).body).toEqual(quotaExceededBody('pipelines', 0, ''));
    expect(await listed(c)).toEqual([]);
  });

  test('a quota set below what the workspace has removes nothing and refuses further creates', async () => {
    const c = client();
    const kept = [await create(c), await create(c, HOURLY), await create(c)];
    const lowered = withQuotas(c, { pipelines: 1, scheduled_pipelines: 0 });
    expect((await lowered.post('/pipelines', pipelineBody()).expect(409)).body).toEqual(quotaExceededBody('pipelines', 1, ''));
    expect((await lowered.get('/pipelines?limit=100').expect(200)).body.data.map((p: { id: string }) => p.id)).toEqual(kept.map((p) => p.id));
    // What exists stays usable: a rename, and a change of the schedule it already has.
    await lowered.patch(`/pipelines/${kept[0]!.id}`, { name: 'Renamed' }).expect(200);
    await lowered.patch(`/pipelines/${kept[1]!.id}`, { schedule: { type: 'interval', every_seconds: 7200 } }).expect(200);
  });

  test('under 20 concurrent creates with a quota of 5, exactly 5 are created', async () => {
    const c = client({ pipelines: 5 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => c.post('/pipelines', pipelineBody())));
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(5).fill(201), ...Array(15).fill(409)]);
    expect(await listed(c)).toHaveLength(5);
  });
});

test(`a create that waits past ${QUOTA_LOCK_TIMEOUT_MS} ms for its workspace's quota lock is 503 with Retry-After, never 500`, async () => {
  const c = client();
  const holder = new pg.Client({ connectionString: testDatabaseUrl('pipelines') });
  await holder.connect();
  try {
    // What a storm of creates in this workspace looks like to the next one: the lock stays taken.
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))', [`quota:pipelines:${c.identity.workspaceId}`]);
    const res = await c.post('/pipelines', pipelineBody()).expect(503);
    expectErrorBody(res.body, 'temporarily_unavailable');
    expect(res.headers['retry-after']).toBeDefined();
    await holder.query('ROLLBACK');
    // Nothing was created; with the lock free, the same create goes through.
    expect(await listed(c)).toEqual([]);
    await create(c);
  } finally {
    await holder.end();
  }
});

describe('the scheduled pipelines quota (a paused pipeline with a schedule counts)', () => {
  test('a scheduled create at the quota is 409 on `schedule`; an unscheduled one is still 201', async () => {
    const c = client({ scheduled_pipelines: 1 });
    const scheduled = await create(c, HOURLY);
    await c.post(`/pipelines/${scheduled.id}/pause`).expect(200);
    const refused = await c.post('/pipelines', pipelineBody(HOURLY)).expect(409);
    expect(refused.body).toEqual(quotaExceededBody('scheduled_pipelines', 1, 'schedule'));
    await create(c);
    expect((await listed(c)).map((p) => p.schedule === null)).toEqual([false, true]);
  });

  test('the pipelines quota is checked first when both are reached', async () => {
    const c = client({ pipelines: 1, scheduled_pipelines: 1 });
    await create(c, HOURLY);
    expect((await c.post('/pipelines', pipelineBody(HOURLY)).expect(409)).body.error.quota).toBe('pipelines');
  });

  test('PATCH setting a schedule on a pipeline without one at the quota is 409 and changes nothing; changing or removing a schedule is 200', async () => {
    const c = client({ scheduled_pipelines: 1 });
    const scheduled = await create(c, HOURLY);
    const plain = await create(c);
    const before = (await c.get(`/pipelines/${plain.id}`).expect(200)).body;

    const refused = await c.patch(`/pipelines/${plain.id}`, { name: 'Renamed', schedule: HOURLY }).expect(409);
    expect(refused.body).toEqual(quotaExceededBody('scheduled_pipelines', 1, 'schedule'));
    expect((await c.get(`/pipelines/${plain.id}`).expect(200)).body).toEqual(before);

    // The scheduled pipeline's own schedule may change at the quota; a rename alone is no schedule change.
    const changed = await c.patch(`/pipelines/${scheduled.id}`, { schedule: { type: 'cron', cron: '0 3 * * *' } }).expect(200);
    expect(changed.body.schedule).toEqual({ type: 'cron', cron: '0 3 * * *', timezone: 'UTC' });
    await c.patch(`/pipelines/${plain.id}`, { name: 'Renamed' }).expect(200);
    // Removing it makes room for another.
    await c.patch(`/pipelines/${scheduled.id}`, { schedule: null }).expect(200);
    expect((await c.patch(`/pipelines/${plain.id}`, { schedule: HOURLY }).expect(200)).body.schedule).toEqual(HOURLY);
  });

  test('under 20 concurrent scheduled creates with a quota of 5, exactly 5 are created', async () => {
    const c = client({ scheduled_pipelines: 5 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => c.post('/pipelines', pipelineBody(HOURLY))));
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(5).fill(201), ...Array(15).fill(409)]);
    expect(await listed(c)).toHaveLength(5);
  });

  test('under concurrent PATCHes setting schedules on 12 pipelines with a quota of 3 (one already scheduled), exactly 2 are set', async () => {
    const c = client({ scheduled_pipelines: 3 });
    await create(c, HOURLY);
    const plain = await Promise.all(Array.from({ length: 12 }, () => create(c)));
    const answers = await Promise.all(plain.map((p) => c.patch(`/pipelines/${p.id}`, { schedule: HOURLY })));
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(2).fill(200), ...Array(10).fill(409)]);
    expect((await listed(c)).filter((p) => p.schedule !== null)).toHaveLength(3);
  });
});

describe(`GET ${INTERNAL_USAGE_PATH} (the gateway's admin quotas)`, () => {
  test("counts the signed workspace's pipelines, scheduled pipelines (paused too) and webhook endpoints, never another's", async () => {
    const c = client();
    const other = client();
    expect((await c.get(INTERNAL_USAGE_PATH).expect(200)).body).toEqual({ pipelines: 0, scheduled_pipelines: 0, webhook_endpoints: 0 });
    const scheduled = await create(c, HOURLY);
    await c.post(`/pipelines/${scheduled.id}/pause`).expect(200);
    await create(c);
    await create(c);
    await c.post('/webhook-endpoints', { url: 'https://hooks.example/in', events: ['*'] }).expect(201);
    await create(other, HOURLY);
    expect((await c.get(INTERNAL_USAGE_PATH).expect(200)).body).toEqual({ pipelines: 3, scheduled_pipelines: 1, webhook_endpoints: 1 });
    expect((await other.get(INTERNAL_USAGE_PATH).expect(200)).body).toEqual({ pipelines: 1, scheduled_pipelines: 1, webhook_endpoints: 0 });
  });

  test('without the gateway signature it is 401', async () => {
    expectErrorBody((await request(app.server).get(INTERNAL_USAGE_PATH).expect(401)).body, 'unauthorized');
    // A signature for another path does not open it.
    const identity = testIdentity();
    const signedForList = gatewayHeaders('pipelines', identity, 'GET', '/pipelines');
    expectErrorBody((await request(app.server).get(INTERNAL_USAGE_PATH).set(signedForList).expect(401)).body, 'unauthorized');
  });
});

test('a quotas header raised after signing is 401 and creates nothing', async () => {
  const identity = testIdentity();
  const body = JSON.stringify(pipelineBody());
  const signed = gatewayHeaders('pipelines', identity, 'POST', '/pipelines', { body, quotas: { pipelines: 0 } });
  const raised = { ...signed, [InternalHeaders.quotas]: signed[InternalHeaders.quotas]!.replace('pipelines=0', 'pipelines=1000') };
  const res = await request(app.server).post('/pipelines').set(raised).set('content-type', 'application/json').send(body).expect(401);
  expectErrorBody(res.body, 'unauthorized');
  expect(await listed(serviceClient('pipelines', app.server, identity))).toEqual([]);
});
