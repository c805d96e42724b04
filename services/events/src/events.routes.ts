import { z } from 'zod';
import {
  codePointString,
  type Cursor,
  DEFAULT_WORKSPACE_LIMITS,
  limitExceededDoc,
  ListQuery,
  pageOf,
  resource,
  route,
  SeriesQuery,
  type RouteDeclaration,
  type RouteDefinition,
  type RoutesOf,
  Slug,
  stringMap,
  Timestamp,
  Uuid,
  type WebhookRouteKey,
} from '@platform/core';
import { webhookRouteDeclarations } from '@platform/webhooks';
import type { CheckinsStore } from './checkins.store';
import type { EventsLimits } from './config';
import {
  ALREADY_VALIDATED_EXAMPLE,
  CheckinList,
  CheckinSeries,
  Event,
  EventList,
  EventStats,
  EXAMPLE_IDS,
  ScanResults,
  Ticket,
  TicketList,
  TicketStatus,
  Validation,
} from './events.resources';
import type { EventsStore } from './events.store';
import {
  checkinSeries,
  createEvent,
  eventFigures,
  getEvent,
  getTicket,
  issueTicket,
  renderCheckin,
  renderCheckinSeries,
  renderEvent,
  renderScanResult,
  renderStats,
  renderTicket,
  renderValidation,
  unvalidateTicket,
  uploadScans,
  validateTicket,
} from './events.service';

const IdParams = z.object({ id: Uuid });

/** A platform limit's default as the documents write it: `10,000`. */
const defaultLimit = (name: 'events' | 'tickets') => DEFAULT_WORKSPACE_LIMITS[name].toLocaleString('en-US');

export const CreateEventBody = z.strictObject({
  name: codePointString(1, 200),
  starts_at: Timestamp.meta({ description: 'RFC 3339 with an offset; answered in UTC.' }),
  ends_at: Timestamp.nullable().optional().meta({ description: 'Not before `starts_at`.' }),
});

/** Ticket metadata follows the rules of item metadata (contract section 8); every key is kept as sent. */
export const TicketMetadata = stringMap(codePointString(0, 500), { keyLength: { min: 1, max: 500 }, maxKeys: 20 }).meta({
  description: 'At most 20 keys of 1-500 characters; values of at most 500 characters.',
});

export const IssueTicketBody = z.strictObject({
  holder_name: codePointString(1, 200).nullable().optional(),
  metadata: TicketMetadata.optional(),
});

export const ListTicketsQuery = ListQuery.extend({
  status: TicketStatus.optional().meta({ description: 'Only tickets in this status.' }),
  updated_since: Timestamp.optional().meta({
    description:
      'Only tickets changed (issued, validated or undone) after this instant, in (`updated_at`, `id`) order: an offline scanner downloads the list once, ' +
      'then asks for the changes since the newest `updated_at` it holds. A change commits a few milliseconds after its `updated_at`; ask with a margin ' +
      '(we suggest 5 s before the newest `updated_at` held): a ticket seen twice is harmless.',
  }),
});

const Gate = Slug.pipe(codePointString(1, 64)).nullable().optional().meta({ description: 'The entrance, a slug such as `north-1`.' });
const ValidatorId = Uuid.nullable().optional().meta({ description: 'Who or what scanned the ticket.' });

export const ValidateTicketBody = z.strictObject({
  gate: Gate,
  validator_id: ValidatorId,
  event_id: Uuid.nullable().optional().meta({ description: 'The event whose entrance scans; a ticket of another event is refused with 400 `wrong_event`.' }),
});

/** How far ahead of the platform's clock a scanner's clock may run. */
const SCANNED_AT_MAX_AHEAD_MS = 5 * 60_000;

export const OfflineScan = z.strictObject({
  scan_id: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[\x21-\x7e]+$/, 'must be visible ASCII characters')
    .meta({ description: 'Chosen by the scanner, unique per event: 1-64 visible ASCII characters. Sent again, it gets the result recorded the first time.' }),
  ticket_id: Uuid,
  scanned_at: Timestamp.refine((at) => at.getTime() <= Date.now() + SCANNED_AT_MAX_AHEAD_MS, {
    message: 'must be at most 5 minutes in the future',
    params: { code: 'invalid_range' },
  }).meta({
    description: 'When the scanner scanned the ticket (RFC 3339), at most 5 minutes in the future; a validation by this scan has it as `validated_at`.',
  }),
  gate: Gate,
  validator_id: ValidatorId,
});

