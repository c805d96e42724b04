import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import {
  expectErrorBody,
  exitReport,
  freePorts,
  serviceClient,
  spawnProcess,
  startPgBouncer,
  startServiceTestApp,
  testDatabaseUrl,
  testIdentity,
  uniqueDatabaseName,
  waitFor,
  type PgBouncer,
  type ServiceClient,
  type ServiceTestApp,
} from '@platform/testing';
import { startServiceWebhooks, TEST_WEBHOOKS_CONFIG } from '@platform/webhooks';
import { createAppWithLimits } from './test/app';
import { createDatabase, type Database } from './database';
import { eventsServiceStores } from './events.store';

// Contract section 17: every process works with its *_DATABASE_URL pointing at PgBouncer in
// pool_mode = transaction (Debian 12's 1.18, which does not track prepared statements), and
// migrations use *_DIRECT_DATABASE_URL. The events app runs here on Prisma over @prisma/adapter-pg
// through a real PgBouncer whose pool is smaller than the app's, so that the statements of many
// clients share a few server connections: repeated and concurrent queries, and the interactive
// transactions of check-in (validate, scans upload, undo) under contention.

const SERVER_POOL = 2;
const MIGRATIONS = readdirSync(join(__dirname, '..', 'prisma', 'migrations'), { withFileTypes: true }).filter((e) => e.isDirectory()).length;

const server = new URL(testDatabaseUrl('events'));
const databaseName = uniqueDatabaseName('platform_events_pgbouncer');
const directUrl = Object.assign(new URL(server), { pathname: `/${databaseName}` }).toString();
const adminUrl = Object.assign(new URL(server), { pathname: '/postgres' }).toString();

let bouncer: PgBouncer;
let app: ServiceTestApp<Database>;

async function runMigrate(env: Record<string, string>): Promise<string> {
  const proc = spawnProcess(join(__dirname, '..', 'dist', 'migrate.js'), env);
  const report = await exitReport(proc);
  expect(report).toEqual({ code: 0, signal: null, output: '' });
  return proc.output();
}

async function backends(): Promise<number> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [databaseName]);
    return rows[0]!.n;
  } finally {
    await admin.end();
  }
}

beforeAll(async () => {
  bouncer = await startPgBouncer({ upstream: adminUrl, poolSize: SERVER_POOL });
});

afterAll(async () => {
  await app?.close();
  await bouncer?.stop();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
  await admin.end();
});

test('migrate.ts applies the migrations through EVENTS_DIRECT_DATABASE_URL, not the pooled EVENTS_DATABASE_URL; unset, through EVENTS_DATABASE_URL', async () => {
  // The pooled URL leads nowhere: the migration can only have gone through the direct one.
  const [closedPort] = await freePorts(1);
  const applied = await runMigrate({
    EVENTS_DATABASE_URL: `postgresql://postgres@127.0.0.1:${closedPort}/${databaseName}`,
    EVENTS_DIRECT_DATABASE_URL: directUrl,
  });
  expect(applied).toContain(`events: ${MIGRATIONS} applied, 0 already applied`);
  const again = await runMigrate({ EVENTS_DATABASE_URL: directUrl });
  expect(again).toContain(`events: 0 applied, ${MIGRATIONS} already applied`);
});

