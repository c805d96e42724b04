import express from 'express';
import request from 'supertest';
import { once } from 'node:events';
import { get, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, compressJson } from './compression';

describe('acceptsGzip', () => {
  test.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['gzip', true],
    ['GZIP', true],
    ['deflate, gzip;q=0.5', true],
    ['gzip;q=0', false],
    ['gzip;q=0.0, *', false],
    ['*', true],
    ['*;q=0', false],
    ['br, deflate', false],
    ['identity', false],
  ])('%p → %p', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe('compressJson (contract section 2: JSON answers of 1 KiB or more are gzipped when accepted)', () => {
  const big = { data: Array.from({ length: 100 }, (_, i) => ({ id: i, name: `item ${i}` })) };
  function app() {
    const a = express();
    a.use(compressJson());
    a.get('/big', (_req, res) => void res.json(big));
    a.get('/small', (_req, res) => void res.json({ ok: true }));
    return a;
  }

  /** The answer's bytes as sent (supertest would decompress them). */
  async function rawGet(path: string, headers: Record<string, string>): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
    const server = app().listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const res = await new Promise<IncomingMessage>((resolve) =>
        get({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', path, headers }, resolve),
      );
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return { headers: res.headers, body: Buffer.concat(chunks) };
    } finally {
      server.close();
    }
  }

  test('a large answer is gzipped for a client that accepts gzip', async () => {
    const res = await rawGet('/big', { 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toMatch(/accept-encoding/i);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    expect(JSON.parse(gunzipSync(res.body).toString('utf8'))).toEqual(big);
  });

  test('the same answer is sent as is to a client that does not accept gzip', async () => {
    const res = await request(app()).get('/big').set('accept-encoding', 'identity');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.vary).toMatch(/accept-encoding/i);
    expect(res.body).toEqual(big);
  });

  test('an answer under 1 KiB is never compressed', async () => {
    const res = await request(app()).get('/small').set('accept-encoding', 'gzip');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body).toEqual({ ok: true });
  });
});
