import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createLogger, createMetricsRegistry, metricsLintProblems } from '@platform/core';
import { deleteRedisKeys, testDatabaseUrl, testRedisUrl, uniqueName, waitFor } from '@platform/testing';
import { TEST_WEBHOOKS_CONFIG } from './config';
import { pruneWebhookRecords, startRetentionPruner, type PrunedTable, type RetentionPeriods, type RetentionPruner } from './retention';
import { startServiceWebhooks } from './runtime';
import { pgSql, type Sql } from './sql';
import { freshTestDatabase } from './test/app';
import { retentionStore } from './webhooks.store';

// Retention deletes across workspaces, so these tests have a database of their own and empty its
// webhook tables before each test.
let pool: pg.Pool;
let sql: Sql;
let endpointId: string;

const DAY_MS = 86_400_000;
const now = new Date('2025-06-01T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const periods: RetentionPeriods = { outboxDays: 7, deliveryDays: 30 };

beforeAll(async () => {
  ({ pool, sql } = await freshTestDatabase('webhooks_retention'));
});
beforeEach(async () => {
  await sql.$executeRawUnsafe(`TRUNCATE "outbox_events", "webhook_deliveries", "webhook_endpoints"`);
  const [endpoint] = await sql.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO "webhook_endpoints" ("workspace_id", "url", "events", "secret") VALUES ($1::uuid, 'https://example.com/hooks', '{*}', 'whsec_test') RETURNING "id"`,
    randomUUID(),
  );
  endpointId = endpoint!.id;
});
afterAll(async () => {
  await pool.end();
});

/** Outbox rows created at `createdAt`, published at `publishedAt` (null: not yet); their ids. */
async function outboxRows(count: number, createdAt: Date, publishedAt: Date | null): Promise<string[]> {
  const rows = await sql.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO "outbox_events" ("id", "workspace_id", "type", "data", "created_at", "published_at")
     SELECT 'evt_' || gen_random_uuid(), gen_random_uuid(), 'ticket.validated', '{}', $2::timestamptz, $3::timestamptz FROM generate_series(1, $1::int)
     RETURNING "id"`,
    count,
    createdAt,
    publishedAt,
  );
  return rows.map((r) => r.id);
}

/** Delivery records created at `createdAt`; their ids. */
async function deliveryRows(count: number, createdAt: Date): Promise<string[]> {
  const rows = await sql.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO "webhook_deliveries" ("workspace_id", "endpoint_id", "event_id", "event_type", "attempt", "status", "created_at")
     SELECT gen_random_uuid(), $2::uuid, 'evt_' || n, 'ticket.validated', 1, 'succeeded', $3::timestamptz FROM generate_series(1, $1::int) AS n
     RETURNING "id"`,
    count,
    endpointId,
    createdAt,
  );
  return rows.map((r) => r.id);
}

/** The ids of `table` still there, in any order. */
async function remaining(table: PrunedTable): Promise<string[]> {
  return (await sql.$queryRawUnsafe<{ id: string }[]>(`SELECT "id"::text AS "id" FROM "${table}"`)).map((r) => r.id);
}

describe('pruneWebhookRecords', () => {
  test('deletes outbox rows published more than 7 days ago and delivery records created more than 30 days ago; keeps the rest', async () => {
    await outboxRows(2, ago(40 * DAY_MS), ago(7 * DAY_MS + 1));
    const recentPublished = await outboxRows(1, ago(40 * DAY_MS), ago(7 * DAY_MS - 1));
    await deliveryRows(2, ago(30 * DAY_MS + 1));
    const recentDeliveries = await deliveryRows(1, ago(30 * DAY_MS - 1));

    const pruned = await pruneWebhookRecords(retentionStore(sql), { now, periods, batchSize: 1000 });

    expect(pruned).toEqual({ outbox_events: 2, webhook_deliveries: 2 });
    expect(await remaining('outbox_events')).toEqual(recentPublished);
    expect(await remaining('webhook_deliveries')).toEqual(recentDeliveries);
  });

  test('an unpublished outbox row is never deleted, however old: nothing acknowledged is lost', async () => {
    const unpublished = await outboxRows(3, ago(3650 * DAY_MS), null);

    const pruned = await pruneWebhookRecords(retentionStore(sql), { now, periods: { outboxDays: 1, deliveryDays: 1 }, batchSize: 1000 });

    expect(pruned.outbox_events).toBe(0);
    expect((await remaining('outbox_events')).sort()).toEqual(unpublished.sort());
  });

  test('deletes batch after batch until a batch comes back short', async () => {
    await outboxRows(250, ago(40 * DAY_MS), ago(8 * DAY_MS));
    await deliveryRows(200, ago(31 * DAY_MS));
    const batches: [PrunedTable, number][] = [];

    const pruned = await pruneWebhookRecords(retentionStore(sql), { now, periods, batchSize: 100, onPruned: (table, count) => batches.push([table, count]) });

    expect(pruned).toEqual({ outbox_events: 250, webhook_deliveries: 200 });
    expect(batches).toEqual([
      ['outbox_events', 100],
      ['outbox_events', 100],
      ['outbox_events', 50],
      ['webhook_deliveries', 100],
      ['webhook_deliveries', 100],
    ]);
    expect(await remaining('outbox_events')).toEqual([]);
    expect(await remaining('webhook_deliveries')).toEqual([]);
  });

  test('two pruners at once both finish and delete each row once between them', async () => {
    await outboxRows(1000, ago(40 * DAY_MS), ago(8 * DAY_MS));
    await deliveryRows(1000, ago(31 * DAY_MS));
    const store = retentionStore(sql);

    const [a, b] = await Promise.all([0, 1].map(() => pruneWebhookRecords(store, { now, periods, batchSize: 50 })));

    expect(a!.outbox_events + b!.outbox_events).toBe(1000);
    expect(a!.webhook_deliveries + b!.webhook_deliveries).toBe(1000);
    expect(await remaining('outbox_events')).toEqual([]);
    expect(await remaining('webhook_deliveries')).toEqual([]);
  });

  test('a row another transaction holds is skipped, not waited for, and goes on a later run', async () => {
    const [held] = await deliveryRows(1, ago(31 * DAY_MS));
    await deliveryRows(1, ago(31 * DAY_MS));
    let release!: () => void;
    let locked!: () => void;
    const holding = sql.$transaction(async (tx) => {
      await tx.$queryRawUnsafe(`SELECT 1 FROM "webhook_deliveries" WHERE "id" = $1::uuid FOR UPDATE`, held);
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await new Promise<void>((resolve) => (locked = resolve));

    let timer: NodeJS.Timeout | undefined;
    // Far longer than a run takes even on a loaded machine: 'still waiting' means the run waited for the lock.
    const waiting = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), 60_000)));
    const whileHeld = await Promise.race([pruneWebhookRecords(retentionStore(sql), { now, periods, batchSize: 1000 }), waiting]);
    clearTimeout(timer);
    release();
    await holding;

    expect(whileHeld).toEqual({ outbox_events: 0, webhook_deliveries: 1 });
    expect(await remaining('webhook_deliveries')).toEqual([held]);
    expect((await pruneWebhookRecords(retentionStore(sql), { now, periods, batchSize: 1000 })).webhook_deliveries).toBe(1);
    expect(await remaining('webhook_deliveries')).toEqual([]);
  });
});

describe('startRetentionPruner', () => {
  test('close() waits for the DELETE in flight, then stops before the next batch', async () => {
    await outboxRows(20, ago(40 * DAY_MS), ago(8 * DAY_MS));
    await deliveryRows(5, ago(31 * DAY_MS));
    // A lock on the whole table holds the pruner's first DELETE in flight (SKIP LOCKED skips rows, not tables).
    const locker = await pool.connect();
    let pruner: RetentionPruner | undefined;
    try {
      await locker.query(`BEGIN; LOCK TABLE "outbox_events" IN ACCESS EXCLUSIVE MODE`);
      pruner = startRetentionPruner({ sql, periods, batchSize: 10, firstRunDelayMs: 0, now: () => now });
      await waitFor('the DELETE waiting on the lock', async () => {
        const { rows } = await pool.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM "outbox_events"%'`);
        return rows.length === 1;
      });

      let closed = false;
      const closing = pruner.close().then(() => (closed = true));
      // An idle pruner's close() resolves, and a database round trip later the DELETE still waits on
      // the lock: a close() that did not wait for it would have resolved too.
      await startRetentionPruner({ sql, periods, firstRunDelayMs: 3_600_000, now: () => now }).close();
      const { rows } = await pool.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM "outbox_events"%'`);
      expect(rows).toHaveLength(1);
      expect(closed).toBe(false);
      await locker.query('COMMIT');
      await closing;
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
      await pruner?.close();
    }

    // The batch in flight finished; no batch after it ran.
    expect(await remaining('outbox_events')).toHaveLength(10);
    expect(await remaining('webhook_deliveries')).toHaveLength(5);
  });

  test('a failed run is logged and retried next period; the process goes on', async () => {
    const logger = createLogger('webhooks-retention-test', 'silent');
    const warn = jest.spyOn(logger, 'warn');
    const closedPool = new pg.Pool({ connectionString: testDatabaseUrl('webhooks_retention') });
    await closedPool.end();
    const pruner = startRetentionPruner({ sql: pgSql(closedPool), periods, firstRunDelayMs: 0, intervalMs: 20, logger });
    try {
      await waitFor('two failed runs', () => warn.mock.calls.length >= 2);
    } finally {
      await pruner.close();
    }
    expect(warn.mock.calls[0]![1]).toBe('webhook retention failed; retrying next period');
  });
});

