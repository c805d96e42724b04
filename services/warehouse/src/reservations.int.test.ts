import pg from 'pg';
import { expectErrorBody, sleep, testDatabaseUrl, waitFor } from '@platform/testing';
import { reservationsExpiryStore } from './reservations-expiry.store';
import { pruneEndedReservations, sweepDueReservations } from './reservations.expiry';
import { backdate, createItem, createLocation, levelInvariants, outbox, receive, reserve, RFC3339_MS, stockOf, useTestApp } from './test/warehouse';

const app = useTestApp();
const client = app.client;
const UNKNOWN = '6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b';

/** One sweep over every workspace, as the service process runs it. */
function sweep(): Promise<number> {
  return sweepDueReservations(reservationsExpiryStore(app.db), { now: new Date(), batchSize: 50 });
}

async function events(c: ReturnType<typeof client>, prefix: string) {
  return (await outbox(app.db, c)).filter((e) => e.type.startsWith(prefix));
}

describe('POST /items/{id}/reservations', () => {
  test("201 the reservation, active, at the item's default location, expiring in 900 s; reserved stock is not available; reservation.created", async () => {
    const c = client();
    const home = await createLocation(c);
    const item = await createItem(c, { location_id: home.id });
    await receive(c, item.id, 10);
    const res = await c.post(`/items/${item.id}/reservations`, { quantity: 3, reference: 'Order 1042' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      item_id: item.id,
      location_id: home.id,
      quantity: 3,
      status: 'active',
      reference: 'Order 1042',
      expires_at: expect.stringMatching(RFC3339_MS),
      created_at: expect.stringMatching(RFC3339_MS),
      updated_at: res.body.created_at,
    });
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(900_000);
    expect((await c.get(`/reservations/${res.body.id}`).expect(200)).body).toEqual(res.body);
    expect(await stockOf(c, item.id)).toEqual({ quantity: 10, levels: { [home.id]: [10, 3, 7] } });
    expect(await events(c, 'reservation.')).toEqual([{ type: 'reservation.created', data: res.body }]);

    const unassigned = await c.post(`/items/${item.id}/reservations`, { quantity: 1, location_id: null, expires_in_seconds: 60 }).expect(409);
    expect(expectErrorBody(unassigned.body, 'conflict').errors).toEqual([
      { in: 'body', field: 'quantity', code: 'insufficient_stock', message: expect.stringContaining('0 available') },
    ]);
    const more = await c.post(`/items/${item.id}/reservations`, { quantity: 8 }).expect(409);
    expect(expectErrorBody(more.body, 'conflict').errors?.[0]).toMatchObject({ field: 'quantity', code: 'insufficient_stock' });
    const rest = await reserve(c, item.id, { quantity: 7, expires_in_seconds: 2_592_000 });
    expect(Date.parse(rest.expires_at) - Date.parse(rest.created_at)).toBe(2_592_000_000);
    expect(rest.reference).toBeNull();
  });

  test('100 concurrent one-unit reservations on a level of 10: exactly 10 succeed, 90 are 409 insufficient_stock', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 10);
    const results = await Promise.all(Array.from({ length: 100 }, () => c.post(`/items/${item.id}/reservations`, { quantity: 1 })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(90);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.errors[0].code).toBe('insufficient_stock');
    expect(await stockOf(c, item.id)).toEqual({ quantity: 10, levels: { null: [10, 10, 0] } });
    expect(await app.db.reservation.count({ where: { itemId: item.id } })).toBe(10);
    expect(await events(c, 'reservation.created')).toHaveLength(10);
  });

  test.each([
    ['no quantity', {}, [['quantity', 'required']]],
    ['quantity 0', { quantity: 0 }, [['quantity', 'too_small']]],
    ['quantity over 1,000,000,000', { quantity: 1_000_000_001 }, [['quantity', 'too_large']]],
    ['expires_in_seconds 59', { quantity: 1, expires_in_seconds: 59 }, [['expires_in_seconds', 'too_small']]],
    ['expires_in_seconds over 30 days', { quantity: 1, expires_in_seconds: 2_592_001 }, [['expires_in_seconds', 'too_large']]],
    ['a fractional expires_in_seconds', { quantity: 1, expires_in_seconds: 60.5 }, [['expires_in_seconds', 'invalid_type']]],
    ['an empty reference', { quantity: 1, reference: '' }, [['reference', 'too_short']]],
    ['a reference over 200 characters', { quantity: 1, reference: 'r'.repeat(201) }, [['reference', 'too_long']]],
    ['a location that is not a UUID', { quantity: 1, location_id: 'A3' }, [['location_id', 'invalid_format']]],
    ['an unknown location', { quantity: 1, location_id: UNKNOWN }, [['location_id', 'not_found']]],
    ['an unknown field', { quantity: 1, status: 'active' }, [['status', 'unknown_field']]],
  ])('%s gives 400 listing each problem', async (_name, body, expected) => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 3);
    const res = await c.post(`/items/${item.id}/reservations`, body).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors.map((e) => [e.field, e.code]).sort()).toEqual([...expected].sort());
    expect(await stockOf(c, item.id)).toEqual({ quantity: 3, levels: { null: [3, 0, 3] } });
  });

  test("another workspace's location is 400 not_found; another workspace's item, or none, is 404", async () => {
    const c = client();
    const other = client();
    const theirLocation = await createLocation(other);
    const theirItem = await createItem(other);
    const item = await createItem(c);
    const res = await c.post(`/items/${item.id}/reservations`, { quantity: 1, location_id: theirLocation.id }).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([expect.objectContaining({ field: 'location_id', code: 'not_found' })]);
    expectErrorBody((await c.post(`/items/${theirItem.id}/reservations`, { quantity: 1 }).expect(404)).body, 'not_found');
    expectErrorBody((await c.post(`/items/${UNKNOWN}/reservations`, { quantity: 1 }).expect(404)).body, 'not_found');
  });
});

