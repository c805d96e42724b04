import { join } from 'node:path';
import pg from 'pg';
import { prepareTestDatabase, testDatabaseUrl, uniqueDatabaseName } from '@platform/testing';
import { createDatabase, type Database } from './database';
import { pruneUnmatchedScans } from './scans.retention';
import { scansRetentionStore } from './scans-retention.store';

// Scan retention (contract section 20) on a database of this file's own: a sweep deletes across
// every workspace, so it must not meet the scans of other test files.
const databaseUrl = testDatabaseUrl(uniqueDatabaseName('events_retention'));
const sql = new pg.Client({ connectionString: databaseUrl });
const dbs: Database[] = [];

beforeAll(async () => {
  await prepareTestDatabase(databaseUrl, join(__dirname, '..', 'prisma', 'migrations'));
  await sql.connect();
});

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.$disconnect()));
  await sql.end();
  const admin = new pg.Client({ connectionString: testDatabaseUrl('events') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`);
  await admin.end();
});

type Status = 'validated' | 'already_validated' | 'not_found' | 'wrong_event';

/** `count` scans of one status recorded `daysAgo` days ago, on a new event; returns their scan ids. */
async function scans(status: Status, daysAgo: number, count: number): Promise<string[]> {
  const { rows } = await sql.query<{ scan_id: string }>(
    `WITH "event" AS (
       INSERT INTO "events" ("id", "workspace_id", "name", "starts_at") VALUES (gen_random_uuid(), gen_random_uuid(), 'e', now()) RETURNING "id", "workspace_id")
     INSERT INTO "scans" ("event_id", "scan_id", "workspace_id", "ticket_id", "status", "recorded_at")
     SELECT e."id", $1 || '-' || $2 || '-' || n, e."workspace_id", gen_random_uuid(), $1::scan_status, now() - make_interval(days => $2::int)
       FROM "event" e CROSS JOIN generate_series(1, $3::int) n
     RETURNING "scan_id"`,
    [status, daysAgo, count],
  );
  return rows.map((r) => r.scan_id).sort();
}

async function remaining(): Promise<string[]> {
  const { rows } = await sql.query<{ scan_id: string }>(`SELECT "scan_id" FROM "scans"`);
  return rows.map((r) => r.scan_id).sort();
}

function sweep(batchSize: number, counted: number[]): Promise<number> {
  const db = createDatabase(databaseUrl);
  dbs.push(db);
  return pruneUnmatchedScans(scansRetentionStore(db), { now: new Date(), batchSize, onPruned: (count) => counted.push(count) });
}

test('scans of unknown and of other events tickets go after 7 days, once each under two sweepers; scans of the event own tickets stay', async () => {
  const oldUnknown = await scans('not_found', 8, 23);
  const oldOtherEvent = await scans('wrong_event', 30, 17);
  const recentUnknown = await scans('not_found', 6, 5);
  const recentOtherEvent = await scans('wrong_event', 1, 5);
  const oldOwn = [...(await scans('validated', 400, 10)), ...(await scans('already_validated', 400, 10))];

  const counted: number[] = [];
  const [first, second] = await Promise.all([sweep(4, counted), sweep(4, counted)]);

  expect(first + second).toBe(oldUnknown.length + oldOtherEvent.length);
  expect(counted.reduce((a, b) => a + b, 0)).toBe(oldUnknown.length + oldOtherEvent.length);
  expect(await remaining()).toEqual([...recentUnknown, ...recentOtherEvent, ...oldOwn].sort());
  expect(await sweep(4, counted)).toBe(0);
});
