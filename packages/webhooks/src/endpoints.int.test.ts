import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { Express } from 'express';
import { expectErrorBody, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { testApp, testSql } from './test/app';
import { webhooksStore } from './webhooks.store';
import type { WorkspaceId } from '@platform/core';

const { pool, sql } = testSql();
// Deliveries to 127.0.0.1 are how the integration tests work; the SSRF app below refuses them.
const app = testApp(sql, { allowPrivate: true });
const guardedApp = testApp(sql, {
  allowPrivate: false,
  resolve: async (host) => {
    if (host === 'intranet.example') return ['10.20.30.40'];
    if (host === 'hooks.example') return ['93.184.215.14'];
    throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  },
});

afterAll(async () => {
  await pool.end();
});

function client(scopes: readonly string[] | null = null, target: Express = app): ServiceClient {
  return serviceClient('events', target, testIdentity(scopes));
}

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

async function createEndpoint(c: ServiceClient, body: object = { url: 'https://hooks.example/in', events: ['item.created'] }) {
  return (await c.post('/webhook-endpoints', body).expect(201)).body as { id: string; secret: string; [k: string]: unknown };
}

describe('endpoint CRUD', () => {
  test('create answers 201 with the endpoint and its secret; read, list, update and delete follow the contract', async () => {
    const c = client();
    const created = await c.post('/webhook-endpoints', { url: 'https://hooks.example/in', events: ['item.created', 'item.updated'] });
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: 'https://hooks.example/in',
      events: ['item.created', 'item.updated'],
      enabled: true,
      created_at: expect.stringMatching(TIMESTAMP),
      secret: expect.stringMatching(SECRET),
    });
    const { secret, ...endpoint } = created.body;

    expect((await c.get(`/webhook-endpoints/${endpoint.id}`).expect(200)).body).toEqual(endpoint);
    expect((await c.get('/webhook-endpoints').expect(200)).body).toEqual({ data: [endpoint], next_cursor: null });

    const patched = await c.patch(`/webhook-endpoints/${endpoint.id}`, { events: ['*'], enabled: false, url: 'http://hooks.example/v2' }).expect(200);
    expect(patched.body).toEqual({ ...endpoint, url: 'http://hooks.example/v2', events: ['*'], enabled: false });
    expect((await c.patch(`/webhook-endpoints/${endpoint.id}`, { enabled: true }).expect(200)).body.enabled).toBe(true);
    // An empty PATCH changes nothing.
    expect((await c.patch(`/webhook-endpoints/${endpoint.id}`, {}).expect(200)).body).toEqual({ ...patched.body, enabled: true });

    const deleted = await c.delete(`/webhook-endpoints/${endpoint.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectErrorBody((await c.get(`/webhook-endpoints/${endpoint.id}`).expect(404)).body, 'not_found');
    expectErrorBody((await c.delete(`/webhook-endpoints/${endpoint.id}`).expect(404)).body, 'not_found');
    expect(secret).toMatch(SECRET);
  });

  test('the secret is shown on create only: get, list and update never carry it', async () => {
    const c = client();
    const { id, secret } = await createEndpoint(c);
    const answers = [
      (await c.get(`/webhook-endpoints/${id}`)).text,
      (await c.get('/webhook-endpoints')).text,
      (await c.patch(`/webhook-endpoints/${id}`, { enabled: false })).text,
    ];
    for (const text of answers) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain('secret');
      expect(text).not.toContain('whsec_');
    }
  });

  test('a password in the URL is never shown back (user:***@host) on create, get, list, patch or rotate; it is stored as sent', async () => {
    const c = client();
    const sent = 'https://hook-user:pa55-w0rd@hooks.example/in?tag=1';
    const shown = 'https://hook-user:***@hooks.example/in?tag=1';
    const created = await createEndpoint(c, { url: sent, events: ['*'] });
    const id = created.id;
    const answers = [
      created,
      (await c.get(`/webhook-endpoints/${id}`).expect(200)).body,
      (await c.get('/webhook-endpoints').expect(200)).body.data[0],
      (await c.patch(`/webhook-endpoints/${id}`, { events: ['item.created'] }).expect(200)).body,
      (await c.post(`/webhook-endpoints/${id}/rotate-secret`).expect(200)).body,
    ];
    for (const answer of answers) expect(answer.url).toBe(shown);
    const patched = await c.patch(`/webhook-endpoints/${id}`, { url: 'http://other:n3w-pa55@hooks.example/v2' }).expect(200);
    expect(patched.body.url).toBe('http://other:***@hooks.example/v2');
    expect(patched.text).not.toContain('n3w-pa55');

    const stored = await webhooksStore(sql).findEndpoint(c.identity.workspaceId as WorkspaceId, id);
    expect(stored!.url).toBe('http://other:n3w-pa55@hooks.example/v2');
  });

  test('rotate-secret returns a new secret once; a body with unknown fields is refused', async () => {
    const c = client();
    const { id, secret } = await createEndpoint(c);
    const rotated = await c.post(`/webhook-endpoints/${id}/rotate-secret`).expect(200);
    expect(rotated.body).toEqual({
      id,
      url: 'https://hooks.example/in',
      events: ['item.created'],
      enabled: true,
      created_at: expect.stringMatching(TIMESTAMP),
      secret: expect.stringMatching(SECRET),
    });
    expect(rotated.body.secret).not.toBe(secret);
    const stored = await webhooksStore(sql).findEndpoint(c.identity.workspaceId as WorkspaceId, id);
    expect(stored).toMatchObject({ secret: rotated.body.secret, previousSecret: secret });
    // The previous secret stays valid for 24 h.
    const validFor = stored!.previousSecretExpiresAt!.getTime() - Date.now();
    expect(validFor).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(validFor).toBeLessThanOrEqual(24 * 3600_000);
    const bad = expectErrorBody((await c.post(`/webhook-endpoints/${id}/rotate-secret`, { force: true }).expect(400)).body, 'invalid_request');
    expect(bad.errors).toEqual([{ in: 'body', field: 'force', code: 'unknown_field', message: 'is not a known field' }]);
    expectErrorBody((await c.post(`/webhook-endpoints/${randomUUID()}/rotate-secret`).expect(404)).body, 'not_found');
  });

  test('lists page with limit and cursor in creation order', async () => {
    const c = client();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createEndpoint(c, { url: `https://hooks.example/${i}`, events: ['*'] })).id);
    const first = await c.get('/webhook-endpoints?limit=2').expect(200);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await c.get(`/webhook-endpoints?limit=2&cursor=${first.body.next_cursor}`).expect(200);
    const third = await c.get(`/webhook-endpoints?limit=2&cursor=${second.body.next_cursor}`).expect(200);
    expect([...second.body.data, ...third.body.data].map((e: { id: string }) => e.id)).toEqual(ids.slice(2));
    expect(third.body.next_cursor).toBeNull();
    const bad = expectErrorBody((await c.get('/webhook-endpoints?limit=0&cursor=nonsense').expect(400)).body, 'invalid_request');
    expect(bad.errors!.map((e) => [e.in, e.field])).toEqual([
      ['query', 'limit'],
      ['query', 'cursor'],
    ]);
    const badCursor = expectErrorBody((await c.get('/webhook-endpoints?cursor=nonsense').expect(400)).body, 'invalid_request');
    expect(badCursor.errors).toEqual([{ in: 'query', field: 'cursor', code: 'invalid_format', message: 'is not a cursor from this list' }]);
  });

  test('deliveries of an endpoint list as the contract says (and 404 for an unknown endpoint)', async () => {
    const c = client();
    const { id } = await createEndpoint(c);
    const store = webhooksStore(sql);
    const ws = c.identity.workspaceId as WorkspaceId;
    await store.insertDelivery(ws, {
      endpointId: id,
      eventId: 'evt_01JEXAMPLE0000000000000000',
      eventType: 'item.created',
      attempt: 1,
      status: 'failed',
      responseStatus: 500,
      error: 'receiver answered 500',
    });
    // Times are kept to the millisecond and ties go by the random id: the second attempt comes later, as real retries do.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await store.insertDelivery(ws, {
      endpointId: id,
      eventId: 'evt_01JEXAMPLE0000000000000000',
      eventType: 'item.created',
      attempt: 2,
      status: 'succeeded',
      responseStatus: 200,
      error: null,
    });
    const page = await c.get(`/webhook-endpoints/${id}/deliveries?limit=1`).expect(200);
    expect(page.body).toEqual({
      data: [
        {
          id: expect.any(String),
          event_id: 'evt_01JEXAMPLE0000000000000000',
          event_type: 'item.created',
          attempt: 1,
          status: 'failed',
          response_status: 500,
          error: 'receiver answered 500',
          created_at: expect.stringMatching(TIMESTAMP),
        },
      ],
      next_cursor: expect.any(String),
    });
    const rest = await c.get(`/webhook-endpoints/${id}/deliveries?cursor=${page.body.next_cursor}`).expect(200);
    expect(rest.body.data).toEqual([expect.objectContaining({ attempt: 2, status: 'succeeded', response_status: 200, error: null })]);
    expectErrorBody((await c.get(`/webhook-endpoints/${randomUUID()}/deliveries`).expect(404)).body, 'not_found');
  });
});

