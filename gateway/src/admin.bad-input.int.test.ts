import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ADMIN_ROUTES, parseRouteKey, type AdminRouteKey } from '@platform/core';
import { BAD_ESCAPES, BAD_STRINGS, BAD_TIMESTAMPS, FORGED_CURSORS, routesCovered, runBadInput, type BadInputRequest } from '@platform/testing';
import { ADMIN_ROUTE_SCHEMAS } from '@platform/admin-api';
import { ADMIN_TOKEN, httpClient, startGateway, type HttpClient, type TestGateway } from './test/gateway';

let gw: TestGateway;
let client: HttpClient;

beforeAll(async () => {
  gw = await startGateway();
  client = httpClient();
});
afterAll(async () => {
  await client.close();
  await gw.close();
});

const admin = (method: string, path: string, body?: unknown) => client.call(gw.url, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, body });

type Json = Record<string, any>;

const jsonSchemaOf = (schema: z.ZodType): Json => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });

/** Every string a body schema declares (array elements as `.0`), and whether it is a timestamp. */
function stringFields(schema: Json, path: string[] = []): { path: string[]; timestamp: boolean }[] {
  return ((schema.anyOf as Json[] | undefined) ?? [schema]).flatMap((branch) => {
    if (branch.type === 'string') return [{ path, timestamp: branch.format === 'date-time' }];
    if (branch.type === 'object')
      return Object.entries((branch.properties ?? {}) as Json).flatMap(([name, inner]) => stringFields(inner as Json, [...path, name]));
    if (branch.type === 'array') return stringFields(branch.items as Json, [...path, '0']);
    return [];
  });
}

/** `template` with `value` at `path` (a numeric segment makes an array). */
function withValue(template: Json, [head, ...rest]: string[], value: unknown): Json {
  const inner = rest.length === 0 ? value : /^\d+$/.test(rest[0]!) ? [value] : withValue((template[head!] ?? {}) as Json, rest, value);
  return { ...template, [head!]: inner };
}

/**
 * Bad names, keys, timestamps, escapes and cursors on every route of `ADMIN_ROUTES`, found from
 * each route's schemas (`ADMIN_ROUTE_SCHEMAS`), judged like the services' route walk.
 */
function adminRequests(workspaceId: string): BadInputRequest[] {
  const out: BadInputRequest[] = [];
  for (const route of Object.keys(ADMIN_ROUTES) as AdminRouteKey[]) {
    const schemas: { params?: z.ZodType; query?: z.ZodType; body?: z.ZodType } = ADMIN_ROUTE_SCHEMAS[route];
    const { method, path: pattern } = parseRouteKey(route);
    const values: Record<string, string> = { id: workspaceId, key_id: randomUUID() };
    const pathWith = (param?: string, raw?: string) => pattern.replace(/:([a-z_]+)/g, (_all, name: string) => (name === param ? raw! : values[name]!));
    const base = pathWith();
    const add = (label: string, path: string, refuse?: BadInputRequest['refuse'], body?: unknown) =>
      out.push({
        route,
        method,
        path,
        label: `${route}: ${label}`,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(refuse ? { refuse } : {}),
      });

    for (const [, param] of pattern.matchAll(/:([a-z_]+)/g)) {
      for (const escape of BAD_ESCAPES) add(`path ${param} ${escape}`, pathWith(param, escape), { in: 'path', field: param });
    }
    for (const name of Object.keys(schemas.query ? (jsonSchemaOf(schemas.query).properties as Json) : {})) {
      for (const escape of BAD_ESCAPES) add(`query ${name} ${escape}`, `${base}?${name}=${escape}`, { in: 'query', field: name });
      if (name === 'cursor')
        for (const [what, cursor] of Object.entries(FORGED_CURSORS))
          add(`forged cursor (${what})`, `${base}?cursor=${cursor}`, { in: 'query', field: 'cursor' });
    }
    if (!schemas.body) continue;
    const body = jsonSchemaOf(schemas.body);
    const template: Json = Object.fromEntries(((body.required ?? []) as string[]).map((name) => [name, 'k']));
    for (const field of stringFields(body)) {
      const dotted = field.path.join('.');
      const refuse = { in: 'body' as const, field: dotted };
      for (const [what, bad] of Object.entries(BAD_STRINGS)) {
        add(`${what} in ${dotted}`, base, refuse, withValue(template, field.path, bad));
        if (field.timestamp) add(`${what} after a valid ${dotted}`, base, refuse, withValue(template, field.path, `2030-01-01T00:00:00Z${bad}`));
      }
      if (field.timestamp) for (const at of BAD_TIMESTAMPS) add(`${dotted} ${at}`, base, refuse, withValue(template, field.path, at));
      else add(`${dotted} of 100,000 characters`, base, undefined, withValue(template, field.path, 'é'.repeat(100_000)));
    }
    for (const [what, bad] of Object.entries(BAD_STRINGS)) add(`${what} in an unknown key`, base, { in: 'body' }, { ...template, [`x${bad}`]: 1 });
  }
  return out;
}

test('the admin API refuses bad strings, timestamps, escapes and cursors with a contract 400, never a 5xx', async () => {
  const workspace = await admin('POST', '/workspaces', { name: 'Acme' });
  expect(workspace.status).toBe(201);
  const requests = adminRequests(workspace.body.id);
  expect(routesCovered(requests)).toEqual(Object.keys(ADMIN_ROUTES).sort());
  const failures = await runBadInput(requests, (r) => admin(r.method, r.path, r.body));
  expect(failures).toEqual([]);
  const keys = await admin('GET', `/workspaces/${workspace.body.id}/api-keys`);
  expect(keys.body.data).toEqual([]);
});
