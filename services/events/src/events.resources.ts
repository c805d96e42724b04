import { z } from 'zod';
import { listOf, seriesOf, Uuid, UtcTimestamp } from '@platform/core';

/**
 * The events service's resources as the API returns them (contract section 8). The render
 * functions are typed against these schemas and the API reference is generated from them.
 */

const EXAMPLE_EVENT_ID = '0f8e6c1a-3d2b-4a5c-9e7f-1a2b3c4d5e6f';
const EXAMPLE_TICKET_ID = '5b7d9f1e-2c4a-4e6b-8d0f-3a5c7e9b1d2f';
const EXAMPLE_VALIDATOR_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

export const Event = z
  .object({
    id: Uuid,
    name: z.string(),
    starts_at: UtcTimestamp,
    ends_at: UtcTimestamp.nullable(),
    created_at: UtcTimestamp,
  })
  .meta({
    id: 'Event',
    description: 'An event that tickets are issued for.',
    examples: [
      {
        id: EXAMPLE_EVENT_ID,
        name: 'Open Air 2025',
        starts_at: '2025-06-01T18:00:00.000Z',
        ends_at: '2025-06-01T23:00:00.000Z',
        created_at: '2024-12-01T09:30:00.000Z',
      },
    ],
  });
export type Event = z.infer<typeof Event>;

export const TicketStatus = z.enum(['issued', 'validated']);

export const Ticket = z
  .object({
    id: Uuid,
    event_id: Uuid,
    status: TicketStatus,
    holder_name: z.string().nullable(),
    metadata: z.record(z.string(), z.string()).meta({ description: 'The metadata the ticket was issued with (at most 20 keys).' }),
    validated_at: UtcTimestamp.nullable(),
    validator_id: Uuid.nullable(),
    gate: z.string().nullable(),
    created_at: UtcTimestamp,
    updated_at: UtcTimestamp.meta({ description: 'Its last validation or reversal; its creation until then. `updated_since` lists by it.' }),
  })
  .meta({
    id: 'Ticket',
    description: 'A ticket of an event; `validated_at`, `validator_id` and `gate` describe its validation once it is `validated`.',
    examples: [
      {
        id: EXAMPLE_TICKET_ID,
        event_id: EXAMPLE_EVENT_ID,
        status: 'issued',
        holder_name: 'Ada Lovelace',
        metadata: { seat: 'A-12' },
        validated_at: null,
        validator_id: null,
        gate: null,
        created_at: '2024-12-01T09:31:00.000Z',
        updated_at: '2024-12-01T09:31:00.000Z',
      },
    ],
  });
export type Ticket = z.infer<typeof Ticket>;

/** `data` of `ticket.unvalidated`: the ticket as the API returns it, plus the reason given. */
export const UnvalidatedTicket = Ticket.extend({ reason: z.string() }).meta({
  id: 'UnvalidatedTicket',
  description: 'The ticket, `issued` again, and why its validation was undone.',
});

export const EventList = listOf(Event, 'EventList');
export const TicketList = listOf(Ticket, 'TicketList');

/** The answer of a successful validation. */
export const Validation = z
  .object({
    ticket_id: Uuid,
    event_id: Uuid,
    status: z.literal('validated'),
    validated_at: UtcTimestamp,
    gate: z.string().nullable(),
    validator_id: Uuid.nullable(),
  })
  .meta({
    id: 'Validation',
    description: 'The validation of a ticket: exactly one call validates it.',
    examples: [
      {
        ticket_id: EXAMPLE_TICKET_ID,
        event_id: EXAMPLE_EVENT_ID,
        status: 'validated',
        validated_at: '2025-06-01T18:05:12.345Z',
        gate: 'north-1',
        validator_id: EXAMPLE_VALIDATOR_ID,
      },
    ],
  });
export type Validation = z.infer<typeof Validation>;

/** The original validation, beside `code` in a 409 of POST /tickets/{id}/validate. */
export const ALREADY_VALIDATED_EXAMPLE = {
  code: 'conflict' as const,
  message: 'Ticket already validated.',
  ticket_id: EXAMPLE_TICKET_ID,
  validated_at: '2025-06-01T18:05:12.345Z',
  validator_id: EXAMPLE_VALIDATOR_ID,
  gate: 'north-1',
};

export const ScanStatus = z.enum(['validated', 'already_validated', 'not_found', 'wrong_event']);

/** What one offline scan did, recorded the first time its scan_id arrived. */
export const ScanResult = z
  .object({
    scan_id: z.string(),
    ticket_id: Uuid,
    status: ScanStatus.meta({
      description:
        '`validated`: this scan validated the ticket (`validated_at` is its `scanned_at`); `already_validated`: another scan or call validated it first ' +
        "(the fields are that validation's); `not_found`: no such ticket in the workspace; `wrong_event`: a ticket of another event.",
    }),
    validated_at: UtcTimestamp.nullable(),
    validator_id: Uuid.nullable(),
    gate: z.string().nullable(),
  })
  .meta({ id: 'ScanResult', description: "One scan's result; the fields are null for `not_found` and `wrong_event`." });
export type ScanResult = z.infer<typeof ScanResult>;

