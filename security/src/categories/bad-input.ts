import { randomUUID } from 'node:crypto';
import { parseRouteKey, ROUTES, SERVICES, type ServiceName } from '@platform/core';
import {
  BAD_ESCAPES,
  BAD_STRINGS,
  BAD_TIMESTAMPS,
  badInputRequests,
  FORGED_CURSORS,
  judgeBadInputAnswer,
  routesCovered,
  type BadInputRequest,
  type Refusal,
} from '@platform/testing';
import { idsFor, templateBody, type Fixtures } from '../support/fixtures';
import { forEachLimited, type Answer, type SendOptions } from '../support/http';
import { perBulkEntry, refused, storedAsSentOrRefused, type Judge } from '../support/judge';
import type { Battlefield } from '../support/platform';
import type { Category } from '../support/recorder';
import { adminRoutes, bodyLeaves, contractRoutes, fillPath, operationOf, withValue, type BodyLeaf, type Route } from '../support/routes';

/**
 * Category a: strings and dates the database cannot hold (contract section 2), through the
 * gateway on every route of the contract route table, and on the admin API. Never a 5xx, never
 * a hang, never silently changed: refused with 400 and the error body naming the field.
 *
 * The contract routes get the shared generator (`badInputRequests` in @platform/testing, which
 * walks ROUTES with each service's OpenAPI document) and what it does not send: bodies with
 * bytes that are not UTF-8, `__proto__` metadata keys that must come back as sent, bodies that
 * are not JSON objects. The admin API has no OpenAPI document: the battery walks its route table
 * (`ADMIN_ROUTES`, contract section 3) with the same bad values.
 */

/** Bytes that are not UTF-8, put raw into a JSON string: decoding them would change the input. */
export const BAD_BYTES = [
  { name: 'byte FF', bytes: [0xff] },
  { name: 'overlong NUL C0 80', bytes: [0xc0, 0x80] },
  { name: 'UTF-8-encoded surrogate ED A0 80', bytes: [0xed, 0xa0, 0x80] },
  { name: 'beyond U+10FFFF F4 90 80 80', bytes: [0xf4, 0x90, 0x80, 0x80] },
  { name: 'truncated sequence E2 82', bytes: [0xe2, 0x82] },
];

interface Attack {
  input: string;
  admin: boolean;
  request: SendOptions;
  judge: Judge;
}

/** The shared generator's verdict, plus the battery's own: an answer came at all. */
function sharedJudge(request: BadInputRequest): Judge {
  return (answer) =>
    answer.status === 0 ? [`no answer (${answer.error})`] : judgeBadInputAnswer(request, { status: answer.status, body: answer.json ?? answer.text });
}

/** A request refused at `refuse` (400 naming it), judged like the shared generator's. */
function refusedAt(route: Route, label: string, path: string, refuse: Refusal): Judge {
  return sharedJudge({ route: `${route.method} ${route.path}`, method: route.method, path, label, refuse });
}

// ---- the contract routes: the shared generator ----

function generatedAttacks(field: Battlefield, fixtures: Fixtures): Attack[] {
  const routes = contractRoutes();
  return (Object.keys(ROUTES) as ServiceName[]).flatMap((service) => {
    const routeKeys = Object.keys(ROUTES[service]);
    const requests = badInputRequests(service, field.documents[service] as never, {
      // Real ids reach deeper than random ones: the handler, the database.
      params: (key, name) => {
        const { method, path } = parseRouteKey(key);
        const route = routes.find((r) => r.service === service && r.method === method && r.path === path)!;
        return idsFor(fixtures, route)[route.params.indexOf(name)];
      },
      // Bulk bodies are judged entry by entry (contract section 9).
      entries: Object.fromEntries(routeKeys.filter((key) => key.endsWith('/bulk')).map((key) => [key, 'items'])),
    });
    const missed = routeKeys.filter((key) => !routesCovered(requests).includes(key));
    if (missed.length > 0) throw new Error(`the shared bad-input generator left out ${service} routes: ${missed.join(', ')}`);
    const prefix = SERVICES[service].prefix;
    return requests.map((request) => ({
      input: `${request.method} ${prefix}${request.path.length > 140 ? `${request.path.slice(0, 140)}…` : request.path} ${request.label.slice(request.route.length + 2)}`,
      admin: false,
      request: { method: request.method, path: `${prefix}${request.path}`, ...(request.body === undefined ? {} : { body: request.body }) },
      judge: sharedJudge(request),
    }));
  });
}

