import { afterCursor, LIST_ORDER, newEventId, type Cursor, type WorkspaceId } from '@platform/core';
import { Prisma } from './generated/prisma/client';
import type { Database } from './database';
import type { Event, Ticket, TicketStatus } from './generated/prisma/client';

export type { Event, Ticket, TicketStatus };

/** SQL rendering a timestamptz column as the API does: RFC 3339 UTC with milliseconds. */
function RFC3339(column: string): Prisma.Sql {
  return Prisma.raw(`to_char("${column}" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
}

/** Every query of the events service; each takes the workspace, so no query can forget it. */
export function eventsStore(db: Database) {
  return {
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
     * scans exactly one matches `status = 'issued'`. Returns the ticket when this call won.
     */
    async validateIfIssued(
      workspaceId: WorkspaceId,
      id: string,
      data: { eventId: string | null; gate: string | null; validatorId: string | null; validatedAt: Date },
    ): Promise<Ticket | null> {
      const eventId = newEventId(data.validatedAt.getTime());
      // One statement: the conditional update and its ticket.validated outbox row commit together.
      const rows = await db.$queryRaw<
        { id: string; event_id: string; holder_name: string | null; metadata: unknown; validated_at: Date; validator_id: string | null; gate: string | null; created_at: Date }[]
      >`WITH validated AS (
          UPDATE "tickets"
             SET "status" = 'validated', "validated_at" = ${data.validatedAt}, "gate" = ${data.gate}, "validator_id" = ${data.validatorId}::uuid
           WHERE "id" = ${id}::uuid AND "workspace_id" = ${workspaceId}::uuid AND "status" = 'issued'
             AND (${data.eventId}::uuid IS NULL OR "event_id" = ${data.eventId}::uuid)
          RETURNING "id", "workspace_id", "event_id", "holder_name", "metadata", "validated_at", "validator_id", "gate", "created_at"
        ), recorded AS (
          INSERT INTO "outbox_events" ("id", "workspace_id", "type", "data", "created_at")
          SELECT ${eventId}, "workspace_id", 'ticket.validated', jsonb_build_object(
                   'id', "id", 'event_id', "event_id", 'status', 'validated', 'holder_name', "holder_name",
                   'metadata', "metadata", 'validated_at', ${RFC3339('validated_at')}, 'validator_id', "validator_id",
                   'gate', "gate", 'created_at', ${RFC3339('created_at')}), "validated_at"
            FROM validated
        )
        SELECT "id", "event_id", "holder_name", "metadata", "validated_at", "validator_id", "gate", "created_at" FROM validated`;
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