export const ScanResults = z.object({ results: z.array(ScanResult).meta({ description: 'One per scan, in request order.' }) }).meta({
  id: 'ScanResults',
  examples: [
    {
      results: [
        {
          scan_id: 'north-1-000042',
          ticket_id: EXAMPLE_TICKET_ID,
          status: 'validated',
          validated_at: '2025-06-01T18:05:12.345Z',
          validator_id: EXAMPLE_VALIDATOR_ID,
          gate: 'north-1',
        },
      ],
    },
  ],
});
export type ScanResults = z.infer<typeof ScanResults>;

export const CheckinAction = z.enum(['validated', 'unvalidated', 'rejected_duplicate']);

export const Checkin = z
  .object({
    id: Uuid,
    ticket_id: Uuid,
    action: CheckinAction,
    at: UtcTimestamp.meta({ description: "A scan's `scanned_at`; the request's time otherwise." }),
    gate: z.string().nullable(),
    validator_id: Uuid.nullable(),
    scan_id: z.string().nullable(),
    reason: z.string().nullable().meta({ description: 'Why a validation was undone (`unvalidated` only).' }),
  })
  .meta({
    id: 'Checkin',
    description: 'One check-in attempt of a ticket: a validation, a reversal, or a refused duplicate with its own gate, validator and scan id.',
    examples: [
      {
        id: '0193a8f2-4c3b-7000-8000-000000000042',
        ticket_id: EXAMPLE_TICKET_ID,
        action: 'rejected_duplicate',
        at: '2025-06-01T18:07:40.120Z',
        gate: 'south-2',
        validator_id: EXAMPLE_VALIDATOR_ID,
        scan_id: 'south-2-000007',
        reason: null,
      },
    ],
  });
export type Checkin = z.infer<typeof Checkin>;

export const CheckinList = listOf(Checkin, 'CheckinList');

export const EventStats = z
  .object({
    event_id: Uuid,
    tickets: z.object({
      total: z.number().int(),
      issued: z.number().int(),
      validated: z.number().int(),
    }),
    gates: z
      .array(z.object({ gate: z.string().nullable().meta({ description: 'null: validations without a gate.' }), validated: z.number().int() }))
      .meta({ description: 'Each gate with at least one current validation, by name (no gate last).' }),
    rejected_duplicates: z.number().int().meta({ description: 'Refused duplicate validations and scans, all gates.' }),
    as_of: UtcTimestamp.meta({ description: 'The instant the figures are consistent with the tickets at.' }),
  })
  .meta({
    id: 'EventStats',
    description: "An event's live check-in figures.",
    examples: [
      {
        event_id: EXAMPLE_EVENT_ID,
        tickets: { total: 1200, issued: 388, validated: 812 },
        gates: [
          { gate: 'north-1', validated: 530 },
          { gate: 'south-2', validated: 282 },
        ],
        rejected_duplicates: 17,
        as_of: '2025-06-01T19:02:03.456Z',
      },
    ],
  });
export type EventStats = z.infer<typeof EventStats>;

const checkinCounts = {
  validated: z.int().min(0).meta({ description: 'Validations (online and by offline scans).' }),
  unvalidated: z.int().min(0).meta({ description: 'Validations undone.' }),
  rejected_duplicates: z.int().min(0).meta({ description: 'Refused duplicate validations and scans.' }),
};

/** An event's check-ins over time (decision 0016). */
export const CheckinSeries = seriesOf(
  'EventCheckinSeries',
  "An event's check-ins per bucket by action, in total and per gate, counted by each check-in's `at` (a scan's `scanned_at`, the request's time otherwise).",
  { event_id: Uuid },
  {
    ...checkinCounts,
    gates: z
      .array(z.object({ gate: z.string().nullable().meta({ description: 'null: check-ins without a gate.' }), ...checkinCounts }))
      .meta({ description: 'Every gate with a check-in anywhere in the range, in every bucket (zeros included), by name; no gate last.' }),
  },
  {
    event_id: EXAMPLE_EVENT_ID,
    interval: 'hour',
    from: '2025-06-01T18:00:00.000Z',
    to: '2025-06-01T20:00:00.000Z',
    buckets: [
      {
        start: '2025-06-01T18:00:00.000Z',
        validated: 412,
        unvalidated: 1,
        rejected_duplicates: 6,
        gates: [
          { gate: 'north-1', validated: 250, unvalidated: 1, rejected_duplicates: 4 },
          { gate: 'south-2', validated: 162, unvalidated: 0, rejected_duplicates: 2 },
        ],
      },
      {
        start: '2025-06-01T19:00:00.000Z',
        validated: 0,
        unvalidated: 0,
        rejected_duplicates: 0,
        gates: [
          { gate: 'north-1', validated: 0, unvalidated: 0, rejected_duplicates: 0 },
          { gate: 'south-2', validated: 0, unvalidated: 0, rejected_duplicates: 0 },
        ],
      },
    ],
  },
);
export type CheckinSeries = z.infer<typeof CheckinSeries>;

export const EXAMPLE_IDS = { event: EXAMPLE_EVENT_ID, ticket: EXAMPLE_TICKET_ID, validator: EXAMPLE_VALIDATOR_ID };
