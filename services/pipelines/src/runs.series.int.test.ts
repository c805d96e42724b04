import { randomUUID } from 'node:crypto';
import { serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { closeTestPool, createPipeline } from './test/fixtures';
import { startTestApp, type TestApp } from './test/app';

// GET /pipelines/{id}/stats/series (decision 0016) on the real service and database; no worker drains the queue.
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
  await closeTestPool();
});

function client(scopes: readonly string[] | null = null): ServiceClient {
  return serviceClient('pipelines', app.server, testIdentity(scopes));
}

/** A run of the pipeline created at `createdAt` in `status`, as the API and the worker leave one. */
async function runAt(workspaceId: string, pipelineId: string, createdAt: string, status: string): Promise<void> {
  await app.db.$executeRawUnsafe(
    `INSERT INTO "runs" ("id", "workspace_id", "pipeline_id", "status", "trigger", "created_at")
     VALUES ($1::uuid, $2::uuid, $3::uuid, $4::run_status, 'manual', $5::timestamptz)`,
    randomUUID(),
    workspaceId,
    pipelineId,
    status,
    createdAt,
  );
}

const none = { pending: 0, queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };

describe('GET /pipelines/{id}/stats/series', () => {
  test('counts runs per hour of their created_at by their current status; every bucket present, zeros included', async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    const other = await createPipeline(c);
    const ws = c.identity.workspaceId;
    await runAt(ws, pipeline.id, '2024-12-01T08:00:00.000Z', 'succeeded');
    await runAt(ws, pipeline.id, '2024-12-01T08:30:00.000Z', 'succeeded');
    await runAt(ws, pipeline.id, '2024-12-01T08:59:59.999Z', 'failed');
    await runAt(ws, pipeline.id, '2024-12-01T10:10:00.000Z', 'cancelled');
    await runAt(ws, pipeline.id, '2024-12-01T10:20:00.000Z', 'running');
    await runAt(ws, pipeline.id, '2024-12-01T11:00:00.000Z', 'succeeded');
    await runAt(ws, other.id, '2024-12-01T09:00:00.000Z', 'succeeded');

    const answer = await c.get(`/pipelines/${pipeline.id}/stats/series?from=2024-12-01T08:00:00Z&to=2024-12-01T11:00:00Z`).expect(200);
    expect(answer.body).toEqual({
      pipeline_id: pipeline.id,
      interval: 'hour',
      from: '2024-12-01T08:00:00.000Z',
      to: '2024-12-01T11:00:00.000Z',
      buckets: [
        { start: '2024-12-01T08:00:00.000Z', ...none, succeeded: 2, failed: 1 },
        { start: '2024-12-01T09:00:00.000Z', ...none },
        { start: '2024-12-01T10:00:00.000Z', ...none, running: 1, cancelled: 1 },
      ],
    });
  });

  test('a run triggered through the API counts as queued in the current hour (the default range: the last 24 hours)', async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
    const answer = await c.get(`/pipelines/${pipeline.id}/stats/series`).expect(200);
    expect(answer.body.buckets).toHaveLength(24);
    const counted = answer.body.buckets.filter((bucket: typeof none) => bucket.queued > 0);
    expect(counted).toEqual([{ start: expect.any(String), ...none, queued: 1 }]);
  });

  test("another workspace's pipeline is 404; a too wide range is 400; it needs runs:read", async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    await client().get(`/pipelines/${pipeline.id}/stats/series`).expect(404);
    await c.get(`/pipelines/${randomUUID()}/stats/series`).expect(404);
    const wide = await c.get(`/pipelines/${pipeline.id}/stats/series?from=2024-11-01T00:00:00Z&to=2024-12-01T00:00:00Z`).expect(400);
    expect(wide.body.error.errors).toEqual([{ in: 'query', field: 'from', code: 'too_many_buckets', message: expect.any(String) }]);
    const daily = await c.get(`/pipelines/${pipeline.id}/stats/series?interval=day&from=2024-11-01T00:00:00Z&to=2024-12-01T00:00:00Z`).expect(200);
    expect(daily.body.buckets).toHaveLength(30);
    const forbidden = await client(['pipelines:read']).get(`/pipelines/${pipeline.id}/stats/series`).expect(403);
    expect(forbidden.body.error.required_scope).toBe('runs:read');
  });
});
