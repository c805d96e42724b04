import { afterCursor, afterPosition, LIST_ORDER, workspaceScoped, type Cursor, type WorkspaceId } from '@platform/core';
import { webhooksStore } from '@platform/webhooks';
import { checkinsStore } from './checkins.store';
import type { Database } from './database';
import type { Event, Prisma, Ticket, TicketStatus } from './generated/prisma/client';

export type { Event, Ticket, TicketStatus };

/** Every query of the events service; each takes the workspace, so no query can forget it. */
export function eventsStore(db: Database) {
  return workspaceScoped({
    createEvent(workspaceId: WorkspaceId, data: { name: string; startsAt: Date; endsAt: Date | null }): Promise<Event> {
      return db.event.create({ data: { workspaceId, ...data } });
    },

    findEvent(workspaceId: WorkspaceId, id: string): Promise<Event | null> {
      return db.event.findFirst({ where: { id, workspaceId } });
    },

    listEvents(workspaceId: WorkspaceId, page: { after?: Cursor; take: number }): Promise<Event[]> {
      return db.event.findMany({ where: { workspaceId, ...afterCursor(page.after) }, orderBy: [...LIST_ORDER], take: page.take });
    },

    /**
     * Issues a ticket and counts it in its event's `tickets_total` in one transaction. Prisma
     * builds JSON values by assigning keys into a fresh object, which silently drops a
     * `__proto__` key; metadata holding one is written again as JSON text, exactly as sent.
     */
    createTicket(workspaceId: WorkspaceId, eventId: string, data: { holderName: string | null; metadata: Record<string, string> }): Promise<Ticket> {
      return db.$transaction(async (tx) => {
        const ticket = await tx.ticket.create({ data: { workspaceId, eventId, ...data } });
        await tx.$executeRaw`UPDATE events SET tickets_total = tickets_total + 1 WHERE id = ${eventId}::uuid`;
        if (!Object.hasOwn(data.metadata, '__proto__')) return ticket;
        await tx.$executeRaw`UPDATE tickets SET metadata = ${JSON.stringify(data.metadata)}::jsonb WHERE id = ${ticket.id}::uuid`;
        return { ...ticket, metadata: data.metadata };
      });
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
