// The console's addresses: every object it shows has one in the URL's hash, e.g.
// `#/workspaces/{id}/pipelines/{pipeline_id}/runs/{run_id}`, so a link can be shared and back and
// forward work. The server serves only /console, so the hash needs nothing of it. Nothing from a
// hash is trusted: an id must be a UUID (every id of the platform is one) and a service name a
// plain lower-case word, or the address is refused as a whole; ids then only travel as path
// parameters of the client and as text, never as markup.

/** The tabs of an open workspace, as their addresses name them. */
export const TABS = ['keys', 'pipelines', 'events', 'warehouse', 'webhooks', 'quotas'] as const;
export type Tab = (typeof TABS)[number];

/** The object a tab shows on its own. */
export type Detail =
  | { kind: 'key'; id: string }
  | { kind: 'pipeline'; id: string; runId?: string }
  | { kind: 'event'; id: string }
  | { kind: 'item'; id: string }
  | { kind: 'location'; id: string }
  | { kind: 'reservation'; id: string }
  | { kind: 'endpoint'; service: string; id: string };

export type Route = { view: 'sign-in' } | { view: 'workspaces' } | { view: 'workspace'; workspaceId: string; tab: Tab; detail?: Detail };

/** The tab that shows each kind of object. */
export const TAB_OF: Record<Detail['kind'], Tab> = {
  key: 'keys',
  pipeline: 'pipelines',
  event: 'events',
  item: 'warehouse',
  location: 'warehouse',
  reservation: 'warehouse',
  endpoint: 'webhooks',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SERVICE = /^[a-z][a-z0-9-]{0,39}$/;
const WAREHOUSE: Record<string, 'item' | 'location' | 'reservation'> = { items: 'item', locations: 'location', reservations: 'reservation' };

/** An id as the console uses it (lower case), or null when it is no UUID. */
export function idOf(text: string | undefined): string | null {
  if (text === undefined) return null;
  const id = text.toLowerCase();
  return UUID.test(id) ? id : null;
}

const isTab = (text: string | undefined): text is Tab => (TABS as readonly string[]).includes(text ?? '');

/** The detail named by the segments after the tab, or null when they name none (or not well). */
function detailOf(tab: Tab, rest: string[]): Detail | null | undefined {
  if (rest.length === 0) return undefined;
  const id = idOf(rest[rest.length === 3 && tab === 'pipelines' ? 0 : rest.length - 1]);
  switch (tab) {
    case 'keys':
      return rest.length === 1 && id ? { kind: 'key', id } : null;
    case 'events':
      return rest.length === 1 && id ? { kind: 'event', id } : null;
    case 'pipelines': {
      if (rest.length === 1 && id) return { kind: 'pipeline', id };
      const runId = idOf(rest[2]);
      return rest.length === 3 && id && rest[1] === 'runs' && runId ? { kind: 'pipeline', id, runId } : null;
    }
    case 'warehouse': {
      const kind = WAREHOUSE[rest[0] ?? ''];
      return rest.length === 2 && kind && id ? { kind, id } : null;
    }
    case 'webhooks': {
      const service = rest[0] ?? '';
      return rest.length === 2 && SERVICE.test(service) && id ? { kind: 'endpoint', service, id } : null;
    }
    case 'quotas':
      return null;
  }
}

/**
 * The route a hash names: '' is the sign-in (or whatever view is shown), `#/workspaces` the list,
 * `#/workspaces/{id}` a workspace's first tab; null when the hash names nothing the console knows.
 */
export function parseRoute(hash: string): Route | null {
  const path = hash.replace(/^#/, '');
  if (path === '' || path === '/') return { view: 'sign-in' };
  if (!path.startsWith('/')) return null;
  let segments: string[];
  try {
    segments = path.slice(1).split('/').map(decodeURIComponent);
  } catch {
    return null;
  }
  if (segments.at(-1) === '') segments.pop();
  if (segments[0] !== 'workspaces') return null;
  if (segments.length === 1) return { view: 'workspaces' };
  const workspaceId = idOf(segments[1]);
  if (!workspaceId) return null;
  if (segments.length === 2) return { view: 'workspace', workspaceId, tab: 'keys' };
  const tab = segments[2];
  if (!isTab(tab)) return null;
  const detail = detailOf(tab, segments.slice(3));
  if (detail === null) return null;
  return detail ? { view: 'workspace', workspaceId, tab, detail } : { view: 'workspace', workspaceId, tab };
}

function detailPath(detail: Detail): string[] {
  switch (detail.kind) {
    case 'key':
    case 'event':
      return [detail.id];
    case 'pipeline':
      return detail.runId ? [detail.id, 'runs', detail.runId] : [detail.id];
    case 'item':
      return ['items', detail.id];
    case 'location':
      return ['locations', detail.id];
    case 'reservation':
      return ['reservations', detail.id];
    case 'endpoint':
      return [detail.service, detail.id];
  }
}

/** The hash of a route (`''` for the sign-in); `parseRoute(routeHash(r))` is `r`. */
export function routeHash(route: Route): string {
  if (route.view === 'sign-in') return '';
  if (route.view === 'workspaces') return '#/workspaces';
  const tab = route.detail ? TAB_OF[route.detail.kind] : route.tab;
  const segments = ['workspaces', route.workspaceId, tab, ...(route.detail ? detailPath(route.detail) : [])];
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

/** The address of a workspace's tab, or of an object in it. */
export function workspaceRoute(workspaceId: string, tab: Tab, detail?: Detail): Route {
  return detail ? { view: 'workspace', workspaceId, tab: TAB_OF[detail.kind], detail } : { view: 'workspace', workspaceId, tab };
}
