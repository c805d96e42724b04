import pg from 'pg';
import { errorBody, quotaExceeded, quotaLockKey, type WorkspaceId } from '@platform/core';
import { serviceClient, testDatabaseUrl, testIdentity, waitFor, type ServiceClient } from '@platform/testing';
import { startTestApp } from './test/app';
import { backdate, createItem, createLocation, levelInvariants, outbox, receive, reserve, stockOf, uniqueSku, useTestApp } from './test/warehouse';

// Limits per workspace beyond the contract's quotas: items, locations, active reservations.
const LIMIT = 5;
const app = useTestApp({ limits: { items: LIMIT, locations: LIMIT, active_reservations: LIMIT } });
const client = app.client;

/** Exactly core's quotaExceeded answer, with the request's id. */
function expectQuotaExceeded(res: { status: number; body: unknown; headers: Record<string, string> }, quota: string, limit = LIMIT): void {
  expect(res.status).toBe(409);
  expect(res.body).toEqual(errorBody(quotaExceeded(quota as 'items', limit), res.headers['x-request-id']!));
  expect(res.body).toMatchObject({ error: { code: 'conflict', quota, limit, errors: [{ in: 'body', field: '', code: 'quota_exceeded' }] } });
}

async function usage(workspaceId: string): Promise<{ items: number; locations: number } | null> {
  return app.db.workspaceUsage.findUnique({ where: { workspaceId }, select: { items: true, locations: true } });
}

async function activeReservations(c: ServiceClient): Promise<number> {
  return app.db.reservation.count({ where: { workspaceId: c.identity.workspaceId, status: 'active', expiresAt: { gt: new Date() } } });
}

