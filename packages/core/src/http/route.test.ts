import { randomUUID } from 'node:crypto';
import express, { Router } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { errorHandler, jsonBody, platformHeaders } from './http';
import { createLogger } from '../process/logger';
import { mountRoutes, route } from './route';
import { codePointString, stringMap, Timestamp, Uuid } from './validation';
import { ListQuery, encodeCursor } from './pagination';
import type { WorkspaceId } from './http';
import { DEFAULT_SERVICE_QUOTA_LIMITS } from '../data/quotas';

const received: unknown[] = [];

/** A router built like every service's: the route builder validates, the handler echoes what it got. */
function app() {
  const definitions = {
    'POST /things/:id': route(
      {
        params: z.object({ id: Uuid }),
        query: ListQuery,
        body: z.strictObject({ name: codePointString(1, 20).optional(), at: Timestamp.optional(), metadata: stringMap(z.string()).optional() }),
      },
      ({ body }) => {
        received.push(body);
        return { status: 200, body };
      },
    ),
    'POST /bulk': route({ body: z.strictObject({ items: z.array(z.unknown()) }), entries: ['items'] }, ({ body }) => ({ status: 200, body })),
    'GET /plain': route({}, () => ({ status: 200, body: { ok: true } })),
    // Two routes of one depth with a param at the same place, under different literals.
    'POST /others/:other_id/parts/:part_id': route({ params: z.object({ other_id: Uuid, part_id: Uuid }) }, () => ({ status: 200 })),
    'POST /things/:id/parts/:thing_part_id': route({ params: z.object({ id: Uuid, thing_part_id: Uuid }) }, () => ({ status: 200 })),
  };
  const specs = Object.fromEntries(Object.keys(definitions).map((key) => [key, { scope: 'events:read' as const }]));
  const a = express();
  a.set('query parser', 'simple');
  a.use(platformHeaders());
  a.use((req, _res, next) => {
    req.identity = { workspaceId: 'w' as WorkspaceId, keyId: 'k', scopes: null, quotas: DEFAULT_SERVICE_QUOTA_LIMITS };
    next();
  });
  a.use(jsonBody());
  a.use(mountRoutes(Router(), specs, definitions));
  a.use(errorHandler(createLogger('test', 'silent')));
  return a;
}

const ID = '0b7e0c2a-93a4-4a5e-8a55-1f0c2a7d9e11';

function problems(body: { error: { errors?: { in: string; field: string; code: string }[] } }) {
  return (body.error.errors ?? []).map((e) => [e.in, e.field, e.code]);
}

