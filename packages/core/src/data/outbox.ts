import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `evt_` + 26 characters: a ULID (48-bit time, 80 random bits), so ids sort by creation. */
export function newEventId(now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let random = '';
  for (let i = 0; i < 16; i++) random += CROCKFORD[bytes[i]! % 32]!;
  return `evt_${time}${random}`;
}

/** Webhook event types (contract sections 11 and 18). */
export const EVENT_TYPES = [
  'ticket.validated',
  'ticket.unvalidated',
  'item.created',
  'item.updated',
  'item.location_changed',
  'item.stock_adjusted',
  'item.reorder_needed',
  'item.stock_transferred',
  'reservation.created',
  'reservation.committed',
  'reservation.released',
  'reservation.expired',
  'run.queued',
  'run.started',
  'run.succeeded',
  'run.failed',
  'run.cancelled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The row each service writes to its `outbox_events` table in the same transaction as the change
 * (`data` is the resource as the API renders it). A relay publishes rows whose `published_at` is null.
 *
 * Prisma model every service repeats in its schema:
 *   model OutboxEvent {
 *     id          String    @id
 *     workspaceId String    @map("workspace_id") @db.Uuid
 *     type        String
 *     data        Json
 *     createdAt   DateTime  @default(now()) @map("created_at") @db.Timestamptz(3)
 *     publishedAt DateTime? @map("published_at") @db.Timestamptz(3)
 *     traceparent String?
 *     @@index([publishedAt, createdAt])
 *     @@map("outbox_events")
 *   }
 */
export function outboxEvent(type: EventType, workspaceId: string, data: object, now = new Date()) {
  return { id: newEventId(now.getTime()), workspaceId, type, data: data as Record<string, unknown>, createdAt: now };
}
