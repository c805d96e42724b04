import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { errorBody, quotaExceeded } from '@platform/core';
import { migrationTestDatabase, serviceClient, startServiceTestApp, testIdentity, type ServiceTestApp } from '@platform/testing';
import { createDatabase, type Database } from './database';
import { eventsServiceStores } from './events.store';
import { createAppWithLimits } from './test/app';

// The workspace_usage migration on a database of this file's own: migrated up to the migration
// before it, given events and tickets, then migrated to the end; the app then counts on from there.
const WORKSPACE_USAGE = '20241217000000_workspace_usage';
const database = migrationTestDatabase('events', join(__dirname, '..', 'prisma', 'migrations'), WORKSPACE_USAGE);
const { sql } = database;
let app: ServiceTestApp<Database> | undefined;

afterAll(async () => {
  await app?.close();
  await database.drop();
});

test("each workspace's events and tickets already there are counted; the limits hold from those counts on", async () => {
  const previous = await database.migrateBefore();
  expect(previous.applied).not.toContain(WORKSPACE_USAGE);
  expect(previous.applied.at(-1)! < WORKSPACE_USAGE).toBe(true);

  const event = async (workspaceId: string) => {
    const id = randomUUID();
    await sql.query(`INSERT INTO "events" ("id", "workspace_id", "name", "starts_at") VALUES ($1, $2, 'Before', now())`, [id, workspaceId]);
    return id;
  };
  const tickets = async (workspaceId: string, eventId: string, count: number) => {
    for (let i = 0; i < count; i++) {
      await sql.query(`INSERT INTO "tickets" ("id", "workspace_id", "event_id") VALUES ($1, $2, $3)`, [randomUUID(), workspaceId, eventId]);
    }
    await sql.query(`UPDATE "events" SET "tickets_total" = "tickets_total" + $2 WHERE "id" = $1`, [eventId, count]);
  };
  // Two events with tickets; one event without; one event, with tickets validated (they count all the same).
  const [busy, quiet, checkedIn] = [randomUUID(), randomUUID(), randomUUID()];
  const [busyFirst, busySecond] = [await event(busy), await event(busy)];
  await tickets(busy, busyFirst, 3);
  await tickets(busy, busySecond, 4);
  await event(quiet);
  const gala = await event(checkedIn);
  await tickets(checkedIn, gala, 2);
  await sql.query(`UPDATE "tickets" SET "status" = 'validated', "validated_at" = now() WHERE "event_id" = $1`, [gala]);

  const result = await database.migrateRest();
  expect(result.applied).toEqual([WORKSPACE_USAGE]);

  const usage = await sql.query(`SELECT "workspace_id", "events", "tickets" FROM "workspace_usage" ORDER BY "events" DESC, "tickets" DESC`);
  expect(usage.rows).toEqual([
    { workspace_id: busy, events: 2, tickets: 7 },
    { workspace_id: checkedIn, events: 1, tickets: 2 },
    { workspace_id: quiet, events: 1, tickets: 0 },
  ]);
  await expect(sql.query(`UPDATE "workspace_usage" SET "tickets" = -1 WHERE "workspace_id" = $1`, [quiet])).rejects.toThrow(/workspace_usage_tickets_check/);

  // With limits of 3 events and 8 tickets, the busy workspace may create one more of each, no more.
  app = await startServiceTestApp({
    service: 'events',
    createDatabase: () => createDatabase(database.url),
    createStores: eventsServiceStores,
    createApp: createAppWithLimits({ events: 3, tickets: 8 }),
    startWebhooks: () => {
      throw new Error('no webhooks here');
    },
  });
  const c = serviceClient('events', app.server, { ...testIdentity(), workspaceId: busy });
  const created = await c.post('/events', { name: 'After', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
  const refusedEvent = await c.post('/events', { name: 'One too many', starts_at: '2025-06-01T18:00:00Z' }).expect(409);
  expect(refusedEvent.body).toEqual(errorBody(quotaExceeded('events', 3), refusedEvent.headers['x-request-id'] as string));
  await c.post(`/events/${created.body.id}/tickets`, {}).expect(201);
  const refusedTicket = await c.post(`/events/${busyFirst}/tickets`, {}).expect(409);
  expect(refusedTicket.body).toEqual(errorBody(quotaExceeded('tickets', 8), refusedTicket.headers['x-request-id'] as string));
  expect((await sql.query(`SELECT "events", "tickets" FROM "workspace_usage" WHERE "workspace_id" = $1`, [busy])).rows).toEqual([{ events: 3, tickets: 8 }]);
});
