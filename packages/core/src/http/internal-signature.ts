import { createHash, createHmac, hash, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { ServiceName } from '../contract';
import { DEFAULT_SERVICE_QUOTA_LIMITS, quotasHeader, type ServiceQuotaLimits } from '../data/quotas';

/** Headers the gateway adds to every proxied request (contract section 4). */
export const InternalHeaders = {
  workspaceId: 'x-platform-workspace-id',
  keyId: 'x-platform-key-id',
  scopes: 'x-platform-scopes',
  /** The workspace's quotas in force that services enforce (quotas.ts quotasHeader); beside the contract's headers. */
  quotas: 'x-platform-quotas',
  /** hex HMAC-SHA256 of `signature \n quotas` (quotasSignature): binds the quotas to one signed request. */
  quotasSignature: 'x-platform-quotas-signature',
  timestamp: 'x-platform-timestamp',
  signature: 'x-platform-signature',
  requestId: 'x-request-id',
} as const;

/** How old a gateway signature may be before a service refuses it. */
export const SIGNATURE_MAX_AGE_SECONDS = 60;
/** How far ahead of a service's clock a signature may be (clock skew between hosts, no more). */
export const SIGNATURE_MAX_AHEAD_SECONDS = 5;

/** hex SHA-256 of an empty body, the body hash of every request without one. */
export const EMPTY_BODY_SHA256 = createHash('sha256').update('').digest('hex');

/**
 * The key that signs requests for one service: HKDF-SHA256 of PLATFORM_INTERNAL_SECRET with the
 * service name as info, so a signature made for one service is worthless at another.
 */
export function serviceSigningKey(secret: string, service: ServiceName): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), service, 32));
}

/** What a gateway signature covers besides its timestamp. */
export interface SignedRequest {
  method: string;
  pathAndQuery: string;
  workspaceId: string;
  keyId: string;
  /** The `x-platform-scopes` value: `*` (unrestricted) or the scopes joined by spaces. */
  scopes: string;
  requestId: string;
  /** hex SHA-256 of the body bytes as sent to the service. */
  bodySha256: string;
}

/** `x-platform-scopes` for a key's scopes (null = unrestricted). */
export function scopesHeader(scopes: readonly string[] | null): string {
  return scopes === null ? '*' : scopes.join(' ');
}

/** hex SHA-256 of a body (one-shot `hash`, as the gateway's token hash: the gateway signs every request). */
export function bodySha256(body: Buffer | string | undefined): string {
  if (body === undefined || body.length === 0) return EMPTY_BODY_SHA256;
  return hash('sha256', body, 'hex');
}

/** Hex HMAC-SHA256 over `timestamp \n method \n path-and-query \n workspace-id \n key-id \n scopes \n request-id \n body-sha256`. */
export function internalSignature(key: Buffer, timestamp: string, request: SignedRequest): string {
  return createHmac('sha256', key)
    .update(
      `${timestamp}\n${request.method.toUpperCase()}\n${request.pathAndQuery}\n${request.workspaceId}\n${request.keyId}\n${request.scopes}\n${request.requestId}\n${request.bodySha256}`,
    )
    .digest('hex');
}

/**
 * The quotas' MAC (contract section 20, beside the section 4 signature, which stays as the contract
 * states it): the same service key over the request's signature and the quotas value, so quotas
 * hold only for the one request they came with.
 */
export function quotasSignature(key: Buffer, requestSignature: string, quotas: string): string {
  return createHmac('sha256', key).update(`${requestSignature}\n${quotas}`).digest('hex');
}

/** True when `signature` is the quotas' MAC for this request signature and quotas value. */
export function verifyQuotasSignature(key: Buffer, requestSignature: string, quotas: string, signature: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(signature)) return false;
  return timingSafeEqual(Buffer.from(quotasSignature(key, requestSignature, quotas), 'hex'), Buffer.from(signature, 'hex'));
}

/** The identity and request the gateway signs for a service. */
export interface SigningInput {
  method: string;
  pathAndQuery: string;
  workspaceId: string;
  keyId: string;
  scopes: readonly string[] | null;
  requestId: string;
  /** The workspace's quotas in force; absent: the contract's defaults. */
  quotas?: ServiceQuotaLimits;
  /** hex SHA-256 of the body (`bodySha256`); absent = no body. */
  bodySha256?: string;
}

/** The headers that carry a signed identity from the gateway to a service, `x-request-id` included. */
export function signedIdentityHeaders(key: Buffer, input: SigningInput, nowSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  const timestamp = String(nowSeconds);
  const scopes = scopesHeader(input.scopes);
  const quotas = quotasHeader(input.quotas ?? DEFAULT_SERVICE_QUOTA_LIMITS);
  const signature = internalSignature(key, timestamp, { ...input, scopes, bodySha256: input.bodySha256 ?? EMPTY_BODY_SHA256 });
  return {
    [InternalHeaders.workspaceId]: input.workspaceId,
    [InternalHeaders.keyId]: input.keyId,
    [InternalHeaders.scopes]: scopes,
    [InternalHeaders.requestId]: input.requestId,
    [InternalHeaders.timestamp]: timestamp,
    [InternalHeaders.signature]: signature,
    [InternalHeaders.quotas]: quotas,
    [InternalHeaders.quotasSignature]: quotasSignature(key, signature, quotas),
  };
}

/** A timestamp header a service accepts: digits, at most SIGNATURE_MAX_AGE_SECONDS old and SIGNATURE_MAX_AHEAD_SECONDS ahead. */
export function isFreshTimestamp(timestamp: string | undefined, nowSeconds = Math.floor(Date.now() / 1000)): timestamp is string {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  const age = nowSeconds - Number(timestamp);
  return age <= SIGNATURE_MAX_AGE_SECONDS && age >= -SIGNATURE_MAX_AHEAD_SECONDS;
}

/** True when the signature matches the request and its timestamp is fresh. */
export function verifyInternalSignature(
  key: Buffer,
  timestamp: string | undefined,
  signature: string | undefined,
  request: SignedRequest,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (!isFreshTimestamp(timestamp, nowSeconds) || !signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = Buffer.from(internalSignature(key, timestamp, request), 'hex');
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}
