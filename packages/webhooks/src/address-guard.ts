import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * SSRF guard for webhook URLs (contract section 11): no delivery to private, loopback,
 * link-local, unique-local, unspecified, multicast or reserved addresses unless allowed.
 */

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (`::` compression and a trailing dotted quad allowed). */
function ipv6Bytes(address: string): number[] {
  let text = address;
  const groups: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tail: number[] = [];
  if (dotted) {
    tail = dotted[1]!.split('.').map(Number);
    text = text.slice(0, -dotted[1]!.length) + '0:0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const zeros = rest === undefined ? 0 : 8 - left.length - right.length;
  groups.push(...left, ...new Array<number>(zeros).fill(0), ...right);
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]);
  if (dotted) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIpv4(bytes: number[]): string | undefined {
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const quad = (at: number) => bytes.slice(at, at + 4).join('.');
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return quad(12); // ::ffff:a.b.c.d
  if (zero(0, 12)) return quad(12); // ::a.b.c.d (deprecated "compatible")
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12)) return quad(12); // 64:ff9b::/96
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return quad(2); // 2002::/16 (6to4)
  return undefined;
}

/** True when an IP address is one a webhook must not reach (private, loopback, link-local, ...). */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) {
    if (blocked.check(ip, 'ipv6')) return true;
    const v4 = embeddedIpv4(ipv6Bytes(ip.toLowerCase()));
    return v4 !== undefined && blocked.check(v4, 'ipv4');
  }
  return false;
}

/** A webhook URL that the guard refuses; the message says why. */
export class UnsafeWebhookUrlError extends Error {
  override name = 'UnsafeWebhookUrlError';
}

export type ResolveHost = (hostname: string) => Promise<string[]>;

/** All addresses of a host name, as the operating system's resolver (and so the HTTP client) sees them. */
export const resolveHost: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses.map((a) => a.address))));
  });

function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

/**
 * Refuses (UnsafeWebhookUrlError) a URL whose host is a private address or resolves to one.
 * A host that does not resolve now is let through: it reaches nothing, and delivery checks again
 * (at connect time, so DNS rebinding between this check and the request is caught too).
 */
export async function assertPublicUrl(url: string, resolve: ResolveHost = resolveHost): Promise<void> {
  const host = hostOf(url);
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new UnsafeWebhookUrlError(`${host} is a private, loopback or link-local address.`);
    return;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) throw new UnsafeWebhookUrlError(`${host} is a loopback host name.`);
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return;
  }
  const bad = addresses.find(isPrivateAddress);
  if (bad) throw new UnsafeWebhookUrlError(`${host} resolves to ${bad}, a private, loopback or link-local address.`);
}

/**
 * A `lookup` for net/tls connect that fails for private addresses: the socket connects only to
 * the addresses checked here, so a host name cannot be re-pointed between check and connect.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) {
      const refused = Object.assign(new UnsafeWebhookUrlError(`${hostname} resolves to ${bad.address}, a private, loopback or link-local address.`), { code: 'EPRIVATEADDRESS' });
      return callback(refused, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
    callback(null, first.address, first.family);
  });
};
