import { readdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createAdminClient } from '@platform/client';
import { DEFAULT_QUOTA_LIMITS, DEFAULT_SERVICE_QUOTA_LIMITS, migrate } from '@platform/core';
import { testDatabaseUrl, waitFor } from '@platform/testing';
import { MIGRATIONS_DIR } from '@platform/gateway/migrate';
import { ADMIN_TOKEN, startEchoGateway, startGateway, type EchoGateway } from '@platform/gateway/testing';
import type { CliDeps } from './context';
import { runCli } from './program';

let gw: EchoGateway;
let deps: CliDeps;

beforeAll(async () => {
  // Keys cached far beyond every wait here: a change that shows was applied, not waited out of the cache.
  gw = await startEchoGateway({ keyCache: { ttlMs: 300_000 } });
  deps = {
    // The CLI's own admin client, on the running gateway.
    admin: async () => createAdminClient({ baseUrl: gw.url, adminToken: ADMIN_TOKEN }),
    stores: async () => gw.stores,
    migrate: () => migrate(testDatabaseUrl('gateway'), MIGRATIONS_DIR),
  };
});
afterAll(() => gw.close());

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string; json: any }> {
  return cliOn(deps, ...argv);
}

async function cliOn(on: CliDeps, ...argv: string[]): Promise<{ code: number; out: string; err: string; json: any }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, on, { out: (line) => (out += `${line}\n`), err: (line) => (err += `${line}\n`) });
  let json: unknown;
  try {
    json = JSON.parse(out || err);
  } catch {
    json = undefined;
  }
  return { code, out, err, json };
}

test('workspaces create and list', async () => {
  const created = await cli('workspaces', 'create', '--name', 'From the shell');
  expect(created.code).toBe(0);
  expect(created.json).toEqual({ id: expect.any(String), name: 'From the shell', created_at: expect.any(String) });
  await cli('workspaces', 'create', '--name', 'Another');
  const listed = await cli('workspaces', 'list', '--limit', '1');
  expect(listed.code).toBe(0);
  expect(listed.json).toEqual({ data: [expect.objectContaining({ id: expect.any(String) })], next_cursor: expect.any(String) });
  expect((await cli('workspaces', 'list', '--limit', '1', '--cursor', listed.json.next_cursor)).json.data[0].id).not.toBe(listed.json.data[0].id);
});

test('keys create, list and revoke; the revoked key fails on a running gateway', async () => {
  const workspace = (await cli('workspaces', 'create', '--name', 'Keys')).json.id;
  const created = await cli(
    'keys',
    'create',
    '--workspace',
    workspace,
    '--name',
    'scanner',
    '--scopes',
    'tickets:read,tickets:write',
    '--expires-at',
    '2099-01-01T00:00:00Z',
  );
  expect(created.code).toBe(0);
  expect(created.json).toMatchObject({
    name: 'scanner',
    scopes: ['tickets:read', 'tickets:write'],
    expires_at: '2099-01-01T00:00:00.000Z',
    token: expect.stringMatching(/^plk_/),
  });
  const token = created.json.token;
  expect((await gw.client.call(gw.url, 'GET', `/events/v0/tickets/${randomUUID()}`, { token })).status).toBe(200);

  const listed = await cli('keys', 'list', '--workspace', workspace);
  expect(listed.json.data).toHaveLength(1);
  expect(listed.out).not.toContain(token);

  const revoked = await cli('keys', 'revoke', '--workspace', workspace, '--key', created.json.id);
  expect(revoked.code).toBe(0);
  expect(revoked.json.revoked_at).toEqual(expect.any(String));
  await waitFor('the revoked key refused', async () => (await gw.client.call(gw.url, 'GET', `/events/v0/tickets/${randomUUID()}`, { token })).status === 401);
});

