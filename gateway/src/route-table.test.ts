import { RouteTable } from './route-table';

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
});
