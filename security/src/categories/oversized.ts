import { randomUUID } from 'node:crypto';
import { gzipSync, deflateSync, brotliCompressSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { withoutHashTag } from '@platform/core';
import { idsFor, type Fixtures } from '../support/fixtures';
import { describe, type Answer } from '../support/http';
import { answered, refused, refusedWith, type Judge } from '../support/judge';
import { GATEWAY_HEADERS_TIMEOUT_MS, GATEWAY_REQUEST_TIMEOUT_MS, type Battlefield } from '../support/platform';
import { rawExchange, type RawAnswer } from '../support/raw';
import type { Category } from '../support/recorder';
import { contractRoutes } from '../support/routes';

/**
 * Category e: bodies that are too big, that make the answer big, that the platform would have
 * to inflate or recurse into, and clients that send too slowly (contract sections 2 and 7).
 */

const MIB = 1024 * 1024;
/** Where the gateway keeps idempotency records: `<QUEUE_PREFIX>:gateway:` (gateway/src/redis.ts) + `idem:` (gateway/src/app.ts). */
const idempotencyKeys = (queuePrefix: string) => `${withoutHashTag(queuePrefix)}:gateway:idem:*`;
/** A record may hold a stored answer of up to 1 MiB, plus its headers and hashes. */
const RECORD_LIMIT_BYTES = MIB + 64 * 1024;
/** A 400 that lists at most 100 problems is a few tens of KiB at most. */
const SMALL_ERROR_BYTES = 64 * 1024;
// Node checks header and request timeouts once a second, so an answer may take that much longer.
const TIMEOUT_SLACK_MS = 2_500;

/** A JSON object of exactly `size` bytes: `{"name":"xxx…"}` (the field is the one a route takes). */
function paddedBody(field: string, size: number): Buffer {
  const overhead = `{"${field}":""}`.length;
  return Buffer.from(`{"${field}":"${'x'.repeat(size - overhead)}"}`);
}

function unknownFields(count: number, extra: Record<string, unknown> = {}): Buffer {
  const fields = Array.from({ length: count }, (_, i) => `"unknown_${i}":0`);
  const known = Object.entries(extra).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  return Buffer.from(`{${[...known, ...fields].join(',')}}`);
}

function deepArray(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

function deepObject(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** 400 with at most 100 errors, `errors_total` counting them all, and a small body. */
function smallTooManyErrors(atLeast: number): Judge {
  return (answer) => {
    const problems = refusedWith(400)(answer);
    if (answer.status !== 400) return problems;
    const error = answer.json?.error;
    if (!Array.isArray(error?.errors) || error.errors.length > 100) problems.push(`errors[] has ${error?.errors?.length} elements (at most 100)`);
    if (typeof error?.errors_total !== 'number' || error.errors_total < atLeast)
      problems.push(`errors_total is ${error?.errors_total} (expected at least ${atLeast})`);
    if (answer.raw.length > SMALL_ERROR_BYTES) problems.push(`a ${answer.raw.length}-byte answer to a ${Math.round(atLeast / 1000)}k-field body`);
    return problems;
  };
}

/** The final answer of a raw exchange as a contract error: status, code, JSON body and the usual headers. */
function rawErrorProblems(answer: RawAnswer, status: number, code: string): string[] {
  if (answer.status !== status)
    return [`${answer.status || 'no answer'}${answer.statusLines.length > 1 ? ` after ${answer.statusLines[0]}` : ''}, expected ${status} ${code}`];
  const problems: string[] = [];
  if (answer.json?.error?.code !== code) problems.push(`body ${answer.body.slice(0, 120) || '(empty)'}, expected the error body with code ${code}`);
  if (!/^application\/json/.test(answer.headers['content-type'] ?? '')) problems.push(`content-type ${answer.headers['content-type'] ?? '(none)'}`);
  if (!answer.headers['x-request-id']) problems.push('no x-request-id');
  if (answer.headers['x-content-type-options'] !== 'nosniff') problems.push('no x-content-type-options: nosniff');
  return problems;
}

/** Idempotency records over the limit; none found at all means the battery looks in the wrong place. */
async function oversizedRecords(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let records = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      records++;
      const bytes = Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      if (bytes > RECORD_LIMIT_BYTES) found.push(`${key.slice(0, 60)}… holds ${(bytes / MIB).toFixed(1)} MiB`);
    }
  } while (cursor !== '0');
  return records === 0 ? [`no idempotency record under ${pattern}: the gateway's key naming changed, update the battery`] : found;
}

export async function attackWithBodies(field: Battlefield, a: Fixtures, category: Category): Promise<void> {
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    a.tenant.call(method, path, body, headers, { timeoutMs: 15_000 });
  const check = (input: string, answer: Answer, judge: Judge) => category.check(input, judge(answer));
  const gatewayPort = Number(new URL(field.platform.gatewayUrl).port);
  const item = `/warehouse/v1/items/${a.ids['warehouse:items']![0]}`;
  const targets = [
    { path: '/events/v0/events', field: 'name' },
    { path: '/warehouse/v1/items', field: 'name' },
    { path: '/pipelines/v3/pipelines', field: 'name' },
  ];

  // Size: over 1 MiB (declared or chunked) is 413; exactly 1 MiB is not.
  for (const target of targets) {
    check(`POST ${target.path} 1 MiB + 1 byte`, await call('POST', target.path, paddedBody(target.field, MIB + 1)), refusedWith(413, 'payload_too_large'));
    check(
      `POST ${target.path} 2 MiB chunked`,
      await call('POST', target.path, paddedBody(target.field, 2 * MIB), { 'transfer-encoding': 'chunked' }),
      refusedWith(413, 'payload_too_large'),
    );
    check(`POST ${target.path} exactly 1 MiB`, await call('POST', target.path, paddedBody(target.field, MIB)), (answer) =>
      answer.status === 413 ? ['413 for a body of exactly 1 MiB'] : answered(answer),
    );
  }
  check('PATCH item 1 MiB + 1 byte', await call('PATCH', item, paddedBody('name', MIB + 1)), refusedWith(413, 'payload_too_large'));
  check(
    'POST /admin/v1/workspaces 1 MiB + 1 byte',
    await field.admin('POST', '/admin/v1/workspaces', paddedBody('name', MIB + 1)),
    refusedWith(413, 'payload_too_large'),
  );

  // Amplification: 45,000 unknown fields are one small 400, stored or not.
  const redis = new Redis(field.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const many = 45_000;
    for (const target of [...targets, { path: item, field: 'name', method: 'PATCH' }]) {
      const method = 'method' in target ? target.method : 'POST';
      check(`${method} ${target.path} ${many} unknown fields`, await call(method, target.path, unknownFields(many)), smallTooManyErrors(many));
      const key = `amplify-${randomUUID()}`;
      check(
        `${method} ${target.path} ${many} unknown fields with an Idempotency-Key`,
        await call(method, target.path, unknownFields(many), { 'idempotency-key': key }),
        smallTooManyErrors(many),
      );
    }
    check(
      `POST /admin/v1/workspaces ${many} unknown fields`,
      await field.admin('POST', '/admin/v1/workspaces', unknownFields(many, { name: 'x' })),
      smallTooManyErrors(many),
    );

    // A small bulk request whose answer is about 2 MiB: 100 entries on one item holding 20 metadata keys of 500 characters.
    const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${String(i).padStart(2, '0')}${'k'.repeat(497)}`, 'v'.repeat(500)]));
    const big = await call('POST', '/warehouse/v1/items', { sku: `BIG-${randomUUID().slice(0, 8)}`, name: 'big metadata', metadata });
    if (big.status !== 201) category.fail('set-up: an item with 20 metadata keys of 500 characters', describe(big));
    else {
      const entries = (n: number) => ({ items: Array.from({ length: n }, (_, i) => ({ id: big.json.id, name: `bulk ${i}` })) });
      const key = `bulk-${randomUUID()}`;
      const first = await call('POST', '/warehouse/v1/items/bulk', entries(100), { 'idempotency-key': key });
      check('POST /items/bulk with 100 entries (answer about 2 MiB) and an Idempotency-Key', first, (answer) =>
        answer.status === 200 && answer.json?.results?.length === 100 ? [] : [`${describe(answer)}, expected 200 with 100 results`],
      );
      const again = await call('POST', '/warehouse/v1/items/bulk', entries(100), { 'idempotency-key': key });
      check('the same bulk again with the same key: runs again (an answer over 1 MiB is not stored)', again, (answer) =>
        answer.headers['idempotent-replayed'] === 'true' ? [`replayed a stored ${first.raw.length}-byte answer`] : answered(answer),
      );
      check('POST /items/bulk with 101 entries', await call('POST', '/warehouse/v1/items/bulk', entries(101)), refusedWith(400));
    }
    category.check('no idempotency record in Redis holds more than 1 MiB', await oversizedRecords(redis, idempotencyKeys(field.platform.queuePrefix)));
  } finally {
    redis.disconnect();
  }

  // Idempotency scope is the canonical route: another spelling of the same item replays.
  const idemKey = `canonical-${randomUUID()}`;
  const patch = { name: `canonical ${idemKey.slice(-6)}` };
  const original = await call('PATCH', item, patch, { 'idempotency-key': idemKey });
  for (const spelling of [item.toUpperCase().replace('/WAREHOUSE/V1/ITEMS/', '/warehouse/v1/items/'), `${item}/`]) {
    const replay = await call('PATCH', spelling, patch, { 'idempotency-key': idemKey });
    check(`PATCH ${spelling === `${item}/` ? 'item/ (trailing slash)' : 'ITEM-ID (upper case)'} with the key of an earlier PATCH`, replay, (answer) =>
      original.status === 200 && answer.status === 200 && answer.headers['idempotent-replayed'] === 'true'
        ? []
        : [`${describe(answer)}, replayed: ${String(answer.headers['idempotent-replayed'] ?? 'no')} (first: ${describe(original)})`],
    );
  }

  // Deep nesting: the whole body, a metadata value, an unknown field.
  for (const [name, text] of [
    ['array 100,000 deep as the body', deepArray(100_000)],
    ['object 50,000 deep as the body', deepObject(50_000)],
    ['array 100,000 deep as a metadata value', `{"sku":"DEEP-1","name":"deep","metadata":{"k":${deepArray(100_000)}}}`],
    ['object 50,000 deep in an unknown field', `{"sku":"DEEP-2","name":"deep","deep":${deepObject(50_000)}}`],
  ] as const) {
    check(`POST /warehouse/v1/items ${name}`, await call('POST', '/warehouse/v1/items', Buffer.from(text)), refused);
  }
  check(
    'POST /admin/v1/workspaces array 100,000 deep',
    await field.admin('POST', '/admin/v1/workspaces', Buffer.from(`{"name":${deepArray(100_000)}}`)),
    refused,
  );

  // A request body with a content-encoding: 415, never inflated.
  const json = Buffer.from(JSON.stringify({ name: 'encoded', code: `ENC-${randomUUID().slice(0, 6)}` }));
  for (const [encoding, bytes] of [
    ['gzip', gzipSync(json)],
    ['deflate', deflateSync(json)],
    ['br', brotliCompressSync(json)],
    ['gzip (8 MiB of zeros in 8 KiB)', gzipSync(Buffer.alloc(8 * MIB))],
  ] as const) {
    const header = encoding.split(' ')[0]!;
    check(
      `POST /warehouse/v1/locations content-encoding: ${encoding}`,
      await call('POST', '/warehouse/v1/locations', bytes, { 'content-encoding': header }),
      refusedWith(415, 'unsupported_media_type'),
    );
  }
  check(
    'POST /warehouse/v1/locations content-encoding: identity',
    await call('POST', '/warehouse/v1/locations', json, { 'content-encoding': 'identity' }),
    (answer) => (answer.status === 201 ? [] : [`${describe(answer)}, expected 201`]),
  );

  // Expect: 100-continue is answered with the final status when the token or the declared size already decide it.
  const token = a.tenant.token();
  const expectContinue = (authorization: string, length: number) =>
    rawExchange({
      port: gatewayPort,
      head: `POST /warehouse/v1/locations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`,
      stopAtFirstHead: true,
      maxMs: 3_000,
    });
  const tooLarge = await expectContinue(`Bearer ${token}`, 2 * MIB);
  category.check(
    'Expect: 100-continue with Content-Length 2 MiB',
    tooLarge.statusLines[0]?.includes(' 413') ? [] : [`first answer ${tooLarge.statusLines[0] ?? 'none'}, expected 413 before any 100 Continue`],
  );
  const badToken = await expectContinue('Bearer plk_not_a_real_token_000000000000000000', 100);
  category.check(
    'Expect: 100-continue with an invalid token',
    badToken.statusLines[0]?.includes(' 401') ? [] : [`first answer ${badToken.statusLines[0] ?? 'none'}, expected 401 before any 100 Continue`],
  );

  // Slow clients: headers trickled past the headers timeout, a body trickled past the request timeout.
  const events = `/events/v0/events/${
    idsFor(
      a,
      contractRoutes().find((r) => r.path === '/events/:id')!,
    )[0]
  }`;
  const [slowHeaders, slowBody] = await Promise.all([
    rawExchange({
      port: gatewayPort,
      head: `GET ${events} HTTP/1.1\r\nHost: 127.0.0.1\r\n`,
      drip: `Authorization: Bearer ${token}\r\nX-Drip: ${'a'.repeat(200)}`,
      everyMs: 100,
      maxMs: GATEWAY_HEADERS_TIMEOUT_MS + TIMEOUT_SLACK_MS + 2_000,
    }),
    rawExchange({
      port: gatewayPort,
      head: `POST /warehouse/v1/locations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n`,
      drip: `{"name":"slow","code":"SLOW"${' '.repeat(200)}`,
      everyMs: 100,
      maxMs: GATEWAY_REQUEST_TIMEOUT_MS + TIMEOUT_SLACK_MS + 2_000,
    }),
  ]);
  category.check(`headers trickled for more than ${GATEWAY_HEADERS_TIMEOUT_MS} ms`, rawErrorProblems(slowHeaders, 408, 'request_timeout'));
  category.check(`a body trickled for more than ${GATEWAY_REQUEST_TIMEOUT_MS} ms`, rawErrorProblems(slowBody, 408, 'request_timeout'));
}
