import { conflict, invalidRequest, notFound, quotaExceeded, timestamp, type SeriesWindow, type WorkspaceId } from '@platform/core';
import type { EventsLimits } from './config';
import { firstOfEachScanId, type Attempt, type CheckinBucketRow, type EventFigures, type ScanInput, type ScanResult } from './checkins';
import type { CheckinsStore } from './checkins.store';
import type { Event as EventRow, EventsStore, Ticket as TicketRow } from './events.store';

export { renderCheckin, renderCheckinSeries, renderEvent, renderScanResult, renderStats, renderTicket, renderValidation } from './events.render';

/** Creates an event within the workspace's limit: 409 quota_exceeded (`quota: "events"`) once it keeps `limits.events`. */
export async function createEvent(
  store: EventsStore,
  workspaceId: WorkspaceId,
  input: { name: string; startsAt: Date; endsAt: Date | null },
  limits: EventsLimits,
): Promise<EventRow> {
  if (input.endsAt && input.endsAt < input.startsAt) {
    throw invalidRequest([{ in: 'body', field: 'ends_at', code: 'invalid_range', message: 'must not be before starts_at' }]);
  }
  const result = await store.createEvent(workspaceId, input, limits.events);
  if (result.kind === 'limit_reached') throw quotaExceeded('events', limits.events);
  return result.event;
}

export async function getEvent(store: EventsStore, workspaceId: WorkspaceId, id: string): Promise<EventRow> {
  const event = await store.findEvent(workspaceId, id);
  if (!event) throw notFound('Event');
  return event;
}

/**
 * Issues a ticket of an event of the workspace (404 otherwise) within the workspace's limit, over all
 * its events: 409 quota_exceeded (`quota: "tickets"`) once it keeps `limits.tickets`.
 */
export async function issueTicket(
  store: EventsStore,
  workspaceId: WorkspaceId,
  eventId: string,
  input: { holderName: string | null; metadata: Record<string, string> },
  limits: EventsLimits,
): Promise<TicketRow> {
  await getEvent(store, workspaceId, eventId);
  const result = await store.createTicket(workspaceId, eventId, input, limits.tickets);
  if (result.kind === 'limit_reached') throw quotaExceeded('tickets', limits.tickets);
  return result.ticket;
}

export async function getTicket(store: EventsStore, workspaceId: WorkspaceId, id: string): Promise<TicketRow> {
  const ticket = await store.findTicket(workspaceId, id);
  if (!ticket) throw notFound('Ticket');
  return ticket;
}

/**
 * Validates a ticket exactly once (the store's conditional update decides). Otherwise: unknown
 * (404), issued for another event (400), or already validated (409 with the original
 * validation; the refused attempt is in the ticket's history).
 */
export async function validateTicket(store: CheckinsStore, workspaceId: WorkspaceId, ticketId: string, attempt: Attempt, now = new Date()): Promise<TicketRow> {
  const result = await store.validate(workspaceId, ticketId, attempt, now);
  switch (result.outcome) {
    case 'validated':
      return result.ticket;
    case 'not_found':
      throw notFound('Ticket');
    case 'wrong_event':
      throw invalidRequest([{ in: 'body', field: 'event_id', code: 'wrong_event', message: 'the ticket is valid for another event' }]);
    case 'already_validated':
      throw conflict('Ticket already validated.', {
        ticket_id: result.ticket.id,
        validated_at: timestamp(result.ticket.validatedAt),
        validator_id: result.ticket.validatorId,
        gate: result.ticket.gate,
      });
  }
}

/** Undoes a validation (the ticket can be validated again); 409 `not_validated` for a ticket that is not validated. */
export async function unvalidateTicket(store: CheckinsStore, workspaceId: WorkspaceId, ticketId: string, reason: string, now = new Date()): Promise<TicketRow> {
  const result = await store.unvalidate(workspaceId, ticketId, reason, now);
  if (result.outcome === 'not_found') throw notFound('Ticket');
  if (result.outcome === 'not_validated') {
    throw conflict('Ticket is not validated.', undefined, [{ in: 'path', field: 'id', code: 'not_validated', message: 'the ticket is not validated' }]);
  }
  return result.ticket;
}

/**
 * One upload of offline scans to an event of the workspace: each scan's result in request order.
 * A scan_id sent twice (in this upload or before) answers what was recorded the first time.
 */
export async function uploadScans(
  events: EventsStore,
  checkins: CheckinsStore,
  workspaceId: WorkspaceId,
  eventId: string,
  scans: ScanInput[],
): Promise<ScanResult[]> {
  await getEvent(events, workspaceId, eventId);
  const recorded = await checkins.upload(workspaceId, eventId, firstOfEachScanId(scans));
  return scans.map((scan) => recorded.get(scan.scanId)!);
}

/** The event's live figures. */
export async function eventFigures(store: CheckinsStore, workspaceId: WorkspaceId, eventId: string): Promise<EventFigures> {
  const figures = await store.figures(workspaceId, eventId);
  if (!figures) throw notFound('Event');
  return figures;
}

/** The event's check-ins per bucket of the window and gate (404 for an unknown event). */
export async function checkinSeries(
  events: EventsStore,
  checkins: CheckinsStore,
  workspaceId: WorkspaceId,
  eventId: string,
  window: SeriesWindow,
): Promise<CheckinBucketRow[]> {
  await getEvent(events, workspaceId, eventId);
  return checkins.series(workspaceId, eventId, window);
}