test('keys update, roll and usage: a running gateway applies the change and the roll; usage counts its requests', async () => {
  const workspace = (await cli('workspaces', 'create', '--name', 'Lifecycle')).json.id;
  const created = await cli('keys', 'create', '--workspace', workspace, '--name', 'ci', '--scopes', 'events:read', '--rate-limits', 'events=40');
  expect(created.json).toMatchObject({ scopes: ['events:read'], rate_limits: { events: 40 } });
  const { token, id } = created.json;
  const call = (t: string) => gw.client.call(gw.url, 'GET', `/events/v0/tickets/${randomUUID()}`, { token: t });
  expect((await call(token)).status).toBe(403);

  const updated = await cli('keys', 'update', '--workspace', workspace, '--key', id, '--scopes', 'tickets:read', '--rate-limits', 'events=5,pipelines=7');
  expect(updated.code).toBe(0);
  expect(updated.json).toMatchObject({ id, name: 'ci', scopes: ['tickets:read'], rate_limits: { events: 5, pipelines: 7 } });
  const applied = await waitFor('the update on the gateway', async () => {
    const res = await call(token);
    return res.status === 200 ? res : undefined;
  });
  expect(applied.headers['x-ratelimit-limit']).toBe('5');
  const reset = await cli('keys', 'update', '--workspace', workspace, '--key', id, '--unrestricted', '--default-limits', '--name', 'ci 2');
  expect(reset.json).toMatchObject({ name: 'ci 2', scopes: null, rate_limits: null });

  const rolled = await cli('keys', 'roll', '--workspace', workspace, '--key', id, '--expires-in', '0');
  expect(rolled.code).toBe(0);
  expect(rolled.json).toMatchObject({ name: 'ci 2', scopes: null, rate_limits: null, expires_at: null, token: expect.stringMatching(/^plk_/) });
  expect(rolled.json.rolled_from).toEqual({ id, expires_at: expect.any(String) });
  await waitFor('the old token refused', async () => (await call(token)).status === 401 || undefined);
  expect((await call(rolled.json.token)).status).toBe(200);
  expect((await cli('keys', 'roll', '--workspace', workspace, '--key', id)).json.error.code).toBe('conflict');

  await gw.app.flushKeyActivity();
  const usage = await cli('keys', 'usage', '--workspace', workspace, '--key', id, '--granularity', 'day');
  expect(usage.code).toBe(0);
  expect(usage.json.data).toHaveLength(1);
  // The old key's own requests: the 403 before the update, then 200s; the 401s after the roll belong to no key.
  const [day] = usage.json.data;
  expect(day.by_status).toEqual({ '2xx': expect.any(Number), '3xx': 0, '4xx': expect.any(Number), '429': 0, '5xx': 0 });
  expect(day.by_status['4xx']).toBeGreaterThanOrEqual(1);
  expect(day.by_status['2xx']).toBeGreaterThanOrEqual(1);
  expect(day.requests).toBe(day.by_status['2xx'] + day.by_status['4xx']);
});

