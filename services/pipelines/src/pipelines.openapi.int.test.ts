import request from 'supertest';
import { openApiValidator, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { pipelinesApiDocument } from './pipelines.openapi';
import { startTestApp, type TestApp } from './test/app';
import { closeTestPool, createPipeline } from './test/fixtures';

let app: TestApp;
const document = pipelinesApiDocument();
const validator = openApiValidator(document as never);

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

/** Asserts that a real answer is what the document says `METHOD path` answers with that status. */
function expectDocumented(method: string, path: string, res: { status: number; body: unknown }): void {
  expect(validator.responseProblems(method, path, res.status, res.body)).toEqual([]);
}

test('GET /openapi.json answers the document without a gateway signature', async () => {
  const res = await request(app.server).get('/openapi.json').expect(200);
  expect(res.body).toEqual(JSON.parse(JSON.stringify(document)));
});

describe('real answers match the documented schemas', () => {
  test('pipelines with each connector, pause and resume', async () => {
    const c = client();
    const created = await c
      .post('/pipelines', {
        name: 'API import',
        source: { connector: 'http-json', config: { url: 'https://api.example.com/v1/items', records_path: 'data.items' } },
        destination: { connector: 'postgres', config: { table: 'items', connection_url: 'postgresql://sync:s3cret@db.example.com:5432/warehouse' } },
      })
      .expect(201);
    expectDocumented('POST', '/pipelines', created);
    const sample = await createPipeline(c);
    expectDocumented('GET', '/pipelines/{id}', await c.get(`/pipelines/${sample.id}`).expect(200));
    expectDocumented('POST', '/pipelines/{id}/pause', await c.post(`/pipelines/${sample.id}/pause`).expect(200));
    expectDocumented('POST', '/pipelines/{id}/runs', await c.post(`/pipelines/${sample.id}/runs`, { trigger: 'manual' }).expect(400));
    expectDocumented('POST', '/pipelines/{id}/resume', await c.post(`/pipelines/${sample.id}/resume`).expect(200));
  });

  test('runs: trigger, the 409 of an active run, list, read, cancel and the 409 of an ended run', async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    const run = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual', dry_run: true }).expect(202);
    expectDocumented('POST', '/pipelines/{id}/runs', run);
    expectDocumented('POST', '/pipelines/{id}/runs', await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(409));
    expectDocumented('GET', '/pipelines/{id}/runs', await c.get(`/pipelines/${pipeline.id}/runs`).expect(200));
    expectDocumented('GET', '/pipelines/{id}/runs/{run_id}', await c.get(`/pipelines/${pipeline.id}/runs/${run.body.id}`).expect(200));
    expectDocumented('POST', '/pipelines/{id}/runs/{run_id}/cancel', await c.post(`/pipelines/${pipeline.id}/runs/${run.body.id}/cancel`).expect(200));
    expectDocumented('POST', '/pipelines/{id}/runs/{run_id}/cancel', await c.post(`/pipelines/${pipeline.id}/runs/${run.body.id}/cancel`).expect(409));
  });

  test('the run events carry what their webhooks document', async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    const run = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
    await c.post(`/pipelines/${pipeline.id}/runs/${run.body.id}/cancel`).expect(200);
    const rows = await app.db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId } });
    expect(rows.map((row) => row.type).sort()).toEqual(['run.cancelled', 'run.queued']);
    for (const row of rows) {
      const body = { id: row.id, type: row.type, created_at: row.createdAt.toISOString(), workspace_id: row.workspaceId, data: row.data };
      expect(validator.webhookProblems(row.type, body)).toEqual([]);
    }
  });

  test('errors: 400 listing every problem, 404, 409 quota_exceeded', async () => {
    const c = client();
    expectDocumented('POST', '/pipelines', await c.post('/pipelines', { source: { connector: 'ftp' } }).expect(400));
    expectDocumented('GET', '/pipelines/{id}', await c.get('/pipelines/6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b').expect(404));
    const full = serviceClient('pipelines', app.server, { ...testIdentity(), quotas: { pipelines: 1, scheduled_pipelines: 0 } });
    const pipeline = await createPipeline(full);
    const body = { name: 'x', source: { connector: 'sample' }, destination: { connector: 'postgres', config: { table: 'rows' } } };
    expectDocumented('POST', '/pipelines', await full.post('/pipelines', body).expect(409));
    expectDocumented(
      'PATCH',
      '/pipelines/{id}',
      await full.patch(`/pipelines/${pipeline.id}`, { schedule: { type: 'interval', every_seconds: 3600 } }).expect(409),
    );
    expectDocumented(
      'POST',
      '/webhook-endpoints',
      await serviceClient('pipelines', app.server, { ...testIdentity(), quotas: { webhook_endpoints: 0 } })
        .post('/webhook-endpoints', { url: 'https://hooks.example/in', events: ['*'] })
        .expect(409),
    );
  });
});
