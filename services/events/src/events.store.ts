import { afterCursor, afterPosition, LIST_ORDER, workspaceScoped, type Cursor, type WorkspaceId } from '@platform/core';
import { webhooksStore } from '@platform/webhooks';
import { checkinsStore, TICKET } from './checkins.store';
import type { Database } from './database';
import { Prisma, type Event, type Ticket, type TicketStatus } from './generated/prisma/client';

export type { Event, Ticket, TicketStatus };

/** A create refused because the workspace already keeps its limit of the kind: nothing was written. */
export interface LimitReached {
  kind: 'limit_reached';
}
export type CreateEventResult = { kind: 'created'; event: Event } | LimitReached;
export type CreateTicketResult = { kind: 'created'; ticket: Ticket } | LimitReached;

/** The workspace_usage columns, one per kind of record a workspace keeps. */
const USAGE_COLUMN = { events: Prisma.raw('"events"'), tickets: Prisma.raw('"tickets"') } as const;

/** An event row as raw SQL returns it, in the client's field names. */
const EVENT = Prisma.raw(
  `"id", "workspace_id" AS "workspaceId", "name", "starts_at" AS "startsAt", "ends_at" AS "endsAt", "created_at" AS "createdAt", "tickets_total" AS "ticketsTotal"`,
);

/**
 * A statement that counts one more `kind` for the workspace unless it already keeps `max` of them,
 * returning a row only when it counted: a create inserts from it (`WITH "counted" AS (...) INSERT
 * ... SELECT ... FROM "counted"`), so a refusal writes nothing, in one statement. Concurrent creates
 * of the workspace queue on its row until each one's transaction ends and each sees the count the
 * previous one left, so none passes the limit; the cost does not grow with what the workspace keeps.
 * The INSERT arm adds the workspace's first row, only when `max` allows one.
 */
function countOneMore(workspaceId: WorkspaceId, kind: keyof typeof USAGE_COLUMN, max: number): Prisma.Sql {
  const column = USAGE_COLUMN[kind];
  return Prisma.sql`
    INSERT INTO "workspace_usage" ("workspace_id", ${column}) SELECT ${workspaceId}::uuid, 1 WHERE ${max}::int > 0
    ON CONFLICT ("workspace_id") DO UPDATE SET ${column} = "workspace_usage".${column} + 1 WHERE "workspace_usage".${column} < ${max}::int
    RETURNING 1`;
}

/** Every query of the events service; each takes the workspace, so no query can forget it. */
export function eventsStore(db: Database) {
  return workspaceScoped({
    /** Creates the event unless the workspace already keeps `maxEvents` events (one statement, as cheap as the insert alone). */
    async createEvent(workspaceId: WorkspaceId, data: { name: string; startsAt: Date; endsAt: Date | null }, maxEvents: number): Promise<CreateEventResult> {
      const [event] = await db.$queryRaw<Event[]>`
        WITH "counted" AS (${countOneMore(workspaceId, 'events', maxEvents)})
        INSERT INTO "events" ("id", "workspace_id", "name", "starts_at", "ends_at")
        SELECT gen_random_uuid(), ${workspaceId}::uuid, ${data.name}::text, ${data.startsAt}::timestamptz, ${data.endsAt}::timestamptz FROM "counted"
        RETURNING ${EVENT}`;
      return event ? { kind: 'created', event } : { kind: 'limit_reached' };
    },

    findEvent(workspaceId: WorkspaceId, id: string): Promise<Event | null> {
      return db.event.findFirst({ where: { id, workspaceId } });
    },

    listEvents(workspaceId: WorkspaceId, page: { after?: Cursor; take: number }): Promise<Event[]> {
      return db.event.findMany({ where: { workspaceId, ...afterCursor(page.after) }, orderBy: [...LIST_ORDER], take: page.take });
    },

    /**
     * Issues a ticket unless the workspace already keeps `maxTickets` tickets over all its events, and
     * counts it in its event's `tickets_total`: one statement. The metadata goes in as JSON text,
     * exactly as sent (Prisma's JSON values would silently drop a `__proto__` key).
     */
    async createTicket(
      workspaceId: WorkspaceId,
      eventId: string,
      data: { holderName: string | null; metadata: Record<string, string> },
      maxTickets: number,
    ): Promise<CreateTicketResult> {
      const [ticket] = await db.$queryRaw<Ticket[]>`
        WITH "counted" AS (${countOneMore(workspaceId, 'tickets', maxTickets)}),
        "issued" AS (
          INSERT INTO "tickets" ("id", "workspace_id", "event_id", "holder_name", "metadata")
          SELECT gen_random_uuid(), ${workspaceId}::uuid, ${eventId}::uuid, ${data.holderName}::text, ${JSON.stringify(data.metadata)}::jsonb FROM "counted"
          RETURNING *),
        "total" AS (UPDATE "events" SET "tickets_total" = "tickets_total" + 1 WHERE "id" = ${eventId}::uuid AND EXISTS (SELECT 1 FROM "issued"))
        SELECT ${TICKET} FROM "issued" t`;
      return ticket ? { kind: 'created', ticket } : { kind: 'limit_reached' };
    },

    /**
     * An event's tickets: by default oldest first; with `updatedSince`, those changed after it in
     * (updated_at, id) order, `after` then being a position in that order.
     */
    listTickets(
      workspaceId: WorkspaceId,
      eventId: string,
      filter: { status?: TicketStatus; updatedSince?: Date; after?: Cursor; take: number },
    ): Promise<Ticket[]> {
      const where: Prisma.TicketWhereInput = { workspaceId, eventId, ...(filter.status ? { status: filter.status } : {}) };
      if (filter.updatedSince === undefined) {
        return db.ticket.findMany({ where: { ...where, ...afterCursor(filter.after) }, orderBy: [...LIST_ORDER], take: filter.take });
      }
      return db.ticket.findMany({
        where: { ...where, AND: [{ updatedAt: { gt: filter.updatedSince } }, afterPosition('updatedAt', filter.after)] },
        orderBy: [{ updatedAt: 'asc' }, { id: 'asc' }],
        take: filter.take,
      });
    },

    findTicket(workspaceId: WorkspaceId, id: string): Promise<Ticket | null> {
      return db.ticket.findFirst({ where: { id, workspaceId } });
    },
  });
}
export type EventsStore = ReturnType<typeof eventsStore>;

/** The events service's stores over one client: what its app is given instead of the client. */
export function eventsServiceStores(db: Database) {
  return { events: eventsStore(db), checkins: checkinsStore(db), webhooks: webhooksStore(db), ping: () => db.$queryRaw`SELECT 1` };
}
export type EventsServiceStores = ReturnType<typeof eventsServiceStores>;
