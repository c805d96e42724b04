// Contract section 16 on one gateway instance (real PostgreSQL, Redis and HTTP): editing a key,
// its own rate limits, rolling it, and its usage. Several instances: key-lifecycle.platform.int.test.ts.
import { randomUUID } from 'node:crypto';
import { expectErrorBody, waitFor } from '@platform/testing';
import { ADMIN_TOKEN, startEchoGateway, type EchoGateway, type Reply } from './test/gateway';

let gw: EchoGateway;

beforeAll(async () => {
  gw = await startEchoGateway();
});
afterAll(() => gw.close());

const admin = (method: string, path: string, body?: unknown): Promise<Reply> =>
  gw.client.call(gw.url, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, body });

/** A request to the events service with the token; `status` is the echo upstream's answer. */
const request = (token: string, status = 200): Promise<Reply> =>
  gw.client.call(gw.url, 'GET', `/events/v0/tickets/${randomUUID()}?status=${status}`, { token });

async function newWorkspace(): Promise<string> {
  return (await admin('POST', '/workspaces', { name: 'Keys' })).body.id;
}

async function newKey(workspaceId: string, body: Record<string, unknown> = {}): Promise<{ id: string; token: string; [k: string]: unknown }> {
  const res = await admin('POST', `/workspaces/${workspaceId}/api-keys`, { name: 'deploy', ...body });
  expect(res.status).toBe(201);
  return res.body;
}

const fieldsOf = (res: Reply): string[] => expectErrorBody(res.body, 'invalid_request').errors!.map((e) => `${e.in}:${e.field}:${e.code}`);

describe('a key always carries rate_limits', () => {
  test('null by default; a map when given on create; listed as such', async () => {
    const ws = await newWorkspace();
    const plain = await newKey(ws);
    expect(plain.rate_limits).toBeNull();
    const limited = await newKey(ws, { rate_limits: { events: 5, 'pipeline-runs': 2 } });
    expect(limited.rate_limits).toEqual({ events: 5, 'pipeline-runs': 2 });
    const listed = (await admin('GET', `/workspaces/${ws}/api-keys`)).body.data;
    expect(listed.map((k: { rate_limits: unknown }) => k.rate_limits)).toEqual([null, { events: 5, 'pipeline-runs': 2 }]);
  });
});

describe('PATCH a key', () => {
  test('changes only the fields given; scopes null = unrestricted; rate_limits replaces the whole map', async () => {
    const ws = await newWorkspace();
    const key = await newKey(ws, { scopes: ['events:read'], rate_limits: { events: 5, warehouse: 7 } });
    const renamed = await admin('PATCH', `/workspaces/${ws}/api-keys/${key.id}`, { name: 'deploy 2' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...key, token: undefined, name: 'deploy 2' });
    expect(renamed.body).not.toHaveProperty('token');

    const changed = await admin('PATCH', `/workspaces/${ws}/api-keys/${key.id}`, { scopes: ['tickets:read'], rate_limits: { pipelines: 9 } });
    expect(changed.body).toMatchObject({ name: 'deploy 2', scopes: ['tickets:read'], rate_limits: { pipelines: 9 } });
    const unrestricted = await admin('PATCH', `/workspaces/${ws}/api-keys/${key.id}`, { scopes: null, rate_limits: null });
    expect(unrestricted.body).toMatchObject({ scopes: null, rate_limits: null });
    const nothing = await admin('PATCH', `/workspaces/${ws}/api-keys/${key.id}`, {});
    expect(nothing.status).toBe(200);
    expect(nothing.body).toEqual(unrestricted.body);
  });

  test('a new scope applies to the very next request', async () => {
    const ws = await newWorkspace();
    const key = await newKey(ws, { scopes: ['events:read'] });
    expect((await request(key.token)).status).toBe(403);
    await admin('PATCH', `/workspaces/${ws}/api-keys/${key.id}`, { scopes: ['tickets:read'] });
    expect((await request(key.token)).status).toBe(200);
  });

  test('bad bodies are 400 on the field: unknown bucket, limits outside 1-100,000, empty scopes', async () => {
    const ws = await newWorkspace();
    const key = await newKey(ws);
    const path = `/workspaces/${ws}/api-keys/${key.id}`;
    expect(fieldsOf(await admin('PATCH', path, { rate_limits: { 'failed-auth': 5, events: 5 } }))).toEqual(['body:rate_limits.failed-auth:unknown_field']);
    for (const bad of [0, 100_001, 1.5, '10', null, -1]) {
      const res = await admin('PATCH', path, { rate_limits: { events: bad } });
      expect(res.status).toBe(400);
      expect(fieldsOf(res).every((f) => f.startsWith('body:rate_limits.events:'))).toBe(true);
    }
    expect((await admin('PATCH', path, { rate_limits: { events: 100_000, 'warehouse-bulk': 1 } })).status).toBe(200);
    expect(fieldsOf(await admin('PATCH', path, { rate_limits: [] }))).toEqual(['body:rate_limits:invalid_type']);
    expect(fieldsOf(await admin('PATCH', path, { scopes: [] }))).toEqual(['body:scopes:too_few_items']);
    // Contract 20: stored as sent or refused; a scope twice is refused, never folded into one.
    expect(fieldsOf(await admin('PATCH', path, { scopes: ['tickets:read', 'events:read', 'tickets:read'] }))).toEqual(['body:scopes.2:invalid_format']);
    expect(fieldsOf(await admin('PATCH', path, { token_prefix: 'x' }))).toEqual(['body:token_prefix:unknown_field']);
    expect(fieldsOf(await admin('POST', `/workspaces/${ws}/api-keys`, { name: 'x', rate_limits: { bulk: 1 } }))).toEqual([
      'body:rate_limits.bulk:unknown_field',
    ]);
  });

  test("another workspace's key, an unknown key and an unknown workspace are 404", async () => {
    const [mine, theirs] = [await newWorkspace(), await newWorkspace()];
    const key = await newKey(theirs);
    for (const path of [
      `/workspaces/${mine}/api-keys/${key.id}`,
      `/workspaces/${theirs}/api-keys/${randomUUID()}`,
      `/workspaces/${randomUUID()}/api-keys/${key.id}`,
    ]) {
      const res = await admin('PATCH', path, { name: 'stolen' });
      expect(res.status).toBe(404);
      expectErrorBody(res.body, 'not_found');
    }
    expect((await admin('GET', `/workspaces/${theirs}/api-keys`)).body.data[0].name).toBe('deploy');
  });
});

