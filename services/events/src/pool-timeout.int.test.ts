import { join } from 'node:path';
import pg from 'pg';
import { expectErrorBody, gatewayHeaders, killSpawned, spawnService, testDatabaseUrl, testIdentity, waitFor } from '@platform/testing';

// Contract section 17: each process's pool is bounded (DATABASE_POOL_MAX) and waits at most
// DATABASE_POOL_TIMEOUT_MS for a connection; a request that gets none in time is 503
// temporarily_unavailable with Retry-After: 1, never a hang and never a 500. Proven on the real
// build (node dist/main.js), configured by its environment alone, with a pool of one connection
// that is provably held: its query waits on a row lock this test holds.

const DATABASE = 'events_pool_timeout';
afterAll(() => killSpawned());

test('with its one pooled connection held, a request is 503 temporarily_unavailable with Retry-After: 1; once free, requests are served', async () => {
  const { url: base } = await spawnService('events', join(__dirname, '..'), {
    database: DATABASE,
    env: { DATABASE_POOL_MAX: '1', DATABASE_POOL_TIMEOUT_MS: '500', DATABASE_QUERY_TIMEOUT_MS: '120000' },
  });
  const identity = testIdentity();
  const call = async (method: string, path: string, body?: object) => {
    const raw = body && JSON.stringify(body);
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...gatewayHeaders('events', identity, method, path, { body: raw }), 'content-type': 'application/json' },
      body: raw,
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { id: string } };
  };
  const event = await call('POST', '/events', { name: 'One connection', starts_at: '2030-06-01T18:00:00Z' });
  expect(event.status).toBe(201);
  const ticket = await call('POST', `/events/${event.body.id}/tickets`, { holder_name: 'Ada' });
  expect(ticket.status).toBe(201);

  const locker = new pg.Client({ connectionString: testDatabaseUrl(DATABASE) });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM "tickets" WHERE "id" = $1 FOR UPDATE', [ticket.body.id]);
    const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

    // The validation takes the service's only connection and waits on the ticket's row lock in it.
    const validation = call('POST', `/tickets/${ticket.body.id}/validate`, {});
    const observer = new pg.Client({ connectionString: testDatabaseUrl(DATABASE) });
    await observer.connect();
    try {
      await waitFor(
        "the service's connection waiting on the ticket's row lock",
        async () => (await observer.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [lockerPid])).rowCount === 1,
        60_000,
      );
    } finally {
      await observer.end();
    }

    const starved = await call('GET', `/tickets/${ticket.body.id}`);
    expect([starved.status, starved.retryAfter]).toEqual([503, '1']);
    expectErrorBody(starved.body, 'temporarily_unavailable');

    await locker.query('COMMIT');
    expect((await validation).status).toBe(200);
  } finally {
    await locker.end();
  }
  const served = await call('GET', `/tickets/${ticket.body.id}`);
  expect(served.status).toBe(200);
  expect(served.body).toMatchObject({ id: ticket.body.id, status: 'validated' });
});
