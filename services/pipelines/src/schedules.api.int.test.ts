import { expectErrorBody, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { closeTestPool } from './test/fixtures';
import { startTestApp, type TestApp } from './test/app';

// Contract section 13 through the service app: schedule on POST and PATCH, GET /pipelines, next_run_at, scheduled_for.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ scheduleMinIntervalS: 60 });
});
afterAll(async () => {
  await app.close();
  await closeTestPool();
});

const client = (scopes: string[] | null = null): ServiceClient => serviceClient('pipelines', app.server, testIdentity(scopes));
const SOURCE = { connector: 'sample', config: { records: 5 } };
const DESTINATION = { connector: 'postgres', config: { table: 'scheduled' } };

async function create(c: ServiceClient, extra: object = {}) {
  return (await c.post('/pipelines', { name: 'Scheduled', source: SOURCE, destination: DESTINATION, ...extra }).expect(201)).body;
}

/** The errors[] of a 400 as [field, code]. */
async function refusal(res: Promise<{ status: number; body: unknown }>): Promise<[string, string][]> {
  const answer = await res;
  expect(answer.status).toBe(400);
  return expectErrorBody(answer.body, 'invalid_request').errors!.map((e) => [e.field, e.code]);
}

test('POST with a cron schedule: stored as sent (timezone defaults to UTC), next_run_at its next match', async () => {
  const c = client();
  const before = Date.now();
  const pipeline = await create(c, { schedule: { type: 'cron', cron: '0 3 * * *' } });
  const after = Date.now();
  expect(pipeline.schedule).toEqual({ type: 'cron', cron: '0 3 * * *', timezone: 'UTC' });
  const next = new Date(pipeline.next_run_at);
  expect(next.getUTCHours()).toBe(3);
  expect(next.getUTCMinutes()).toBe(0);
  expect(next.getTime()).toBeGreaterThan(before);
  expect(next.getTime()).toBeLessThanOrEqual(after + 86_400_000);
  expect((await c.get(`/pipelines/${pipeline.id}`).expect(200)).body).toEqual(pipeline);
});

test('POST with an interval schedule: next_run_at = the time it was set + n', async () => {
  const c = client();
  const pipeline = await create(c, { schedule: { type: 'interval', every_seconds: 3600 } });
  const row = await app.db.pipeline.findUniqueOrThrow({ where: { id: pipeline.id } });
  expect(row.schedule).toEqual({ type: 'interval', every_seconds: 3600 });
  expect(new Date(pipeline.next_run_at).getTime()).toBe(row.scheduleAnchorAt!.getTime() + 3_600_000);
  expect(pipeline.schedule).toEqual({ type: 'interval', every_seconds: 3600 });
});

test('PATCH renames and sets, replaces and removes the schedule; setting it resets the anchor', async () => {
  const c = client();
  const pipeline = await create(c);
  expect(pipeline).toMatchObject({ schedule: null, next_run_at: null });
  const renamed = (await c.patch(`/pipelines/${pipeline.id}`, { name: 'Renamed' }).expect(200)).body;
  expect(renamed).toEqual({ ...pipeline, name: 'Renamed' });

  const set = (await c.patch(`/pipelines/${pipeline.id}`, { schedule: { type: 'interval', every_seconds: 600 } }).expect(200)).body;
  const anchor1 = (await app.db.pipeline.findUniqueOrThrow({ where: { id: pipeline.id } })).scheduleAnchorAt!;
  expect(new Date(set.next_run_at).getTime()).toBe(anchor1.getTime() + 600_000);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const again = (await c.patch(`/pipelines/${pipeline.id}`, { schedule: { type: 'interval', every_seconds: 600 } }).expect(200)).body;
  const anchor2 = (await app.db.pipeline.findUniqueOrThrow({ where: { id: pipeline.id } })).scheduleAnchorAt!;
  expect(anchor2.getTime()).toBeGreaterThan(anchor1.getTime());
  expect(new Date(again.next_run_at).getTime()).toBe(anchor2.getTime() + 600_000);

  const cron = (await c.patch(`/pipelines/${pipeline.id}`, { schedule: { type: 'cron', cron: '*/5 * * * *', timezone: 'Europe/Berlin' } }).expect(200)).body;
  expect(cron.schedule).toEqual({ type: 'cron', cron: '*/5 * * * *', timezone: 'Europe/Berlin' });
  expect(new Date(cron.next_run_at).getUTCMinutes() % 5).toBe(0);

  const removed = (await c.patch(`/pipelines/${pipeline.id}`, { schedule: null }).expect(200)).body;
  expect(removed).toMatchObject({ name: 'Renamed', schedule: null, next_run_at: null });
  expect((await app.db.pipeline.findUniqueOrThrow({ where: { id: pipeline.id } })).schedule).toBeNull();
  // An empty PATCH changes nothing.
  expect((await c.patch(`/pipelines/${pipeline.id}`, {}).expect(200)).body).toEqual(removed);
});

