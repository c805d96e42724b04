import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { createAddressGuard, NonPublicAddressError, NOT_PUBLIC_MESSAGE, pinnedLookup, UnresolvedHostError, type Resolver } from './guard';

function resolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  return Object.assign(resolve, { calls });
}

/** A resolver that answers a public address first and a private one afterwards (DNS rebinding). */
function rebinding(): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return calls.length === 1 ? ['93.184.215.14'] : ['127.0.0.1'];
  };
  return Object.assign(resolve, { calls });
}

async function countingServer(): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, hits: () => hits };
}

/** Where a socket using `lookup` connects: the address its lookup handed it (the socket is closed before it gets further), or the lookup's error. */
function connectTarget(host: string, port: number, lookup: LookupFunction): Promise<{ address: string } | { error: Error }> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, lookup, autoSelectFamily: false });
    socket.once('lookup', (err: Error | null, address: string) => {
      socket.destroy();
      resolve(err ? { error: err } : { address });
    });
    socket.on('error', () => undefined);
  });
}

describe('resolve', () => {
  test('a literal address is checked without DNS, in any spelling', async () => {
    const resolve = resolver({});
    const guard = createAddressGuard({ resolve });
    await expect(guard.resolve('93.184.215.14')).resolves.toEqual([{ address: '93.184.215.14', family: 4 }]);
    await expect(guard.resolve('[2606:4700::1111]')).resolves.toEqual([{ address: '2606:4700::1111', family: 6 }]);
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '[::ffff:7f00:1]', '[64:ff9b::a00:1]', '[2002:a9fe:a9fe::]', '1.2.3.4.5']) {
      await expect(guard.resolve(host)).rejects.toThrow(NonPublicAddressError);
    }
    expect(resolve.calls).toEqual([]);
  });

  test('a name is refused when any of its addresses is not public; the refusal never says what it resolved to', async () => {
    const guard = createAddressGuard({ resolve: resolver({ 'internal.example': ['10.0.0.5'], 'mixed.example': ['93.184.215.14', '::ffff:127.0.0.1'] }) });
    for (const host of ['internal.example', 'mixed.example']) {
      const err = (await guard.resolve(host).then(
        () => undefined,
        (e: unknown) => e,
      )) as Error;
      expect(err).toBeInstanceOf(NonPublicAddressError);
      expect(err.message).toBe(NOT_PUBLIC_MESSAGE);
      expect(err.message).not.toMatch(/10\.0\.0\.5|127\.0\.0\.1|internal|mixed/);
    }
  });

  test('localhost names are refused without asking the resolver', async () => {
    const resolve = resolver({ localhost: ['93.184.215.14'] });
    const guard = createAddressGuard({ resolve });
    for (const host of ['localhost', 'LOCALHOST.', 'api.localhost']) await expect(guard.resolve(host)).rejects.toThrow(NOT_PUBLIC_MESSAGE);
    expect(resolve.calls).toEqual([]);
  });

  test('a name without an address is UnresolvedHostError; check() lets it pass (it reaches nothing)', async () => {
    const guard = createAddressGuard({ resolve: resolver({ 'empty.example': [] }) });
    await expect(guard.resolve('unknown.example')).rejects.toThrow(UnresolvedHostError);
    await expect(guard.resolve('empty.example')).rejects.toThrow(UnresolvedHostError);
    await expect(guard.check('unknown.example')).resolves.toBeUndefined();
  });

  test('with allowPrivate, private addresses and localhost pass', async () => {
    const guard = createAddressGuard({ allowPrivate: true, resolve: resolver({ 'internal.example': ['10.0.0.5'] }) });
    await expect(guard.resolve('internal.example')).resolves.toEqual([{ address: '10.0.0.5', family: 4 }]);
    await expect(guard.resolve('0x7f.1')).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(guard.check('127.0.0.1')).resolves.toBeUndefined();
    expect(() => guard.checkLiteral('localhost')).not.toThrow();
  });
});

describe('check and checkLiteral', () => {
  test('check refuses non-public literals and names, accepts public ones', async () => {
    const guard = createAddressGuard({ resolve: resolver({ 'hooks.example': ['93.184.215.14', '2606:4700::1111'], 'intranet.example': ['fd00::1'] }) });
    await expect(guard.check('hooks.example')).resolves.toBeUndefined();
    await expect(guard.check('intranet.example')).rejects.toThrow(NonPublicAddressError);
    await expect(guard.check(new URL('http://[::ffff:127.0.0.1]/').hostname)).rejects.toThrow(NonPublicAddressError);
  });

  test('checkLiteral refuses literals and localhost names and asks no resolver', () => {
    const resolve = resolver({});
    const guard = createAddressGuard({ resolve });
    for (const host of ['10.1.2.3', '[::1]', '[fec0::1]', '0', 'localhost']) expect(() => guard.checkLiteral(host)).toThrow(NonPublicAddressError);
    expect(() => guard.checkLiteral('hooks.example')).not.toThrow();
    expect(() => guard.checkLiteral('8.8.8.8')).not.toThrow();
    expect(resolve.calls).toEqual([]);
  });
});

describe('DNS rebinding: the connection goes to the address that was checked', () => {
  test('resolve + pinnedLookup: one resolution, and the socket connects to the public answer, never the later private one', async () => {
    const resolve = rebinding();
    const guard = createAddressGuard({ resolve });
    const { server, port, hits } = await countingServer();
    try {
      const addresses = await guard.resolve('rebind.example');
      expect(addresses).toEqual([{ address: '93.184.215.14', family: 4 }]);
      expect(await connectTarget('rebind.example', port, pinnedLookup(addresses))).toEqual({ address: '93.184.215.14' });
      expect(await connectTarget('rebind.example', port, pinnedLookup(addresses))).toEqual({ address: '93.184.215.14' });
      expect(resolve.calls).toEqual(['rebind.example']);
      expect(hits()).toBe(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test('lookup checks what it connects to: a name that rebinds to a private address is refused at connect', async () => {
    const resolve = rebinding();
    const guard = createAddressGuard({ resolve });
    const { server, port, hits } = await countingServer();
    try {
      expect(await connectTarget('rebind.example', port, guard.lookup)).toEqual({ address: '93.184.215.14' });
      const second = await connectTarget('rebind.example', port, guard.lookup);
      expect(second).toEqual({ error: expect.any(NonPublicAddressError) });
      expect(resolve.calls).toHaveLength(2); // one resolution per connection, each one checked
      expect(hits()).toBe(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test('an HTTP client using lookup cannot reach a name that resolves to loopback (and can without it)', async () => {
    const { server, port, hits } = await countingServer();
    const guarded = new Agent({ connect: { lookup: createAddressGuard().lookup } });
    const open = new Agent();
    try {
      await expect(request(`http://localhost:${port}/`, { dispatcher: guarded })).rejects.toThrow(NOT_PUBLIC_MESSAGE);
      expect(hits()).toBe(0);
      const res = await request(`http://localhost:${port}/`, { dispatcher: open });
      await res.body.dump();
      expect(hits()).toBe(1);
    } finally {
      await guarded.close();
      await open.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
