import { ApiError } from '@platform/core';
import { bodySha256 } from '@platform/core';
import { idempotencyRecordKey, parseIdempotencyKey, replayableHeaders, requestInProgress, reusedWithDifferentBody, takesIdempotencyKey } from './idempotency';

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
  const base = idempotencyRecordKey('ws-1', 'POST', '/events/v0/events', 'k');
  expect(idempotencyRecordKey('ws-1', 'POST', '/events/v0/events', 'k')).toBe(base);
  const others = [
    idempotencyRecordKey('ws-2', 'POST', '/events/v0/events', 'k'),
    idempotencyRecordKey('ws-1', 'PATCH', '/events/v0/events', 'k'),
    idempotencyRecordKey('ws-1', 'POST', '/events/v0/events/x', 'k'),
    idempotencyRecordKey('ws-1', 'POST', '/events/v0/events', 'k2'),
  ];
  expect(new Set([base, ...others]).size).toBe(5);
  expect(idempotencyRecordKey('ws-1', 'POST', '/p', 'k'.repeat(255)).length).toBeLessThan(60);
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
