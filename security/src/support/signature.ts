import { createHash, createHmac, hkdfSync } from 'node:crypto';

/**
 * The internal signature of contract section 4, written from the contract's text (the battery's
 * own reference, so a platform that signs differently fails the baseline):
 * hex HMAC-SHA256, keyed with HKDF-SHA256(PLATFORM_INTERNAL_SECRET, info = service name), over
 * `timestamp \n method \n path-and-query \n workspace-id \n key-id \n scopes \n request-id \n hex SHA-256 of the body`.
 * The contract names neither salt nor key length: no salt, 32 bytes (the HMAC-SHA256 block's natural key).
 */
export interface SignedRequest {
  service: string;
  timestamp: string;
  method: string;
  pathAndQuery: string;
  workspaceId: string;
  keyId: string;
  /** As sent in `x-platform-scopes`: `*` or space-separated scopes. */
  scopes: string;
  requestId: string;
  body: Buffer;
}

export function serviceKey(secret: string, service: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), Buffer.from(service, 'utf8'), 32));
}

export function contractSignature(secret: string, request: SignedRequest): string {
  const bodyHash = createHash('sha256').update(request.body).digest('hex');
  const text = [
    request.timestamp,
    request.method.toUpperCase(),
    request.pathAndQuery,
    request.workspaceId,
    request.keyId,
    request.scopes,
    request.requestId,
    bodyHash,
  ].join('\n');
  return createHmac('sha256', serviceKey(secret, request.service)).update(text).digest('hex');
}

/** The headers the gateway adds to a proxied request, signed as the contract says. */
export function contractHeaders(secret: string, request: SignedRequest): Record<string, string> {
  return {
    'x-platform-workspace-id': request.workspaceId,
    'x-platform-key-id': request.keyId,
    'x-platform-scopes': request.scopes,
    'x-request-id': request.requestId,
    'x-platform-timestamp': request.timestamp,
    'x-platform-signature': contractSignature(secret, request),
  };
}

/**
 * The signature before contract 4 was changed (HMAC with the shared secret itself over
 * `timestamp \n method \n path-and-query \n workspace-id \n key-id`): a service must refuse it.
 */
export function preContractSignature(secret: string, request: Pick<SignedRequest, 'timestamp' | 'method' | 'pathAndQuery' | 'workspaceId' | 'keyId'>): string {
  return createHmac('sha256', secret)
    .update([request.timestamp, request.method.toUpperCase(), request.pathAndQuery, request.workspaceId, request.keyId].join('\n'))
    .digest('hex');
}
