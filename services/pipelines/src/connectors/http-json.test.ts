import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAddressGuard, type Resolver } from '@platform/address-guard';
import type { ConnectorRuntime } from './connector';
import { HttpJsonConfig, httpJsonSource } from './http-json';

let server: Server;
let port: number;
let hits = 0;
beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.setHeader('content-type', 'application/json');
    res.end('[{"id":1}]');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  hits = 0;
});

function runtime(options: { allowPrivate: boolean; resolve?: Resolver }): ConnectorRuntime {
  return {
    addressGuard: createAddressGuard(options),
    platformDatabases: new Set(),
    defaultPool: undefined as never,
    httpTimeoutMs: 2_000,
    httpMaxBytes: 1024,
  };
}

async function read(url: string, rt: ConnectorRuntime): Promise<unknown[]> {
  const records: unknown[] = [];
  for await (const batch of httpJsonSource.read(HttpJsonConfig.parse({ url }), {
    since: null,
    batchSize: 10,
    signal: new AbortController().signal,
    runtime: rt,
  }))
    records.push(...batch);
  return records;
}

test('with private addresses allowed, a name is resolved once and the fetch reads from it', async () => {
  const calls: string[] = [];
  const resolve: Resolver = async (host) => {
    calls.push(host);
    return ['127.0.0.1'];
  };
  await expect(read(`http://source.example:${port}/items`, runtime({ allowPrivate: true, resolve }))).resolves.toEqual([{ id: 1 }]);
  expect(calls).toEqual(['source.example']);
  expect(hits).toBe(1);
});

test('DNS rebinding: a name that answers public first and private afterwards never leads to a private connection', async () => {
  let calls = 0;
  const resolve: Resolver = async () => (++calls === 1 ? ['93.184.215.14'] : ['127.0.0.1']);
  // The connection goes to the public address checked (unreachable from here), never to 127.0.0.1.
  await expect(read(`http://rebind.example:${port}/items`, runtime({ allowPrivate: false, resolve }))).rejects.toMatchObject({ code: 'source_error' });
  expect(calls).toBe(1);
  expect(hits).toBe(0);
});

test.each([
  ['a literal private address', `http://127.0.0.1:PORT/items`],
  ['an IPv4-mapped loopback', `http://[::ffff:127.0.0.1]:PORT/items`],
  ['a name resolving to a private address', `http://internal.example:PORT/items`],
  ['localhost', `http://localhost:PORT/items`],
])("%s is refused with the platform's words, never the resolved address", async (_what, template) => {
  const resolve: Resolver = async () => ['127.0.0.1'];
  const err = (await read(template.replace('PORT', String(port)), runtime({ allowPrivate: false, resolve })).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  expect(err).toMatchObject({ code: 'source_error', retryable: false, message: 'the source URL must be a public address' });
  expect(hits).toBe(0);
});

test("a source that cannot be reached fails with the platform's words, not the client's error", async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const err = (await read(`http://127.0.0.1:${closedPort}/`, runtime({ allowPrivate: true })).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  expect(err).toMatchObject({ code: 'source_error', retryable: true, message: 'cannot connect to the source' });
  expect(err.cause).toBeDefined(); // the driver's error is kept for the log
});

test('verify (on create) refuses a non-public URL with private_address unless allowed', async () => {
  const resolve: Resolver = async (host) => (host === 'internal.example' ? ['10.0.0.1'] : ['93.184.215.14']);
  const verify = (url: string, allowPrivate: boolean) => httpJsonSource.verify!(HttpJsonConfig.parse({ url }), runtime({ allowPrivate, resolve }));
  for (const url of ['http://10.0.0.1/x', 'http://2130706433/x', 'http://[fec0::1]/x', 'https://internal.example/x', 'http://[2002:a00:1::]/x']) {
    expect(await verify(url, false)).toEqual([{ field: 'url', code: 'private_address', message: 'must be a public address' }]);
    expect(await verify(url, true)).toEqual([]);
  }
  expect(await verify('https://api.example.com/items', false)).toEqual([]);
});
