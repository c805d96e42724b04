import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { expectErrorBody, waitFor } from '@platform/testing';
import { createTestKey, startEchoGateway, type EchoGateway } from './test/gateway';

let gw: EchoGateway;
let token: string;

beforeAll(async () => {
  gw = await startEchoGateway({ headersTimeoutMs: 400, requestTimeoutMs: 400 });
  ({ token } = await createTestKey(gw.stores));
});
afterAll(() => gw.close());

/** A raw connection to the gateway, for what an HTTP client library would not send. */
async function socketTo(url: string): Promise<{ socket: Socket; received: () => string; closed: Promise<unknown> }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
  return { socket, received: () => text, closed: once(socket, 'close') };
}

describe('the internal signature (contract section 4)', () => {
  test.each([
    ['events', '/events/v0/events'],
    ['warehouse', '/warehouse/v1/items'],
    ['pipelines', '/pipelines/v3/pipelines'],
  ])('a request to %s is signed with the key derived for %s, over its body and request id', async (service, path) => {
    const body = { name: 'signed', note: 'ü'.repeat(10) };
    const res = await gw.client.call(gw.url, 'POST', path, { token, body, headers: { 'x-request-id': `sig-${service}` } });
    expect(res.status).toBe(200);
    expect(res.body.signed_for).toBe(service);
    expect(JSON.parse(res.body.body)).toEqual(body);
    expect(res.body.headers['x-request-id']).toBe(`sig-${service}`);
  });
});

describe('HEAD (contract section 2)', () => {
  test('HEAD is answered on a GET route, with the headers of the GET and no body', async () => {
    const res = await gw.client.call(gw.url, 'HEAD', `/events/v0/tickets/${randomUUID()}`, { token });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-ratelimit-limit']).toBe('400');
    expect(gw.upstream.received.at(-1)?.method).toBe('HEAD');
  });

  test('HEAD on a route that has no GET is 404', async () => {
    const res = await gw.client.call(gw.url, 'HEAD', `/events/v0/tickets/${randomUUID()}/validate`, { token });
    expect(res.status).toBe(404);
  });
});

describe('x-content-type-options: nosniff on every answer (contract section 2)', () => {
  test.each([
    ['a proxied answer', 'GET', `/events/v0/tickets/${randomUUID()}`, true],
    ['a 401', 'GET', '/events/v0/events/x', false],
    ['a 404 outside the prefixes', 'GET', '/nowhere', false],
    ['/healthz', 'GET', '/healthz', false],
    ['the admin API', 'GET', '/admin/v1/workspaces', false],
  ])('%s', async (_what, method, path, authenticated) => {
    const res = await gw.client.call(gw.url, method, path, authenticated ? { token } : {});
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('Expect: 100-continue', () => {
  const head = (auth: string, length: number) =>
    `POST /events/v0/events HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

  test('an invalid token gets its 401 without a 100 Continue: the body is never asked for', async () => {
    const conn = await socketTo(gw.url);
    conn.socket.write(head('plk_not-a-real-token-000000000000000000', 2));
    await waitFor('the head of an answer', () => conn.received().includes('\r\n\r\n'), 60_000, 10);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(conn.received()).not.toContain('100 Continue');
    conn.socket.destroy();
  });

  test('a declared size over 1 MiB gets its 413 without a 100 Continue', async () => {
    const conn = await socketTo(gw.url);
    conn.socket.write(head(token, 1024 * 1024 + 1));
    await waitFor('the head of an answer', () => conn.received().includes('\r\n\r\n'), 60_000, 10);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 413 /);
    conn.socket.destroy();
  });

  test('a request that passes every check gets 100 Continue, then its answer once the body is sent', async () => {
    const conn = await socketTo(gw.url);
    conn.socket.write(head(token, 2));
    await waitFor('the head of an answer', () => conn.received().includes('\r\n\r\n'), 60_000, 10);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    conn.socket.write('{}');
    await waitFor('the final 200', () => /HTTP\/1\.1 200 /.test(conn.received()), 60_000, 10);
    conn.socket.destroy();
  });
});

describe('a client too slow to send its request (contract section 2)', () => {
  test('gets 408 request_timeout with the error body and the usual headers', async () => {
    const conn = await socketTo(gw.url);
    conn.socket.write(`POST /events/v0/events HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${token}\r\n`);
    await conn.closed;
    const [headText = '', body = ''] = conn.received().split('\r\n\r\n');
    expect(headText).toMatch(/^HTTP\/1\.1 408 /);
    expect(headText).toMatch(/\r\nx-content-type-options: nosniff\r\n/i);
    expect(headText).toMatch(/\r\nplatform-version: 2024-12-01\r\n/i);
    expectErrorBody(JSON.parse(body), 'request_timeout');
  });

  test('a body sent too slowly gets 408 as well', async () => {
    const conn = await socketTo(gw.url);
    conn.socket.write(
      `POST /events/v0/events HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"na`,
    );
    await conn.closed;
    expect(conn.received()).toMatch(/^HTTP\/1\.1 408 /);
    expectErrorBody(JSON.parse(conn.received().split('\r\n\r\n')[1]!), 'request_timeout');
  });
});

describe('gzip for answers the gateway sends whole (contract section 2)', () => {
  /** GET or POST on a raw connection, returning the answer's head and its body bytes as sent. */
  async function rawCall(request: string): Promise<{ head: string; body: Buffer }> {
    const conn = await socketTo(gw.url);
    conn.socket.write(request);
    await conn.closed;
    const raw = Buffer.from(conn.received(), 'latin1');
    const split = raw.indexOf('\r\n\r\n');
    return { head: raw.subarray(0, split).toString('latin1'), body: raw.subarray(split + 4) };
  }

  test('a held answer of 1 KiB or more (Idempotency-Key) is fetched uncompressed and gzipped for a client that accepts gzip', async () => {
    const body = JSON.stringify({ name: 'n'.repeat(2_000) });
    const key = `gzip-${randomUUID()}`;
    const request = (encoding: string) =>
      `POST /events/v0/events HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nIdempotency-Key: ${key}\r\nAccept-Encoding: ${encoding}\r\nConnection: close\r\n\r\n${body}`;

    const first = await rawCall(request('gzip'));
    expect(first.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(first.head).toMatch(/\r\ncontent-encoding: gzip\r\n/i);
    expect(first.head).toMatch(/\r\nvary: Accept-Encoding\r\n/i);
    const seen = JSON.parse(gunzipSync(first.body).toString('utf8'));
    expect(seen.headers['accept-encoding']).toBeUndefined();

    // The stored answer is replayed to a client that does not accept gzip as it is, uncompressed.
    const replay = await rawCall(request('identity'));
    expect(replay.head).toMatch(/\r\nidempotent-replayed: true\r\n/i);
    expect(replay.head).not.toMatch(/content-encoding/i);
    expect(JSON.parse(replay.body.toString('utf8'))).toEqual(seen);
  });

  test('an answer under 1 KiB is not compressed', async () => {
    const answer = await rawCall('GET /nowhere HTTP/1.1\r\nHost: gw\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n');
    expect(answer.head).not.toMatch(/content-encoding/i);
    expectErrorBody(JSON.parse(answer.body.toString('utf8')), 'not_found');
  });
});
