import { randomUUID } from 'node:crypto';
import { migrate } from '@platform/core';
import { testDatabaseUrl } from '@platform/testing';
import { runCli, type CliDeps } from './cli.commands';
import { MIGRATIONS_DIR } from './migrate';
import { redisRevocationPublisher } from './revocations';
import { startEchoGateway, type EchoGateway } from './test/gateway';

let gw: EchoGateway;
let deps: CliDeps;

beforeAll(async () => {
  gw = await startEchoGateway();
  deps = {
    store: () => gw.store,
    // The CLI's real publisher, on the test instance's channel.
    publisher: async () => redisRevocationPublisher(gw.redis, gw.redisPrefix),
    migrate: () => migrate(testDatabaseUrl('gateway'), MIGRATIONS_DIR),
  };
});
afterAll(() => gw.close());

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string; json: any }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, deps, { out: (line) => (out += `${line}\n`), err: (line) => (err += `${line}\n`) });
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
  const started = Date.now();
  let status = 200;
  while (status !== 401 && Date.now() - started < 2_000) status = (await gw.client.call(gw.url, 'GET', `/events/v0/tickets/${randomUUID()}`, { token })).status;
  expect(status).toBe(401);
  expect(Date.now() - started).toBeLessThan(1_000);
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

test('usage errors exit with 2', async () => {
  expect((await cli()).code).toBe(2);
  expect((await cli('keys', 'explode')).code).toBe(2);
  expect((await cli('workspaces', 'create', '--colour', 'red')).code).toBe(2);
  expect((await cli('keys', 'revoke', '--workspace', randomUUID())).code).toBe(2);
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
  expect(result.json).toEqual({ applied: [], skipped: ['20241201000000_init'] });
});
