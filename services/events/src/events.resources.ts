import { z } from 'zod';
import { listOf, Uuid, UtcTimestamp } from '@platform/core';

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
      },
    ],
  });
export type Ticket = z.infer<typeof Ticket>;

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

export const EXAMPLE_IDS = { event: EXAMPLE_EVENT_ID, ticket: EXAMPLE_TICKET_ID, validator: EXAMPLE_VALIDATOR_ID };
