import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ConnectorError } from './connector';

// Loopback, private, link-local, shared, reserved and multicast ranges: a pipeline must not make
// the worker fetch from inside the platform's network (SSRF).
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Refuses a host that is or resolves to a private address. The fetch resolves the name again,
 * so a DNS answer that changes in between is not caught; redirects are refused by the caller.
 */
export async function assertPublicHost(hostname: string): Promise<void> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (err) {
      throw new ConnectorError('source_error', `cannot resolve ${host}`, true, { cause: err });
    }
  }
  if (addresses.some(isPrivateAddress)) {
    throw new ConnectorError('source_error', `${host} is a private or loopback address; the worker does not fetch from those`, false);
  }
}