describe('in startServiceWebhooks', () => {
  const prefix = uniqueName('webhooks-retention-test');
  afterAll(() => deleteRedisKeys(prefix, testRedisUrl()));

  test('the runtime prunes with the periods of its config and counts webhook_records_pruned_total{table}', async () => {
    const realNow = Date.now();
    const daysAgo = (days: number) => new Date(realNow - days * DAY_MS);
    await outboxRows(2, daysAgo(5), daysAgo(3));
    const keptOutbox = await outboxRows(1, daysAgo(5), daysAgo(1));
    const unpublished = await outboxRows(1, daysAgo(5), null);
    await deliveryRows(3, daysAgo(4));
    const keptDeliveries = await deliveryRows(1, daysAgo(2));
    const registry = createMetricsRegistry({ defaultMetrics: false });

    const webhooks = startServiceWebhooks({
      service: 'retention-test',
      sql,
      redis: testRedisUrl(),
      config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: prefix, WEBHOOKS_OUTBOX_RETENTION_DAYS: 2, WEBHOOKS_DELIVERY_RETENTION_DAYS: 3 },
      logger: createLogger('webhooks-retention-test', 'silent'),
      metrics: registry,
      retentionSchedule: { firstRunDelayMs: 0 },
    });
    try {
      const sample = async (table: PrunedTable) => {
        const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`webhook_records_pruned_total{table="${table}"} `));
        return line === undefined ? undefined : Number(line.split(' ')[1]);
      };
      await waitFor('the first run', async () => (await sample('outbox_events')) === 2 && (await sample('webhook_deliveries')) === 3);
      expect(metricsLintProblems(await registry.metrics())).toEqual([]);
    } finally {
      await webhooks.close();
    }

    // The relay publishes the unpublished row meanwhile; it is kept either way (published just now).
    expect((await remaining('outbox_events')).sort()).toEqual([...keptOutbox, ...unpublished].sort());
    expect(await remaining('webhook_deliveries')).toEqual(keptDeliveries);
  });
});
