import { randomUUID } from 'node:crypto';
import { BODY_ID_FIELDS, idsFor, templateBody, uuidFields, type Fixtures } from '../support/fixtures';
import { describe, forEachLimited, send, type Answer } from '../support/http';
import { perBulkEntry, perScanResult, refused, refusedWith, type Judge } from '../support/judge';
import type { Battlefield } from '../support/platform';
import type { Category } from '../support/recorder';
import { adminRoutes, contractRoutes, fillPath, idSourcesOf, operationOf, routeName, withValue, type Route } from '../support/routes';

/**
 * Category b: workspace A, with its own key, calls every route that takes an id with B's ids
 * (alone and mixed with A's), puts B's ids into bodies and list filters, and pages with
 * cursors from B's lists. Ids: 404 (contract section 3); B's data, read with B's key before
 * and after, must not have changed; no answer may hold B's ids or names.
 */

interface Probe {
  input: string;
  run: () => Promise<Answer>;
  judge: Judge;
}

/** A's call, judged, and checked for B's secrets it did not send. */
function probeAsA(
  a: Fixtures,
  secrets: string[],
  input: string,
  method: string,
  path: string,
  body: unknown,
  judge: Judge,
  headers: Record<string, string> = {},
): Probe {
  return { input, run: () => a.tenant.call(method, path, body, headers), judge: leaking(secrets, judge, `${path} ${JSON.stringify(body) ?? ''}`) };
}

/** Every id of B and every name B gave its resources: none may appear in an answer to A. */
function secretsOf(b: Fixtures): string[] {
  return [
    ...Object.entries(b.ids)
      .filter(([source]) => source !== 'admin:workspaces')
      .flatMap(([, ids]) => ids),
    b.tenant.workspaceId,
    'b-SKU-',
    'b event',
    'b item',
    'b location',
    'b pipeline',
    'b holder',
  ];
}

/** The judge, plus: the answer holds none of B's secrets that the request did not itself send. */
function leaking(secrets: string[], judge: Judge, sent: string): Judge {
  return (answer) => {
    const problems = judge(answer);
    const leaked = secrets.filter((s) => !sent.includes(s) && answer.text.includes(s));
    return leaked.length > 0 ? [...problems, `the answer holds B's ${leaked.slice(0, 3).join(', ')}`] : problems;
  };
}

const notFound = refusedWith(404, 'not_found');

/** A list answered to A: a 400 for the cursor, or a page of A's own (no B data: checked by `leaking`). */
const cursorRefusedOrOwnPage: Judge = (answer) => {
  if (answer.status === 200) return Array.isArray(answer.json?.data) ? [] : ['200 without a list body'];
  const problems = refusedWith(400)(answer);
  return problems.length > 0 ? problems : answer.json?.error?.errors?.[0]?.field === 'cursor' ? [] : ['400 without errors[0].field "cursor"'];
};

/** Every combination of A's and B's ids for a route's parameters, but A's alone. */
function idMixes(route: Route, a: Fixtures, b: Fixtures): { label: string; ids: string[] }[] {
  const aIds = idsFor(a, route);
  const bIds = idsFor(b, route);
  const mixes: { label: string; ids: string[] }[] = [];
  for (let mask = 1; mask < 1 << aIds.length; mask++) {
    const ids = aIds.map((id, i) => (mask & (1 << i) ? bIds[i]! : id));
    mixes.push({ label: route.params.map((p, i) => `:${p}=${mask & (1 << i) ? 'B' : 'A'}`).join(' '), ids });
  }
  return mixes;
}

/** B's resources as B reads them: every GET route with B's ids, and B's lists. */
async function snapshot(field: Battlefield, b: Fixtures, routes: Route[]): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  for (const route of routes.filter((r) => r.method === 'GET' && r.service !== 'admin')) {
    const isList = operationOf(field.documents, route)?.queryParams.some((q) => q.name === 'limit');
    const path = `${fillPath(route, idsFor(b, route))}${isList ? '?limit=100' : ''}`;
    const answer = await b.tenant.call('GET', path);
    // `as_of` (live figures) is when the answer was read, not B's data.
    seen.set(`GET ${path}`, `${answer.status} ${answer.text.replace(/"as_of":"[^"]*"/g, '"as_of":"<read time>"')}`);
  }
  return seen;
}

/** A cursor from B's own list on this route (B's key), when B's list has a second page. */
async function cursorOfB(b: Fixtures, route: Route): Promise<string | undefined> {
  const answer = await b.tenant.call('GET', `${fillPath(route, idsFor(b, route))}?limit=1`);
  return typeof answer.json?.next_cursor === 'string' ? answer.json.next_cursor : undefined;
}