export const UploadScansBody = z.strictObject({
  scans: z.array(OfflineScan).min(1).max(500).meta({ description: '1-500 scans.' }),
});

export const UnvalidateTicketBody = z.strictObject({
  reason: codePointString(1, 500).meta({ description: 'Why the validation is undone (1-500 characters), kept in the history.' }),
});

const event = resource({ name: 'event', params: IdParams, schema: Event });
const ticket = resource({ name: 'ticket', params: IdParams, schema: Ticket });

/** What each route of the events service takes and answers (no handlers): the definitions below validate it, the OpenAPI document describes it. */
export const eventsRouteDeclarations = {
  ...webhookRouteDeclarations,
  'POST /events': {
    body: CreateEventBody,
    docs: {
      operationId: 'createEvent',
      summary: 'Create an event',
      responses: { 201: { description: 'The event.', schema: Event } },
      errors: {
        400: '`ends_at` before `starts_at` (`errors[0].code: invalid_range`).',
        409: limitExceededDoc(
          `The workspace already keeps as many events as the platform allows one workspace (\`EVENTS_WORKSPACE_MAX_EVENTS\`, ${defaultLimit('events')} unless configured; ` +
            '`errors[0] = { in: "body", field: "", code: "quota_exceeded" }`, `error.quota: "events"`, `error.limit` its value); nothing was created.',
          'events',
        ),
      },
      requestExample: { name: 'Open Air 2025', starts_at: '2025-06-01T20:00:00+02:00', ends_at: '2025-06-02T01:00:00+02:00' },
    },
  },
  'GET /events': {
    query: ListQuery,
    docs: {
      operationId: 'listEvents',
      summary: 'List events',
      responses: { 200: { description: "One page of the workspace's events, oldest first.", schema: EventList } },
    },
  },
  'GET /events/:id': event.retrieve(),
  'POST /events/:id/tickets': event.route({
    body: IssueTicketBody,
    docs: {
      operationId: 'issueTicket',
      summary: 'Issue a ticket',
      tag: 'Tickets',
      responses: { 201: { description: 'The ticket, `issued`.', schema: Ticket } },
      errors: {
        409: limitExceededDoc(
          `The workspace already keeps as many tickets, over all its events, as the platform allows one workspace (\`EVENTS_WORKSPACE_MAX_TICKETS\`, ${defaultLimit('tickets')} unless configured; ` +
            '`errors[0] = { in: "body", field: "", code: "quota_exceeded" }`, `error.quota: "tickets"`, `error.limit` its value); nothing was issued.',
          'tickets',
        ),
      },
      requestExample: { holder_name: 'Ada Lovelace', metadata: { seat: 'A-12' } },
    },
  }),
  'GET /events/:id/tickets': event.route({
    query: ListTicketsQuery,
    docs: {
      operationId: 'listTickets',
      summary: "List an event's tickets",
      tag: 'Tickets',
      responses: {
        200: { description: 'One page of tickets: oldest first; with `updated_since`, the changed ones in (`updated_at`, `id`) order.', schema: TicketList },
      },
    },
  }),
  'POST /events/:id/scans': event.route({
    body: UploadScansBody,
    docs: {
      operationId: 'uploadScans',
      summary: 'Upload offline scans',
      tag: 'Check-in',
      description:
        'Up to 500 scans made while the scanner was offline, each with a `scan_id` of its own; the answer has one result per scan in request order. ' +
        'Exactly once: a `scan_id` sent again (a retried upload, or twice in one upload) gets the result recorded the first time, byte for byte, ' +
        'whatever else it carries and whatever happened since (an undo does not make a replay validate again). Among the scans of one ticket ' +
        'in one upload the earliest `scanned_at` wins; across uploads and online validations the first to commit wins. ' +
        'The body is validated whole: one bad scan refuses the upload with every problem (`scans.3.scanned_at`). Each new validation emits `ticket.validated`.',
      responses: { 200: { description: "Each scan's result, in request order.", schema: ScanResults } },
      requestExample: {
        scans: [
          {
            scan_id: 'north-1-000042',
            ticket_id: EXAMPLE_IDS.ticket,
            scanned_at: '2025-06-01T18:05:12.345Z',
            gate: 'north-1',
            validator_id: EXAMPLE_IDS.validator,
          },
        ],
      },
    },
  }),
  'GET /events/:id/stats': event.route({
    docs: {
      operationId: 'getEventStats',
      summary: 'Live check-in figures',
      tag: 'Check-in',
      description:
        'Tickets issued and validated, validations per gate and refused duplicates, consistent with the tickets at `as_of`. ' +
        'Read from counters kept in the transaction of every change, so the answer costs the same for 100 or 100,000 tickets.',
      responses: { 200: { description: "The event's figures.", schema: EventStats } },
    },
  }),
  'GET /events/:id/stats/series': event.route({
    query: SeriesQuery,
    docs: {
      operationId: 'getEventCheckinSeries',
      summary: 'Check-ins over time',
      tag: 'Check-in',
      description:
        "Check-ins per hour or day by action (validated, unvalidated, refused duplicates), in total and per gate, counted by each check-in's `at`: " +
        'an offline scan counts in the bucket of its `scanned_at`, so an upload can add to past buckets. Every bucket of the range is present and ' +
        'lists every gate of the range, zeros included, so a chart needs no gap filling.',
      responses: { 200: { description: 'The series.', schema: CheckinSeries } },
    },
  }),
  'GET /tickets/:id': ticket.retrieve(),
  'POST /tickets/:id/validate': ticket.route({
    body: ValidateTicketBody,
    docs: {
      operationId: 'validateTicket',
      summary: 'Validate a ticket',
      description:
        'Validates a ticket at the entrance, exactly once: under any number of concurrent calls one gets 200, the others 409 with the original validation. ' +
        'Send an `Idempotency-Key` so that a scanner retrying a lost answer gets the original 200 again. Emits `ticket.validated`.',
      responses: { 200: { description: 'The ticket is now validated.', schema: Validation } },
      errors: {
        400: '`event_id` names another event than the ticket\'s, or no event (`errors[0] = { in: "body", field: "event_id", code: "wrong_event" }`).',
        409: {
          description: 'The ticket was already validated: `ticket_id`, `validated_at`, `validator_id` and `gate` of the original validation sit beside `code`.',
          example: ALREADY_VALIDATED_EXAMPLE,
        },
      },
      requestExample: { gate: 'north-1', validator_id: EXAMPLE_IDS.validator, event_id: EXAMPLE_IDS.event },
    },
  }),
  'POST /tickets/:id/unvalidate': ticket.route({
    body: UnvalidateTicketBody,
    docs: {
      operationId: 'unvalidateTicket',
      summary: 'Undo a validation',
      tag: 'Check-in',
      description:
        'The ticket is `issued` again (validation fields null) and can be validated again; the reason is kept in its history. Emits `ticket.unvalidated`.',
      responses: { 200: { description: 'The ticket, `issued`.', schema: Ticket } },
      errors: { 409: 'The ticket is not validated (`errors[0] = { in: "path", field: "id", code: "not_validated" }`).' },
      requestExample: { reason: 'Scanned the wrong ticket at north-1.' },
    },
  }),
  'GET /tickets/:id/checkins': ticket.route({
    query: ListQuery,
    docs: {
      operationId: 'listCheckins',
      summary: "A ticket's check-in history",
      tag: 'Check-in',
      description:
        "Every validation, reversal and refused duplicate (every 409 of validate and every `already_validated` scan, with that attempt's own gate, validator and scan id), " +
        'oldest first by `at`; check-ins of one instant in the order they were recorded.',
      responses: { 200: { description: 'One page of check-ins.', schema: CheckinList } },
    },
  }),
} satisfies Record<RoutesOf<'events'>, RouteDeclaration>;

