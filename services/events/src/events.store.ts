import { afterCursor, LIST_ORDER, type Cursor, type WorkspaceId } from '@platform/core';
import type { Database } from './database';
import type { Event, Ticket, TicketStatus } from './generated/prisma/client';

export type { Event, Ticket, TicketStatus };

/** Every query of the events service; each takes the workspace, so no query can forget it. */
export function eventsStore(db: Database) {
  return {
    createEvent(workspaceId: WorkspaceId, data: { name: string; startsAt: Date; endsAt: Date | null }): Promise<Event> {
      return db.event.create({ data: { workspaceId, ...data } });
    },

    findEvent(workspaceId: WorkspaceId, id: string): Promise<Event | null> {
      return db.event.findFirst({ where: { id, workspaceId } });
    },

    createTicket(workspaceId: WorkspaceId, eventId: string, data: { holderName: string | null; metadata: Record<string, string> }): Promise<Ticket> {
      return db.ticket.create({ data: { workspaceId, eventId, ...data } });
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
     * scans exactly one matches `status = 'issued'`. Returns the ticket when this call won.
     */
    async validateIfIssued(
      workspaceId: WorkspaceId,
      id: string,
      data: { eventId: string | null; gate: string | null; validatorId: string | null; validatedAt: Date },
    ): Promise<Ticket | null> {
      const rows = await db.$queryRaw<
        { id: string; event_id: string; holder_name: string | null; metadata: unknown; validated_at: Date; validator_id: string | null; gate: string | null; created_at: Date }[]
      >`UPDATE "tickets"
           SET "status" = 'validated', "validated_at" = ${data.validatedAt}, "gate" = ${data.gate}, "validator_id" = ${data.validatorId}::uuid
         WHERE "id" = ${id}::uuid AND "workspace_id" = ${workspaceId}::uuid AND "status" = 'issued'
           AND (${data.eventId}::uuid IS NULL OR "event_id" = ${data.eventId}::uuid)
         RETURNING "id", "event_id", "holder_name", "metadata", "validated_at", "validator_id", "gate", "created_at"`;
      const row = rows[0];
      if (!row) return null;
      return {
        id: row.id,
        workspaceId,
        eventId: row.event_id,
        holderName: row.holder_name,
        metadata: row.metadata as Ticket['metadata'],
        status: 'validated',
        validatedAt: row.validated_at,
        validatorId: row.validator_id,
        gate: row.gate,
        createdAt: row.created_at,
      };
    },
  };
}
export type EventsStore = ReturnType<typeof eventsStore>;
