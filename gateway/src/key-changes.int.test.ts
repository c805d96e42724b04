// The key-change log on real PostgreSQL: every revoke, roll and edit writes its row in its own
// transaction, and a reader gets every committed row once, whatever order the rows' seq values
// were committed in, starting fresh or not.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createLogger, DEFAULT_WORKSPACE_LIMITS, type WorkspaceId } from '@platform/core';
import { testDatabaseUrl, waitFor } from '@platform/testing';
import { createDatabase, type Database } from './database';
import { KeyChangeFeed, type KeyChangeFeedOptions } from './key-changes';
import { gatewayStores, type GatewayStores, type KeyChange } from './keys.store';
import { createTestKey } from './test/gateway';

let db: Database;
let stores: GatewayStores;
let sql: pg.Client;
const logger = createLogger('key-changes-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const feeds: KeyChangeFeed[] = [];

beforeAll(async () => {
  db = createDatabase(testDatabaseUrl('gateway'));
  stores = gatewayStores(db);
  sql = new pg.Client({ connectionString: testDatabaseUrl('gateway') });
  await sql.connect();
});

afterEach(async () => {
  await Promise.all(feeds.splice(0).map((feed) => feed.close()));
});

afterAll(async () => {
  await sql.end();
  await db.$disconnect();
});

/** A reader of the log polling every 20 ms, recording what it applies. */
function follow(options: Partial<KeyChangeFeedOptions> = {}) {
  const changes: KeyChange[] = [];
  let resyncs = 0;
  const feed = new KeyChangeFeed(stores.crossWorkspace, { onChanged: (change) => changes.push(change), onResync: () => resyncs++ }, logger, {
    pollMs: 20,
    ...options,
  });
  feeds.push(feed);
  feed.start();
  return {
    feed,
    changes,
    resyncs: () => resyncs,
    hashes: () => changes.map((c) => c.tokenHash),
    /** Resolves once the feed has taken its starting point. */
    started: () => waitFor('the feed to start', () => resyncs > 0, 10_000),
  };
}

/** Logs a change the way the store's statements do, on a connection of the caller (which may hold the transaction open). */
async function logChange(client: pg.Client | pg.PoolClient, tokenHash: string): Promise<void> {
  await client.query(`INSERT INTO "api_key_changes" ("key_id", "token_hash") VALUES ($1, $2)`, [randomUUID(), tokenHash]);
}

async function rowsFor(keyId: string): Promise<{ token_hash: string }[]> {
  return (await sql.query(`SELECT "token_hash" FROM "api_key_changes" WHERE "key_id" = $1 ORDER BY "seq"`, [keyId])).rows;
}

test('a revoke, an edit and a roll each log the changed key in their own statement or transaction; a refused roll logs nothing', async () => {
  const key = await createTestKey(stores);
  const tokenHash = (await stores.keys.findApiKey(key.workspaceId, key.keyId))!.tokenHash;
  expect(await rowsFor(key.keyId)).toEqual([]);

  await stores.keys.updateApiKey(key.workspaceId, key.keyId, { name: 'renamed' });
  expect(await rowsFor(key.keyId)).toEqual([{ token_hash: tokenHash }]);

  const now = new Date();
  const rolled = await stores.keys.rollApiKey(
    key.workspaceId,
    key.keyId,
    now,
    new Date(now.getTime() + 60_000),
    { tokenHash: `new-${randomUUID()}`, tokenPrefix: 'plk_x' },
    DEFAULT_WORKSPACE_LIMITS.api_keys,
  );
  expect(rolled.outcome).toBe('rolled');
  expect(await rowsFor(key.keyId)).toHaveLength(2);

  await stores.keys.revokeApiKey(key.workspaceId, key.keyId, new Date());
  expect(await rowsFor(key.keyId)).toHaveLength(3);

  const refused = await stores.keys.rollApiKey(
    key.workspaceId,
    key.keyId,
    new Date(),
    new Date(),
    { tokenHash: `new-${randomUUID()}`, tokenPrefix: 'plk_x' },
    DEFAULT_WORKSPACE_LIMITS.api_keys,
  );
  expect(refused.outcome).toBe('conflict');
  // Another workspace's key: nothing changes, nothing is logged.
  expect(await stores.keys.revokeApiKey(randomUUID() as WorkspaceId, key.keyId, new Date())).toBeNull();
  expect(await rowsFor(key.keyId)).toHaveLength(3);
});

test('a row whose seq was taken before a higher one but committed after it is still read (commit order is not seq order)', async () => {
  const reader = follow();
  await reader.started();
  const early = new pg.Client({ connectionString: testDatabaseUrl('gateway') });
  await early.connect();
  try {
    const late = `late-${randomUUID()}`;
    const first = `first-${randomUUID()}`;
    await early.query('BEGIN');
    await logChange(early, late); // takes its seq now, commits last
    await logChange(sql, first); // a higher seq, committed at once
    await waitFor('the committed row', () => reader.hashes().includes(first));
    expect(reader.hashes()).not.toContain(late);
    const [lateSeq] = (await early.query(`SELECT "seq" FROM "api_key_changes" WHERE "token_hash" = $1`, [late])).rows.map((r) => BigInt(r.seq));
    const firstSeq = reader.changes.find((c) => c.tokenHash === first)!.seq;
    expect(lateSeq! < firstSeq).toBe(true);

    await early.query('COMMIT');
    await waitFor('the row committed late', () => reader.hashes().includes(late));
    // Each row once, however many polls ran while the older transaction was open.
    expect(reader.hashes().filter((h) => h === first || h === late)).toHaveLength(2);
  } finally {
    await early.end();
  }
});

test('a rolled-back transaction leaves a seq that never comes; the reader does not wait for it', async () => {
  const reader = follow();
  await reader.started();
  const aborted = new pg.Client({ connectionString: testDatabaseUrl('gateway') });
  await aborted.connect();
  try {
    await aborted.query('BEGIN');
    await logChange(aborted, `never-${randomUUID()}`);
    await aborted.query('ROLLBACK');
  } finally {
    await aborted.end();
  }
  const after = `after-${randomUUID()}`;
  await logChange(sql, after);
  await waitFor('the row after the gap', () => reader.hashes().includes(after));
  expect(reader.hashes().some((h) => h.startsWith('never-'))).toBe(false);
});

// It may also apply a few rows written just before it started: the horizon is the server's oldest open
// transaction, which other sessions on a shared server hold back (an eviction more, never one less).
test('a reader that starts fresh resyncs once, then applies what is written from then on', async () => {
  const before = `before-${randomUUID()}`;
  await logChange(sql, before);
  const reader = follow();
  await reader.started();
  expect(reader.resyncs()).toBe(1);
  const after = `after-${randomUUID()}`;
  await logChange(sql, after);
  await waitFor('the row written after the start', () => reader.hashes().includes(after));
  expect(reader.resyncs()).toBe(1);
});

test('more changes than one read takes are all applied, each once', async () => {
  const reader = follow({ batch: 3 });
  await reader.started();
  const hashes = Array.from({ length: 10 }, (_, i) => `batch-${i}-${randomUUID()}`);
  // One transaction: ten rows of one txid, more than a batch.
  await sql.query('BEGIN');
  for (const hash of hashes.slice(0, 5)) await logChange(sql, hash);
  await sql.query('COMMIT');
  for (const hash of hashes.slice(5)) await logChange(sql, hash);
  await waitFor('every row', () => hashes.every((h) => reader.hashes().includes(h)));
  expect(reader.hashes().filter((h) => hashes.includes(h))).toEqual(hashes);
});

test('rows older than the retention are deleted in batches, by any number of gateways at once; newer rows stay', async () => {
  const marker = randomUUID();
  await sql.query(
    `INSERT INTO "api_key_changes" ("key_id", "token_hash", "created_at")
     SELECT $1, 'old-' || n, clock_timestamp() - interval '11 minutes' FROM generate_series(1, 250) AS n`,
    [marker],
  );
  await sql.query(`INSERT INTO "api_key_changes" ("key_id", "token_hash") VALUES ($1, 'recent')`, [marker]);
  const deleted = await Promise.all([
    stores.crossWorkspace.pruneKeyChanges(10 * 60_000, 20),
    stores.crossWorkspace.pruneKeyChanges(10 * 60_000, 20),
    stores.crossWorkspace.pruneKeyChanges(10 * 60_000, 20),
  ]);
  expect(deleted.reduce((a, b) => a + b)).toBeGreaterThanOrEqual(250);
  expect((await sql.query(`SELECT "token_hash" FROM "api_key_changes" WHERE "key_id" = $1`, [marker])).rows).toEqual([{ token_hash: 'recent' }]);
});