describe('items', () => {
  test('up to the limit 201; one more 409 quota_exceeded with nothing written (no item, no event, count unchanged); another workspace is unaffected', async () => {
    const c = client();
    for (let n = 0; n < LIMIT; n++) await createItem(c);
    const sku = uniqueSku('OVER');
    expectQuotaExceeded(await c.post('/items', { sku, name: 'One too many' }), 'items');
    expect((await c.get(`/items?sku=${sku}`).expect(200)).body.data).toEqual([]);
    expect((await c.get('/items?limit=100').expect(200)).body.data).toHaveLength(LIMIT);
    expect((await outbox(app.db, c)).filter((e) => e.type === 'item.created')).toHaveLength(LIMIT);
    expect(await usage(c.identity.workspaceId)).toEqual({ items: LIMIT, locations: 0 });
    // Refused again, and the refusal counted nothing.
    expectQuotaExceeded(await c.post('/items', { sku, name: 'Still too many' }), 'items');
    expect(await usage(c.identity.workspaceId)).toEqual({ items: LIMIT, locations: 0 });

    await createItem(client());
  });

  test('a taken sku is 409 taken and counts nothing; at the limit every create is 409 quota_exceeded, a taken sku too', async () => {
    const c = client();
    const first = await createItem(c);
    const taken = await c.post('/items', { sku: first.sku, name: 'Again' }).expect(409);
    expect(taken.body.error.errors[0]).toMatchObject({ field: 'sku', code: 'taken' });
    expect(await usage(c.identity.workspaceId)).toEqual({ items: 1, locations: 0 });
    for (let n = 1; n < LIMIT; n++) await createItem(c);
    expectQuotaExceeded(await c.post('/items', { sku: first.sku, name: 'Again' }), 'items');
  });

  test(`20 concurrent creates against a limit of ${LIMIT}: exactly ${LIMIT} are 201, the others 409 quota_exceeded`, async () => {
    const c = client();
    const results = await Promise.all(Array.from({ length: 20 }, () => c.post('/items', { sku: uniqueSku(), name: 'Racer' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(LIMIT);
    for (const res of results.filter((r) => r.status !== 201)) expectQuotaExceeded(res, 'items');
    expect(await app.db.item.count({ where: { workspaceId: c.identity.workspaceId } })).toBe(LIMIT);
    expect(await usage(c.identity.workspaceId)).toEqual({ items: LIMIT, locations: 0 });
  });

  test('POST /items/bulk creates nothing (the contract makes it a bulk PATCH): at the limit its entries are applied, 200 each', async () => {
    const c = client();
    const items = [];
    for (let n = 0; n < LIMIT; n++) items.push(await createItem(c));
    expectQuotaExceeded(await c.post('/items', { sku: uniqueSku(), name: 'Over' }), 'items');
    const res = await c.post('/items/bulk', { items: items.map((item) => ({ id: item.id, name: 'Renamed at the limit' })) }).expect(200);
    expect(res.body.results.map((r: { status: number; item: { name: string } }) => [r.status, r.item.name])).toEqual(
      items.map(() => [200, 'Renamed at the limit']),
    );
    expect(await usage(c.identity.workspaceId)).toEqual({ items: LIMIT, locations: 0 });
  });
});

describe('locations', () => {
  test('up to the limit 201; one more 409 quota_exceeded with nothing written, a taken code too; another workspace is unaffected', async () => {
    const c = client();
    const codes = [];
    for (let n = 0; n < LIMIT; n++) codes.push((await createLocation(c)).code);
    expectQuotaExceeded(await c.post('/locations', { name: 'Over', code: 'OVER' }), 'locations');
    const listed = (await c.get('/locations?limit=100').expect(200)).body.data as { code: string }[];
    expect(listed.map((l) => l.code)).toEqual(codes);
    expect(await usage(c.identity.workspaceId)).toEqual({ items: 0, locations: LIMIT });
    expectQuotaExceeded(await c.post('/locations', { name: 'Again', code: codes[0] }), 'locations');

    const other = client();
    await createLocation(other, 'OVER');
    expect(await usage(other.identity.workspaceId)).toEqual({ items: 0, locations: 1 });
  });

  test(`20 concurrent creates against a limit of ${LIMIT}: exactly ${LIMIT} are 201; a taken code counts nothing`, async () => {
    const c = client();
    await createLocation(c, 'FIRST');
    const taken = await c.post('/locations', { name: 'Again', code: 'FIRST' }).expect(409);
    expect(taken.body.error.errors[0]).toMatchObject({ field: 'code', code: 'taken' });
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => c.post('/locations', { name: 'Racer', code: `RACE-${n}` })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(LIMIT - 1);
    for (const res of results.filter((r) => r.status !== 201)) expectQuotaExceeded(res, 'locations');
    expect(await app.db.location.count({ where: { workspaceId: c.identity.workspaceId } })).toBe(LIMIT);
    expect(await usage(c.identity.workspaceId)).toEqual({ items: 0, locations: LIMIT });
  });
});

describe('active reservations', () => {
  test('up to the limit 201; one more 409 quota_exceeded with nothing written; a released, committed or expired one (unswept) frees its place', async () => {
    const c = client();
    const [a, b] = [await createItem(c), await createItem(c)];
    await receive(c, a.id, 100);
    await receive(c, b.id, 100);
    const held = [];
    for (let n = 0; n < LIMIT; n++) held.push(await reserve(c, n % 2 ? a.id : b.id, { quantity: 1 }));
    const before = await stockOf(c, a.id);
    expectQuotaExceeded(await c.post(`/items/${a.id}/reservations`, { quantity: 1 }), 'active_reservations');
    expect(await stockOf(c, a.id)).toEqual(before);
    expect((await outbox(app.db, c)).filter((e) => e.type === 'reservation.created')).toHaveLength(LIMIT);
    expect(await app.db.reservation.count({ where: { workspaceId: c.identity.workspaceId } })).toBe(LIMIT);
    // An unknown item is 404 whatever the workspace holds; more than available is judged after the limit.
    await c.post('/items/6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b/reservations', { quantity: 1 }).expect(404);
    expectQuotaExceeded(await c.post(`/items/${a.id}/reservations`, { quantity: 1_000 }), 'active_reservations');

    await c.post(`/reservations/${held[0]!.id}/release`).expect(200);
    const next = await reserve(c, a.id, { quantity: 1 });
    expectQuotaExceeded(await c.post(`/items/${b.id}/reservations`, { quantity: 1 }), 'active_reservations');
    await c.post(`/reservations/${held[1]!.id}/commit`).expect(200);
    await reserve(c, b.id, { quantity: 1 });
    expectQuotaExceeded(await c.post(`/items/${b.id}/reservations`, { quantity: 1 }), 'active_reservations');
    // Past its expires_at a reservation holds nothing, whether or not the sweeper has run (this app runs none).
    await backdate(app.db, next.id, 901);
    expect(await app.db.reservation.count({ where: { id: next.id, status: 'active' } })).toBe(1);
    await reserve(c, b.id, { quantity: 1 });
    expectQuotaExceeded(await c.post(`/items/${a.id}/reservations`, { quantity: 1 }), 'active_reservations');
    expect(await activeReservations(c)).toBe(LIMIT);

    // Another workspace is unaffected.
    const other = client();
    const theirs = await createItem(other);
    await receive(other, theirs.id, 1);
    await reserve(other, theirs.id, { quantity: 1 });
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });

  test(`20 concurrent reservations on 4 items against a limit of ${LIMIT}: exactly ${LIMIT} are 201, the others 409 quota_exceeded`, async () => {
    const c = client();
    const items: Record<string, any>[] = [];
    for (let n = 0; n < 4; n++) {
      const item = await createItem(c);
      await receive(c, item.id, 100);
      items.push(item);
    }
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => c.post(`/items/${items[n % 4]!.id}/reservations`, { quantity: 1 })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(LIMIT);
    for (const res of results.filter((r) => r.status !== 201)) expectQuotaExceeded(res, 'active_reservations');
    expect(await activeReservations(c)).toBe(LIMIT);
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });
});

describe('the reservations lock: shared far from the limit, exclusive near it', () => {
  // Another session holds the workspace's reservations lock, shared or exclusive.
  const locker = new pg.Client({ connectionString: testDatabaseUrl('warehouse') });
  let defaults: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    await locker.connect();
    defaults = await startTestApp();
  });
  afterAll(async () => {
    await locker.end();
    await defaults.close();
  });

  async function hold(c: ServiceClient, mode: 'shared' | 'exclusive'): Promise<void> {
    const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
    await locker.query('BEGIN');
    await locker.query(`SELECT ${fn}(hashtextextended($1::text, 0))`, [quotaLockKey('active_reservations', c.identity.workspaceId as WorkspaceId)]);
  }

  async function waitingOnLocker(): Promise<boolean> {
    const pid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const [row] = await app.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS "n" FROM pg_stat_activity WHERE ${pid}::int = ANY(pg_blocking_pids("pid"))`;
    return row!.n > 0;
  }

  /** A reservation while another session holds the lock `mode`: seen waiting for it, then 201 once it is released. */
  async function reservesAfterWaitingFor(c: ServiceClient, itemId: string, mode: 'shared' | 'exclusive'): Promise<void> {
    await hold(c, mode);
    const answer = c.post(`/items/${itemId}/reservations`, { quantity: 1 }).then((res) => res);
    try {
      await waitFor(`the reservation waiting for the ${mode} holder`, waitingOnLocker, 60_000);
    } finally {
      await locker.query('COMMIT');
    }
    expect((await answer).status).toBe(201);
  }

  test('far from the limit a reservation shares the lock: it goes through while another holds it shared, and waits while another holds it exclusive', async () => {
    const c = serviceClient('warehouse', defaults.server, testIdentity());
    const item = await createItem(c);
    await receive(c, item.id, 10);
    await hold(c, 'shared');
    try {
      await reserve(c, item.id, { quantity: 1 });
    } finally {
      await locker.query('COMMIT');
    }
    await reservesAfterWaitingFor(c, item.id, 'exclusive');
  });

  test('near the limit a reservation takes the lock exclusive: it waits while another holds it shared', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 10);
    await reservesAfterWaitingFor(c, item.id, 'shared');
  });
});
