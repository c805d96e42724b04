import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { expectErrorBody, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { createPipeline } from './test/fixtures';
import { startTestApp, type TestApp } from './test/app';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

function client(scopes: readonly string[] | null = null): ServiceClient {
  return serviceClient('pipelines', app.server, testIdentity(scopes));
}

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('pipelines', () => {
  test("a pipeline is created (201) with the connectors' defaults and read back", async () => {
    const c = client();
    const res = await c
      .post('/pipelines', {
        name: 'Nightly sync',
        source: { connector: 'sample', config: {} },
        destination: { connector: 'postgres', config: { table: 'contacts' } },
      })
      .expect(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Nightly sync',
      status: 'active',
      source: { connector: 'sample', config: { records: 100, seed: 0 } },
      destination: { connector: 'postgres', config: { table: 'contacts' } },
      last_successful_run_at: null,
      schedule: null,
      next_run_at: null,
      concurrency_policy: 'reject',
      run_timeout_seconds: null,
      created_at: expect.stringMatching(ISO_MS),
    });
    expect((await c.get(`/pipelines/${res.body.id}`).expect(200)).body).toEqual(res.body);
  });

  test('an http-json source and a postgres connection_url are accepted; the password is never shown', async () => {
    const c = client();
    const res = await c
      .post('/pipelines', {
        name: 'API import',
        source: { connector: 'http-json', config: { url: 'https://api.example.com/v1/items', records_path: 'data.items' } },
        destination: { connector: 'postgres', config: { table: 'items', connection_url: 'postgresql://sync:s3cret@db.example.com:5432/warehouse' } },
      })
      .expect(201);
    expect(res.body.source).toEqual({ connector: 'http-json', config: { url: 'https://api.example.com/v1/items', records_path: 'data.items' } });
    expect(res.body.destination.config.connection_url).toBe('postgresql://sync:****@db.example.com:5432/warehouse');
    expect(JSON.stringify((await c.get(`/pipelines/${res.body.id}`).expect(200)).body)).not.toContain('s3cret');
  });

  test("another workspace's pipeline is 404", async () => {
    const pipeline = await createPipeline(client());
    const stranger = client();
    expectErrorBody((await stranger.get(`/pipelines/${pipeline.id}`).expect(404)).body, 'not_found');
    await stranger.post(`/pipelines/${pipeline.id}/pause`).expect(404);
    await stranger.get(`/pipelines/${pipeline.id}/runs`).expect(404);
    await stranger.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(404);
  });

  test('pause and resume are 200 and idempotent (pausing a paused pipeline is a no-op)', async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    expect((await c.post(`/pipelines/${pipeline.id}/pause`).expect(200)).body.status).toBe('paused');
    const again = await c.post(`/pipelines/${pipeline.id}/pause`).expect(200);
    expect(again.body).toMatchObject({ id: pipeline.id, status: 'paused' });
    expect((await c.post(`/pipelines/${pipeline.id}/resume`, {}).expect(200)).body.status).toBe('active');
    expect((await c.post(`/pipelines/${pipeline.id}/resume`).expect(200)).body.status).toBe('active');
    expect((await c.get(`/pipelines/${pipeline.id}`).expect(200)).body.status).toBe('active');
  });

  test('scopes: pipelines:read cannot create; runs:write is needed to trigger', async () => {
    const reader = client(['pipelines:read', 'runs:read']);
    const res = await reader
      .post('/pipelines', { name: 'x', source: { connector: 'sample' }, destination: { connector: 'postgres', config: { table: 't' } } })
      .expect(403);
    expect(expectErrorBody(res.body, 'forbidden_scope').required_scope).toBe('pipelines:write');
    const pipeline = await createPipeline(serviceClient('pipelines', app.server, { ...reader.identity, scopes: null }));
    const denied = await reader.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(403);
    expect(expectErrorBody(denied.body, 'forbidden_scope').required_scope).toBe('runs:write');
  });

  test('a request without the gateway signature is 401', async () => {
    expectErrorBody((await request(app.server).get(`/pipelines/${randomUUID()}`).expect(401)).body, 'unauthorized');
  });
});

