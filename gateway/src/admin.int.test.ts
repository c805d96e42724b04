import { randomUUID } from 'node:crypto';
import { expectErrorBody } from '@platform/testing';
import { ADMIN_TOKEN, createTestKey, httpClient, startGateway, type HttpClient, type TestGateway } from './test/gateway';

let gw: TestGateway;
let client: HttpClient;

beforeAll(async () => {
  gw = await startGateway();
  client = httpClient();
});
afterAll(async () => {
  await client.close();
  await gw.close();
});

const admin = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  client.call(gw.url, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, body, headers });

async function workspace(name = 'Acme'): Promise<string> {
  const res = await admin('POST', '/workspaces', { name });
  expect(res.status).toBe(201);
  return res.body.id;
}

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('admin authentication', () => {
  test('only the admin token passes; an API key or another token gets 401', async () => {
    const { token } = await createTestKey(gw.stores);
    for (const bad of [token, 'not-the-admin-token', undefined]) {
      const res = await client.call(gw.url, 'GET', '/admin/v1/workspaces', { token: bad });
      expect(res.status).toBe(401);
      expectErrorBody(res.body, 'unauthorized');
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      expect(res.headers['platform-version']).toBe('2024-12-01');
    }
  });

  test('an unknown admin path is 404 for the admin, 401 for anyone else', async () => {
    expect((await admin('GET', '/nothing')).status).toBe(404);
    expect((await client.call(gw.url, 'GET', '/admin/v1/nothing')).status).toBe(401);
  });
});

