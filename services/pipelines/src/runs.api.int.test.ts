import { randomUUID } from 'node:crypto';
import { expectErrorBody, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { closeTestPool, createPipeline, runEvents, type RunBody } from './test/fixtures';
import { startTestApp, type TestApp } from './test/app';

// The API side of runs, with no worker draining the queue: runs stay queued unless cancelled.
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
  await closeTestPool();
});

function client(): ServiceClient {
  return serviceClient('pipelines', app.server, testIdentity());
}

test('a trigger is 202 with the queued run and a Location the client can poll through the gateway', async () => {
  const c = client();
  const pipeline = await createPipeline(c);
  const res = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'webhook' }).expect(202);
  expect(res.body).toEqual({
    id: expect.any(String),
    pipeline_id: pipeline.id,
    status: 'queued',
    trigger: 'webhook',
    since: null,
    dry_run: false,
    attempts: 0,
    stats: { records_read: 0, records_written: 0 },
    error: null,
    created_at: expect.stringMatching(/Z$/),
    started_at: null,
    finished_at: null,
    scheduled_for: null,
    retry_of: null,
  });
  expect(res.headers.location).toBe(`/pipelines/v3/pipelines/${pipeline.id}/runs/${res.body.id}`);
  // The same path without the gateway's prefix is this service's route.
  const polled = await c.get(res.headers.location!.replace('/pipelines/v3', '')).expect(200);
  expect(polled.body).toEqual(res.body);
  expect((await runEvents(res.body.id)).map((e) => [e.type, e.data])).toEqual([['run.queued', res.body]]);
});

test('20 concurrent triggers: exactly one 202, nineteen 409 naming the active run', async () => {
  const c = client();
  const pipeline = await createPipeline(c);
  const results = await Promise.all(Array.from({ length: 20 }, () => c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' })));
  const accepted = results.filter((r) => r.status === 202);
  const refused = results.filter((r) => r.status === 409);
  expect(accepted).toHaveLength(1);
  expect(refused).toHaveLength(19);
  for (const r of refused) expect(expectErrorBody(r.body, 'conflict').active_run_id).toBe(accepted[0]!.body.id);
  const list = await c.get(`/pipelines/${pipeline.id}/runs`).expect(200);
  expect(list.body.data.map((r: RunBody) => r.id)).toEqual([accepted[0]!.body.id]);
});

test('a paused pipeline refuses runs: 400 pipeline_paused on the whole body; resumed, it accepts them', async () => {
  const c = client();
  const pipeline = await createPipeline(c);
  await c.post(`/pipelines/${pipeline.id}/pause`).expect(200);
  const res = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(400);
  expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([{ in: 'body', field: '', code: 'pipeline_paused', message: expect.any(String) }]);
  await c.post(`/pipelines/${pipeline.id}/resume`).expect(200);
  await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
});

test('a queued run can be cancelled (200, run.cancelled); then the pipeline takes a new run; cancelling again is 409', async () => {
  const c = client();
  const pipeline = await createPipeline(c);
  const run = (await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual', since: null, dry_run: true }).expect(202)).body as RunBody;
  const cancelled = await c.post(`/pipelines/${pipeline.id}/runs/${run.id}/cancel`).expect(200);
  expect(cancelled.body).toMatchObject({ id: run.id, status: 'cancelled', finished_at: expect.any(String), started_at: null });
  const again = await c.post(`/pipelines/${pipeline.id}/runs/${run.id}/cancel`).expect(409);
  expect(expectErrorBody(again.body, 'conflict')).toMatchObject({ run_status: 'cancelled' });
  expect((await runEvents(run.id)).map((e) => e.type)).toEqual(['run.queued', 'run.cancelled']);
  await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
});

test('runs are listed oldest first with cursor pagination and a status filter', async () => {
  const c = client();
  const pipeline = await createPipeline(c);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const run = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
    ids.push(run.body.id);
    await c.post(`/pipelines/${pipeline.id}/runs/${run.body.id}/cancel`).expect(200);
  }
  const last = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  ids.push(last.body.id);
  const page1 = await c.get(`/pipelines/${pipeline.id}/runs?limit=3`).expect(200);
  expect(page1.body.next_cursor).toEqual(expect.any(String));
  const page2 = await c.get(`/pipelines/${pipeline.id}/runs?limit=3&cursor=${page1.body.next_cursor}`).expect(200);
  expect(page2.body.next_cursor).toBeNull();
  expect([...page1.body.data, ...page2.body.data].map((r: RunBody) => r.id)).toEqual(ids);
  const queued = await c.get(`/pipelines/${pipeline.id}/runs?status=queued`).expect(200);
  expect(queued.body.data.map((r: RunBody) => r.id)).toEqual([last.body.id]);
});

test('unknown pipelines and runs, and runs of another pipeline, are 404', async () => {
  const c = client();
  const pipeline = await createPipeline(c);
  const other = await createPipeline(c);
  const run = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  expectErrorBody((await c.post(`/pipelines/${randomUUID()}/runs`, { trigger: 'manual' }).expect(404)).body, 'not_found');
  await c.get(`/pipelines/${pipeline.id}/runs/${randomUUID()}`).expect(404);
  await c.get(`/pipelines/${other.id}/runs/${run.body.id}`).expect(404);
  await c.post(`/pipelines/${other.id}/runs/${run.body.id}/cancel`).expect(404);
  await client().get(`/pipelines/${pipeline.id}/runs/${run.body.id}`).expect(404);
});

test('Redis down: the trigger answers 503 at once and leaves no queued run behind', async () => {
  const down = await startTestApp({ redisUrl: 'redis://127.0.0.1:1' });
  try {
    const c = serviceClient('pipelines', down.server, testIdentity());
    const pipeline = await createPipeline(c);
    // Redis never comes (nothing listens there): any answer is the API giving up on its own, not a hang.
    const res = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(503);
    expect(res.headers['retry-after']).toBe('1');
    expectErrorBody(res.body, 'temporarily_unavailable');
    const runs = (await c.get(`/pipelines/${pipeline.id}/runs`).expect(200)).body.data as RunBody[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'failed', error: { code: 'enqueue_failed' }, finished_at: expect.any(String) });
    expect((await runEvents(runs[0]!.id)).map((e) => e.type)).toEqual(['run.queued', 'run.failed']);
    // The pipeline is not blocked: with Redis back (the main app), the next trigger is accepted.
    await serviceClient('pipelines', app.server, c.identity).post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  } finally {
    await down.close();
  }
});
