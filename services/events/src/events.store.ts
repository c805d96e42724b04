import { afterCursor, LIST_ORDER, workspaceScoped, type Cursor, type WorkspaceId } from '@platform/core';
import { recordOutboxEvents, webhooksStore } from '@platform/webhooks';
import type { Database } from './database';
import { renderTicket } from './events.render';
import type { Event, Ticket, TicketStatus } from './generated/prisma/client';

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

    /**
     * Prisma builds JSON values by assigning keys into a fresh object, which silently drops a
     * `__proto__` key; metadata holding one is written again as JSON text, exactly as sent.
     */
    createTicket(workspaceId: WorkspaceId, eventId: string, data: { holderName: string | null; metadata: Record<string, string> }): Promise<Ticket> {
      if (!Object.hasOwn(data.metadata, '__proto__')) return db.ticket.create({ data: { workspaceId, eventId, ...data } });
      return db.$transaction(async (tx) => {
        const ticket = await tx.ticket.create({ data: { workspaceId, eventId, ...data } });
        await tx.$executeRaw`UPDATE tickets SET metadata = ${JSON.stringify(data.metadata)}::jsonb WHERE id = ${ticket.id}::uuid`;
        return { ...ticket, metadata: data.metadata };
      });
    },

    listTickets(workspaceId: WorkspaceId, eventId: string, filter: { status?: TicketStatus; after?: Cursor; take: number }): Promise<Ticket[]> {
      return db.ticket.findMany({
        where: { workspaceId, eventId, ...(filter.status ? { status: filter.status } : {}), ...afterCursor(filter.after) },
        orderBy: [...LIST_ORDER],
        take: filter.take,
      });
    },

    findTicket(workspaceId: WorkspaceId, id: string): Promise<Ticket | null> {
      return db.ticket.findFirst({ where: { id, workspaceId } });
    },

    /**
     * Marks an issued ticket validated in one conditional UPDATE: of any number of concurrent
     * scans exactly one matches `status = 'issued'` (the others wait for its row lock, then match
     * nothing). Its ticket.validated outbox row commits in the same transaction. Returns the ticket
     * when this call won.
     */
    validateIfIssued(
      workspaceId: WorkspaceId,
      id: string,
      data: { eventId: string | null; gate: string | null; validatorId: string | null; validatedAt: Date },
    ): Promise<Ticket | null> {
      return db.$transaction(async (tx) => {
        const [ticket] = await tx.ticket.updateManyAndReturn({
          where: { id, workspaceId, status: 'issued', ...(data.eventId === null ? {} : { eventId: data.eventId }) },
          data: { status: 'validated', validatedAt: data.validatedAt, gate: data.gate, validatorId: data.validatorId },
        });
        if (!ticket) return null;
        await recordOutboxEvents(tx, [{ type: 'ticket.validated', workspaceId, data: renderTicket(ticket) }], data.validatedAt);
        return ticket;
      });
    },
  });
}
export type EventsStore = ReturnType<typeof eventsStore>;

/** The events service's stores over one client: what its app is given instead of the client. */
export function eventsServiceStores(db: Database) {
  return { events: eventsStore(db), webhooks: webhooksStore(db), ping: () => db.$queryRaw`SELECT 1` };
}
export type EventsServiceStores = ReturnType<typeof eventsServiceStores>;
