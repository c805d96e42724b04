import { conflict, invalidRequest, notFound, timestamp, type WorkspaceId } from '@platform/core';
import type { Event as EventRow, EventsStore, Ticket as TicketRow } from './events.store';

export { renderEvent, renderTicket, renderValidation } from './events.render';

export async function createEvent(
  store: EventsStore,
  workspaceId: WorkspaceId,
  input: { name: string; startsAt: Date; endsAt: Date | null },
): Promise<EventRow> {
  if (input.endsAt && input.endsAt < input.startsAt) {
    throw invalidRequest([{ in: 'body', field: 'ends_at', code: 'invalid_range', message: 'must not be before starts_at' }]);
  }
  return store.createEvent(workspaceId, input);
}

export async function getEvent(store: EventsStore, workspaceId: WorkspaceId, id: string): Promise<EventRow> {
  const event = await store.findEvent(workspaceId, id);
  if (!event) throw notFound('Event');
  return event;
}

export async function issueTicket(
  store: EventsStore,
  workspaceId: WorkspaceId,
  eventId: string,
  input: { holderName: string | null; metadata: Record<string, string> },
): Promise<TicketRow> {
  await getEvent(store, workspaceId, eventId);
  return store.createTicket(workspaceId, eventId, input);
}

export async function getTicket(store: EventsStore, workspaceId: WorkspaceId, id: string): Promise<TicketRow> {
  const ticket = await store.findTicket(workspaceId, id);
  if (!ticket) throw notFound('Ticket');
  return ticket;
}

export interface Scan {
  eventId: string | null;
  gate: string | null;
  validatorId: string | null;
}

/**
 * Validates a ticket exactly once. The conditional update decides the winner; a loser reads the
 * ticket only to explain why: unknown (404), already validated (409 with the original
 * validation), or issued for another event (400).
 */
export async function validateTicket(store: EventsStore, workspaceId: WorkspaceId, ticketId: string, scan: Scan, now = new Date()): Promise<TicketRow> {
  const won = await store.validateIfIssued(workspaceId, ticketId, { ...scan, validatedAt: now });
  if (won) return won;
  const ticket = await store.findTicket(workspaceId, ticketId);
  if (!ticket) throw notFound('Ticket');
  if (ticket.status === 'validated') {
    throw conflict('Ticket already validated.', {
      ticket_id: ticket.id,
      validated_at: timestamp(ticket.validatedAt),
      validator_id: ticket.validatorId,
      gate: ticket.gate,
    });
  }
  throw invalidRequest([{ in: 'body', field: 'event_id', code: 'wrong_event', message: 'the ticket is valid for another event' }]);
}
