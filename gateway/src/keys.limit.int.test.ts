import pg from 'pg';
import { errorBody, lockWorkspaceQuota, QUOTA_LOCK_TIMEOUT_MS, quotaExceeded, type WorkspaceId } from '@platform/core';
import { expectErrorBody, testDatabaseUrl } from '@platform/testing';
import { ADMIN_TOKEN, createTestKey, httpClient, startGateway, type HttpClient, type Reply, type TestGateway } from './test/gateway';

// The API keys one workspace may hold (GATEWAY_WORKSPACE_MAX_API_KEYS): neither revoked, expired
// nor replaced by a roll (keys.limit.ts). A create past it is core's quotaExceeded('api_keys', limit).

const LIMIT = 3;

let gw: TestGateway;
let client: HttpClient;
let sql: pg.Client;

beforeAll(async () => {
  gw = await startGateway({ maxApiKeys: LIMIT });
  client = httpClient();
  sql = new pg.Client({ connectionString: testDatabaseUrl('gateway') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await client.close();
  await gw.close();
});

const admin = (on: TestGateway, method: string, path: string, body?: unknown): Promise<Reply> =>
  client.call(on.url, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, body });

async function workspace(on = gw): Promise<string> {
  const res = await admin(on, 'POST', '/workspaces', { name: 'Keys limit' });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const createKey = (ws: string, on = gw, name = 'k'): Promise<Reply> => admin(on, 'POST', `/workspaces/${ws}/api-keys`, { name });

async function created(ws: string, on = gw): Promise<{ id: string; token: string }> {
  const res = await createKey(ws, on);
  expect(res.status).toBe(201);
  return res.body as { id: string; token: string };
}

const roll = (ws: string, keyId: string): Promise<Reply> => admin(gw, 'POST', `/workspaces/${ws}/api-keys/${keyId}/roll`, { expires_in_seconds: 3600 });

/** Every row of the workspace's keys, whatever their state: what a refusal must leave as it was. */
async function rows(ws: string): Promise<{ id: string; expires_at: Date | null; revoked_at: Date | null; rolled_at: Date | null }[]> {
  const result = await sql.query(`SELECT "id", "expires_at", "revoked_at", "rolled_at" FROM "api_keys" WHERE "workspace_id" = $1 ORDER BY "created_at", "id"`, [
    ws,
  ]);
  return result.rows;
}

/** Exactly core's refusal, with this answer's request id. */
function expectLimitRefusal(res: Reply, limit: number): void {
  expect(res.status).toBe(409);
  expect(res.body).toEqual(errorBody(quotaExceeded('api_keys', limit), res.headers['x-request-id'] as string));
  expect(res.body.error).toMatchObject({ code: 'conflict', quota: 'api_keys', limit, errors: [{ in: 'body', field: '', code: 'quota_exceeded' }] });
}

test(`${LIMIT} creates are 201; the next is 409 quota_exceeded (quota "api_keys") and writes nothing`, async () => {
  const ws = await workspace();
  for (let i = 0; i < LIMIT; i++) await created(ws);
  const before = await rows(ws);
  expect(before).toHaveLength(LIMIT);

  expectLimitRefusal(await createKey(ws), LIMIT);
  expect(await rows(ws)).toEqual(before);
  const listed = await admin(gw, 'GET', `/workspaces/${ws}/api-keys`);
  expect(listed.body.data).toHaveLength(LIMIT);
});

test('a revoked key no longer counts: after a revoke one create goes through, and the next is refused again', async () => {
  const ws = await workspace();
  const keys = [await created(ws), await created(ws), await created(ws)];
  expectLimitRefusal(await createKey(ws), LIMIT);

  expect((await admin(gw, 'DELETE', `/workspaces/${ws}/api-keys/${keys[1]!.id}`)).status).toBe(204);
  await created(ws);
  expectLimitRefusal(await createKey(ws), LIMIT);
  expect(await rows(ws)).toHaveLength(LIMIT + 1);
});

test('an expired key does not count (it can never work again)', async () => {
  const ws = await workspace();
  await createTestKey(gw.stores, { workspaceId: ws, expiresAt: new Date(Date.now() - 60_000) });
  for (let i = 0; i < LIMIT; i++) await created(ws);
  expectLimitRefusal(await createKey(ws), LIMIT);
  expect(await rows(ws)).toHaveLength(LIMIT + 1);
});

test('a key with an expiry still ahead counts', async () => {
  const ws = await workspace();
  const later = new Date(Date.now() + 3_600_000).toISOString();
  for (let i = 0; i < LIMIT; i++) expect((await admin(gw, 'POST', `/workspaces/${ws}/api-keys`, { name: 'k', expires_at: later })).status).toBe(201);
  expectLimitRefusal(await createKey(ws), LIMIT);
});

test('at the limit a roll is 201 (it replaces its key); rolling the replaced key again would add one and is refused; a create still is', async () => {
  const ws = await workspace();
  const [first] = [await created(ws), await created(ws), await created(ws)];

  const rolled = await roll(ws, first.id);
  expect(rolled.status).toBe(201);
  // Both tokens work during the overlap, but the workspace holds as many keys as before.
  expectLimitRefusal(await createKey(ws), LIMIT);

  const before = await rows(ws);
  expectLimitRefusal(await roll(ws, first.id), LIMIT);
  expect(await rows(ws)).toEqual(before);

  // The new key is not replaced yet: rolling it replaces it, at the limit too.
  expect((await roll(ws, rolled.body.id as string)).status).toBe(201);
  expect(await rows(ws)).toHaveLength(LIMIT + 2);

  // With room (one revoked), the second roll of the first key goes through and fills it.
  const third = before[2]!.id;
  expect((await admin(gw, 'DELETE', `/workspaces/${ws}/api-keys/${third}`)).status).toBe(204);
  expect((await roll(ws, first.id)).status).toBe(201);
  expectLimitRefusal(await createKey(ws), LIMIT);
});

test('a revoked or expired key is still refused a roll as before: 409 conflict, not quota_exceeded', async () => {
  const ws = await workspace();
  const key = await created(ws);
  expect((await admin(gw, 'DELETE', `/workspaces/${ws}/api-keys/${key.id}`)).status).toBe(204);
  const refused = await roll(ws, key.id);
  expect(refused.status).toBe(409);
  expect(expectErrorBody(refused.body, 'conflict').quota).toBeUndefined();
});

test("another workspace's keys are its own: one workspace at its limit refuses nothing elsewhere", async () => {
  const full = await workspace();
  const other = await workspace();
  for (let i = 0; i < LIMIT; i++) await created(full);
  expectLimitRefusal(await createKey(full), LIMIT);
  for (let i = 0; i < LIMIT; i++) await created(other);
  expect(await rows(other)).toHaveLength(LIMIT);
});

test('20 concurrent creates in each of two workspaces, with a limit of 5: exactly 5 each', async () => {
  const five = await startGateway({ maxApiKeys: 5 });
  try {
    const [a, b] = [await workspace(five), await workspace(five)];
    const answers = await Promise.all([a, b].flatMap((ws) => Array.from({ length: 20 }, (_, i) => createKey(ws, five, `race ${i}`))));
    for (const [index, ws] of [a, b].entries()) {
      const statuses = answers.slice(index * 20, index * 20 + 20).map((res) => res.status);
      expect({ ws, statuses: statuses.sort() }).toEqual({ ws, statuses: [...Array(5).fill(201), ...Array(15).fill(409)] });
      expect(await rows(ws)).toHaveLength(5);
    }
    for (const res of answers.filter((r) => r.status === 409)) expectLimitRefusal(res, 5);
  } finally {
    await five.close();
  }
});

test('a limit of 0 refuses every create', async () => {
  const none = await startGateway({ maxApiKeys: 0 });
  try {
    const ws = await workspace(none);
    expectLimitRefusal(await createKey(ws, none), 0);
    expect(await rows(ws)).toEqual([]);
  } finally {
    await none.close();
  }
});

test(`a create that waits past ${QUOTA_LOCK_TIMEOUT_MS} ms for its workspace's quota lock is 503 with Retry-After, and writes nothing`, async () => {
  const ws = await workspace();
  await gw.db.$transaction(
    async (tx) => {
      // What a storm of creates in this workspace looks like to the next one: the lock stays taken.
      await lockWorkspaceQuota(tx, 'api_keys', ws as WorkspaceId);
      const res = await createKey(ws);
      expect(res.status).toBe(503);
      expectErrorBody(res.body, 'temporarily_unavailable');
      expect(res.headers['retry-after']).toBeDefined();
    },
    { timeout: 120_000 },
  );
  // Nothing was created; with the lock free, the same create goes through.
  expect(await rows(ws)).toEqual([]);
  await created(ws);
});