describe('workspaces and scopes', () => {
  test("another workspace's endpoint is 404 for every route, and never listed", async () => {
    const owner = client();
    const other = client();
    const { id } = await createEndpoint(owner);
    for (const res of [
      await other.get(`/webhook-endpoints/${id}`),
      await other.patch(`/webhook-endpoints/${id}`, { enabled: false }),
      await other.delete(`/webhook-endpoints/${id}`),
      await other.get(`/webhook-endpoints/${id}/deliveries`),
      await other.post(`/webhook-endpoints/${id}/rotate-secret`),
    ]) {
      expect(res.status).toBe(404);
      expectErrorBody(res.body, 'not_found');
    }
    expect((await other.get('/webhook-endpoints').expect(200)).body.data).toEqual([]);
    expect((await owner.get(`/webhook-endpoints/${id}`).expect(200)).body.enabled).toBe(true);
  });

  test('reads need webhooks:read and changes webhooks:write', async () => {
    const owner = client();
    const { id } = await createEndpoint(owner);
    const reader = serviceClient('events', app, { ...owner.identity, scopes: ['webhooks:read'] });
    await reader.get(`/webhook-endpoints/${id}`).expect(200);
    await reader.get(`/webhook-endpoints/${id}/deliveries`).expect(200);
    const denied = await reader.post(`/webhook-endpoints/${id}/rotate-secret`).expect(403);
    expect(expectErrorBody(denied.body, 'forbidden_scope').required_scope).toBe('webhooks:write');
    await reader.patch(`/webhook-endpoints/${id}`, { enabled: false }).expect(403);
    await reader.delete(`/webhook-endpoints/${id}`).expect(403);
    const writer = serviceClient('events', app, { ...owner.identity, scopes: ['webhooks:write'] });
    expect(expectErrorBody((await writer.get('/webhook-endpoints').expect(403)).body, 'forbidden_scope').required_scope).toBe('webhooks:read');
    await writer.patch(`/webhook-endpoints/${id}`, { enabled: false }).expect(200);
  });

  test('a request the gateway did not sign is 401', async () => {
    expectErrorBody((await request(app).get('/webhook-endpoints').expect(401)).body, 'unauthorized');
  });
});

