import { timestamp } from '@platform/core';
import type { Event as EventRow, Ticket as TicketRow } from './generated/prisma/client';
import type { Event, Ticket, Validation } from './events.resources';

type Metadata = Ticket['metadata'];

/** An event as the API returns it. */
export function renderEvent(event: EventRow): Event {
  return {
    id: event.id,
    name: event.name,
    starts_at: timestamp(event.startsAt),
    ends_at: timestamp(event.endsAt),
    created_at: timestamp(event.createdAt),
  };
}

/** A ticket as the API returns it (contract section 8, plus the metadata it was issued with). */
export function renderTicket(ticket: TicketRow): Ticket {
  return {
    id: ticket.id,
    event_id: ticket.eventId,
    status: ticket.status,
    holder_name: ticket.holderName,
    // Written only from the validated IssueTicketBody: a flat map of strings.
    metadata: ticket.metadata as Metadata,
    validated_at: timestamp(ticket.validatedAt),
    validator_id: ticket.validatorId,
    gate: ticket.gate,
    created_at: timestamp(ticket.createdAt),
  };
}

/** The 200 body of a validation; `ticket` is the one validateTicket returned, so it has its validation time. */
export function renderValidation(ticket: TicketRow): Validation {
  return {
    ticket_id: ticket.id,
    event_id: ticket.eventId,
    status: 'validated',
    validated_at: timestamp(ticket.validatedAt!),
    gate: ticket.gate,
    validator_id: ticket.validatorId,
  };
}
