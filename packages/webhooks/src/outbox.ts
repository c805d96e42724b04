import { currentTraceparent, outboxEvent, type EventType } from '@platform/core';
import type { SqlClient } from './sql';

/** One change to announce: `data` is the resource as the API answer renders it. */
export interface OutboxEntry {
  type: EventType;
  workspaceId: string;
  data: object;
}

/** A row written to `outbox_events`. */
export type OutboxEvent = ReturnType<typeof outboxEvent>;

/**
 * Writes the entries to the service's `outbox_events` inside `tx`, the transaction that made the
 * change, so the events commit with it or not at all (the relay publishes them afterwards).
 * `data` goes in as JSON text: every key is kept, `__proto__` too, which Prisma's JSON writer drops.
 * With tracing on, each row keeps the change's `traceparent`: its deliveries' spans link to it.
 */
export async function recordOutboxEvents(tx: SqlClient, entries: OutboxEntry[], now = new Date()): Promise<OutboxEvent[]> {
  if (entries.length === 0) return [];
  const events = entries.map((entry) => outboxEvent(entry.type, entry.workspaceId, entry.data, now));
  await tx.$executeRawUnsafe(
    `INSERT INTO "outbox_events" ("id", "workspace_id", "type", "data", "created_at", "traceparent")
     SELECT e."id", e."workspace_id"::uuid, e."type", e."data"::jsonb, $5::timestamptz, $6::text
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS e("id", "workspace_id", "type", "data", "n")
      ORDER BY e."n"`,
    events.map((e) => e.id),
    events.map((e) => e.workspaceId),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.data)),
    now,
    currentTraceparent() ?? null,
  );
  return events;
}
