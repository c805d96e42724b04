import { ROUTES } from '@platform/core';
import { canonicalPath, RouteTable, type MatchedRoute, type ServiceMatch } from './route-table';

const table = new RouteTable();

describe('route table compiled from the contract', () => {
  test('strips the service prefix and keeps the query', () => {
    expect(table.match('GET', '/events/v0/tickets/x?y=1')).toMatchObject({
      service: 'events',
      forwardPath: '/tickets/x?y=1',
      route: { key: 'GET /tickets/:id', scope: 'tickets:read', bucket: 'events' },
    });
  });

  test('names the scope and the bucket of special routes', () => {
    expect(table.match('POST', '/warehouse/v1/items/bulk')?.route).toEqual({ key: 'POST /items/bulk', scope: 'items:write', bucket: 'warehouse-bulk' });
    expect(table.match('PATCH', '/warehouse/v1/items/bulk')?.route).toMatchObject({ key: 'PATCH /items/:id', bucket: 'warehouse' });
    expect(table.match('POST', '/pipelines/v3/pipelines/p1/runs')?.route).toMatchObject({ scope: 'runs:write', bucket: 'pipeline-runs' });
    expect(table.match('POST', '/pipelines/v3/pipelines/p1/runs/r1/cancel')?.route).toMatchObject({ scope: 'runs:write', bucket: 'pipelines' });
    expect(table.match('POST', '/events/v0/tickets/t/validate')?.route?.scope).toBe('tickets:write');
  });

  test('stock levels, transfers and reservations (contract 18): reads need items:read, writes stock:write, all in the warehouse bucket', () => {
    for (const [method, path, scope] of [
      ['GET', '/items/i1/stock', 'items:read'],
      ['GET', '/locations/l1/stock', 'items:read'],
      ['POST', '/items/i1/transfers', 'stock:write'],
      ['POST', '/items/i1/reservations', 'stock:write'],
      ['GET', '/items/i1/reservations', 'items:read'],
      ['GET', '/reservations/r1', 'items:read'],
      ['POST', '/reservations/r1/commit', 'stock:write'],
      ['POST', '/reservations/r1/release', 'stock:write'],
    ] as const) {
      expect(table.match(method, `/warehouse/v1${path}`)?.route).toMatchObject({ scope, bucket: 'warehouse' });
    }
  });

  test('an unknown route under a prefix is a match without route, counted in the general bucket', () => {
    for (const [method, url] of [
      ['GET', '/events/v0/healthz'],
      ['GET', '/events/v0/readyz'],
      ['GET', '/events/v0/metrics'],
      ['DELETE', '/events/v0/events/x'],
      ['GET', '/events/v0'],
      ['GET', '/events/v0/'],
      ['GET', '/events/v0/tickets//'],
      ['GET', '/events/v0/tickets/a/b'],
    ] as const) {
      expect(table.match(method, url)).toMatchObject({ service: 'events', route: null, generalBucket: 'events' });
    }
  });

  test('one trailing slash is ignored, as in the services', () => {
    expect(table.match('GET', '/events/v0/events/e1/')?.route?.key).toBe('GET /events/:id');
  });

  test('paths outside the three prefixes do not match', () => {
    expect(table.match('GET', '/events/v1/events')).toBeUndefined();
    expect(table.match('GET', '/events/v0x/events')).toBeUndefined();
    expect(table.match('GET', '/admin/v1/workspaces')).toBeUndefined();
    expect(table.match('GET', '/healthz')).toBeUndefined();
  });

  test('HEAD matches every GET route with its scope and bucket, and no other route', () => {
    for (const [service, routes] of Object.entries(ROUTES)) {
      const prefix = { events: '/events/v0', warehouse: '/warehouse/v1', pipelines: '/pipelines/v3' }[service]!;
      for (const key of Object.keys(routes).filter((k) => k.startsWith('GET '))) {
        const path = key.slice(4).replace(/:[a-z_]+/g, 'x1');
        expect(table.match('HEAD', `${prefix}${path}`)?.route).toEqual(table.match('GET', `${prefix}${path}`)?.route);
      }
    }
    expect(table.match('HEAD', '/events/v0/tickets/t/validate')?.route).toBeNull();
  });

  test('the canonical path lower-cases ids and drops a trailing slash, so two spellings share one idempotency scope', () => {
    const canonical = (method: string, url: string) => canonicalPath(table.match(method, url) as ServiceMatch & { route: MatchedRoute });
    const id = '0B6C3F0E-6F1E-4A43-9A4E-3B1C6B6F2A11';
    expect(canonical('POST', `/events/v0/tickets/${id}/validate/`)).toBe(`/events/v0/tickets/${id.toLowerCase()}/validate`);
    expect(canonical('POST', `/events/v0/tickets/${id.toLowerCase()}/validate?x=1`)).toBe(`/events/v0/tickets/${id.toLowerCase()}/validate`);
    expect(canonical('POST', '/pipelines/v3/pipelines/AB/runs/CD/cancel')).toBe('/pipelines/v3/pipelines/ab/runs/cd/cancel');
    expect(canonical('PATCH', '/warehouse/v1/items/%41b')).toBe('/warehouse/v1/items/ab');
  });
});