describe('validation: every problem is a 400 with the contract error body', () => {
  test.each([
    ['a URL that is not a URL', { url: 'not a url', events: ['*'] }, [['body', 'url', 'invalid_format']]],
    ['an ftp:// URL', { url: 'ftp://hooks.example/in', events: ['*'] }, [['body', 'url', 'invalid_format']]],
    ['a javascript: URL', { url: 'javascript:alert(1)', events: ['*'] }, [['body', 'url', 'invalid_format']]],
    ['an unknown event type', { url: 'https://hooks.example/in', events: ['item.created', 'item.exploded'] }, [['body', 'events.1', 'invalid_enum']]],
    ['an empty event list', { url: 'https://hooks.example/in', events: [] }, [['body', 'events', 'too_few_items']]],
    ['"*" beside other types', { url: 'https://hooks.example/in', events: ['*', 'item.created'] }, [['body', 'events', 'invalid_enum']]],
    ['events that are not a list', { url: 'https://hooks.example/in', events: 'item.created' }, [['body', 'events', 'invalid_type']]],
    ['an unknown field', { url: 'https://hooks.example/in', events: ['*'], secret: 'mine' }, [['body', 'secret', 'unknown_field']]],
    [
      'missing fields',
      {},
      [
        ['body', 'url', 'required'],
        ['body', 'events', 'required'],
      ],
    ],
    [
      'several problems at once',
      { url: 'ftp://x', events: ['nope'], enabled: 'yes', extra: 1 },
      [
        ['body', 'extra', 'unknown_field'],
        ['body', 'url', 'invalid_format'],
        ['body', 'events.0', 'invalid_enum'],
        ['body', 'enabled', 'invalid_type'],
      ],
    ],
  ])('create with %s', async (_name, body, expected) => {
    const res = await client().post('/webhook-endpoints', body).expect(400);
    const error = expectErrorBody(res.body, 'invalid_request');
    expect(error.errors!.map((e) => [e.in, e.field, e.code])).toEqual(expect.arrayContaining(expected));
    expect(error.errors).toHaveLength(expected.length);
  });

  test('a body that is not JSON, or JSON that is not an object, is 400', async () => {
    const c = client();
    const malformed = await c.post('/webhook-endpoints', '{"url": ', { 'content-type': 'application/json' }).expect(400);
    expect(expectErrorBody(malformed.body, 'invalid_request').errors).toEqual([{ in: 'body', field: '', code: 'invalid_json', message: 'is not valid JSON' }]);
    const text = await c.post('/webhook-endpoints', 'url=https://hooks.example', { 'content-type': 'text/plain' }).expect(400);
    expect(expectErrorBody(text.body, 'invalid_request').errors![0]).toMatchObject({ in: 'header', field: 'content-type' });
    const array = await c.post('/webhook-endpoints', '["*"]', { 'content-type': 'application/json' }).expect(400);
    expect(expectErrorBody(array.body, 'invalid_request').errors![0]).toMatchObject({ in: 'body', field: '', code: 'invalid_type' });
  });

  test('PATCH validates the same way, and a path id that is not a UUID is a path error', async () => {
    const c = client();
    const { id } = await createEndpoint(c);
    const res = await c.patch(`/webhook-endpoints/${id}`, { url: 'ftp://x', events: ['nope'], colour: 'red' }).expect(400);
    expect(
      expectErrorBody(res.body, 'invalid_request')
        .errors!.map((e) => e.field)
        .sort(),
    ).toEqual(['colour', 'events.0', 'url']);
    const path = await c.get('/webhook-endpoints/not-a-uuid').expect(400);
    expect(expectErrorBody(path.body, 'invalid_request').errors).toEqual([{ in: 'path', field: 'id', code: 'invalid_format', message: 'must be a UUID' }]);
  });

  test('duplicate event types are stored once', async () => {
    const created = await createEndpoint(client(), { url: 'https://hooks.example/in', events: ['run.failed', 'run.failed', 'run.queued'] });
    expect(created.events).toEqual(['run.failed', 'run.queued']);
  });
});