describe('commit and release', () => {
  test('commit: on_hand and reserved both fall, one sale adjustment at the level; item.stock_adjusted, item.reorder_needed, reservation.committed', async () => {
    const c = client();
    const home = await createLocation(c);
    const item = await createItem(c, { location_id: home.id, min_stock: 5 });
    await receive(c, item.id, 6);
    const held = await reserve(c, item.id, { quantity: 2, reference: 'Order 7' });
    const res = await c.post(`/reservations/${held.id}/commit`).expect(200);
    expect(res.body).toEqual({
      reservation: { ...held, status: 'committed', updated_at: expect.stringMatching(RFC3339_MS) },
      adjustment: {
        id: expect.any(String),
        item_id: item.id,
        location_id: home.id,
        delta: -2,
        reason: 'sale',
        note: null,
        quantity_after: 4,
        created_at: res.body.reservation.updated_at,
      },
      item: expect.objectContaining({ id: item.id, quantity: 4, version: 3 }),
    });
    expect((await c.get(`/items/${item.id}`).expect(200)).body).toEqual(res.body.item);
    expect(await stockOf(c, item.id)).toEqual({ quantity: 4, levels: { [home.id]: [4, 0, 4] } });
    // One transaction, one created_at: compared by type.
    const written = (await outbox(app.db, c)).slice(-3).sort((a, b) => a.type.localeCompare(b.type));
    expect(written).toEqual([
      { type: 'item.reorder_needed', data: res.body.item },
      { type: 'item.stock_adjusted', data: res.body.adjustment },
      { type: 'reservation.committed', data: res.body.reservation },
    ]);
  });

  test('release: the reserved stock is available again; reservation.released', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 4);
    const held = await reserve(c, item.id, { quantity: 4 });
    // An empty body counts as {}.
    const res = await c.post(`/reservations/${held.id}/release`, '').expect(200);
    expect(res.body).toEqual({ ...held, status: 'released', updated_at: expect.stringMatching(RFC3339_MS) });
    expect(await stockOf(c, item.id)).toEqual({ quantity: 4, levels: { null: [4, 0, 4] } });
    expect((await events(c, 'reservation.')).map((e) => e.type)).toEqual(['reservation.created', 'reservation.released']);
    expect((await events(c, 'reservation.released'))[0]!.data).toEqual(res.body);
  });

  test('committing or releasing a reservation that is not active is 409 reservation_not_active, its status beside code', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 10);
    const committed = await reserve(c, item.id, { quantity: 1 });
    await c.post(`/reservations/${committed.id}/commit`, {}).expect(200);
    const released = await reserve(c, item.id, { quantity: 1 });
    await c.post(`/reservations/${released.id}/release`).expect(200);
    const expired = await reserve(c, item.id, { quantity: 1 });
    await backdate(app.db, expired.id, 901);

    for (const [reservation, status] of [
      [committed, 'committed'],
      [released, 'released'],
      [expired, 'expired'],
    ] as const) {
      for (const action of ['commit', 'release']) {
        const res = await c.post(`/reservations/${reservation.id}/${action}`).expect(409);
        const error = expectErrorBody(res.body, 'conflict');
        expect(error.status).toBe(status);
        expect(error.errors).toEqual([{ in: 'path', field: 'id', code: 'reservation_not_active', message: expect.stringContaining(status) }]);
      }
    }
    expect(await stockOf(c, item.id)).toEqual({ quantity: 9, levels: { null: [9, 0, 9] } });
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });

  test("another workspace's reservation, or none, is 404 on every reservation route; a body with fields is 400", async () => {
    const c = client();
    const other = client();
    const item = await createItem(other);
    await receive(other, item.id, 2);
    const theirs = await reserve(other, item.id, { quantity: 1 });
    for (const id of [theirs.id, UNKNOWN]) {
      expectErrorBody((await c.get(`/reservations/${id}`).expect(404)).body, 'not_found');
      expectErrorBody((await c.post(`/reservations/${id}/commit`).expect(404)).body, 'not_found');
      expectErrorBody((await c.post(`/reservations/${id}/release`).expect(404)).body, 'not_found');
    }
    expectErrorBody((await c.get(`/items/${item.id}/reservations`).expect(404)).body, 'not_found');
    const res = await other.post(`/reservations/${theirs.id}/commit`, { quantity: 1 }).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([expect.objectContaining({ field: 'quantity', code: 'unknown_field' })]);
    expect((await other.get(`/reservations/${theirs.id}`).expect(200)).body.status).toBe('active');
  });
});

