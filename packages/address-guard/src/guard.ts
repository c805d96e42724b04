import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isLocalhostName, isPublicAddress, parseHost } from './addresses';

/** The words of every refusal; it never says what a name resolved to. */
export const NOT_PUBLIC_MESSAGE = 'must be a public address';

/** A host the guard refuses: a non-public address, a name with one among its addresses, or not a host at all. */
export class NonPublicAddressError extends Error {
  override name = 'NonPublicAddressError';
  readonly code = 'ENONPUBLICADDRESS';
  constructor() {
    super(NOT_PUBLIC_MESSAGE);
  }
}

/** A name the resolver has no address for (now); the resolver's error is the cause. */
export class UnresolvedHostError extends Error {
  override name = 'UnresolvedHostError';
  readonly code = 'ENOTFOUND';
  constructor(options?: { cause?: unknown }) {
    super('the host name does not resolve', options);
  }
}

/** All addresses of a host name. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** The operating system's resolver (getaddrinfo), as Node's HTTP and database clients use it. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses.map((a) => a.address))));
  });

/** An address the guard checked; connect to this, never to the name again. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export interface AddressGuardOptions {
  /** Private, loopback and other non-public addresses are let through (tests, local use). */
  allowPrivate?: boolean;
  /** Default: systemResolver. */
  resolve?: Resolver;
}

export interface AddressGuard {
  readonly allowPrivate: boolean;
  /**
   * Resolves a host once and checks every address: the addresses to connect to. Throws
   * NonPublicAddressError, or UnresolvedHostError for a name without an address.
   */
  resolve(host: string): Promise<CheckedAddress[]>;
  /**
   * For validating a config: like resolve, but a name that does not resolve now passes (it reaches
   * nothing; the connection checks again).
   */
  check(host: string): Promise<void>;
  /** Without DNS: refuses a non-public IP literal (any spelling) and localhost names; other names are left to `lookup`. */
  checkLiteral(host: string): void;
  /**
   * A `lookup` for net/tls/undici connect: resolves once per connection, refuses non-public
   * answers, and the socket connects to the addresses checked here. Sockets skip `lookup` for IP
   * literals: call checkLiteral first.
   */
  lookup: LookupFunction;
}

/** The hostname of a URL, as the guard reads it. */
export function hostOfUrl(url: string): string {
  return new URL(url).hostname;
}

/** The one SSRF guard of the platform (webhooks, pipeline connectors). */
export function createAddressGuard(options: AddressGuardOptions = {}): AddressGuard {
  const allowPrivate = options.allowPrivate ?? false;
  const resolver = options.resolve ?? systemResolver;

  function checked(address: string, family: 4 | 6): CheckedAddress {
    if (!allowPrivate && !isPublicAddress(address)) throw new NonPublicAddressError();
    return { address, family };
  }

  function checkLiteral(host: string): void {
    if (allowPrivate) return;
    const parsed = parseHost(host);
    if (parsed.kind === 'invalid') throw new NonPublicAddressError();
    if (parsed.kind === 'address') checked(parsed.address, parsed.family);
    else if (isLocalhostName(parsed.name)) throw new NonPublicAddressError();
  }

  async function resolve(host: string): Promise<CheckedAddress[]> {
    const parsed = parseHost(host);
    if (parsed.kind === 'invalid') throw new NonPublicAddressError();
    if (parsed.kind === 'address') return [checked(parsed.address, parsed.family)];
    if (!allowPrivate && isLocalhostName(parsed.name)) throw new NonPublicAddressError();
    let answers: string[];
    try {
      answers = await resolver(parsed.name);
    } catch (err) {
      throw new UnresolvedHostError({ cause: err });
    }
    if (answers.length === 0) throw new UnresolvedHostError();
    // Every answer must pass, not just the first: a client may try the others.
    return answers.map((answer) => {
      const address = parseHost(answer);
      if (address.kind !== 'address') throw new NonPublicAddressError();
      return checked(address.address, address.family);
    });
  }

  async function check(host: string): Promise<void> {
    if (allowPrivate) return;
    try {
      await resolve(host);
    } catch (err) {
      if (!(err instanceof UnresolvedHostError)) throw err;
    }
  }

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => respond(addresses, lookupOptions, callback),
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };

  return { allowPrivate, resolve, check, checkLiteral, lookup };
}

type LookupOptions = Parameters<LookupFunction>[1];

function respond(addresses: readonly CheckedAddress[], options: LookupOptions, callback: Parameters<LookupFunction>[2]): void {
  const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
  const usable = family === 0 ? [...addresses] : addresses.filter((a) => a.family === family);
  if (usable.length === 0) return callback(new UnresolvedHostError(), '', 0);
  if (options.all) return (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, usable);
  callback(null, usable[0]!.address, usable[0]!.family);
}

/**
 * A `lookup` that answers with addresses checked earlier (CheckedAddress from `resolve`), whatever
 * the name: the connection goes exactly where the check looked, with no second resolution.
 */
export function pinnedLookup(addresses: readonly CheckedAddress[]): LookupFunction {
  // Asynchronous like dns.lookup: sockets emit 'lookup' after their caller has had a chance to listen.
  return (_hostname, lookupOptions, callback) => process.nextTick(respond, addresses, lookupOptions, callback);
}
