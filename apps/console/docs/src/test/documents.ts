// Documents for the view tests: one in the shape the services' generator writes (zod's JSON
// Schema: anyOf with null, $refs to components), and one written to attack the page.
import type { OpenApiDocument, Schema } from '../openapi.js';

const uuid: Schema = { type: 'string', format: 'uuid' };

/** A small API in the shape of the real documents. */
export function ticketsDocument(): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title: 'Events API', version: '0 (beta)', description: 'Events and tickets.\n\n## Authentication\nSend a key.' },
    servers: [{ url: '/events/v0' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'Events', description: 'Events that tickets are issued for.' },
      { name: 'Tickets' },
      { name: 'Unused', description: 'A tag no operation has.' },
      { name: 'Webhook events', description: 'What the service sends.' },
    ],
    paths: {
      '/events/{id}/tickets': {
        // Listed in METHODS order (get before post), whatever the document's key order.
        post: {
          operationId: 'issueTicket',
          summary: 'Issue a ticket',
          tags: ['Tickets'],
          'x-required-scope': 'events:write',
          parameters: [{ $ref: '#/components/parameters/EventId' }],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/TicketInput' }, example: { holder_name: 'Ada Lovelace' } } },
          },
          responses: {
            '201': {
              description: 'The ticket.\n\nIssued at once.',
              headers: { 'x-request-id': { $ref: '#/components/headers/x-request-id' } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Ticket' } } },
            },
            '404': { $ref: '#/components/responses/NotFound' },
          },
        },
        get: {
          operationId: 'listTickets',
          summary: "List an event's tickets",
          tags: ['Tickets'],
          'x-required-scope': 'events:read',
          parameters: [
            { $ref: '#/components/parameters/EventId' },
            { name: 'limit', in: 'query', description: 'Page size.', schema: { default: 20, type: 'integer', minimum: 1, maximum: 100 } },
          ],
          responses: {
            '200': { description: 'One page of tickets.', content: { 'application/json': { schema: { $ref: '#/components/schemas/TicketList' } } } },
          },
        },
      },
      '/events': {
        post: { operationId: 'createEvent', summary: 'Create an event', tags: ['Events'], responses: { '201': { description: 'The event.' } } },
      },
      '/healthz': {
        get: { responses: { '200': { description: 'Up.' } } },
      },
    },
    webhooks: {
      'ticket.validated': {
        post: {
          summary: 'A ticket was validated',
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { data: { $ref: '#/components/schemas/Ticket' } } } } } },
          responses: { '2XX': { description: 'Received.' } },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { description: 'An API key: `Authorization: Bearer plk_…`.' } },
      parameters: { EventId: { name: 'id', in: 'path', required: true, schema: uuid } },
      headers: { 'x-request-id': { description: 'The request id.', schema: { type: 'string' } } },
      responses: {
        NotFound: {
          description: 'No such event.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: { error: { code: 'not_found' } } } },
        },
      },
      schemas: {
        Ticket: {
          type: 'object',
          description: 'A ticket of an event.',
          properties: {
            id: uuid,
            status: { type: 'string', enum: ['issued', 'validated'] },
            holder_name: { type: ['string', 'null'], minLength: 1, maxLength: 200 },
            validated_at: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
            metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'At most 20 keys.' },
          },
          required: ['id', 'status'],
          additionalProperties: false,
          examples: [{ id: '5b7d9f1e-2c4a-4e6b-8d0f-3a5c7e9b1d2f', status: 'issued' }],
        },
        TicketInput: { type: 'object', properties: { holder_name: { type: 'string', minLength: 1, maxLength: 200 } } },
        TicketList: {
          type: 'object',
          properties: {
            data: { type: 'array', items: { $ref: '#/components/schemas/Ticket' } },
            next_cursor: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          },
        },
        Error: { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string' } } } } },
      },
    },
  };
}

/** Every string the page shows or links, written to break out of text or attributes. */
export function hostileDocument(): OpenApiDocument {
  const attack = (tag: string): string => `"'><script>alert('${tag}')</script><img src=x onerror=alert(1)>`;
  return {
    openapi: `3.1.0${attack('openapi')}`,
    info: {
      title: attack('title'),
      version: attack('version'),
      description: `${attack('description')} [x](javascript:alert(2)) [y](//evil.example) [w](/\\evil.example) [z](#ok)\n\n## ${attack('heading')}\n\n- ${attack('item')}\n\n| ${attack('th')} |\n|-|\n| ${attack('td')} |`,
    },
    servers: [{ url: 'javascript:alert(3)//' }],
    tags: [{ name: attack('tag'), description: attack('tag description') }],
    paths: {
      [`/things/${attack('path')}`]: {
        get: {
          operationId: attack('operationId'),
          summary: attack('summary'),
          description: attack('operation description'),
          tags: [attack('tag')],
          'x-required-scope': attack('scope'),
          parameters: [
            {
              name: attack('parameter'),
              in: attack('in'),
              description: attack('parameter description'),
              schema: { type: 'string', pattern: attack('pattern'), default: attack('default') },
            },
          ],
          responses: {
            [attack('status')]: {
              description: attack('response'),
              headers: { [attack('header')]: { description: attack('header description') } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' }, example: { name: attack('example') } } },
            },
          },
        },
      },
    },
    webhooks: { [attack('webhook')]: { post: { summary: attack('webhook summary') } } },
    components: {
      securitySchemes: { bearer: { description: attack('security') } },
      schemas: {
        Thing: {
          type: 'object',
          description: attack('schema description'),
          properties: {
            [attack('property')]: { type: 'string', description: attack('property description'), enum: [attack('enum')] },
            kind: {
              oneOf: [
                { type: 'object', properties: { k: { const: attack('const') } } },
                { type: 'object', properties: { k: { const: 'b' } } },
              ],
            },
            children: { type: 'array', items: { $ref: '#/components/schemas/Thing' } },
          },
          required: [attack('property')],
          examples: [{ x: attack('schema example') }],
        },
        [attack('schema')]: { type: attack('type') },
      },
    },
  };
}