describe('GET /items/{id}/reservations', () => {
  test('oldest first, paged, filtered by status as of now (a due reservation counts as expired)', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 10);
    const made = [];
    for (let n = 0; n < 5; n++) made.push(await reserve(c, item.id, { quantity: 1, reference: `R${n}` }));
    await c.post(`/reservations/${made[1]!.id}/commit`).expect(200);
    await c.post(`/reservations/${made[2]!.id}/release`).expect(200);
    await backdate(app.db, made[3]!.id, 901);

    const seen: { id: string; status: string }[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string; status: string }[]; next_cursor: string | null } } = await c
        .get(`/items/${item.id}/reservations?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        .expect(200);
      seen.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor);
    // made[3] was moved 901 s into the past: it is now the oldest.
    const order = [made[3]!, made[0]!, made[1]!, made[2]!, made[4]!].map((r) => r.id);
    expect(seen.map((r) => r.id)).toEqual(order);
    expect(seen.map((r) => r.status)).toEqual(['expired', 'active', 'committed', 'released', 'active']);

    const ids = async (status: string) =>
      (await c.get(`/items/${item.id}/reservations?status=${status}`).expect(200)).body.data.map((r: { id: string }) => r.id);
    expect(await ids('active')).toEqual([made[0]!.id, made[4]!.id]);
    expect(await ids('expired')).toEqual([made[3]!.id]);
    expect(await ids('committed')).toEqual([made[1]!.id]);
    expect(await ids('released')).toEqual([made[2]!.id]);
    expect(await ids('')).toEqual(order);
    const bad = await c.get(`/items/${item.id}/reservations?status=pending`).expect(400);
    expect(expectErrorBody(bad.body, 'invalid_request').errors).toEqual([expect.objectContaining({ in: 'query', field: 'status', code: 'invalid_enum' })]);
  });
});

describe('expiry (contract section 18)', () => {
  test('from expires_at on, a reservation reads expired and holds nothing, before any sweep; the next write releases it with reservation.expired', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 5);
    const held = await reserve(c, item.id, { quantity: 5 });
    await backdate(app.db, held.id, 901);

    const read = (await c.get(`/reservations/${held.id}`).expect(200)).body;
    expect(read).toEqual({ ...held, status: 'expired', created_at: expect.any(String), expires_at: expect.any(String), updated_at: read.expires_at });
    expect(Date.parse(read.expires_at)).toBeLessThan(Date.now());
    expect(await stockOf(c, item.id)).toEqual({ quantity: 5, levels: { null: [5, 0, 5] } });
    expect((await c.get(`/locations/${(await createLocation(c)).id}/stock`).expect(200)).body.data).toEqual([]);

    // A reservation of the same stock succeeds: the write releases the due one first, in its transaction.
    const next = await reserve(c, item.id, { quantity: 5 });
    expect(await stockOf(c, item.id)).toEqual({ quantity: 5, levels: { null: [5, 5, 0] } });
    // The expiry and the new reservation share a transaction (one created_at): compared as a set.
    expect((await events(c, 'reservation.')).map((e) => [e.type, e.data.id]).sort()).toEqual(
      [
        ['reservation.created', held.id],
        ['reservation.expired', held.id],
        ['reservation.created', next.id],
      ].sort(),
    );
    expect((await events(c, 'reservation.expired'))[0]!.data).toEqual(read);
    expect((await c.get(`/reservations/${held.id}`).expect(200)).body).toEqual(read);
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });

  test('the sweeper expires due reservations once, batch after batch, with reservation.expired each, however many sweepers run at once', async () => {
    const c = client();
    const items = [await createItem(c), await createItem(c), await createItem(c)];
    const due = [];
    for (const item of items) {
      await receive(c, item.id, 10);
      for (let n = 0; n < 2; n++) due.push(await reserve(c, item.id, { quantity: 2 }));
    }
    const live = await reserve(c, items[0]!.id, { quantity: 3 });
    for (const [n, r] of due.entries()) await backdate(app.db, r.id, 901 + n);
    const store = reservationsExpiryStore(app.db);
    await Promise.all([1, 2, 50].map((batchSize) => sweepDueReservations(store, { now: new Date(), batchSize })));

    expect(await stockOf(c, items[0]!.id)).toEqual({ quantity: 10, levels: { null: [10, 3, 7] } });
    for (const item of items.slice(1)) expect(await stockOf(c, item.id)).toEqual({ quantity: 10, levels: { null: [10, 0, 10] } });
    const expired = await events(c, 'reservation.expired');
    expect(expired.map((e) => e.data.id).sort()).toEqual(due.map((r) => r.id).sort());
    for (const e of expired) expect(e.data).toEqual((await c.get(`/reservations/${e.data.id}`).expect(200)).body);
    expect((await c.get(`/reservations/${live.id}`).expect(200)).body.status).toBe('active');
    await sweep();
    expect(await events(c, 'reservation.expired')).toHaveLength(6);
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });

  test('a commit that arrived before expires_at but got its item only after it is refused as expired: the write judges at its lock', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 20);
    const locker = new pg.Client({ connectionString: testDatabaseUrl('warehouse') });
    await locker.connect();
    const blockedBy = async (pid: number) => {
      const [blocked] = await app.db.$queryRaw<
        { n: number }[]
      >`SELECT count(*)::int AS "n" FROM pg_stat_activity WHERE ${pid}::int = ANY(pg_blocking_pids("pid"))`;
      return blocked!.n > 0;
    };
    try {
      const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // The commit must be seen waiting before expires_at; on a slow machine a longer lead is tried.
      let seenWaitingInTime = false;
      for (let leadMs = 1_000; !seenWaitingInTime && leadMs <= 16_000; leadMs *= 2) {
        const held = await reserve(c, item.id, { quantity: 1 });
        const dueAt = Date.now() + leadMs;
        await app.db.reservation.update({ where: { id: held.id }, data: { expiresAt: new Date(dueAt) } });
        await locker.query('BEGIN');
        await locker.query('SELECT 1 FROM "items" WHERE "id" = $1 FOR UPDATE', [item.id]);
        const answer = c.post(`/reservations/${held.id}/commit`).then((res) => res);
        await waitFor('the commit waiting for the item', () => blockedBy(lockerPid), 60_000);
        seenWaitingInTime = Date.now() < dueAt;
        await sleep(Math.max(0, dueAt - Date.now() + 20));
        await locker.query('COMMIT');
        const res = await answer;
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({ status: 'expired', errors: [expect.objectContaining({ code: 'reservation_not_active' })] });
        expect((await c.get(`/reservations/${held.id}`).expect(200)).body.status).toBe('expired');
        const own = (await events(c, 'reservation.')).filter((e) => e.data.id === held.id).map((e) => e.type);
        expect(own.sort()).toEqual(['reservation.created', 'reservation.expired']);
      }
      expect(seenWaitingInTime).toBe(true);
    } finally {
      await locker.end();
    }
    expect((await stockOf(c, item.id)).quantity).toBe(20);
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });

  test('a commit racing its own expiry has one outcome: committed (200, reservation.committed) xor expired (409, reservation.expired)', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 40);
    const held = [];
    for (let n = 0; n < 40; n++) held.push(await reserve(c, item.id, { quantity: 1 }));
    // Every reservation falls due at one instant; the commits are spread around it while sweepers run.
    const dueAt = Date.now() + 2_500;
    await app.db.reservation.updateMany({ where: { id: { in: held.map((r) => r.id) } }, data: { expiresAt: new Date(dueAt) } });
    let sweeping = true;
    const sweeper = (async () => {
      while (sweeping) {
        await sweep();
        await sleep(5);
      }
    })();
    const answers = await Promise.all(
      held.map(async (r, n) => {
        await sleep(Math.max(0, dueAt - 1_000 + n * 50 - Date.now()));
        return c.post(`/reservations/${r.id}/commit`);
      }),
    );
    sweeping = false;
    await sweeper;
    await sweep();

    const written = await outbox(app.db, c);
    let committed = 0;
    for (const [n, r] of held.entries()) {
      const answer = answers[n]!;
      const stored = (await c.get(`/reservations/${r.id}`).expect(200)).body;
      const committedEvents = written.filter((e) => e.type === 'reservation.committed' && e.data.id === r.id);
      const expiredEvents = written.filter((e) => e.type === 'reservation.expired' && e.data.id === r.id);
      if (answer.status === 200) {
        committed += 1;
        expect(stored.status).toBe('committed');
        expect([committedEvents.length, expiredEvents.length]).toEqual([1, 0]);
      } else {
        expect(answer.status).toBe(409);
        expect(answer.body.error).toMatchObject({ status: 'expired', errors: [expect.objectContaining({ code: 'reservation_not_active' })] });
        expect(stored.status).toBe('expired');
        expect([committedEvents.length, expiredEvents.length]).toEqual([0, 1]);
      }
    }
    expect(await stockOf(c, item.id)).toEqual({ quantity: 40 - committed, levels: 40 - committed > 0 ? { null: [40 - committed, 0, 40 - committed] } : {} });
    expect(written.filter((e) => e.type === 'item.stock_adjusted')).toHaveLength(committed + 1);
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });
});

describe('retention (contract section 20)', () => {
  test('ended reservations go retention_days after they ended, once each under two sweepers; active and recently ended ones stay', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 10);
    const [committed, released, expired, recent, active] = [
      await reserve(c, item.id, { quantity: 1 }),
      await reserve(c, item.id, { quantity: 1 }),
      await reserve(c, item.id, { quantity: 1 }),
      await reserve(c, item.id, { quantity: 1 }),
      await reserve(c, item.id, { quantity: 1, expires_in_seconds: 2_592_000 }),
    ];
    await c.post(`/reservations/${committed.id}/commit`).expect(200);
    await c.post(`/reservations/${released.id}/release`).expect(200);
    await c.post(`/reservations/${recent.id}/release`).expect(200);
    const DAYS_31 = 31 * 86_400;
    for (const r of [committed, released, expired]) await backdate(app.db, r.id, DAYS_31);
    await backdate(app.db, active.id, 29 * 86_400);
    await sweep();

    const store = reservationsExpiryStore(app.db);
    const prune = () => pruneEndedReservations(store, { now: new Date(), retentionDays: 30, batchSize: 2 });
    const pruned = await Promise.all([prune(), prune()]);
    expect(pruned[0] + pruned[1]).toBeGreaterThanOrEqual(3);
    for (const gone of [committed, released, expired]) expectErrorBody((await c.get(`/reservations/${gone.id}`).expect(404)).body, 'not_found');
    expect((await c.get(`/reservations/${recent.id}`).expect(200)).body.status).toBe('released');
    expect((await c.get(`/reservations/${active.id}`).expect(200)).body.status).toBe('active');
    // The stock is untouched: the committed reservation's adjustment stays the record of the sale.
    expect(await stockOf(c, item.id)).toEqual({ quantity: 9, levels: { null: [9, 1, 8] } });
  });
});