export async function attackAcrossWorkspaces(field: Battlefield, a: Fixtures, b: Fixtures, category: Category, deadline: number): Promise<void> {
  const routes = [...contractRoutes(), ...adminRoutes()];
  // An Idempotency-Key B used (before B's data is read): A's identical request must run as A's, not replay B's answer.
  const sharedKey = `shared-${randomUUID()}`;
  const location = { name: 'the same body in both workspaces', code: `IDEM-${sharedKey.slice(-8)}` };
  const bLocation = await b.tenant.call('POST', '/warehouse/v1/locations', location, { 'idempotency-key': sharedKey });
  const before = await snapshot(field, b, routes);
  const secrets = secretsOf(b);
  const probes: Probe[] = [];

  for (const route of routes.filter((r) => r.params.length > 0)) {
    // idsFor throws for a parameter without a source in the fixture map: a new route must get one.
    for (const { label, ids } of idMixes(route, a, b)) {
      const path = fillPath(route, ids);
      if (route.service === 'admin') {
        // The admin token reaches every workspace; what must hold is that a key is found only under its own workspace.
        if (idSourcesOf(route).includes('admin:api-keys') && label.includes('=A') && label.includes('=B')) {
          probes.push({ input: `${route.method} ${path} (${label})`, run: () => field.admin(route.method, path), judge: notFound });
        }
        continue;
      }
      probes.push(probeAsA(a, secrets, `${routeName(route)} (${label})`, route.method, path, templateBody(a, route, field.documents), notFound));
    }
  }

  // B's ids inside A's request bodies: refused (400 not_found / wrong_event, 404), for bulk each entry's own 404,
  // for offline scans each scan's own `not_found` result (contract section 15).
  for (const route of routes.filter((r) => r.service !== 'admin' && (r.method === 'POST' || r.method === 'PATCH'))) {
    const body = templateBody(a, route, field.documents);
    for (const { path: at, field: name } of uuidFields(body)) {
      const source = BODY_ID_FIELDS[name];
      if (!source) continue;
      const entry = typeof at[1] === 'number' ? at[1] : undefined;
      const judge =
        entry !== undefined && route.path.endsWith('/bulk')
          ? perBulkEntry(entry, refusedWith(404), 404)
          : entry !== undefined && route.path.endsWith('/scans')
            ? perScanResult(entry, 'not_found')
            : refused;
      probes.push(
        probeAsA(
          a,
          secrets,
          `${routeName(route)} body ${at.join('.')} = B's`,
          route.method,
          fillPath(route, idsFor(a, route)),
          withValue(body, at, b.ids[source]![0]),
          judge,
        ),
      );
    }
  }

  // List filters naming B's values, and cursors of B's lists on A's lists.
  const fallbackCursor = await cursorOfB(
    b,
    routes.find((r) => r.method === 'GET' && r.path === '/locations')!,
  );
  for (const route of routes.filter((r) => r.method === 'GET' && r.service !== 'admin')) {
    const query = operationOf(field.documents, route)?.queryParams.map((q) => q.name) ?? [];
    const path = fillPath(route, idsFor(a, route));
    if (query.includes('sku')) probes.push(probeAsA(a, secrets, `${routeName(route)}?sku=<B's sku>`, 'GET', `${path}?sku=b-SKU-0`, undefined, ownPage));
    if (query.includes('category'))
      probes.push(probeAsA(a, secrets, `${routeName(route)}?category=<B's category>`, 'GET', `${path}?category=security`, undefined, ownPage));
    if (query.includes('cursor')) {
      const cursor = (await cursorOfB(b, route)) ?? fallbackCursor;
      if (!cursor) throw new Error('B has no list with a second page: the fixtures must create two of each');
      probes.push(probeAsA(a, secrets, `${routeName(route)}?cursor=<B's>`, 'GET', `${path}?cursor=${cursor}`, undefined, cursorRefusedOrOwnPage));
    }
  }

  probes.push(
    probeAsA(
      a,
      secrets,
      "POST /warehouse/v1/locations with B's Idempotency-Key and body",
      'POST',
      '/warehouse/v1/locations',
      location,
      (answer) =>
        answer.status === 201 && answer.json?.id !== bLocation.json?.id && answer.headers['idempotent-replayed'] === undefined
          ? []
          : [`${describe(answer)}: not A's own new location`],
      { 'idempotency-key': sharedKey },
    ),
  );

  // Deletions last, so one that wrongly succeeds cannot hide the others.
  const ordered = [...probes.filter((p) => !p.input.startsWith('DELETE')), ...probes.filter((p) => p.input.startsWith('DELETE'))];
  const { skipped } = await forEachLimited(ordered, 6, deadline, async (probe) => category.check(probe.input, probe.judge(await probe.run())));
  for (const probe of skipped) category.fail(probe.input, 'not sent: the category ran out of time');

  // B's data afterwards, read with B's key; B's key that A's workspace path named is neither revoked nor refused.
  const after = await snapshot(field, b, routes);
  for (const [what, seen] of before) {
    category.check(`B's ${what} unchanged`, after.get(what) === seen ? [] : [`was ${seen.slice(0, 160)}, now ${after.get(what)?.slice(0, 160)}`]);
  }
  const keys = await field.admin('GET', `/admin/v1/workspaces/${b.tenant.workspaceId}/api-keys?limit=100`);
  const victim = (keys.json?.data as { id: string; revoked_at: string | null }[] | undefined)?.find((k) => k.id === b.ids['admin:api-keys']![0]);
  category.check(
    "B's key, named under A's workspace, is not revoked",
    victim && victim.revoked_at === null ? [] : [`B's key: ${JSON.stringify(victim) ?? describe(keys)}`],
  );
  const works = await send(field.platform.gatewayUrl, { path: '/warehouse/v1/locations?limit=1', headers: { authorization: `Bearer ${b.victimToken}` } });
  category.check("B's key still authenticates", works.status === 200 ? [] : [`B's key: ${describe(works)}`]);
}

const ownPage: Judge = (answer) => (answer.status === 200 && Array.isArray(answer.json?.data) ? [] : [`${describe(answer)}, expected 200 with a list`]);