test('pause clears next_run_at; resume computes the next tick from the resume time; no-ops stay no-ops', async () => {
  const c = client();
  const pipeline = await create(c, { schedule: { type: 'interval', every_seconds: 120 } });
  const paused = (await c.post(`/pipelines/${pipeline.id}/pause`).expect(200)).body;
  expect(paused).toMatchObject({ status: 'paused', next_run_at: null, schedule: { type: 'interval', every_seconds: 120 } });
  expect((await c.post(`/pipelines/${pipeline.id}/pause`).expect(200)).body).toEqual(paused);
  // A schedule set while paused waits for the resume.
  expect((await c.patch(`/pipelines/${pipeline.id}`, { schedule: { type: 'interval', every_seconds: 60 } }).expect(200)).body.next_run_at).toBeNull();
  const resumedAt = Date.now();
  const resumed = (await c.post(`/pipelines/${pipeline.id}/resume`).expect(200)).body;
  const anchor = (await app.db.pipeline.findUniqueOrThrow({ where: { id: pipeline.id } })).scheduleAnchorAt!;
  expect(anchor.getTime()).toBeGreaterThanOrEqual(resumedAt - 1);
  expect(resumed).toMatchObject({ status: 'active', next_run_at: new Date(anchor.getTime() + 60_000).toISOString() });
  expect((await c.post(`/pipelines/${pipeline.id}/resume`).expect(200)).body).toEqual(resumed);

  const cron = await create(c, { schedule: { type: 'cron', cron: '0 0 1 1 *' } });
  await c.post(`/pipelines/${cron.id}/pause`).expect(200);
  const back = (await c.post(`/pipelines/${cron.id}/resume`).expect(200)).body;
  expect(back.next_run_at).toBe(cron.next_run_at);
});

test('runs triggered through the API have scheduled_for null, a "schedule" trigger included', async () => {
  const c = client();
  const pipeline = await create(c, { schedule: { type: 'interval', every_seconds: 60 } });
  const run = (await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'schedule' }).expect(202)).body;
  expect(run).toMatchObject({ trigger: 'schedule', scheduled_for: null });
  expect((await c.get(`/pipelines/${pipeline.id}/runs/${run.id}`).expect(200)).body.scheduled_for).toBeNull();
  await c.post(`/pipelines/${pipeline.id}/runs/${run.id}/cancel`).expect(200);
  // Two API runs both with scheduled_for null: the per-tick unique index does not refuse them.
  const second = (await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202)).body;
  expect(second.scheduled_for).toBeNull();
});

test("GET /pipelines lists the workspace's pipelines oldest first, pages with a cursor, filters by status", async () => {
  const c = client();
  const a = await create(c, { name: 'a' });
  const b = await create(c, { name: 'b', schedule: { type: 'interval', every_seconds: 60 } });
  const d = await create(c, { name: 'd' });
  await c.post(`/pipelines/${b.id}/pause`).expect(200);
  await create(client(), { name: 'other workspace' });

  const all = (await c.get('/pipelines').expect(200)).body;
  expect(all.data.map((p: { id: string }) => p.id)).toEqual([a.id, b.id, d.id]);
  expect(all.next_cursor).toBeNull();
  const first = (await c.get('/pipelines?limit=2').expect(200)).body;
  expect(first.data.map((p: { id: string }) => p.id)).toEqual([a.id, b.id]);
  const rest = (await c.get(`/pipelines?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`).expect(200)).body;
  expect(rest).toEqual({ data: [expect.objectContaining({ id: d.id })], next_cursor: null });
  expect((await c.get('/pipelines?status=paused').expect(200)).body.data).toEqual([expect.objectContaining({ id: b.id, status: 'paused', next_run_at: null })]);
  expect((await c.get('/pipelines?status=active').expect(200)).body.data.map((p: { id: string }) => p.id)).toEqual([a.id, d.id]);
  expect(await refusal(c.get('/pipelines?status=running'))).toEqual([['status', 'invalid_enum']]);
  expect(await refusal(c.get('/pipelines?limit=0'))).toEqual([['limit', 'too_small']]);
  expect(await refusal(c.get('/pipelines?cursor=forged'))).toEqual([['cursor', 'invalid_format']]);
});

