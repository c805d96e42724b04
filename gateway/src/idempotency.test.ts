import { ApiError } from '@platform/core';
import { bodySha256 } from '@platform/core';
import {
  idempotencyKeys,
  idempotencyQuotaReached,
  idempotencyScope,
  MAX_STORED_RESPONSE_BYTES,
  parseIdempotencyKey,
  replayableHeaders,
  requestInProgress,
  reusedWithDifferentBody,
  storableAnswer,
  storedAnswerBytes,
  takesIdempotencyKey,
} from './idempotency';
import { gatewayRedisPrefix } from './redis';

describe('parseIdempotencyKey', () => {
  test('1-255 visible ASCII characters are a key', () => {
    for (const key of ['a', 'order-2024-12-01/42', '~'.repeat(255), '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~']) expect(parseIdempotencyKey(key)).toBe(key);
  });

  test('empty, too long or not visible ASCII is a 400 naming the header', () => {
    const cases: [string | string[], string][] = [
      ['', 'invalid_format'],
      ['k'.repeat(256), 'too_long'],
      ['a b', 'invalid_format'],
      ['tab\t', 'invalid_format'],
      ['clé', 'invalid_format'],
      ['nul\u0000', 'invalid_format'],
      ['del\u007f', 'invalid_format'],
      [['a', 'b'], 'invalid_format'],
    ];
    for (const [value, code] of cases) {
      const error = parseIdempotencyKey(value);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).options.errors).toEqual([{ in: 'header', field: 'Idempotency-Key', code, message: expect.any(String) }]);
    }
  });
});

test('only POST and PATCH take a key', () => {
  expect(['POST', 'PATCH'].every(takesIdempotencyKey)).toBe(true);
  expect(['GET', 'HEAD', 'DELETE', 'PUT', 'OPTIONS', undefined].some(takesIdempotencyKey)).toBe(false);
});

test('the record key separates workspace, method, path and key, and stays short', () => {
  const recordKey = (workspaceId: string, method: string, path: string, key: string) =>
    idempotencyKeys('p:gateway:', workspaceId).record(idempotencyScope(workspaceId, method, path, key).id);
  const base = recordKey('ws-1', 'POST', '/events/v0/events', 'k');
  expect(recordKey('ws-1', 'POST', '/events/v0/events', 'k')).toBe(base);
  const others = [
    recordKey('ws-2', 'POST', '/events/v0/events', 'k'),
    recordKey('ws-1', 'PATCH', '/events/v0/events', 'k'),
    recordKey('ws-1', 'POST', '/events/v0/events/x', 'k'),
    recordKey('ws-1', 'POST', '/events/v0/events', 'k2'),
  ];
  expect(new Set([base, ...others]).size).toBe(5);
  expect(idempotencyScope('ws-1', 'POST', '/p', 'k'.repeat(255)).id.length).toBeLessThan(60);
});

/** The hash tag Redis Cluster hashes a key by: the text inside its first `{...}` when not empty. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open !== -1 && close > open + 1 ? key.slice(open + 1, close) : key;
}

test('a workspace’s records and byte count share its id as hash tag (one Cluster slot), under the platform’s prefix, whatever QUEUE_PREFIX', () => {
  const workspaceId = '3f0c5a4e-0000-4000-8000-000000000001';
  for (const queuePrefix of ['platform', '{acme}', 'a{b}']) {
    const keys = idempotencyKeys(gatewayRedisPrefix(queuePrefix), workspaceId);
    const all = [keys.record(idempotencyScope(workspaceId, 'POST', '/events/v0/events', 'k').id), keys.answers, keys.claims, keys.sizes];
    for (const key of all) {
      expect(hashTag(key)).toBe(workspaceId);
      expect(key.startsWith(gatewayRedisPrefix(queuePrefix))).toBe(true);
    }
    expect(new Set(all).size).toBe(4);
  }
});

describe('what an answer counts, and which answers are stored', () => {
  const held = (status: number, bodyBytes: number, headers: Record<string, string> = { 'content-type': 'application/json' }) => ({
    status,
    headers,
    body: Buffer.alloc(bodyBytes, 0x61),
  });

  test('status, headers and body as stored, in bytes', () => {
    const response = { status: 201, headers: { location: '/é' }, body: Buffer.from([0xff, 0x00]) };
    expect(storedAnswerBytes(response)).toBe(3 + Buffer.byteLength('{"location":"/é"}') + 2);
  });

  test('a 5xx, nothing held, or more than 1 MiB as stored (headers included) is not stored', () => {
    expect(storableAnswer(undefined)).toBeUndefined();
    expect(storableAnswer(held(500, 10))).toBeUndefined();
    expect(storableAnswer(held(503, 0))).toBeUndefined();
    const headersBytes = Buffer.byteLength(JSON.stringify({ 'content-type': 'application/json' }));
    const fits = storableAnswer(held(200, MAX_STORED_RESPONSE_BYTES - 3 - headersBytes));
    expect(fits && storedAnswerBytes(fits)).toBe(MAX_STORED_RESPONSE_BYTES);
    expect(storableAnswer(held(200, MAX_STORED_RESPONSE_BYTES - 3 - headersBytes + 1))).toBeUndefined();
    expect(storableAnswer(held(409, 10))?.status).toBe(409);
  });

  test('the quota refusal is 429 rate_limited with Retry-After, naming the quota and its limit', () => {
    const error = idempotencyQuotaReached(10_240, 86_400);
    expect(error).toMatchObject({
      status: 429,
      code: 'rate_limited',
      options: { details: { quota: 'idempotency_bytes', limit: 10_240 }, headers: { 'retry-after': '86400' } },
    });
  });
});

test('the body hash is SHA-256 of the raw bytes', () => {
  expect(bodySha256(Buffer.alloc(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  expect(bodySha256(Buffer.from('{"a":1}'))).not.toBe(bodySha256(Buffer.from('{"a": 1}')));
});

test('a replay repeats the service’s end-to-end headers, not hop-by-hop, per-response or rate-limit ones', () => {
  expect(
    replayableHeaders({
      'content-type': 'application/json; charset=utf-8',
      location: '/warehouse/v1/items/1',
      etag: '"3"',
      'x-custom': ['a', 'b'],
      'content-length': '12',
      'transfer-encoding': 'chunked',
      connection: 'keep-alive, x-hop',
      'x-hop': 'hop',
      'keep-alive': 'timeout=65',
      date: 'Sun, 01 Dec 2024 09:30:00 GMT',
      'x-request-id': 'old',
      'platform-version': '2024-12-01',
      'x-ratelimit-remaining': '3',
      'retry-after': '5',
    }),
  ).toEqual({ 'content-type': 'application/json; charset=utf-8', location: '/warehouse/v1/items/1', etag: '"3"', 'x-custom': ['a', 'b'] });
});

test('the two conflicts name the header; only the running one asks to retry', () => {
  expect(reusedWithDifferentBody()).toMatchObject({
    status: 409,
    code: 'conflict',
    options: { errors: [{ field: 'Idempotency-Key', code: 'reused_with_different_body' }] },
  });
  expect(reusedWithDifferentBody().options.headers).toBeUndefined();
  expect(requestInProgress()).toMatchObject({ status: 409, code: 'conflict', options: { headers: { 'retry-after': '1' } } });
});
