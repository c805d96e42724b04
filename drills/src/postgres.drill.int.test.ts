import pg from 'pg';
import { startPlatform, startRedisServer, type Platform, type RedisServer, startTcpProxy, type TcpProxy, waitFor, uniqueDatabaseName } from '@platform/testing';
import { direct, gateway, startLoop, statusCounts, type Outcome } from './support/load';

// The warehouse reaches PostgreSQL through a TCP proxy the drill controls; the shared server
// itself is never touched. Stock adjustments run under load while the proxy drops every
// connection (RST) or swallows every byte (a partition).

const NAME = uniqueDatabaseName('drill_pg');
const GATEWAY_TIMEOUT_MS = 3_000;
// The warehouse's own bounds on PostgreSQL, shorter than the gateway's: the service answers first.
const DATABASE_QUERY_TIMEOUT_MS = 1_500;
const DATABASE_CONNECT_TIMEOUT_MS = 1_000;
// A request queued behind the pool's stuck connections waits no longer than a new connection may take.
const DATABASE_POOL_TIMEOUT_MS = 1_000;
let redis: RedisServer;
let proxy: TcpProxy;
let platform: Platform;
let db: pg.Client;

beforeAll(async () => {
  const server = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
  const throughProxy = new URL(server);
  throughProxy.port = String(proxy.port);
  throughProxy.pathname = `/platform_warehouse_${NAME}`;
  redis = await startRedisServer();
  platform = await startPlatform({
    name: NAME,
    redisUrl: redis.url,
    processes: [
      {
        kind: 'warehouse',
        env: {
          WAREHOUSE_DATABASE_URL: throughProxy.toString(),
          DATABASE_QUERY_TIMEOUT_MS: String(DATABASE_QUERY_TIMEOUT_MS),
          DATABASE_CONNECT_TIMEOUT_MS: String(DATABASE_CONNECT_TIMEOUT_MS),
          DATABASE_POOL_TIMEOUT_MS: String(DATABASE_POOL_TIMEOUT_MS),
        },
      },
      'gateway',
    ],
    env: { GATEWAY_UPSTREAM_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) },
  });
  // The drill's own view of the data: straight to the server, not through the proxy.
  db = new pg.Client({ connectionString: platform.databaseUrls.warehouse });
  await db.connect();
}, 180_000);

afterAll(async () => {
  await db?.end();
  await platform?.stop();
  await proxy?.close();
  await redis?.stop();
});

interface Adjusted extends Outcome {
  note: string;
  delta: number;
}

/** Adjustments under load, each with a note naming it, so the database can say which ones landed. */
async function adjustUnderLoad(label: string, fault: (outcomes: Outcome[]) => Promise<{ faultAt: number; healedAt: number }>) {
  const key = await platform.createApiKey({ name: label });
  const client = gateway(platform, key.token);
  const item = await client.post('/warehouse/v1/items', { sku: `DRILL-${label}`, name: 'Drill item' });
  expect(item.status).toBe(201);
  const loop = startLoop({
    concurrency: 3,
    pauseMs: 25,
    // Stopped once 201s are back; these bounds are only a backstop, generous for a loaded machine.
    maxRequests: 1_000,
    maxMs: 120_000,
    request: async (i) => {
      const note = `${label}-${i}`;
      const delta = 1 + (i % 5);
      const outcome = await client.post(`/warehouse/v1/items/${item.body.id}/stock-adjustments`, { delta, reason: 'receipt', note }, 15_000);
      return Object.assign(outcome, { note, delta });
    },
  });
  await waitFor('201s before the fault', () => loop.outcomes.some((o) => o.status === 201), 60_000, 100);
  const { faultAt, healedAt } = await fault(loop.outcomes);
  await waitFor('201s again after the fault', () => loop.outcomes.some((o) => o.at > healedAt && o.status === 201), 60_000, 100);
  const outcomes = (await loop.stop()) as Adjusted[];

  const { rows: items } = await db.query<{ quantity: number }>('SELECT quantity FROM items WHERE id = $1', [item.body.id]);
  const { rows: adjustments } = await db.query<{ note: string; delta: number }>('SELECT note, delta FROM stock_adjustments WHERE item_id = $1', [item.body.id]);
  const created = outcomes.filter((o) => o.status === 201);
  const landed = new Set(adjustments.map((a) => a.note));
  const answered201 = new Set(created.map((o) => o.note));
  // A change committed while its connection was dropping (COMMIT reached PostgreSQL, the answer
  // did not come back) is applied although the client got 503: the reason to retry with an
  // Idempotency-Key. Only requests in flight during the fault can be such.
  const ambiguous = outcomes.filter((o) => o.status !== 201 && landed.has(o.note));
  return { outcomes, created, faultAt, healedAt, quantity: items[0]!.quantity, adjustments, landed, answered201, ambiguous };
}

