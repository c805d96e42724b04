import { randomUUID } from 'node:crypto';
import http, { type Server } from 'node:http';
import { z } from 'zod';
import {
  codePointString,
  conflict,
  contractRouter,
  DEFAULT_SERVICE_QUOTA_LIMITS,
  createLogger,
  createServiceApp,
  route,
  Uuid,
  WEBHOOK_ENDPOINT_ROUTES,
  type RouteDefinition,
  type RoutesOf,
  type WebhookRouteKey,
} from '@platform/core';
import { expectErrorBody, TEST_INTERNAL_SECRET } from '@platform/testing';
import { allUpstreams, closeServer, createTestKey, httpClient, listen, startGateway, type HttpClient, type TestGateway } from './test/gateway';

/**
 * The events service's real request stack (core's createServiceApp: gateway signature check,
 * JSON bodies, contract router with scope checks, error middleware) with stand-in handlers,
 * since the gateway may not depend on the events package. Its ticket validation succeeds once
 * per ticket and is 409 with the original validation after, as the contract's (section 8).
 */
function eventsLikeService(): Server {
  const validations = new Map<string, { ticket_id: string; validated_at: string; gate: string | null; validator_id: string | null }>();
  const echo = (name: string): RouteDefinition =>
    route({ params: z.object({ id: Uuid }).partial() }, ({ identity, params, requestId }) => ({
      status: 200,
      body: { route: name, identity, params, requestId },
    }));
  const definitions: Record<RoutesOf<'events'>, RouteDefinition> = {
    'POST /events': route({ body: z.strictObject({ name: codePointString(1, 200) }) }, ({ identity, body }) => ({
      status: 201,
      body: { id: randomUUID(), name: body.name, workspace_id: identity.workspaceId },
    })),
    'GET /events': echo('GET /events'),
    'GET /events/:id': echo('GET /events/:id'),
    'POST /events/:id/tickets': echo('POST /events/:id/tickets'),
    'GET /events/:id/tickets': echo('GET /events/:id/tickets'),
    'POST /events/:id/scans': echo('POST /events/:id/scans'),
    'GET /events/:id/stats': echo('GET /events/:id/stats'),
    'GET /events/:id/stats/series': echo('GET /events/:id/stats/series'),
    'GET /tickets/:id': echo('GET /tickets/:id'),
    'POST /tickets/:id/unvalidate': echo('POST /tickets/:id/unvalidate'),
    'GET /tickets/:id/checkins': echo('GET /tickets/:id/checkins'),
    'POST /tickets/:id/validate': route(
      { params: z.object({ id: Uuid }), body: z.strictObject({ gate: z.string().optional(), validator_id: Uuid.optional() }) },
      ({ params, body }) => {
        const original = validations.get(params.id);
        if (original) throw conflict('Ticket already validated.', original);
        const validation = { ticket_id: params.id, validated_at: new Date().toISOString(), gate: body.gate ?? null, validator_id: body.validator_id ?? null };
        validations.set(params.id, validation);
        return { status: 200, body: { ...validation, status: 'validated' } };
      },
    ),
    // Every service has the webhook endpoint routes (contract section 11); echoes stand in here.
    ...(Object.fromEntries(Object.keys(WEBHOOK_ENDPOINT_ROUTES).map((key) => [key, echo(key)])) as Record<WebhookRouteKey, RouteDefinition>),
  };
  const app = createServiceApp({
    service: 'events',
    logger: createLogger('events-stand-in', 'silent'),
    internalSecret: TEST_INTERNAL_SECRET,
    routes: contractRouter('events', definitions),
    ready: { database: async () => undefined },
  });
  return http.createServer(app);
}

let service: Server;
let gw: TestGateway;
let client: HttpClient;

beforeAll(async () => {
  service = eventsLikeService();
  const url = await listen(service);
  gw = await startGateway({ upstreams: allUpstreams(url) });
  client = httpClient();
});
afterAll(async () => {
  await client.close();
  await gw.close();
  await closeServer(service);
});

test('the service accepts the gateway’s signature and sees the key’s identity and scopes', async () => {
  const key = await createTestKey(gw.stores, { scopes: ['tickets:read'] });
  const ticketId = randomUUID();
  const res = await client.call(gw.url, 'GET', `/events/v0/tickets/${ticketId}`, { token: key.token, headers: { 'x-request-id': 'stack-1' } });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    route: 'GET /tickets/:id',
    identity: { workspaceId: key.workspaceId, keyId: key.keyId, scopes: ['tickets:read'], quotas: DEFAULT_SERVICE_QUOTA_LIMITS },
    params: { id: ticketId },
    requestId: 'stack-1',
  });
  expect(res.headers['x-request-id']).toBe('stack-1');
  expect(res.headers['x-ratelimit-limit']).toBe('400');
});

test('signatures cover the query string', async () => {
  const { token } = await createTestKey(gw.stores);
  const res = await client.call(gw.url, 'GET', `/events/v0/events/${randomUUID()}/tickets?status=issued&limit=5`, { token });
  expect(res.status).toBe(200);
  expect(res.body.route).toBe('GET /events/:id/tickets');
});

test('a JSON body reaches the service intact; its 201 and its validation 400 pass through', async () => {
  const key = await createTestKey(gw.stores);
  const created = await client.call(gw.url, 'POST', '/events/v0/events', { token: key.token, body: { name: 'Gala' } });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ name: 'Gala', workspace_id: key.workspaceId });
  const invalid = await client.call(gw.url, 'POST', '/events/v0/events', { token: key.token, body: { name: '', colour: 'red' } });
  expect(invalid.status).toBe(400);
  expect(expectErrorBody(invalid.body, 'invalid_request').errors).toHaveLength(2);
  const empty = await client.call(gw.url, 'POST', `/events/v0/tickets/${randomUUID()}/validate`, { token: key.token });
  expect(empty.status).toBe(200);
});

test('a request sent to the service directly, not through the gateway, is refused', async () => {
  const address = service.address() as { port: number };
  const res = await client.call(`http://127.0.0.1:${address.port}`, 'GET', `/tickets/${randomUUID()}`, {
    headers: { 'x-platform-workspace-id': randomUUID(), 'x-platform-key-id': randomUUID(), 'x-platform-scopes': '*' },
  });
  expect(res.status).toBe(401);
});

test('a ticket scan retried with its Idempotency-Key gets its original 200, not the 409 a new scan gets (contract section 7)', async () => {
  const { token } = await createTestKey(gw.stores, { scopes: ['tickets:write'] });
  const path = `/events/v0/tickets/${randomUUID()}/validate`;
  const scan = { gate: 'north-1', validator_id: randomUUID() };
  const first = await client.call(gw.url, 'POST', path, { token, body: scan, headers: { 'idempotency-key': 'scan-1' } });
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ status: 'validated', gate: 'north-1' });

  // The scanner lost the first answer and retries with the same key.
  const retried = await client.call(gw.url, 'POST', path, { token, body: scan, headers: { 'idempotency-key': 'scan-1' } });
  expect(retried.status).toBe(200);
  expect(retried.headers['idempotent-replayed']).toBe('true');
  expect(retried.body).toEqual(first.body);

  // A new scan of the same ticket (another key) reaches the service and is refused.
  const second = await client.call(gw.url, 'POST', path, { token, body: scan, headers: { 'idempotency-key': 'scan-2' } });
  expect(second.status).toBe(409);
  expect(expectErrorBody(second.body, 'conflict')).toMatchObject({ validated_at: first.body.validated_at, gate: 'north-1' });
});