test('keys update, roll and usage refuse bad input with the contract error body', async () => {
  const workspace = (await cli('workspaces', 'create', '--name', 'Bad lifecycle')).json.id;
  const id = (await cli('keys', 'create', '--workspace', workspace, '--name', 'k')).json.id;
  const key = ['--workspace', workspace, '--key', id];
  const fields = (r: { json: any }) => r.json.error.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`);
  expect(fields(await cli('keys', 'update', ...key, '--rate-limits', 'bulk=5'))).toEqual(['rate_limits.bulk:unknown_field']);
  expect(fields(await cli('keys', 'update', ...key, '--rate-limits', 'events=lots'))).toEqual(['rate_limits.events:invalid_type']);
  expect(fields(await cli('keys', 'update', ...key, '--rate-limits', 'events=0'))).toEqual(['rate_limits.events:too_small']);
  expect(fields(await cli('keys', 'roll', ...key, '--expires-in', '604801'))).toEqual(['expires_in_seconds:too_large']);
  expect(fields(await cli('keys', 'usage', ...key, '--granularity', 'week'))).toEqual(['granularity:invalid_enum']);
  expect((await cli('keys', 'update', ...key)).code).toBe(2);
  expect((await cli('keys', 'update', ...key, '--scopes', 'events:read', '--unrestricted')).code).toBe(2);
  expect((await cli('keys', 'usage', '--workspace', randomUUID(), '--key', id)).json.error.code).toBe('not_found');
});

test('bad input is reported as the contract error body with exit code 1', async () => {
  const workspace = (await cli('workspaces', 'create', '--name', 'Bad')).json.id;
  const unknownScope = await cli('keys', 'create', '--workspace', workspace, '--name', 'k', '--scopes', 'bookings:write');
  expect(unknownScope.code).toBe(1);
  expect(unknownScope.json.error).toMatchObject({ code: 'invalid_request', errors: [expect.objectContaining({ field: 'scopes.0', code: 'invalid_enum' })] });
  expect((await cli('keys', 'list', '--workspace', 'not-a-uuid')).code).toBe(1);
  expect((await cli('keys', 'list', '--workspace', randomUUID())).json.error.code).toBe('not_found');
  expect((await cli('workspaces', 'create')).json.error.errors[0]).toMatchObject({ field: 'name', code: 'required' });
});

test("keys create past the workspace's API keys limit prints the API's 409 quota_exceeded body and exits 1", async () => {
  const limited = await startGateway({ maxApiKeys: 1 });
  try {
    const on: CliDeps = { ...deps, admin: async () => createAdminClient({ baseUrl: limited.url, adminToken: ADMIN_TOKEN }) };
    const workspace = (await cliOn(on, 'workspaces', 'create', '--name', 'Full')).json.id;
    expect((await cliOn(on, 'keys', 'create', '--workspace', workspace, '--name', 'one')).code).toBe(0);
    const refused = await cliOn(on, 'keys', 'create', '--workspace', workspace, '--name', 'two');
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({
      code: 'conflict',
      message: 'This workspace has reached its quota of 1 API keys.',
      quota: 'api_keys',
      limit: 1,
      errors: [{ in: 'body', field: '', code: 'quota_exceeded' }],
    });
  } finally {
    await limited.close();
  }
});

test('usage errors exit with 2', async () => {
  expect((await cli()).code).toBe(2);
  expect((await cli('keys', 'explode')).code).toBe(2);
  expect((await cli('workspaces', 'create', '--colour', 'red')).code).toBe(2);
  expect((await cli('keys', 'revoke', '--workspace', randomUUID())).code).toBe(2);
});

test('quotas show and set (a number or default); a running gateway signs the new limits; bad values get the contract error body', async () => {
  const workspace = (await cli('workspaces', 'create', '--name', 'Quotas')).json.id;
  const { token } = (await cli('keys', 'create', '--workspace', workspace, '--name', 'k')).json;
  const signed = async () => (await gw.client.call(gw.url, 'GET', '/pipelines/v3/pipelines', { token })).body.quotas;
  expect(await signed()).toEqual(DEFAULT_SERVICE_QUOTA_LIMITS);

  const shown = await cli('quotas', 'show', '--workspace', workspace);
  expect(shown.code).toBe(0);
  expect(shown.json).toEqual({
    pipelines: null,
    scheduled_pipelines: null,
    webhook_endpoints: null,
    idempotency_bytes: null,
    limits: DEFAULT_QUOTA_LIMITS,
    usage: { pipelines: 0, scheduled_pipelines: 0, webhook_endpoints: { events: 0, warehouse: 0, pipelines: 0 }, idempotency_bytes: 0 },
  });

  const set = await cli('quotas', 'set', '--workspace', workspace, '--pipelines', '5', '--webhook-endpoints', '0', '--idempotency-bytes', '1024');
  expect(set.code).toBe(0);
  expect(set.json).toMatchObject({ pipelines: 5, scheduled_pipelines: null, webhook_endpoints: 0, idempotency_bytes: 1024 });
  expect(set.json.limits).toEqual({ ...DEFAULT_QUOTA_LIMITS, pipelines: 5, webhook_endpoints: 0, idempotency_bytes: 1024 });
  expect(await signed()).toEqual({ ...DEFAULT_SERVICE_QUOTA_LIMITS, pipelines: 5, webhook_endpoints: 0 });

  const reset = await cli('quotas', 'set', '--workspace', workspace, '--pipelines', 'default', '--scheduled-pipelines', '3');
  expect(reset.json).toMatchObject({ pipelines: null, scheduled_pipelines: 3, webhook_endpoints: 0, idempotency_bytes: 1024 });

  const fields = (r: { json: any }) => r.json.error.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`);
  const bad = await cli('quotas', 'set', '--workspace', workspace, '--pipelines', 'lots', '--scheduled-pipelines=-1');
  expect(bad.code).toBe(1);
  expect(fields(bad)).toEqual(['pipelines:invalid_type', 'scheduled_pipelines:invalid_type']);
  expect((await cli('quotas', 'set', '--workspace', workspace)).code).toBe(2);
  expect((await cli('quotas', 'show')).code).toBe(2);
  expect((await cli('quotas', 'show', '--workspace', randomUUID())).json.error.code).toBe('not_found');
  expect((await cli('quotas', 'show', '--workspace', workspace)).json).toMatchObject({ pipelines: null, scheduled_pipelines: 3 });
});

test('demo-seed keeps one "Demo" workspace and prints a fresh unrestricted key each time', async () => {
  const [first, second] = await Promise.all([cli('demo-seed'), cli('demo-seed')]);
  expect(first.code).toBe(0);
  expect(Object.keys(first.json).sort()).toEqual(['token', 'workspace_id']);
  expect(second.json.workspace_id).toBe(first.json.workspace_id);
  expect(second.json.token).not.toBe(first.json.token);
  const res = await gw.client.call(gw.url, 'GET', '/pipelines/v3/pipelines/p', { token: first.json.token });
  expect(res.status).toBe(200);
  expect(res.body.headers['x-platform-scopes']).toBe('*');
  expect(res.body.headers['x-platform-workspace-id']).toBe(first.json.workspace_id);
});

test('migrate applies the gateway migrations (idempotently)', async () => {
  const result = await cli('migrate');
  expect(result.code).toBe(0);
  expect(result.json).toEqual({
    applied: [],
    skipped: readdirSync(MIGRATIONS_DIR)
      .filter((name) => /^\d{14}_/.test(name))
      .sort(),
  });
});
