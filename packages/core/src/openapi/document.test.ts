import { validate } from '@readme/openapi-parser';
import { z } from 'zod';
import { ROUTES } from '../contract';
import { ListQuery } from '../http/pagination';
import type { RouteDeclaration } from '../http/route';
import { codePointString, Slug, Uuid, UtcTimestamp } from '../http/validation';
import { openApiDocument, openApiPath, undocumentedRoutes, type OpenApiDocument } from './document';
import { listOf } from './schemas';

const Thing = z
  .object({ id: Uuid, name: z.string(), created_at: UtcTimestamp })
  .meta({ id: 'Thing', examples: [{ id: '6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b', name: 'Gala', created_at: '2024-12-01T09:30:00.000Z' }] });

/** Two documented routes of the events table; the rest stay undocumented on purpose. */
const routes: Record<string, RouteDeclaration> = {
  'POST /events': {
    body: z.strictObject({ name: codePointString(1, 200), gate: Slug.pipe(codePointString(1, 64)).optional() }),
    docs: {
      operationId: 'createEvent',
      summary: 'Create an event',
      responses: { 201: { description: 'The event.', schema: Thing } },
      requestExample: { name: 'Gala' },
    },
  },
  'GET /events/:id/tickets': {
    params: z.object({ id: Uuid }),
    query: ListQuery,
    docs: {
      operationId: 'listTickets',
      summary: 'List tickets',
      responses: { 200: { description: 'A page.', schema: listOf(Thing, 'ThingList') } },
      errors: { 404: 'No such event.' },
    },
  },
};

function document(): OpenApiDocument {
  return openApiDocument({ service: 'events', title: 'Events API', version: '0', routes });
}

describe('openApiDocument', () => {
  test('the document is valid OpenAPI 3.1', async () => {
    const result = await validate(structuredClone(document()) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(document().openapi).toBe('3.1.0');
  });

  test('every contract route has a path entry; the undocumented ones are named', () => {
    const doc = document();
    const missing = undocumentedRoutes(doc, 'events');
    expect(missing).toEqual(Object.keys(ROUTES.events).filter((key) => !(key in routes)));
    expect(doc.paths['/events/{id}/tickets']?.get?.summary).toBe('List tickets');
  });

  test('express paths become OpenAPI paths', () => {
    expect(openApiPath('/pipelines/:id/runs/:run_id/cancel')).toBe('/pipelines/{id}/runs/{run_id}/cancel');
  });

  test('an operation carries its scope, bucket, parameters and the platform headers', () => {
    const operation = document().paths['/events/{id}/tickets']!.get!;
    expect(operation.security).toEqual([{ bearer: ['events:read'] }]);
    expect(operation['x-required-scope']).toBe('events:read');
    expect(operation['x-rate-limit-bucket']).toBe('events');
    expect(operation.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }),
        expect.objectContaining({
          name: 'limit',
          in: 'query',
          required: false,
          schema: expect.objectContaining({ type: 'integer', minimum: 1, maximum: 100, default: 20 }),
        }),
        { $ref: '#/components/parameters/PlatformVersion' },
      ]),
    );
    const ok = operation.responses!['200']!;
    expect(Object.keys(ok.headers!)).toEqual(['x-request-id', 'platform-version', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(ok.content!['application/json']!.example).toEqual({ data: [expect.objectContaining({ name: 'Gala' })], next_cursor: null });
  });

  test('every error status is documented with the error body; 429 and 503 carry Retry-After', () => {
    const read = document().paths['/events/{id}/tickets']!.get!.responses!;
    expect(Object.keys(read)).toEqual(['200', '400', '401', '403', '404', '408', '429', '500', '503']);
    expect(read['404']!.description).toContain('No such event.');
    expect(read['403']!.content!['application/json']!.example).toEqual({
      error: expect.objectContaining({ code: 'forbidden_scope', required_scope: 'events:read' }),
    });
    expect(read['429']!.headers!['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    const write = document().paths['/events']!.post!;
    expect(Object.keys(write.responses!)).toEqual(['201', '400', '401', '403', '408', '409', '413', '415', '429', '500', '503']);
    expect(write.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(write.responses!['201']!.headers!['idempotent-replayed']).toEqual({ $ref: '#/components/headers/idempotent-replayed' });
  });

  test('request bodies are the input schemas: a pipe documents both sides, code-point lengths are kept', () => {
    const body = document().paths['/events']!.post!.requestBody as { required: boolean; content: Record<string, { schema: Record<string, unknown> }> };
    expect(body.required).toBe(true);
    expect(body.content['application/json']!.schema).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        gate: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', minLength: 1, maxLength: 64 },
      },
      required: ['name'],
      additionalProperties: false,
    });
  });

  test('named schemas become components referenced from the answers', () => {
    const doc = document();
    expect(doc.components.schemas.Thing).toEqual(expect.objectContaining({ type: 'object', required: ['id', 'name', 'created_at'] }));
    expect(doc.components.schemas.Error).toBeDefined();
    expect(doc.components.schemas.FieldError).toBeDefined();
    expect(doc.paths['/events']!.post!.responses!['201']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Thing' });
    expect(JSON.stringify(doc)).not.toContain('#/$defs/');
  });

  test('a declaration for a route outside the contract is refused', () => {
    expect(() => openApiDocument({ service: 'events', title: 'x', version: '0', routes: { 'GET /nope': {} } })).toThrow(/not in the route table/);
  });
});