describe('malformed input is 400 with the contract error body', () => {
  const valid = {
    name: 'ok',
    source: { connector: 'sample', config: { records: 10 } },
    destination: { connector: 'postgres', config: { table: 'ok_table' } },
  };

  async function problems(c: ServiceClient, body: unknown, path = '/pipelines') {
    const res = await c.post(path, body).expect(400);
    return expectErrorBody(res.body, 'invalid_request').errors!.map((e) => [e.in, e.field, e.code]);
  }

  test('unknown connectors are invalid_enum on source.connector / destination.connector', async () => {
    const c = client();
    expect(await problems(c, { ...valid, source: { connector: 'ftp' }, destination: { connector: 'sample', config: {} } })).toEqual([
      ['body', 'source.connector', 'invalid_enum'],
      ['body', 'destination.connector', 'invalid_enum'],
    ]);
  });

  test('unknown config fields are unknown_field; bad config values are reported under config, all at once', async () => {
    const c = client();
    expect(
      await problems(c, {
        name: '',
        source: { connector: 'sample', config: { records: 0, seed: 1.5, colour: 'red' } },
        destination: { connector: 'postgres', config: { table: 'Bad-Name', schema: 'x' } },
        extra: true,
      }),
    ).toEqual(
      expect.arrayContaining([
        ['body', 'name', 'too_short'],
        ['body', 'source.config.records', 'too_small'],
        ['body', 'source.config.seed', 'invalid_type'],
        ['body', 'source.config.colour', 'unknown_field'],
        ['body', 'destination.config.table', 'invalid_format'],
        ['body', 'destination.config.schema', 'unknown_field'],
        ['body', 'extra', 'unknown_field'],
      ]),
    );
    expect(await problems(c, { ...valid, source: { connector: 'sample', config: { records: 100_001 } } })).toEqual([
      ['body', 'source.config.records', 'too_large'],
    ]);
    expect(
      await problems(c, { ...valid, source: { connector: 'http-json', config: { url: 'ftp://files.example.com/x.json', records_path: 'a..b' } } }),
    ).toEqual([
      ['body', 'source.config.url', 'invalid_format'],
      ['body', 'source.config.records_path', 'invalid_format'],
    ]);
    expect(await problems(c, { ...valid, source: { connector: 'http-json' } })).toEqual([['body', 'source.config.url', 'required']]);
    expect(await problems(c, { ...valid, destination: { connector: 'postgres', config: { table: 'x', connection_url: 'mysql://db/x' } } })).toEqual([
      ['body', 'destination.config.connection_url', 'invalid_format'],
    ]);
    expect(await problems(c, { ...valid, source: 'sample', destination: { config: [] } })).toEqual([
      ['body', 'source', 'invalid_type'],
      ['body', 'destination.connector', 'required'],
    ]);
  });

  test('a body that is not JSON, not an object, or sent as another content type is 400', async () => {
    const c = client();
    const notJson = await c.post('/pipelines', '{"name": ', { 'content-type': 'application/json' }).expect(400);
    expect(expectErrorBody(notJson.body, 'invalid_request').errors![0]).toMatchObject({ in: 'body', field: '', code: 'invalid_json' });
    const array = await c.post('/pipelines', '[1, 2]', { 'content-type': 'application/json' }).expect(400);
    expect(expectErrorBody(array.body, 'invalid_request').errors![0]).toMatchObject({ in: 'body', field: '', code: 'invalid_type' });
    const text = await c.post('/pipelines', 'name=x', { 'content-type': 'text/plain' }).expect(400);
    expectErrorBody(text.body, 'invalid_request');
    const pipeline = await createPipeline(c);
    const arrayTrigger = await c.post(`/pipelines/${pipeline.id}/runs`, '[]', { 'content-type': 'application/json' }).expect(400);
    expectErrorBody(arrayTrigger.body, 'invalid_request');
    const pauseBody = await c.post(`/pipelines/${pipeline.id}/pause`, { force: true }).expect(400);
    expect(expectErrorBody(pauseBody.body, 'invalid_request').errors![0]).toMatchObject({ field: 'force', code: 'unknown_field' });
  });

  test('path ids that are not UUIDs are 400 in: path', async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    for (const [method, path, field] of [
      ['get', '/pipelines/nope', 'id'],
      ['post', '/pipelines/123/pause', 'id'],
      ['post', '/pipelines/123/resume', 'id'],
      ['post', '/pipelines/123/runs', 'id'],
      ['get', '/pipelines/123/runs', 'id'],
      ['get', `/pipelines/${pipeline.id}/runs/xyz`, 'run_id'],
      ['post', `/pipelines/${pipeline.id}/runs/xyz/cancel`, 'run_id'],
    ] as const) {
      const res = method === 'get' ? await c.get(path) : await c.post(path, method === 'post' && path.endsWith('/runs') ? { trigger: 'manual' } : undefined);
      expect(res.status).toBe(400);
      expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([{ in: 'path', field, code: 'invalid_format', message: expect.any(String) }]);
    }
  });

  test('a trigger with a bad trigger, since or dry_run lists every problem', async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    const path = `/pipelines/${pipeline.id}/runs`;
    expect(await problems(c, { trigger: 'cron' }, path)).toEqual([['body', 'trigger', 'invalid_enum']]);
    expect(await problems(c, {}, path)).toEqual([['body', 'trigger', 'required']]);
    expect(await problems(c, { trigger: 'manual', since: '2024-13-01T00:00:00Z' }, path)).toEqual([['body', 'since', 'invalid_format']]);
    expect(await problems(c, { trigger: 'manual', since: '2024-01-01' }, path)).toEqual([['body', 'since', 'invalid_format']]);
    expect(await problems(c, { trigger: 'manual', since: 1700000000 }, path)).toEqual([['body', 'since', 'invalid_type']]);
    expect(await problems(c, { trigger: 'MANUAL', dry_run: 'yes', priority: 1 }, path)).toEqual([
      ['body', 'trigger', 'invalid_enum'],
      ['body', 'dry_run', 'invalid_type'],
      ['body', 'priority', 'unknown_field'],
    ]);
    // Nothing was queued by any of these.
    expect((await c.get(path).expect(200)).body.data).toEqual([]);
  });

  test('list query problems are 400 in: query', async () => {
    const c = client();
    const pipeline = await createPipeline(c);
    const res = await c.get(`/pipelines/${pipeline.id}/runs?limit=0&status=done&cursor=zzz`).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors!.map((e) => [e.in, e.field])).toEqual([
      ['query', 'limit'],
      ['query', 'cursor'],
      ['query', 'status'],
    ]);
  });
});
