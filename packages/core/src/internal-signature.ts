import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers the gateway adds to every proxied request (contract section 4). */
export const InternalHeaders = {
  workspaceId: 'x-platform-workspace-id',
  keyId: 'x-platform-key-id',
  scopes: 'x-platform-scopes',
  timestamp: 'x-platform-timestamp',
  signature: 'x-platform-signature',
} as const;

/** How old a gateway signature may be before a service refuses it. */
export const SIGNATURE_MAX_AGE_SECONDS = 60;

export interface SignedIdentity {
  method: string;
  pathAndQuery: string;
  workspaceId: string;
  keyId: string;
}

/** Hex HMAC-SHA256 over `timestamp \n method \n path-and-query \n workspace-id \n key-id`. */
export function internalSignature(secret: string, timestamp: string, identity: SignedIdentity): string {
  return createHmac('sha256', secret)
    .update(`${timestamp}\n${identity.method.toUpperCase()}\n${identity.pathAndQuery}\n${identity.workspaceId}\n${identity.keyId}`)
    .digest('hex');
}

/** The headers that carry a signed identity from the gateway to a service. */
export function signedIdentityHeaders(
  secret: string,
  identity: SignedIdentity & { scopes: readonly string[] | null },
  nowSeconds = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const ts = String(nowSeconds);
  return {
    [InternalHeaders.workspaceId]: identity.workspaceId,
    [InternalHeaders.keyId]: identity.keyId,
    [InternalHeaders.scopes]: identity.scopes === null ? '*' : identity.scopes.join(' '),
    [InternalHeaders.timestamp]: ts,
    [InternalHeaders.signature]: internalSignature(secret, ts, identity),
  };
}

/** True when the signature matches and is at most SIGNATURE_MAX_AGE_SECONDS old (or early). */
export function verifyInternalSignature(
  secret: string,
  timestamp: string | undefined,
  signature: string | undefined,
  identity: SignedIdentity,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp) || !/^[0-9a-f]{64}$/.test(signature)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_MAX_AGE_SECONDS) return false;
  const expected = Buffer.from(internalSignature(secret, timestamp, identity), 'hex');
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}