describe("a key's own rate limits", () => {
  test('X-RateLimit-Limit shows the key’s limit and the bucket refuses past it; other buckets keep the platform’s', async () => {
    const ws = await newWorkspace();
    const key = await newKey(ws, { rate_limits: { events: 3 } });
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await request(key.token));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(replies.map((r) => r.headers['x-ratelimit-limit'])).toEqual(['3', '3', '3', '3']);
    expect(replies.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    expect(Number(replies[3]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const warehouse = await gw.client.call(gw.url, 'GET', `/warehouse/v1/items/${randomUUID()}`, { token: key.token });
    expect(warehouse.headers['x-ratelimit-limit']).toBe('600');
  });

  test('a changed limit keeps what the key already used in the window', async () => {
    const ws = await newWorkspace();
    const key = await newKey(ws, { rate_limits: { events: 10 } });
    for (let i = 0; i < 4; i++) expect((await request(key.token)).status).toBe(200);
    await admin('PATCH', `/workspaces/${ws}/api-keys/${key.id}`, { rate_limits: { events: 6 } });
    const lowered = await request(key.token);
    expect(lowered.headers).toMatchObject({ 'x-ratelimit-limit': '6', 'x-ratelimit-remaining': '1' });
    expect((await request(key.token)).status).toBe(200);
    expect((await request(key.token)).status).toBe(429);
    await admin('PATCH', `/workspaces/${ws}/api-keys/${key.id}`, { rate_limits: null });
    const restored = await request(key.token);
    expect(restored.headers).toMatchObject({ 'x-ratelimit-limit': '400', 'x-ratelimit-remaining': String(400 - 7) });
  });
});

describe('roll', () => {
  test('201 a new key with the same name, scopes and limits; the old one expires after the overlap; both work meanwhile', async () => {
    const ws = await newWorkspace();
    const old = await newKey(ws, { scopes: ['tickets:read'], rate_limits: { events: 50 } });
    const before = Date.now();
    const res = await admin('POST', `/workspaces/${ws}/api-keys/${old.id}/roll`, { expires_in_seconds: 3600 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'deploy',
      scopes: ['tickets:read'],
      rate_limits: { events: 50 },
      expires_at: null,
      revoked_at: null,
      token: expect.stringMatching(/^plk_/),
    });
    expect(res.body.id).not.toBe(old.id);
    expect(res.body.token).not.toBe(old.token);
    const oldNow = (await admin('GET', `/workspaces/${ws}/api-keys`)).body.data.find((k: { id: string }) => k.id === old.id);
    const expiresAt = Date.parse(oldNow.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000);
    expect((await request(old.token)).status).toBe(200);
    expect((await request(res.body.token)).status).toBe(200);
  });

  test('without a body the overlap is 24 h; 0 ends the old token at once; a roll never extends an earlier expiry', async () => {
    const ws = await newWorkspace();
    const first = await newKey(ws);
    const defaulted = await gw.client.call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/api-keys/${first.id}/roll`, { token: ADMIN_TOKEN });
    expect(defaulted.status).toBe(201);
    const keys = async () => (await admin('GET', `/workspaces/${ws}/api-keys`)).body.data as { id: string; expires_at: string | null }[];
    const firstExpiry = Date.parse((await keys()).find((k) => k.id === first.id)!.expires_at!);
    expect(Math.abs(firstExpiry - (Date.now() + 86_400_000))).toBeLessThan(5_000);

    const soon = new Date(Date.now() + 120_000).toISOString();
    const shortLived = await newKey(ws, { expires_at: soon });
    await admin('POST', `/workspaces/${ws}/api-keys/${shortLived.id}/roll`, { expires_in_seconds: 604_800 });
    expect((await keys()).find((k) => k.id === shortLived.id)!.expires_at).toBe(new Date(soon).toISOString());

    const second = defaulted.body;
    const rolledNow = await admin('POST', `/workspaces/${ws}/api-keys/${second.id}/roll`, { expires_in_seconds: 0 });
    expect(rolledNow.status).toBe(201);
    const refused = await request(second.token);
    expect(refused.status).toBe(401);
    expect(expectErrorBody(refused.body, 'unauthorized').message).toBe('This API key has expired.');
    expect((await request(rolledNow.body.token)).status).toBe(200);
  });

  test('409 conflict for a revoked or expired key; 400 for a bad overlap; 404 across workspaces', async () => {
    const ws = await newWorkspace();
    const revoked = await newKey(ws);
    await admin('DELETE', `/workspaces/${ws}/api-keys/${revoked.id}`);
    const conflictRevoked = await admin('POST', `/workspaces/${ws}/api-keys/${revoked.id}/roll`, {});
    expect(conflictRevoked.status).toBe(409);
    expectErrorBody(conflictRevoked.body, 'conflict');

    const expiring = await newKey(ws);
    await admin('POST', `/workspaces/${ws}/api-keys/${expiring.id}/roll`, { expires_in_seconds: 0 });
    await waitFor('the old key to expire', async () => (await request(expiring.token)).status === 401 || undefined);
    expect((await admin('POST', `/workspaces/${ws}/api-keys/${expiring.id}/roll`, {})).status).toBe(409);

    const live = await newKey(ws);
    for (const bad of [-1, 604_801, 1.5, '60', null]) {
      expect(fieldsOf(await admin('POST', `/workspaces/${ws}/api-keys/${live.id}/roll`, { expires_in_seconds: bad }))[0]).toMatch(/^body:expires_in_seconds:/);
    }
    expect(fieldsOf(await admin('POST', `/workspaces/${ws}/api-keys/${live.id}/roll`, { overlap: 5 }))).toEqual(['body:overlap:unknown_field']);
    const other = await newWorkspace();
    expect((await admin('POST', `/workspaces/${other}/api-keys/${live.id}/roll`, {})).status).toBe(404);
    expect((await admin('GET', `/workspaces/${ws}/api-keys`)).body.data.filter((k: { id: string }) => k.id !== live.id)).toHaveLength(3);
  });
});

describe('usage', () => {
  test('counts every answered request of the key by status class, in the current UTC hour; 429 apart from 4xx', async () => {
    const ws = await newWorkspace();
    const key = await newKey(ws, { rate_limits: { events: 6 } });
    const statuses = [200, 201, 302, 404, 422, 500];
    for (const status of statuses) await request(key.token, status);
    await request(key.token); // over the limit: 429
    await gw.client.call(gw.url, 'GET', '/events/v0/nothing-here', { token: key.token }); // unknown route: 404 comes before the limit
    await gw.app.flushKeyActivity();

    const res = await admin('GET', `/workspaces/${ws}/api-keys/${key.id}/usage`);
    expect(res.status).toBe(200);
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    expect(res.body).toEqual({ data: [{ start: hour, requests: 8, by_status: { '2xx': 2, '3xx': 1, '4xx': 3, '429': 1, '5xx': 1 } }] });
    const byDay = await admin('GET', `/workspaces/${ws}/api-keys/${key.id}/usage?granularity=day`);
    expect(byDay.body.data).toEqual([{ start: `${hour.slice(0, 10)}T00:00:00.000Z`, requests: 8, by_status: res.body.data[0].by_status }]);
  });

  test('buckets oldest first, only with traffic, start in [from, to); days add up their hours; a retried flush counts once', async () => {
    const ws = await newWorkspace();
    const key = await newKey(ws);
    const at = (iso: string) => new Date(iso);
    const flush = randomUUID();
    const usage = [
      { keyId: key.id, hour: at('2026-03-01T23:00:00Z'), counts: [1, 0, 0, 0, 0] },
      { keyId: key.id, hour: at('2026-03-02T00:00:00Z'), counts: [2, 0, 1, 0, 0] },
      { keyId: key.id, hour: at('2026-03-02T05:00:00Z'), counts: [0, 0, 0, 3, 1] },
    ];
    await gw.stores.crossWorkspace.recordKeyActivity(flush, [], usage);
    await gw.stores.crossWorkspace.recordKeyActivity(flush, [], usage);
    const get = async (query: string) => (await admin('GET', `/workspaces/${ws}/api-keys/${key.id}/usage?${query}`)).body.data;

    expect(await get('from=2026-03-01T00:00:00Z&to=2026-03-03T00:00:00Z')).toEqual([
      { start: '2026-03-01T23:00:00.000Z', requests: 1, by_status: { '2xx': 1, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0 } },
      { start: '2026-03-02T00:00:00.000Z', requests: 3, by_status: { '2xx': 2, '3xx': 0, '4xx': 1, '429': 0, '5xx': 0 } },
      { start: '2026-03-02T05:00:00.000Z', requests: 4, by_status: { '2xx': 0, '3xx': 0, '4xx': 0, '429': 3, '5xx': 1 } },
    ]);
    expect((await get('from=2026-03-01T23:00:00Z&to=2026-03-02T05:00:00Z')).map((b: { start: string }) => b.start)).toEqual([
      '2026-03-01T23:00:00.000Z',
      '2026-03-02T00:00:00.000Z',
    ]);
    expect((await get('from=2026-03-01T23:30:00Z&to=2026-03-02T06:00:00Z')).map((b: { start: string }) => b.start)).toEqual([
      '2026-03-02T00:00:00.000Z',
      '2026-03-02T05:00:00.000Z',
    ]);
    expect(await get('from=2026-03-01T00:00:00%2B02:00&to=2026-03-03T00:00:00Z&granularity=day')).toEqual([
      { start: '2026-03-01T00:00:00.000Z', requests: 1, by_status: { '2xx': 1, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0 } },
      { start: '2026-03-02T00:00:00.000Z', requests: 7, by_status: { '2xx': 2, '3xx': 0, '4xx': 1, '429': 3, '5xx': 1 } },
    ]);
    expect(await get('from=2026-03-02T00:00:01Z&to=2026-03-03T00:00:00Z&granularity=day')).toEqual([]);
    expect(await get('')).toEqual([]);
  });

  test('bad queries are 400 on the field; another workspace’s key is 404', async () => {
    const ws = await newWorkspace();
    const key = await newKey(ws);
    const path = `/workspaces/${ws}/api-keys/${key.id}/usage`;
    expect(fieldsOf(await admin('GET', `${path}?granularity=minute`))).toEqual(['query:granularity:invalid_enum']);
    expect(fieldsOf(await admin('GET', `${path}?from=yesterday`))).toEqual(['query:from:invalid_format']);
    expect(fieldsOf(await admin('GET', `${path}?from=2026-03-02T00:00:00Z&to=2026-03-02T00:00:00Z`))).toEqual(['query:from:not_before_to']);
    expect(fieldsOf(await admin('GET', `${path}?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z`))).toEqual(['query:from:range_too_large']);
    expect((await admin('GET', `${path}?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&granularity=day`)).status).toBe(200);
    expect(fieldsOf(await admin('GET', `${path}?from=2024-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&granularity=day`))).toEqual(['query:from:range_too_large']);
    expect(fieldsOf(await admin('GET', `${path}?from=${new Date(Date.now() + 60_000).toISOString()}`))).toEqual(['query:from:not_before_to']);
    const other = await newWorkspace();
    expect((await admin('GET', `/workspaces/${other}/api-keys/${key.id}/usage`)).status).toBe(404);
  });
});
