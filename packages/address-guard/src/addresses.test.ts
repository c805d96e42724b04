import { isPublicAddress, parseHost } from './addresses';

describe('isPublicAddress: every non-public form is refused', () => {
  test.each([
    // IPv4 special ranges
    ['0.0.0.0', '0/8, connects to this host'],
    ['0.255.1.2', '0/8'],
    ['10.0.0.1', '10/8'],
    ['10.255.255.255', '10/8'],
    ['100.64.0.1', '100.64/10 carrier-grade NAT'],
    ['100.127.255.254', '100.64/10'],
    ['127.0.0.1', '127/8'],
    ['127.255.0.9', '127/8'],
    ['169.254.169.254', '169.254/16 cloud metadata'],
    ['172.16.0.1', '172.16/12'],
    ['172.31.255.255', '172.16/12'],
    ['192.0.0.8', '192.0.0/24'],
    ['192.0.2.1', '192.0.2/24 TEST-NET-1'],
    ['192.88.99.1', '192.88.99/24 6to4 relay'],
    ['192.168.1.1', '192.168/16'],
    ['198.18.0.1', '198.18/15'],
    ['198.19.255.1', '198.18/15'],
    ['198.51.100.7', '198.51.100/24 TEST-NET-2'],
    ['203.0.113.9', '203.0.113/24 TEST-NET-3'],
    ['224.0.0.1', '224/4 multicast'],
    ['239.255.255.250', '224/4'],
    ['240.0.0.1', '240/4'],
    ['255.255.255.255', 'broadcast'],
    // odd IPv4 spellings (getaddrinfo and WHATWG URL read them as 127.0.0.1 / 10.0.0.1 / 0.0.0.0)
    ['2130706433', 'decimal 127.0.0.1'],
    ['0x7f000001', 'hex 127.0.0.1'],
    ['017700000001', 'octal 127.0.0.1'],
    ['0177.0.0.1', 'octal first part'],
    ['0x7f.1', 'hex, two parts'],
    ['127.1', 'two parts'],
    ['10.1', 'two parts 10.0.0.1'],
    ['0', 'one part 0.0.0.0'],
    ['127.0.0.1.', 'trailing dot'],
    // IPv6 special ranges
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'bracketed loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fec0::1', 'site-local fec0::/10'],
    ['feff::1', 'site-local fec0::/10'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard 100::/64'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation 3fff::/20'],
    ['2001::1', 'Teredo 2001::/32 (the whole prefix)'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo whose client is public'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    // IPv6 forms that embed an IPv4 address
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:7f00:1', 'IPv4-mapped, as URL parsing writes it'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata address'],
    ['[::ffff:10.0.0.1]', 'IPv4-mapped, bracketed'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::7f00:1', 'IPv4-compatible, hex'],
    ['::8.8.8.8', 'IPv4-compatible of a public address (the whole ::/96 is refused)'],
    ['64:ff9b::10.0.0.1', 'NAT64 well-known prefix'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'],
    ['64:ff9b:1::a00:1', 'local-use NAT64 64:ff9b:1::/48'],
    ['64:ff9b:1:ffff::808:808', 'local-use NAT64, even of a public address'],
    ['2002:7f00:1::', '6to4 of 127.0.0.1'],
    ['2002:a9fe:a9fe::1', '6to4 of 169.254.169.254'],
    ['2002:c0a8:101::', '6to4 of 192.168.1.1'],
    ['::ffff:0:127.0.0.1', 'SIIT ::ffff:0:0:0/96'],
    ['::ffff:0:a00:1', 'SIIT of 10.0.0.1'],
    // not addresses at all
    ['localhost', 'a name'],
    ['', 'empty'],
    ['1.2.3.4.5', 'five parts'],
    ['256.1.1.1', 'part over 255'],
    ['08.1.1.1', 'bad octal'],
    ['[::1', 'broken bracket'],
  ])('%s is refused (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  test.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1', // just outside 172.16/12
    '192.169.0.1',
    '100.128.0.1', // just outside 100.64/10
    '198.20.0.1', // just outside 198.18/15
    '223.255.255.254',
    '134744072', // 8.8.8.8 as one number
    '2606:4700::1111',
    '2a00:1450:4001:80b::200e',
    '[2606:4700::1111]',
    '::ffff:8.8.8.8', // mapped public address: the socket reaches 8.8.8.8
    '64:ff9b::808:808', // NAT64 of 8.8.8.8
    '2002:808:808::1', // 6to4 of 8.8.8.8
    '::ffff:0:808:808', // SIIT of 8.8.8.8
  ])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('parseHost reads hosts the way URL parsers and getaddrinfo do', () => {
  test('a URL with a special scheme already normalises odd IPv4 spellings; parseHost agrees with it', () => {
    for (const spelling of ['2130706433', '0x7f000001', '017700000001', '0x7f.1', '127.1', '0177.0.0.01']) {
      expect(new URL(`http://${spelling}/`).hostname).toBe('127.0.0.1');
      expect(parseHost(spelling)).toEqual({ kind: 'address', address: '127.0.0.1', family: 4 });
    }
  });

  test('a postgres:// URL keeps the host as written (opaque host), so the guard must read the spelling itself', () => {
    expect(new URL('postgres://2130706433/db').hostname).toBe('2130706433');
    expect(new URL('postgres://0x7f.1/db').hostname).toBe('0x7f.1');
    expect(parseHost(new URL('postgres://0x7f.1/db').hostname)).toEqual({ kind: 'address', address: '127.0.0.1', family: 4 });
    expect(parseHost(new URL('postgres://LOCALHOST./db').hostname)).toEqual({ kind: 'name', name: 'localhost' });
  });

  test('names, brackets and invalid hosts', () => {
    expect(parseHost('Api.Example.COM.')).toEqual({ kind: 'name', name: 'api.example.com' });
    expect(parseHost('[::FFFF:7F00:1]')).toEqual({ kind: 'address', address: '::ffff:7f00:1', family: 6 });
    expect(parseHost('[example.com]')).toEqual({ kind: 'invalid' });
    expect(parseHost('%31%32%37.0.0.1')).toEqual({ kind: 'invalid' });
    expect(parseHost('exa mple.com')).toEqual({ kind: 'invalid' });
    expect(parseHost('foo.123')).toEqual({ kind: 'invalid' }); // ends in a number: WHATWG refuses it as a host
  });
});