/** The events service's route declarations wired to handlers with the store and the workspace limits; handlers call events.service. */
export function eventsRouteDefinitions(
  stores: { events: EventsStore; checkins: CheckinsStore },
  webhooks: Record<WebhookRouteKey, RouteDefinition>,
  limits: EventsLimits,
): Record<RoutesOf<'events'>, RouteDefinition> {
  const { events: store, checkins } = stores;
  return {
    ...webhooks,
    'POST /events': route(eventsRouteDeclarations['POST /events'], async ({ identity, body }) => {
      const event = await createEvent(store, identity.workspaceId, { name: body.name, startsAt: body.starts_at, endsAt: body.ends_at ?? null }, limits);
      return { status: 201, body: renderEvent(event) };
    }),

    'GET /events': route(eventsRouteDeclarations['GET /events'], async ({ identity, query }) => ({
      status: 200,
      body: await pageOf(query, (page) => store.listEvents(identity.workspaceId, page), renderEvent),
    })),

    'GET /events/:id': route(eventsRouteDeclarations['GET /events/:id'], async ({ identity, params }) => ({
      status: 200,
      body: renderEvent(await getEvent(store, identity.workspaceId, params.id)),
    })),

    'POST /events/:id/tickets': route(eventsRouteDeclarations['POST /events/:id/tickets'], async ({ identity, params, body }) => {
      const input = { holderName: body.holder_name ?? null, metadata: body.metadata ?? {} };
      const ticket = await issueTicket(store, identity.workspaceId, params.id, input, limits);
      return { status: 201, body: renderTicket(ticket) };
    }),

    'GET /events/:id/tickets': route(eventsRouteDeclarations['GET /events/:id/tickets'], async ({ identity, params, query }) => {
      await getEvent(store, identity.workspaceId, params.id);
      const filter = { status: query.status, updatedSince: query.updated_since };
      const fetch = (page: { after?: Cursor; take: number }) => store.listTickets(identity.workspaceId, params.id, { ...filter, ...page });
      // With updated_since the list runs in (updated_at, id) order, and so do its cursors.
      const positionOf =
        query.updated_since === undefined ? undefined : (ticket: { updatedAt: Date; id: string }) => ({ createdAt: ticket.updatedAt, id: ticket.id });
      return { status: 200, body: await pageOf(query, fetch, renderTicket, positionOf) };
    }),

    'POST /events/:id/scans': route(eventsRouteDeclarations['POST /events/:id/scans'], async ({ identity, params, body }) => {
      const scans = body.scans.map((scan) => ({
        scanId: scan.scan_id,
        ticketId: scan.ticket_id,
        scannedAt: scan.scanned_at,
        gate: scan.gate ?? null,
        validatorId: scan.validator_id ?? null,
      }));
      const results = await uploadScans(store, checkins, identity.workspaceId, params.id, scans);
      return { status: 200, body: { results: results.map(renderScanResult) } };
    }),

    'GET /events/:id/stats': route(eventsRouteDeclarations['GET /events/:id/stats'], async ({ identity, params }) => ({
      status: 200,
      body: renderStats(params.id, await eventFigures(checkins, identity.workspaceId, params.id)),
    })),

    'GET /events/:id/stats/series': route(eventsRouteDeclarations['GET /events/:id/stats/series'], async ({ identity, params, query }) => ({
      status: 200,
      body: renderCheckinSeries(params.id, query, await checkinSeries(store, checkins, identity.workspaceId, params.id, query)),
    })),

    'GET /tickets/:id': route(eventsRouteDeclarations['GET /tickets/:id'], async ({ identity, params }) => ({
      status: 200,
      body: renderTicket(await getTicket(store, identity.workspaceId, params.id)),
    })),

    'POST /tickets/:id/validate': route(eventsRouteDeclarations['POST /tickets/:id/validate'], async ({ identity, params, body }) => {
      const ticket = await validateTicket(checkins, identity.workspaceId, params.id, {
        eventId: body.event_id ?? null,
        gate: body.gate ?? null,
        validatorId: body.validator_id ?? null,
      });
      return { status: 200, body: renderValidation(ticket) };
    }),

    'POST /tickets/:id/unvalidate': route(eventsRouteDeclarations['POST /tickets/:id/unvalidate'], async ({ identity, params, body }) => ({
      status: 200,
      body: renderTicket(await unvalidateTicket(checkins, identity.workspaceId, params.id, body.reason)),
    })),

    'GET /tickets/:id/checkins': route(eventsRouteDeclarations['GET /tickets/:id/checkins'], async ({ identity, params, query }) => {
      await getTicket(store, identity.workspaceId, params.id);
      return {
        status: 200,
        body: await pageOf(query, (page) => checkins.listCheckins(identity.workspaceId, params.id, page), renderCheckin),
      };
    }),
  };
}