describe('the events app through PgBouncer in transaction mode', () => {
  beforeAll(async () => {
    // Migrated by the test above when it ran; on its own, by the same runner.
    await runMigrate({ EVENTS_DATABASE_URL: bouncer.urlFor(directUrl), EVENTS_DIRECT_DATABASE_URL: directUrl });
    app = await startServiceTestApp({
      service: 'events',
      // The test's own database, through PgBouncer, with the deployables' default pool (10 > SERVER_POOL).
      createDatabase: () => createDatabase(bouncer.urlFor(directUrl)),
      createStores: eventsServiceStores,
      createApp: createAppWithLimits(),
      startWebhooks: ({ queuePrefix, ...deps }) => startServiceWebhooks({ ...deps, config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: queuePrefix } }),
    });
  });

  const client = (): ServiceClient => serviceClient('events', app.server, testIdentity());

  async function eventWithTickets(c: ServiceClient, count: number): Promise<{ eventId: string; ticketIds: string[] }> {
    const event = await c.post('/events', { name: 'Through the pooler', starts_at: '2030-06-01T18:00:00Z' }).expect(201);
    const created = await Promise.all(Array.from({ length: count }, (_, i) => c.post(`/events/${event.body.id}/tickets`, { holder_name: `Holder ${i}` })));
    expect(created.map((res) => res.status)).toEqual(created.map(() => 201));
    return { eventId: event.body.id, ticketIds: created.map((res) => (res.body as { id: string }).id) };
  }

  test("repeated and concurrent queries: every answer right, on at most the pooler's server connections", async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 30);
    for (let i = 0; i < 50; i++) await c.get(`/events/${eventId}`).expect(200);

    const reads = await Promise.all(ticketIds.map((id) => c.get(`/tickets/${id}`)));
    expect(reads.map((res) => [res.status, (res.body as { id: string }).id])).toEqual(ticketIds.map((id) => [200, id]));
    const listed = await c.get(`/events/${eventId}/tickets?limit=100`).expect(200);
    expect(new Set((listed.body.data as { id: string }[]).map((t) => t.id))).toEqual(new Set(ticketIds));

    // Ten client connections of the app shared two server connections: PostgreSQL saw no more.
    expect(await backends()).toBeLessThanOrEqual(SERVER_POOL);
    expect(Object.keys(await bouncer.serverConnections())).toContain(databaseName);
  });

  test('interactive transactions: concurrent validations of one ticket validate it once; a scans upload and an undo', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 4);
    const [contended, ...scanned] = ticketIds as [string, ...string[]];

    const validations = await Promise.all(Array.from({ length: 10 }, () => c.post(`/tickets/${contended}/validate`, { gate: 'north' })));
    expect(validations.map((res) => res.status).sort()).toEqual([200, ...Array<number>(9).fill(409)]);

    const at = new Date(Date.now() - 60_000).toISOString();
    const scans = [...scanned, contended].map((ticketId) => ({ scan_id: randomUUID(), ticket_id: ticketId, scanned_at: at, gate: 'east' }));
    const upload = await c.post(`/events/${eventId}/scans`, { scans }).expect(200);
    expect((upload.body.results as { status: string }[]).map((r) => r.status)).toEqual(['validated', 'validated', 'validated', 'already_validated']);
    // The same upload again (a scanner's retry) gets the recorded answer.
    expect((await c.post(`/events/${eventId}/scans`, { scans }).expect(200)).text).toBe(upload.text);

    await c.post(`/tickets/${contended}/unvalidate`, { reason: 'wrong ticket' }).expect(200);
    expect((await c.get(`/tickets/${contended}`).expect(200)).body.status).toBe('issued');
    const history = (await c.get(`/tickets/${contended}/checkins?limit=100`).expect(200)).body.data as { action: string }[];
    expect(history.map((h) => h.action)).toContain('validated');
    expect(await backends()).toBeLessThanOrEqual(SERVER_POOL);
  });

  test('PgBouncer with no room for another client (max_client_conn): a request is 503 temporarily_unavailable with Retry-After: 1, then served once there is', async () => {
    const full = await startPgBouncer({ upstream: adminUrl, maxClientConn: 1 });
    const occupant = new pg.Client({ connectionString: full.urlFor(directUrl) });
    let starvedApp: ServiceTestApp<Database> | undefined;
    try {
      await occupant.connect();
      await occupant.query('SELECT 1');
      starvedApp = await startServiceTestApp({
        service: 'events',
        createDatabase: () => createDatabase(full.urlFor(directUrl)),
        createStores: eventsServiceStores,
        createApp: createAppWithLimits(),
        startWebhooks: () => {
          throw new Error('no webhooks here');
        },
      });
      const c = serviceClient('events', starvedApp.server, testIdentity());
      const refused = await c.get('/events');
      expect([refused.status, refused.headers['retry-after']]).toEqual([503, '1']);
      expectErrorBody(refused.body, 'temporarily_unavailable');

      await occupant.end();
      await waitFor('a request served once the occupant left', async () => (await c.get('/events')).status === 200, 60_000);
    } finally {
      await occupant.end().catch(() => undefined);
      await starvedApp?.close();
      await full.stop();
    }
  });
});