// ---- bodies the shared generator does not send, for every route with a body ----

/** String leaves of an example body (schemas may omit nested ones), with timestamps told apart. */
function exampleLeaves(body: unknown, path: (string | number)[] = []): BodyLeaf[] {
  if (typeof body === 'string') return [{ path, kind: /^[+-]?\d{4,6}-\d\d-\d\dT/.test(body) ? 'date' : 'string' }];
  if (Array.isArray(body)) return body.length > 0 ? exampleLeaves(body[0], [...path, 0]) : [];
  if (body && typeof body === 'object') {
    const inner = Object.entries(body).flatMap(([k, v]) => exampleLeaves(v, [...path, k]));
    return path[path.length - 1] === 'metadata' ? [{ path, kind: 'map' }, ...inner] : inner;
  }
  return [];
}

function leavesOf(route: Route, field: Battlefield, template: unknown): BodyLeaf[] {
  const operation = operationOf(field.documents, route);
  const all = [...(operation?.bodySchema ? bodyLeaves(operation.document, operation.bodySchema) : []), ...exampleLeaves(template)];
  const seen = new Set<string>();
  return all.filter((leaf) => {
    const key = `${leaf.kind}:${leaf.path.join('.')}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** JSON text of `template` with these raw bytes as the value of a string leaf (or as a key). */
function withRawBytes(template: unknown, leaf: BodyLeaf | undefined, bytes: number[]): Buffer {
  const marker = `@@bytes${randomUUID()}@@`;
  const text = leaf ? JSON.stringify(withValue(template, leaf.path, marker)) : JSON.stringify({ ...(template as object), [marker]: 1 });
  const [before, after] = text.split(marker) as [string, string];
  return Buffer.concat([Buffer.from(before, 'utf8'), Buffer.from(bytes), Buffer.from(after, 'utf8')]);
}

/** In a bulk request a bad entry is refused on its own (contract section 9). */
function atEntry(route: Route, leafPath: (string | number)[], judge: Judge): Judge {
  return route.path.endsWith('/bulk') && typeof leafPath[1] === 'number' ? perBulkEntry(leafPath[1], judge) : judge;
}

function encodingAttacks(route: Route, field: Battlefield, fixtures: Fixtures, path: string): Omit<Attack, 'admin'>[] {
  const attacks: Omit<Attack, 'admin'>[] = [];
  const fresh = () => templateBody(fixtures, route, field.documents) ?? {};
  const leaves = leavesOf(route, field, fresh());
  const add = (input: string, body: unknown, judge: Judge) =>
    attacks.push({ input: `${route.method} ${path} body ${input}`, request: { method: route.method, path, body }, judge });

  const firstString = leaves.find((l) => l.kind === 'string' && l.path.length > 0);
  for (const bad of BAD_BYTES) {
    add(
      `${firstString ? firstString.path.join('.') : 'a key'} = raw ${bad.name}`,
      withRawBytes(fresh(), firstString, bad.bytes),
      firstString ? atEntry(route, firstString.path, refused) : refused,
    );
  }
  for (const leaf of leaves.filter((l) => l.kind === 'map')) {
    for (const key of ['__proto__', 'constructor']) {
      add(`${leaf.path.join('.')} key ${key}`, withValue(fresh(), [...leaf.path, key], 'kept'), atEntry(route, leaf.path, storedAsSentOrRefused(key, 'kept')));
    }
  }
  for (const text of ['[]', '"text"', 'null', '1', '{"a":', '{}{}', '{"a":1,"a":2']) add(`not a JSON object: ${text}`, Buffer.from(text), refused);
  return attacks;
}

// ---- the admin API: the battery's own walk, with the shared bad values ----

/** The admin API's lists (contract section 3): `limit` and `cursor`. */
const ADMIN_LIST_QUERY: Record<string, string[]> = {
  '/workspaces': ['limit', 'cursor'],
  '/workspaces/:id/api-keys': ['limit', 'cursor'],
};

function adminAttacks(route: Route, field: Battlefield, fixtures: Fixtures): Attack[] {
  const attacks: Attack[] = [];
  const ids = idsFor(fixtures, route);
  const base = fillPath(route, ids);
  const template = templateBody(fixtures, route, field.documents);
  const add = (input: string, path: string, body: unknown, judge: Judge) =>
    attacks.push({ input: `${route.method} ${input}`, admin: true, request: { method: route.method, path, body }, judge });

  route.params.forEach((param, i) => {
    for (const escape of BAD_ESCAPES.filter((e) => e !== '%')) {
      const path = fillPath(
        route,
        ids.map((id, j) => (j === i ? escape : id)),
      );
      add(path, path, template, refusedAt(route, `path ${param}=${escape}`, path, { in: 'path', field: param }));
    }
  });

  if (route.method === 'GET') {
    for (const name of ADMIN_LIST_QUERY[route.path] ?? []) {
      for (const escape of BAD_ESCAPES)
        add(`${base}?${name}=${escape}`, `${base}?${name}=${escape}`, undefined, refusedAt(route, `query ${name}`, base, { in: 'query', field: name }));
    }
    if (ADMIN_LIST_QUERY[route.path]) {
      for (const [what, cursor] of Object.entries(FORGED_CURSORS))
        add(`${base}?cursor=<${what}>`, `${base}?cursor=${cursor}`, undefined, refusedAt(route, 'cursor', base, { in: 'query', field: 'cursor' }));
    }
    for (const key of ['%00', '%ED%A0%80', '%FF', '%C0'])
      add(`${base}?${key}=1`, `${base}?${key}=1`, undefined, refusedAt(route, 'query name', base, { in: 'query' }));
  }

  if (template !== undefined) {
    for (const leaf of leavesOf(route, field, template)) {
      const name = leaf.path.join('.');
      if (leaf.kind === 'string') {
        for (const [what, bad] of Object.entries(BAD_STRINGS))
          add(`${base} body ${name} = ${what}`, base, withValue(template, leaf.path, bad), refusedAt(route, name, base, { in: 'body', field: name }));
      }
      if (leaf.kind === 'date') {
        for (const at of BAD_TIMESTAMPS)
          add(`${base} body ${name} = ${at}`, base, withValue(template, leaf.path, at), refusedAt(route, name, base, { in: 'body', field: name }));
      }
    }
    for (const [what, bad] of Object.entries(BAD_STRINGS))
      add(`${base} body key with ${what}`, base, withValue(template, [`u${bad}`], 1), refusedAt(route, 'key', base, { in: 'body' }));
    add(`${base} body key __proto__`, base, withValue(template, ['__proto__'], { polluted: 'yes' }), refused);
    attacks.push(...encodingAttacks(route, field, fixtures, base).map((a) => ({ ...a, admin: true })));
  }
  return attacks;
}

/** Paths under each prefix that match no route, with bad escapes: still a 4xx with the error body. */
function unmatchedPathAttacks(): Attack[] {
  const prefixes = [...Object.values(SERVICES).map((s) => s.prefix), '/admin/v1'];
  return prefixes.flatMap((prefix) =>
    ['%00', '%ZZ', '%', '%ED%A0%80', 'items%00', '%2e%2e/%2e%2e/admin/v1/workspaces'].map((tail) => ({
      input: `GET ${prefix}/${tail}`,
      admin: prefix === '/admin/v1',
      request: { method: 'GET', path: `${prefix}/${tail}` },
      judge: refused,
    })),
  );
}

export async function attackWithBadInput(field: Battlefield, fixtures: Fixtures, category: Category, deadline: number): Promise<void> {
  const withBody = contractRoutes().filter((route) => templateBody(fixtures, route, field.documents) !== undefined);
  const attacks = [
    ...generatedAttacks(field, fixtures),
    ...withBody.flatMap((route) => encodingAttacks(route, field, fixtures, fillPath(route, idsFor(fixtures, route))).map((a) => ({ ...a, admin: false }))),
    ...adminRoutes().flatMap((route) => adminAttacks(route, field, fixtures)),
    ...unmatchedPathAttacks(),
  ];
  const { skipped } = await forEachLimited(attacks, 8, deadline, async (attack) => {
    const answer: Answer = attack.admin
      ? await field.admin(attack.request.method!, attack.request.path, attack.request.body)
      : await fixtures.tenant.call(attack.request.method!, attack.request.path, attack.request.body);
    category.check(attack.input, attack.judge(answer));
  });
  for (const attack of skipped) category.fail(attack.input, 'not sent: the category ran out of time');
}
