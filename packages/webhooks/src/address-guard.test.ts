import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { assertPublicUrl, isPrivateAddress, publicOnlyLookup, UnsafeWebhookUrlError } from './address-guard';

describe('isPrivateAddress', () => {
  test.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254', // cloud metadata
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1', // the same, as URL parsing writes it
    '::ffff:a9fe:a9fe',
    '64:ff9b::a00:1', // NAT64 of 10.0.0.1
    '2002:7f00:1::', // 6to4 of 127.0.0.1
    '[::1]',
  ])('%s is refused', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  test.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '192.169.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '2002:808:808::'])('%s is public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe('assertPublicUrl', () => {
  const resolver = (table: Record<string, string[]>) => async (host: string) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

  test.each([
    'http://127.0.0.1/hook',
    'http://10.1.2.3:8080/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://0/hook', // WHATWG URL parsing turns this into 0.0.0.0
    'http://2130706433/hook', // 127.0.0.1 as one number
    'http://localhost:3000/hook',
    'http://LOCALHOST./hook',
    'http://api.localhost/hook',
  ])('refuses %s', async (url) => {
    await expect(assertPublicUrl(url, resolver({}))).rejects.toThrow(UnsafeWebhookUrlError);
  });

  test('refuses a host name that resolves to a private address, even if only one of its addresses is', async () => {
    const resolve = resolver({ 'internal.example': ['10.0.0.5'], 'mixed.example': ['93.184.215.14', '127.0.0.1'] });
    await expect(assertPublicUrl('https://internal.example/hook', resolve)).rejects.toThrow('internal.example resolves to 10.0.0.5');
    await expect(assertPublicUrl('https://mixed.example/hook', resolve)).rejects.toThrow('mixed.example resolves to 127.0.0.1');
  });

  test('accepts public addresses, and names that do not resolve now (delivery checks again)', async () => {
    const resolve = resolver({ 'hooks.example': ['93.184.215.14', '2606:4700::1111'] });
    await expect(assertPublicUrl('https://hooks.example/hook', resolve)).resolves.toBeUndefined();
    await expect(assertPublicUrl('https://93.184.215.14/hook', resolve)).resolves.toBeUndefined();
    await expect(assertPublicUrl('https://unknown.example/hook', resolve)).resolves.toBeUndefined();
  });

  test('with the OS resolver, localhost is refused', async () => {
    await expect(assertPublicUrl('http://localhost/hook')).rejects.toThrow(UnsafeWebhookUrlError);
  });
});

describe('publicOnlyLookup (connect-time guard against DNS rebinding)', () => {
  test('an HTTP client using it cannot connect to a name that resolves to loopback', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const guarded = new Agent({ connect: { lookup: publicOnlyLookup } });
    const open = new Agent();
    try {
      await expect(request(`http://localhost:${port}/`, { dispatcher: guarded })).rejects.toThrow(/private, loopback or link-local/);
      expect(hits).toBe(0);
      // The same request without the guard reaches the server: the guard is what refused it.
      const res = await request(`http://localhost:${port}/`, { dispatcher: open });
      await res.body.dump();
      expect(hits).toBe(1);
    } finally {
      await guarded.close();
      await open.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