describe('SSRF guard', () => {
  test.each([
    'http://127.0.0.1:8080/hook',
    'http://10.1.2.3/hook',
    'http://172.20.0.1/hook',
    'http://192.168.0.10/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/hook',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
    'http://0.0.0.0/hook',
    'http://localhost:3000/hook',
    'https://intranet.example/hook', // resolves to 10.20.30.40
  ])('refuses %s with 400 on create and on update', async (url) => {
    const c = client(null, guardedApp);
    const created = await c.post('/webhook-endpoints', { url, events: ['*'] }).expect(400);
    expect(expectErrorBody(created.body, 'invalid_request').errors).toEqual([
      { in: 'body', field: 'url', code: 'private_address', message: 'must be a public address' },
    ]);
    const { id } = await createEndpoint(c, { url: 'https://hooks.example/in', events: ['*'] });
    const updated = await c.patch(`/webhook-endpoints/${id}`, { url }).expect(400);
    expect(expectErrorBody(updated.body, 'invalid_request').errors![0]!.code).toBe('private_address');
    expect((await c.get(`/webhook-endpoints/${id}`).expect(200)).body.url).toBe('https://hooks.example/in');
  });

  test('public addresses pass the guard', async () => {
    const c = client(null, guardedApp);
    await c.post('/webhook-endpoints', { url: 'https://93.184.215.14/hook', events: ['*'] }).expect(201);
    await c.post('/webhook-endpoints', { url: 'https://hooks.example/hook', events: ['*'] }).expect(201);
  });

  test('with WEBHOOKS_ALLOW_PRIVATE the same targets are accepted', async () => {
    const c = client();
    for (const url of ['http://127.0.0.1:8080/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook', 'http://localhost:3000/hook']) {
      await c.post('/webhook-endpoints', { url, events: ['*'] }).expect(201);
    }
  });
});
