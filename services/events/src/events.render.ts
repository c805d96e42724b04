import { seriesFrame, timestamp, type SeriesWindow } from '@platform/core';
import type { Checkin as CheckinRow, Event as EventRow, Ticket as TicketRow } from './generated/prisma/client';
import type { Checkin, CheckinSeries, Event, EventStats, ScanResult, Ticket, Validation } from './events.resources';
import type { CheckinBucketRow, EventFigures, ScanResult as ScanResultRow } from './checkins';

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
    updated_at: timestamp(ticket.updatedAt),
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

/** A scan's result as an upload answers it (the same bytes on every replay). */
export function renderScanResult(result: ScanResultRow): ScanResult {
  return {
    scan_id: result.scanId,
    ticket_id: result.ticketId,
    status: result.status,
    validated_at: timestamp(result.validatedAt),
    validator_id: result.validatorId,
    gate: result.gate,
  };
}

/** One entry of a ticket's check-in history. */
export function renderCheckin(checkin: CheckinRow): Checkin {
  return {
    id: checkin.id,
    ticket_id: checkin.ticketId,
    action: checkin.action,
    at: timestamp(checkin.createdAt),
    gate: checkin.gate,
    validator_id: checkin.validatorId,
    scan_id: checkin.scanId,
    reason: checkin.reason,
  };
}

/** An event's live figures; a counter row's gate '' is the gate null of the API. */
export function renderStats(eventId: string, figures: EventFigures): EventStats {
  const validated = figures.gates.reduce((sum, entry) => sum + entry.validated, 0);
  return {
    event_id: eventId,
    tickets: { total: figures.ticketsTotal, issued: figures.ticketsTotal - validated, validated },
    gates: figures.gates.map((entry) => ({ gate: entry.gate === '' ? null : entry.gate, validated: entry.validated })),
    rejected_duplicates: figures.rejectedDuplicates,
    as_of: timestamp(figures.asOf),
  };
}

/** An event's check-in series: the store's rows (one per bucket and gate, in order) grouped into buckets with their totals. */
export function renderCheckinSeries(eventId: string, window: SeriesWindow, rows: CheckinBucketRow[]): CheckinSeries {
  const buckets: CheckinSeries['buckets'] = [];
  for (const row of rows) {
    const start = timestamp(row.start);
    let bucket = buckets[buckets.length - 1];
    if (bucket?.start !== start) buckets.push((bucket = { start, validated: 0, unvalidated: 0, rejected_duplicates: 0, gates: [] }));
    if (row.gate === null) continue;
    const counts = { validated: row.validated, unvalidated: row.unvalidated, rejected_duplicates: row.rejectedDuplicates };
    bucket.gates.push({ gate: row.gate === '' ? null : row.gate, ...counts });
    bucket.validated += counts.validated;
    bucket.unvalidated += counts.unvalidated;
    bucket.rejected_duplicates += counts.rejected_duplicates;
  }
  return { event_id: eventId, ...seriesFrame(window), buckets };
}