describe('workspaces', () => {
  test('POST creates one: 201 { id, name, created_at }', async () => {
    const res = await admin('POST', '/workspaces', { name: 'Acme Events' });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme Events', created_at: expect.stringMatching(TIMESTAMP) });
    const read = await admin('GET', `/workspaces/${res.body.id}`);
    expect(read.body).toEqual(res.body);
  });

  test('GET lists them with cursor pagination', async () => {
    await workspace();
    await workspace();
    const page = await admin('GET', '/workspaces?limit=1');
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(1);
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const next = await admin('GET', `/workspaces?limit=1&cursor=${page.body.next_cursor}`);
    expect(next.body.data[0].id).not.toBe(page.body.data[0].id);
  });

  test('bad bodies are 400 with every problem listed', async () => {
    const missing = await admin('POST', '/workspaces', {});
    expect(expectErrorBody(missing.body, 'invalid_request').errors).toEqual([{ in: 'body', field: 'name', code: 'required', message: 'is required' }]);
    const extra = await admin('POST', '/workspaces', { name: '', colour: 'red' });
    expect(extra.status).toBe(400);
    expect(extra.body.error.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`).sort()).toEqual([
      'colour:unknown_field',
      'name:too_short',
    ]);
  });

  test('malformed JSON, a non-JSON content type and a non-object body are 400, never 5xx', async () => {
    const badJson = await admin('POST', '/workspaces', '{"name":', { 'content-type': 'application/json' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.errors[0]).toMatchObject({ in: 'body', code: 'invalid_json' });
    const text = await admin('POST', '/workspaces', 'name=x', { 'content-type': 'text/plain' });
    expect(text.status).toBe(400);
    const array = await admin('POST', '/workspaces', '[1]', { 'content-type': 'application/json' });
    expect(array.status).toBe(400);
  });

  test('a body over 1 MiB is 413', async () => {
    const res = await admin('POST', '/workspaces', JSON.stringify({ name: 'x'.repeat(1024 * 1024) }));
    expect(res.status).toBe(413);
    expectErrorBody(res.body, 'payload_too_large');
  });
});

describe('API keys', () => {
  test('POST creates a key and shows its token once', async () => {
    const id = await workspace();
    const res = await admin('POST', `/workspaces/${id}/api-keys`, {
      name: 'scanner',
      scopes: ['tickets:read', 'tickets:write'],
      expires_at: '2099-01-01T00:00:00+01:00',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'scanner',
      scopes: ['tickets:read', 'tickets:write'],
      rate_limits: null,
      token: expect.stringMatching(/^plk_[0-9A-Za-z]{32,}$/),
      token_prefix: res.body.token.slice(0, 12),
      created_at: expect.stringMatching(TIMESTAMP),
      expires_at: '2098-12-31T23:00:00.000Z',
      revoked_at: null,
      last_used_at: null,
    });
    // Only the hash is stored.
    const rows = await gw.db.$queryRaw<{ token_hash: string }[]>`SELECT token_hash FROM api_keys WHERE id = ${res.body.id}::uuid`;
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]!.token_hash).not.toContain(res.body.token);
  });

  test('scopes omitted or null means an unrestricted key (scopes: null)', async () => {
    const id = await workspace();
    const res = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'all' });
    expect(res.body.scopes).toBeNull();
    expect((await admin('POST', `/workspaces/${id}/api-keys`, { name: 'all', scopes: null })).body.scopes).toBeNull();
  });

  test('an unknown scope, an empty list, a past expiry and an unknown field are 400', async () => {
    const id = await workspace();
    const unknown = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'k', scopes: ['events:read', 'bookings:write'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.errors).toEqual([expect.objectContaining({ in: 'body', field: 'scopes.1', code: 'invalid_enum' })]);
    const twice = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'k', scopes: ['events:read', 'events:read'] });
    expect(twice.status).toBe(400);
    expect(twice.body.error.errors).toEqual([expect.objectContaining({ in: 'body', field: 'scopes.1', code: 'invalid_format' })]);
    const empty = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'k', scopes: [] });
    expect(empty.body.error.errors[0]).toMatchObject({ field: 'scopes', code: 'too_few_items' });
    const past = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'k', expires_at: '2020-01-01T00:00:00Z' });
    expect(past.body.error.errors[0]).toMatchObject({ field: 'expires_at', code: 'not_in_future' });
    const badDate = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'k', expires_at: 'tomorrow' });
    expect(badDate.body.error.errors[0]).toMatchObject({ field: 'expires_at', code: 'invalid_format' });
    const extra = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'k', token: 'plk_mine' });
    expect(extra.body.error.errors[0]).toMatchObject({ field: 'token', code: 'unknown_field' });
  });

  test('a path id that is not a UUID is 400 in the path; an unknown workspace is 404', async () => {
    const bad = await admin('POST', '/workspaces/nope/api-keys', { name: 'k' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.errors[0]).toMatchObject({ in: 'path', field: 'id' });
    expect((await admin('POST', `/workspaces/${randomUUID()}/api-keys`, { name: 'k' })).status).toBe(404);
    expect((await admin('GET', `/workspaces/${randomUUID()}/api-keys`)).status).toBe(404);
  });

  test('GET lists every key, revoked ones too, never with the token', async () => {
    const id = await workspace();
    const first = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'one' });
    const second = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'two', scopes: ['items:read'] });
    expect((await admin('DELETE', `/workspaces/${id}/api-keys/${first.body.id}`)).status).toBe(204);
    const list = await admin('GET', `/workspaces/${id}/api-keys`);
    expect(list.status).toBe(200);
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.data.map((k: { name: string }) => k.name)).toEqual(['one', 'two']);
    expect(list.body.data[0].revoked_at).toEqual(expect.stringMatching(TIMESTAMP));
    expect(list.body.data[1]).toEqual({ ...second.body, token: undefined });
    for (const key of list.body.data) expect(key).not.toHaveProperty('token');
    expect(list.text).not.toContain(first.body.token);
    expect(list.text).not.toContain(second.body.token);
    const paged = await admin('GET', `/workspaces/${id}/api-keys?limit=1`);
    expect(paged.body.data).toHaveLength(1);
    expect((await admin('GET', `/workspaces/${id}/api-keys?limit=1&cursor=${paged.body.next_cursor}`)).body.data[0].name).toBe('two');
    expect((await admin('GET', `/workspaces/${id}/api-keys?limit=0`)).status).toBe(400);
  });

  test('GET one key: as listed, revoked too, never with the token; another workspace’s key, an unknown one 404; a malformed id 400', async () => {
    const id = await workspace();
    const created = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'scanner', scopes: ['tickets:write'], rate_limits: { events: 50 } });
    const read = await admin('GET', `/workspaces/${id}/api-keys/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ ...created.body, token: undefined });
    expect(read.body).not.toHaveProperty('token');
    expect(read.text).not.toContain(created.body.token);
    expect((await admin('GET', `/workspaces/${id}/api-keys`)).body.data).toEqual([read.body]);

    expect((await admin('DELETE', `/workspaces/${id}/api-keys/${created.body.id}`)).status).toBe(204);
    const revoked = await admin('GET', `/workspaces/${id}/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.stringMatching(TIMESTAMP));

    const other = await workspace();
    for (const path of [
      `/workspaces/${other}/api-keys/${created.body.id}`,
      `/workspaces/${id}/api-keys/${randomUUID()}`,
      `/workspaces/${randomUUID()}/api-keys/${created.body.id}`,
    ]) {
      const missing = await admin('GET', path);
      expect(missing.status).toBe(404);
      expectErrorBody(missing.body, 'not_found');
    }
    const malformed = await admin('GET', `/workspaces/${id}/api-keys/not-a-uuid`);
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.errors).toEqual([expect.objectContaining({ in: 'path', field: 'key_id' })]);
  });

  test('DELETE revokes: 204, then the key gets 401; again 204; another workspace’s key 404', async () => {
    const id = await workspace();
    const created = await admin('POST', `/workspaces/${id}/api-keys`, { name: 'gone' });
    const token = created.body.token;
    expect((await client.call(gw.url, 'GET', `/events/v0/events/${randomUUID()}`, { token })).status).not.toBe(401);
    const revoked = await admin('DELETE', `/workspaces/${id}/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    const refused = await client.call(gw.url, 'GET', `/events/v0/events/${randomUUID()}`, { token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/revoked/);
    expect((await admin('DELETE', `/workspaces/${id}/api-keys/${created.body.id}`)).status).toBe(204);
    const other = await workspace();
    expect((await admin('DELETE', `/workspaces/${other}/api-keys/${created.body.id}`)).status).toBe(404);
    expect((await admin('DELETE', `/workspaces/${id}/api-keys/${randomUUID()}`)).status).toBe(404);
  });
});

test("the admin API is the services' app: a JSON answer of 1 KiB or more is gzipped for a client that accepts gzip (contract section 2)", async () => {
  const id = await workspace('Gzip');
  for (let i = 0; i < 8; i++) expect((await admin('POST', `/workspaces/${id}/api-keys`, { name: `key ${i} ${'x'.repeat(100)}` })).status).toBe(201);
  const plain = await admin('GET', `/workspaces/${id}/api-keys?limit=100`);
  expect(plain.text.length).toBeGreaterThanOrEqual(1024);
  expect(plain.headers['content-encoding']).toBeUndefined();
  const zipped = await admin('GET', `/workspaces/${id}/api-keys?limit=100`, undefined, { 'accept-encoding': 'gzip' });
  expect(zipped.status).toBe(200);
  expect(zipped.headers['content-encoding']).toBe('gzip');
  expect(zipped.headers.vary).toMatch(/accept-encoding/i);
});
