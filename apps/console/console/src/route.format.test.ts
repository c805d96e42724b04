import { parseRoute, routeHash, workspaceRoute, type Route } from './route.format';

const W = '3f2c1a9e-7b4d-4c2a-9e1f-0a1b2c3d4e5f';
const P = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const R = 'b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e';

describe('parseRoute and routeHash', () => {
  test.each<[string, Route]>([
    ['', { view: 'sign-in' }],
    ['#/workspaces', { view: 'workspaces' }],
    [`#/workspaces/${W}/keys`, { view: 'workspace', workspaceId: W, tab: 'keys' }],
    [`#/workspaces/${W}/keys/${P}`, { view: 'workspace', workspaceId: W, tab: 'keys', detail: { kind: 'key', id: P } }],
    [`#/workspaces/${W}/pipelines/${P}`, { view: 'workspace', workspaceId: W, tab: 'pipelines', detail: { kind: 'pipeline', id: P } }],
    [`#/workspaces/${W}/pipelines/${P}/runs/${R}`, { view: 'workspace', workspaceId: W, tab: 'pipelines', detail: { kind: 'pipeline', id: P, runId: R } }],
    [`#/workspaces/${W}/events/${P}`, { view: 'workspace', workspaceId: W, tab: 'events', detail: { kind: 'event', id: P } }],
    [`#/workspaces/${W}/warehouse/items/${P}`, { view: 'workspace', workspaceId: W, tab: 'warehouse', detail: { kind: 'item', id: P } }],
    [`#/workspaces/${W}/warehouse/locations/${P}`, { view: 'workspace', workspaceId: W, tab: 'warehouse', detail: { kind: 'location', id: P } }],
    [`#/workspaces/${W}/warehouse/reservations/${P}`, { view: 'workspace', workspaceId: W, tab: 'warehouse', detail: { kind: 'reservation', id: P } }],
    [
      `#/workspaces/${W}/webhooks/pipelines/${P}`,
      { view: 'workspace', workspaceId: W, tab: 'webhooks', detail: { kind: 'endpoint', service: 'pipelines', id: P } },
    ],
    [`#/workspaces/${W}/quotas`, { view: 'workspace', workspaceId: W, tab: 'quotas' }],
  ])('%s is a route and its own hash', (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
    expect(routeHash(route)).toBe(hash);
  });

  test("a workspace's address alone opens its first tab; a trailing slash and upper-case ids are the same address", () => {
    expect(parseRoute(`#/workspaces/${W}`)).toEqual({ view: 'workspace', workspaceId: W, tab: 'keys' });
    expect(parseRoute(`#/workspaces/${W.toUpperCase()}/events/${P}/`)).toEqual(workspaceRoute(W, 'events', { kind: 'event', id: P }));
  });

  test.each([
    ['not a path', '#workspaces'],
    ['another view', '#/settings'],
    ['an id that is no UUID', '#/workspaces/42'],
    ['markup as an id', `#/workspaces/${W}/keys/<img src=x onerror=alert(1)>`],
    ['an encoded quote in an id', `#/workspaces/${W}/events/${P}%22`],
    ['a bad escape', `#/workspaces/${W}/events/%E0`],
    ['an unknown tab', `#/workspaces/${W}/billing`],
    ['a quota object', `#/workspaces/${W}/quotas/${P}`],
    ['a run without its pipeline', `#/workspaces/${W}/pipelines/runs/${R}`],
    ['a run segment misnamed', `#/workspaces/${W}/pipelines/${P}/logs/${R}`],
    ['an unknown warehouse object', `#/workspaces/${W}/warehouse/shelves/${P}`],
    ['a service name with markup', `#/workspaces/${W}/webhooks/%3Cb%3E/${P}`],
    ['too many segments', `#/workspaces/${W}/keys/${P}/more`],
  ])('%s is refused as a whole (%s)', (_, hash) => {
    expect(parseRoute(hash)).toBeNull();
  });

  test("an object's address names the tab that shows it, whatever tab was asked", () => {
    expect(routeHash(workspaceRoute(W, 'keys', { kind: 'pipeline', id: P, runId: R }))).toBe(`#/workspaces/${W}/pipelines/${P}/runs/${R}`);
  });
});