describe('the string rule, applied by the route builder to everything a client sends', () => {
  test.each([
    ['NUL in a body string', '{"name":"a\\u0000b"}', [['body', 'name', 'invalid_format']]],
    ['a lone high surrogate', '{"name":"\\ud800"}', [['body', 'name', 'invalid_format']]],
    ['a lone low surrogate', '{"name":"x\\udc00"}', [['body', 'name', 'invalid_format']]],
    ['a reversed pair', '{"name":"\\udc00\\ud800"}', [['body', 'name', 'invalid_format']]],
    ['NUL in a metadata value', '{"metadata":{"k":"\\u0000"}}', [['body', 'metadata.k', 'invalid_format']]],
    ['NUL in a metadata key', '{"metadata":{"k\\u0000":"v"}}', [['body', 'metadata.k\\u0000', 'invalid_format']]],
    [
      'a lone surrogate in a nested unknown key',
      '{"x":{"y":[{"\\ud800":1}]}}',
      [
        ['body', 'x.y.0.\\ud800', 'invalid_format'],
        ['body', 'x', 'unknown_field'],
      ],
    ],
  ])('%s is 400 invalid_format at the field, with every other problem', async (_name, raw, expected) => {
    const res = await request(app()).post(`/things/${ID}`).set('content-type', 'application/json').send(raw).expect(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(problems(res.body)).toEqual(expected);
  });

  test('a pair of surrogates (an emoji) is well-formed and passes unchanged', async () => {
    const res = await request(app()).post(`/things/${ID}`).set('content-type', 'application/json').send('{"name":"\\ud83d\\ude00"}').expect(200);
    expect(res.body).toEqual({ name: '😀' });
  });

  test.each([
    ['%00', 'id'],
    ['%C0', 'id'],
    ['%ED%A0%80', 'id'],
    ['%ZZ', 'id'],
    ['%F4%90%80%80', 'id'],
  ])('a path param %s is 400 in path, never 500', async (escape, field) => {
    const res = await request(app()).post(`/things/${escape}`).expect(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', request_id: expect.any(String) });
    expect(problems(res.body)).toEqual([['path', field, 'invalid_format']]);
  });

  test("a param that does not decode is named after the route the request's literal segments match", async () => {
    const res = await request(app()).post(`/things/${randomUUID()}/parts/%C0`).expect(400);
    expect(problems(res.body)).toEqual([['path', 'thing_part_id', 'invalid_format']]);
  });

  test.each([
    ['?cursor=%C0', 'cursor'],
    ['?cursor=%00', 'cursor'],
    ['?cursor=%ED%A0%80', 'cursor'],
    ['?cursor=%ZZ', 'cursor'],
    ['?%C0=1', '%C0'],
    ['?x=%FF', 'x'],
  ])('a query %s that does not decode to such a string is 400 (not turned into U+FFFD)', async (query, field) => {
    const res = await request(app()).post(`/things/${ID}${query}`).expect(400);
    expect(problems(res.body)).toContainEqual(['query', field, 'invalid_format']);
  });

  test('the raw query is checked on routes without a query schema too', async () => {
    expect(problems((await request(app()).get('/plain?sku=%C0').expect(400)).body)).toEqual([['query', 'sku', 'invalid_format']]);
    await request(app()).get('/plain?sku=caf%C3%A9+ok').expect(200);
  });

  test('bulk entries are left to the handler, the rest of the body is not', async () => {
    await request(app()).post('/bulk').set('content-type', 'application/json').send('{"items":[{"a":"\\u0000"}]}').expect(200);
    const res = await request(app()).post('/bulk').set('content-type', 'application/json').send('{"items":[],"\\u0000":1}').expect(400);
    expect(problems(res.body)).toEqual([
      ['body', '\\u0000', 'invalid_format'],
      ['body', '\\u0000', 'unknown_field'],
    ]);
  });

  test('a body nested 100,000 deep is walked without overflowing the stack', async () => {
    const raw = `{"x":${'['.repeat(100_000)}"\\u0000"${']'.repeat(100_000)}}`;
    const res = await request(app()).post(`/things/${ID}`).set('content-type', 'application/json').send(raw).expect(400);
    expect(problems(res.body)).toEqual([
      ['body', expect.stringMatching(/^x\.0\.0\.0.*…$/), 'invalid_format'],
      ['body', 'x', 'unknown_field'],
    ]);
  });
});

describe('timestamps and cursors', () => {
  test.each(['0000-12-31T23:59:59Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:00:00-02:00'])('%s is outside the UTC years 0001-9999: 400', async (at) => {
    const res = await request(app()).post(`/things/${ID}`).send({ at }).expect(400);
    expect(problems(res.body)).toEqual([['body', 'at', 'out_of_range']]);
  });

  test.each(['0001-01-01T00:00:00Z', '0001-01-01T01:00:00+01:00', '9999-12-31T23:59:59.999Z', '9999-12-31T22:00:00-01:59'])(
    '%s is inside: accepted',
    async (at) => {
      await request(app()).post(`/things/${ID}`).send({ at }).expect(200);
    },
  );

  test('a forged cursor is reported with the other problems of the query', async () => {
    const forged = Buffer.from(JSON.stringify(['0000-01-01T00:00:00.000Z', ID])).toString('base64url');
    const res = await request(app()).post(`/things/${ID}?limit=0&cursor=${forged}`).expect(400);
    expect(problems(res.body)).toEqual([
      ['query', 'limit', 'too_small'],
      ['query', 'cursor', 'invalid_format'],
    ]);
    await request(app())
      .post(`/things/${ID}?cursor=${encodeCursor({ createdAt: new Date(), id: ID })}`)
      .expect(200);
  });
});

describe('metadata maps keep every key as sent', () => {
  test('__proto__ and constructor are ordinary keys, stored and returned', async () => {
    received.length = 0;
    const res = await request(app())
      .post(`/things/${ID}`)
      .set('content-type', 'application/json')
      .send('{"metadata":{"__proto__":"x","constructor":"y"}}')
      .expect(200);
    expect(res.text).toBe('{"metadata":{"__proto__":"x","constructor":"y"}}');
    const metadata = (received[0] as { metadata: object }).metadata;
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(Object.keys(metadata)).toEqual(['__proto__', 'constructor']);
  });
});

describe('errors[] is bounded', () => {
  test('45,000 unknown fields give 100 elements and errors_total, in a small answer', async () => {
    const body = `{${Array.from({ length: 45_000 }, (_, i) => `"f${i}":1`).join(',')}}`;
    const res = await request(app()).post(`/things/${ID}`).set('content-type', 'application/json').send(body).expect(400);
    expect(res.body.error.errors).toHaveLength(100);
    expect(res.body.error.errors_total).toBe(45_000);
    expect(res.body.error.errors[0]).toEqual({ in: 'body', field: 'f0', code: 'unknown_field', message: 'is not a known field' });
    expect(res.text.length).toBeLessThan(16 * 1024);
  });

  test('errors_total is absent at 100 problems or fewer', async () => {
    const body = Object.fromEntries(Array.from({ length: 99 }, (_, i) => [`f${i}`, 1]));
    const res = await request(app()).post(`/things/${ID}?cursor=x`).send(body).expect(400);
    expect(res.body.error.errors).toHaveLength(100);
    expect(res.body.error).not.toHaveProperty('errors_total');
  });
});