test("every invalid schedule is 400 with the contract's field and code, on POST and PATCH", async () => {
  const c = client();
  const pipeline = await create(c);
  const cases: [unknown, [string, string][]][] = [
    [{ type: 'weekly' }, [['schedule.type', 'invalid_enum']]],
    [{}, [['schedule.type', 'required']]],
    ['daily', [['schedule', 'invalid_type']]],
    [{ type: 'cron', cron: 'every day' }, [['schedule.cron', 'invalid_format']]],
    [{ type: 'cron', cron: '0 0 * * * *' }, [['schedule.cron', 'invalid_format']]],
    [{ type: 'cron', cron: '0 0 31 2 *' }, [['schedule.cron', 'invalid_format']]],
    [{ type: 'cron', cron: '0 0 * * *', timezone: 'Mars/Olympus' }, [['schedule.timezone', 'invalid_format']]],
    [{ type: 'cron', cron: '0 0 * * *', every_seconds: 60 }, [['schedule.every_seconds', 'unknown_field']]],
    [{ type: 'interval', every_seconds: 59 }, [['schedule.every_seconds', 'too_small']]],
    [{ type: 'interval', every_seconds: 31_536_001 }, [['schedule.every_seconds', 'too_big']]],
    [{ type: 'interval', every_seconds: 90.5 }, [['schedule.every_seconds', 'invalid_type']]],
    [{ type: 'interval', every_seconds: '90' }, [['schedule.every_seconds', 'invalid_type']]],
  ];
  for (const [schedule, expected] of cases) {
    expect([schedule, await refusal(c.post('/pipelines', { name: 'x', source: SOURCE, destination: DESTINATION, schedule }))]).toEqual([schedule, expected]);
    expect([schedule, await refusal(c.patch(`/pipelines/${pipeline.id}`, { schedule }))]).toEqual([schedule, expected]);
  }
  // All problems at once; unknown PATCH fields are refused.
  expect(await refusal(c.patch(`/pipelines/${pipeline.id}`, { name: '', status: 'paused', schedule: { type: 'interval' } }))).toEqual(
    expect.arrayContaining([
      ['name', 'too_short'],
      ['status', 'unknown_field'],
      ['schedule.every_seconds', 'required'],
    ]),
  );
  // Nothing was changed by the refusals.
  expect((await c.get(`/pipelines/${pipeline.id}`).expect(200)).body).toEqual(pipeline);
});

test("another workspace's pipeline is 404 on PATCH; PATCH needs pipelines:write and GET /pipelines pipelines:read", async () => {
  const owner = client();
  const pipeline = await create(owner);
  expectErrorBody((await client().patch(`/pipelines/${pipeline.id}`, { name: 'stolen' }).expect(404)).body, 'not_found');
  expect((await owner.get(`/pipelines/${pipeline.id}`).expect(200)).body.name).toBe('Scheduled');
  const reader = serviceClient('pipelines', app.server, { ...owner.identity, scopes: ['pipelines:read'] });
  expect(expectErrorBody((await reader.patch(`/pipelines/${pipeline.id}`, { name: 'x' }).expect(403)).body, 'forbidden_scope').required_scope).toBe(
    'pipelines:write',
  );
  expect((await reader.get('/pipelines').expect(200)).body.data).toHaveLength(1);
  const runsOnly = serviceClient('pipelines', app.server, { ...owner.identity, scopes: ['runs:read'] });
  expect(expectErrorBody((await runsOnly.get('/pipelines').expect(403)).body, 'forbidden_scope').required_scope).toBe('pipelines:read');
});
