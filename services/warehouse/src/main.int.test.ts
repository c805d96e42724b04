import { join } from 'node:path';
import { exitReport, killSpawned, scrapeMetrics, serviceClient, spawnService, testDatabaseUrl, testIdentity, waitFor } from '@platform/testing';
import { createDatabase } from './database';
import { backdate } from './test/warehouse';

// The real process (node dist/main.js): /metrics on METRICS_PORT, not on its API port; its reservations
// sweeper runs; SIGTERM exits 0.
afterAll(killSpawned);

test('main serves GET /metrics on METRICS_PORT only, expires due reservations with reservation.expired, and exits 0 on SIGTERM', async () => {
  const main = await spawnService('warehouse', join(__dirname, '..'), {
    database: 'warehouse_main',
    env: { WAREHOUSE_RESERVATION_SWEEP_INTERVAL_MS: '200' },
  });
  expect((await fetch(`${main.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${main.url}/metrics`)).status).toBe(401);

  const text = await scrapeMetrics(main.metricsUrl);
  expect(text).toContain('http_requests_total{method="GET",route="/healthz",status="200"} 1');
  expect(text).toMatch(/^queue_depth\{queue="webhooks-warehouse",state="waiting"\} \d+$/m);
  expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);

  // A reservation past its expiry, with no request on its item: the process's sweeper expires it.
  const c = serviceClient('warehouse', main.url, testIdentity());
  const item = (await c.post('/items', { sku: `MAIN-${process.pid}-${Date.now()}`, name: 'Widget' }).expect(201)).body;
  await c.post(`/items/${item.id}/stock-adjustments`, { delta: 2, reason: 'receipt' }).expect(201);
  const reservation = (await c.post(`/items/${item.id}/reservations`, { quantity: 2 }).expect(201)).body;
  const db = createDatabase(testDatabaseUrl('warehouse_main'));
  try {
    await backdate(db, reservation.id, 901);
    const expired = await waitFor(
      'reservation.expired in the outbox',
      async () => {
        const rows = await db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId, type: 'reservation.expired' } });
        return rows.length > 0 && rows;
      },
      60_000,
    );
    expect(expired.map((row) => row.data)).toEqual([(await c.get(`/reservations/${reservation.id}`).expect(200)).body]);
    expect((await db.stockLevel.findFirst({ where: { itemId: item.id } }))?.reserved).toBe(0);
  } finally {
    await db.$disconnect();
  }
  expect(await scrapeMetrics(main.metricsUrl)).toMatch(/^warehouse_reservations_expired_total [1-9]/m);

  await main.proc.kill('SIGTERM');
  expect(await exitReport(main.proc)).toEqual({ code: 0, signal: null, output: '' });
});
