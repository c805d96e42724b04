import { isIP } from 'node:net';

/** What a host string names: an IP address (in any spelling a URL parser or getaddrinfo accepts), a DNS name, or neither. */
export type ParsedHost = { kind: 'address'; address: string; family: 4 | 6 } | { kind: 'name'; name: string } | { kind: 'invalid' };

// IANA's IPv4 special-purpose registry and the other ranges no public service lives in.
const IPV4_REFUSED: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", with 0.0.0.0 (which connects to the local host)
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, with the broadcast 255.255.255.255
];

// Inside 2000::/3, the only IPv6 range with public unicast addresses, these are not public.
const IPV6_GLOBAL_REFUSED: ReadonlyArray<readonly [string, number]> = [
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32 (refused whole), benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
];

function ipv4Number(dotted: string): number {
  return dotted.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function ipv4Text(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
}

function ipv6Number(text: string): bigint {
  let address = text;
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const v4 = ipv4Number(dotted[2]!);
    address = `${dotted[1]}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return all.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

const IPV4_RANGES = IPV4_REFUSED.map(([base, prefix]) => ({ base: ipv4Number(base), mask: prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0 }));
const IPV6_RANGES = IPV6_GLOBAL_REFUSED.map(([base, prefix]) => ({ base: ipv6Number(base), shift: BigInt(128 - prefix) }));

function isPublicIpv4(value: number): boolean {
  return !IPV4_RANGES.some(({ base, mask }) => (value & mask) >>> 0 === base);
}

/** The IPv4 address an IPv6 address stands for: mapped, SIIT-translated, well-known NAT64 and 6to4. */
function embeddedIpv4(value: bigint): number | undefined {
  const low32 = Number(value & 0xffffffffn);
  const high96 = value >> 32n;
  if (high96 === 0xffffn) return low32; // ::ffff:a.b.c.d
  if (high96 === 0xffff0000n) return low32; // ::ffff:0:a.b.c.d (SIIT)
  if (high96 === 0x64ff9bn << 64n) return low32; // 64:ff9b::a.b.c.d (NAT64 well-known prefix)
  if (value >> 112n === 0x2002n) return Number((value >> 80n) & 0xffffffffn); // 2002:aabb:ccdd::/48 (6to4)
  return undefined;
}

function isPublicIpv6(value: bigint): boolean {
  const v4 = embeddedIpv4(value);
  if (v4 !== undefined) return isPublicIpv4(v4);
  // Everything outside 2000::/3 is refused: ::, ::1, IPv4-compatible ::a.b.c.d, discard 100::/64,
  // local-use NAT64 64:ff9b:1::/48, unique-local, link-local, site-local, multicast.
  if (value >> 125n !== 1n) return false;
  return !IPV6_RANGES.some(({ base, shift }) => value >> shift === base >> shift);
}

/**
 * An IPv4 address written as a URL parser (WHATWG) or getaddrinfo (inet_aton) reads it: one to
 * four parts, each decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes.
 * `undefined` for a text that is not such a number, `null` for one that looks numeric but is not valid.
 */
function parseIpv4Number(text: string): string | null | undefined {
  const parts = text.split('.');
  const last = parts[parts.length - 1]!;
  if (!/^(\d+|0x[0-9a-f]*)$/i.test(last)) return undefined;
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    let digits = part;
    let radix = 10;
    if (/^0x/i.test(digits)) {
      digits = digits.slice(2);
      radix = 16;
    } else if (digits.length > 1 && digits.startsWith('0')) {
      digits = digits.slice(1);
      radix = 8;
    }
    const pattern = radix === 16 ? /^[0-9a-f]*$/i : radix === 8 ? /^[0-7]*$/ : /^\d+$/;
    if (part === '' || !pattern.test(digits)) return null;
    const value = digits === '' ? 0 : parseInt(digits, radix);
    if (!Number.isSafeInteger(value)) return null;
    numbers.push(value);
  }
  const tail = numbers.pop()!;
  if (numbers.some((n) => n > 255) || tail >= 256 ** (4 - numbers.length)) return null;
  const value = numbers.reduce((sum, n, i) => sum + n * 256 ** (3 - i), 0) + tail;
  return ipv4Text(value);
}

/** Reads a host as a URL's `hostname` holds it (brackets, trailing dot, any IPv4 spelling, any case). */
export function parseHost(host: string): ParsedHost {
  let text = host.toLowerCase();
  if (text.startsWith('[') && text.endsWith(']')) {
    text = text.slice(1, -1);
    return !text.includes('%') && isIP(text) === 6 ? { kind: 'address', address: text, family: 6 } : { kind: 'invalid' };
  }
  if (text.endsWith('.')) text = text.slice(0, -1);
  if (text.includes(':')) {
    // A zone (fe80::1%eth0) names an interface of this host: never a public target.
    return !text.includes('%') && isIP(text) === 6 ? { kind: 'address', address: text, family: 6 } : { kind: 'invalid' };
  }
  const v4 = parseIpv4Number(text);
  if (v4 === null) return { kind: 'invalid' };
  if (v4 !== undefined) return { kind: 'address', address: v4, family: 4 };
  const labels = text.split('.');
  const valid = text.length <= 253 && labels.every((label) => /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/.test(label));
  return valid ? { kind: 'name', name: text } : { kind: 'invalid' };
}

/**
 * True when an IP address is a public unicast address: not private, loopback, link-local,
 * shared, reserved, documentation, multicast, nor an IPv6 address standing for such an IPv4 one.
 * Anything that is not an IP address is not public.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parseHost(address);
  if (parsed.kind !== 'address') return false;
  return parsed.family === 4 ? isPublicIpv4(ipv4Number(parsed.address)) : isPublicIpv6(ipv6Number(parsed.address));
}

/** `localhost` and its subdomains, which resolvers answer with loopback without asking DNS (RFC 6761). */
export function isLocalhostName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}
