// Contract section 20 end to end: the built gateway and services, one workspace's quotas set through
// the admin API, enforced by the services it signs them to, and its idempotency bytes by the gateway.
import { randomUUID } from 'node:crypto';
import { expectErrorBody, startPlatform, uniqueDatabaseName, waitFor, type Platform } from '@platform/testing';

let platform: Platform;

beforeAll(async () => {
  platform = await startPlatform({ name: uniqueDatabaseName('quotas'), processes: ['events', 'warehouse', 'pipelines', 'gateway'] });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function call(method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${platform.gatewayUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${options.token ?? platform.token}`,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

const admin = (method: string, path: string, body?: unknown) => call(method, `/admin/v1${path}`, { token: platform.adminToken, body });

const pipeline = (name: string, schedule?: object) => ({
  name,
  source: { connector: 'sample', config: { records: 1 } },
  destination: { connector: 'postgres', config: { table: 'quota_platform' } },
  ...(schedule ? { schedule } : {}),
});

test('quotas set through the admin API are what the services enforce, with usage shown beside them', async () => {
  const path = `/workspaces/${platform.workspaceId}/quotas`;
  expect((await admin('PATCH', path, { pipelines: 2, scheduled_pipelines: 1, webhook_endpoints: 1 })).status).toBe(200);

  // A change reaches the gateway's cached key within the contract's delay: poll until it is enforced.
  expect((await call('POST', '/pipelines/v3/pipelines', { body: pipeline('first', { type: 'interval', every_seconds: 3600 }) })).status).toBe(201);
  await waitFor(
    'the scheduled_pipelines quota of 1 to be enforced',
    async () => (await call('POST', '/pipelines/v3/pipelines', { body: pipeline('scheduled', { type: 'interval', every_seconds: 3600 }) })).status === 409,
    30_000,
    200,
  );
  expect((await call('POST', '/pipelines/v3/pipelines', { body: pipeline('second') })).status).toBe(201);
  const refused = await call('POST', '/pipelines/v3/pipelines', { body: pipeline('third') });
  expect(refused.status).toBe(409);
  expect(expectErrorBody(refused.body, 'conflict')).toMatchObject({
    quota: 'pipelines',
    limit: 2,
    errors: [expect.objectContaining({ code: 'quota_exceeded' })],
  });

  const endpoint = { url: 'https://hooks.example.com/platform', events: ['ticket.validated'] };
  expect((await call('POST', '/events/v0/webhook-endpoints', { body: endpoint })).status).toBe(201);
  const secondEndpoint = await call('POST', '/events/v0/webhook-endpoints', { body: endpoint });
  expect(secondEndpoint.status).toBe(409);
  expect(expectErrorBody(secondEndpoint.body, 'conflict')).toMatchObject({ quota: 'webhook_endpoints', limit: 1 });
  // Per service: the warehouse has its own allowance.
  expect((await call('POST', '/warehouse/v1/webhook-endpoints', { body: { ...endpoint, events: ['item.created'] } })).status).toBe(201);

  const shown = await admin('GET', path);
  expect(shown.status).toBe(200);
  expect(shown.body).toMatchObject({
    pipelines: 2,
    scheduled_pipelines: 1,
    webhook_endpoints: 1,
    idempotency_bytes: null,
    limits: { pipelines: 2, scheduled_pipelines: 1, webhook_endpoints: 1, idempotency_bytes: 64 * 1024 * 1024 },
    usage: { pipelines: 2, scheduled_pipelines: 1, webhook_endpoints: { events: 1, warehouse: 1, pipelines: 0 }, idempotency_bytes: 0 },
  });
});

test("a workspace's stored idempotent answers stop at its idempotency_bytes: a new key is 429 with Retry-After before it runs", async () => {
  const path = `/workspaces/${platform.workspaceId}/quotas`;
  expect((await admin('PATCH', path, { idempotency_bytes: 1, pipelines: null })).status).toBe(200);
  const create = (key: string, name: string) => call('POST', '/warehouse/v1/items', { body: { sku: `Q-${name}`, name }, headers: { 'idempotency-key': key } });

  // Nothing is stored yet, so the first new key is admitted (the last answer may pass the quota by
  // its own size); once the change is seen, the next new key is refused.
  const admitted: string[] = [];
  await waitFor(
    'the idempotency quota to be enforced',
    async () => {
      const key = randomUUID();
      const res = await create(key, key);
      if (res.status === 201) admitted.push(key);
      return res.status === 429;
    },
    30_000,
    200,
  );
  // ... and every further new key is refused without running: no item appears for it.
  const sku = `Q-refused-${randomUUID()}`;
  const refused = await call('POST', '/warehouse/v1/items', { body: { sku, name: 'refused' }, headers: { 'idempotency-key': randomUUID() } });
  expect(refused.status).toBe(429);
  expect(expectErrorBody(refused.body, 'rate_limited')).toMatchObject({ quota: 'idempotency_bytes', limit: 1 });
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect((await call('GET', `/warehouse/v1/items?sku=${sku}`)).body?.data).toEqual([]);
  // A replay of a stored answer is served; a request without the header is unaffected.
  expect(admitted.length).toBeGreaterThanOrEqual(1);
  const replay = await create(admitted[0]!, admitted[0]!);
  expect(replay.status).toBe(201);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect((await call('POST', '/warehouse/v1/items', { body: { sku: `Q-plain-${randomUUID()}`, name: 'plain' } })).status).toBe(201);

  const usage = (await admin('GET', path)).body as { usage: { idempotency_bytes: number } };
  expect(usage.usage.idempotency_bytes).toBeGreaterThan(0);
  expect(usage.usage.idempotency_bytes).toBeLessThanOrEqual(1 + 1024 * 1024);
});