test('connections to PostgreSQL dropped mid-request: 503 temporarily_unavailable at once, never a hang, never a half-applied adjustment', async () => {
  const result = await adjustUnderLoad('cut', async (outcomes) => {
    const faultAt = Date.now();
    proxy.setMode('refuse');
    expect(proxy.cut()).toBeGreaterThan(0);
    // The outage lasts until a request sent during it has been answered 503.
    await waitFor('a 503 during the outage', () => outcomes.some((o) => o.at >= faultAt && o.status === 503), 60_000, 50);
    proxy.setMode('forward');
    return { faultAt, healedAt: Date.now() };
  });
  const { outcomes, created, faultAt, healedAt, quantity, adjustments, landed, answered201, ambiguous } = result;

  expect(Object.keys(statusCounts(outcomes)).sort()).toEqual(['201', '503']);
  const failed = outcomes.filter((o) => o.status === 503);
  expect(failed.length).toBeGreaterThan(0);
  for (const o of failed) expect(o.body.error.code).toBe('temporarily_unavailable');
  // Never a hang: answered while the database was still away, never held until it came back.
  expect(failed.filter((o) => o.at + o.ms <= healedAt).length).toBeGreaterThan(0);
  // Atomic: the item's quantity is exactly the sum of the adjustments recorded beside it.
  expect(quantity).toBe(adjustments.reduce((sum, a) => sum + a.delta, 0));
  // Durable: every 201 landed; anything else that landed was in flight when the connections dropped.
  expect([...answered201].filter((note) => !landed.has(note))).toEqual([]);
  for (const o of ambiguous) expect(o.at <= faultAt && o.at + o.ms >= faultAt).toBe(true);
  expect(quantity).toBe(created.reduce((sum, o) => sum + o.delta, 0) + ambiguous.reduce((sum, o) => sum + o.delta, 0));
  expect(healedAt).toBeGreaterThan(faultAt);
}, 180_000);

test('PostgreSQL unreachable without an answer (a partition): the service answers 503 within its query timeout, recovers, no half-applied adjustment', async () => {
  let directProbe: Promise<Outcome> | undefined;
  const result = await adjustUnderLoad('partition', async (outcomes) => {
    const faultAt = Date.now();
    proxy.setMode('blackhole');
    // Straight to the warehouse (no gateway timeout in between): how long does it take to answer?
    directProbe = direct(platform, 'warehouse').get('/items?limit=1');
    // The partition lasts until the probe and a request through the gateway sent during it are answered.
    await directProbe;
    await waitFor('a 503 during the partition', () => outcomes.some((o) => o.at >= faultAt && o.status === 503), 60_000, 50);
    // The partition ends the way TCP ends one: the stuck connections fail.
    proxy.cut();
    proxy.setMode('forward');
    return { faultAt, healedAt: Date.now() };
  });
  const { outcomes, quantity, adjustments, landed, answered201 } = result;
  expect(Object.keys(statusCounts(outcomes)).sort()).toEqual(['201', '503']);
  expect(quantity).toBe(adjustments.reduce((sum, a) => sum + a.delta, 0));
  expect([...answered201].filter((note) => !landed.has(note))).toEqual([]);
  // The service itself bounds the wait (DATABASE_QUERY_TIMEOUT_MS / DATABASE_CONNECT_TIMEOUT_MS / DATABASE_POOL_TIMEOUT_MS):
  // straight to it, without the gateway's timeout in between, the answer is a 503 too, given while the
  // partition lasted (it ended only after this answer).
  const probe = await directProbe!;
  process.stdout.write(`direct probe during the partition: ${probe.status} after ${probe.ms} ms\n`);
  expect(probe.status).toBe(503);
  expect(probe.body.error.code).toBe('temporarily_unavailable');
  expect(probe.at + probe.ms).toBeLessThanOrEqual(result.healedAt);
}, 180_000);
