import express from 'express';
import request from 'supertest';
import { createLogger } from '../process/logger';
import { errorHandler, isTransientBackendError, jsonBody, platformHeaders } from './http';
import { ApiError } from './errors';

function app() {
  const a = express();
  a.use(platformHeaders());
  a.use(jsonBody(64));
  a.post('/echo', (req, res) => {
    res.json({ body: req.body });
  });
  a.get('/boom', () => {
    throw new Error('secret internals');
  });
  a.get('/gone', () => {
    throw new ApiError(404, 'not_found', 'gone');
  });
  a.use(errorHandler(createLogger('test', 'silent')));
  return a;
}

describe('JSON-only bodies and the error body', () => {
  test('an empty body counts as {}', async () => {
    const res = await request(app()).post('/echo').expect(200);
    expect(res.body).toEqual({ body: {} });
  });

  test('a JSON object is parsed; +json types are JSON too', async () => {
    await request(app())
      .post('/echo')
      .send({ a: 1 })
      .expect(200, { body: { a: 1 } });
    await request(app())
      .post('/echo')
      .set('content-type', 'application/merge-patch+json')
      .send('{"a":2}')
      .expect(200, { body: { a: 2 } });
  });

  test.each([
    ['malformed JSON', 'application/json', '{', 'invalid_json'],
    ['an array', 'application/json', '[]', 'invalid_type'],
    ['a string', 'application/json', '"x"', 'invalid_type'],
    ['a non-JSON content type', 'text/plain', 'a=1', 'invalid_content_type'],
  ])('%s is 400 invalid_request with the reason in errors[]', async (_name, type, raw, code) => {
    const res = await request(app()).post('/echo').set('content-type', type).send(raw).expect(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', errors: [expect.objectContaining({ code })], request_id: res.headers['x-request-id'] });
  });

  test('a body over the limit is 413 payload_too_large', async () => {
    const res = await request(app())
      .post('/echo')
      .send({ a: 'x'.repeat(100) })
      .expect(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  test('an unexpected error is a 500 without internals; a known one keeps its status', async () => {
    const res = await request(app()).get('/boom').set('x-request-id', 'req-1').expect(500);
    expect(res.body).toEqual({ error: { code: 'internal_error', message: expect.any(String), request_id: 'req-1' } });
    expect(JSON.stringify(res.body)).not.toMatch(/secret internals|at /);
    await request(app()).get('/gone').expect(404);
  });

  test('every response carries x-request-id and platform-version', async () => {
    const res = await request(app()).get('/gone');
    expect(res.headers['x-request-id']).toMatch(/.+/);
    expect(res.headers['platform-version']).toBe('2024-12-01');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });
});

describe('isTransientBackendError (a database connection dropped mid-request is a 503, not a 500)', () => {
  test('Prisma driver adapter errors whose kind means the connection is gone', () => {
    const dropped = Object.assign(new Error('ConnectionClosed'), { name: 'DriverAdapterError', cause: { kind: 'ConnectionClosed' } });
    expect(isTransientBackendError(dropped)).toBe(true);
    expect(isTransientBackendError({ cause: { kind: 'SocketTimeout' } })).toBe(true);
  });
  test('a raw query (P2010) whose connection closed: the adapter error is in meta', () => {
    const raw = Object.assign(new Error('Raw query failed. Code: `N/A`. Message: `Server has closed the connection.`'), {
      code: 'P2010',
      meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'ConnectionClosed' } } },
    });
    expect(isTransientBackendError(raw)).toBe(true);
    expect(isTransientBackendError({ code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'UniqueConstraintViolation' } } } })).toBe(false);
  });
  test("node-postgres's own timeouts (DATABASE_QUERY_TIMEOUT_MS, DATABASE_CONNECT_TIMEOUT_MS)", () => {
    expect(isTransientBackendError(new Error('Query read timeout'))).toBe(true);
    expect(isTransientBackendError(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isTransientBackendError(new Error('Connection terminated due to connection timeout'))).toBe(true);
  });
  test('no pooled connection within DATABASE_POOL_TIMEOUT_MS: a query, or an interactive transaction that could not start', () => {
    expect(isTransientBackendError(new Error('timeout exceeded when trying to connect'))).toBe(true);
    const notStarted = Object.assign(new Error('Transaction API error: Unable to start a transaction in the given time.'), { code: 'P2028' });
    expect(isTransientBackendError(notStarted)).toBe(true);
    // A transaction that ran past its own timeout is not a wait for a connection.
    const expired = Object.assign(new Error('Transaction API error: Transaction already closed: A commit cannot be executed on an expired transaction.'), {
      code: 'P2028',
    });
    expect(isTransientBackendError(expired)).toBe(false);
  });
  test("PgBouncer's refusals: no server connection within query_wait_timeout, no room under max_client_conn", () => {
    // As Prisma over adapter-pg reports them (captured through PgBouncer 1.18).
    const waited = Object.assign(new Error('Raw query failed. Code: `08P01`. Message: `query_wait_timeout`'), {
      code: 'P2010',
      meta: {
        driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'postgres', code: '08P01', severity: 'FATAL', message: 'query_wait_timeout' } },
      },
    });
    expect(isTransientBackendError(waited)).toBe(true);
    expect(isTransientBackendError(Object.assign(new Error('no more connections allowed (max_client_conn)'), { code: '08P01', severity: 'FATAL' }))).toBe(true);
    // The same SQLSTATE from PostgreSQL is a protocol bug, not a busy pooler.
    expect(
      isTransientBackendError(Object.assign(new Error('bind message supplies 1 parameters, but prepared statement "" requires 2'), { code: '08P01' })),
    ).toBe(false);
  });
  test('constraint and data errors are not transient', () => {
    expect(isTransientBackendError(Object.assign(new Error('UniqueConstraintViolation'), { cause: { kind: 'UniqueConstraintViolation' } }))).toBe(false);
    expect(isTransientBackendError(new Error('boom'))).toBe(false);
  });
});
