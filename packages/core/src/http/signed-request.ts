import type { RequestHandler } from 'express';
import { ApiError } from './errors';
import type { ServiceName } from '../contract';
import type { WorkspaceId } from './http';
import { readRawBody } from './raw-body';
import { DEFAULT_SERVICE_QUOTA_LIMITS, parseQuotasHeader, type ServiceQuotaLimits } from '../data/quotas';
import { bodySha256, InternalHeaders, isFreshTimestamp, serviceSigningKey, verifyInternalSignature, verifyQuotasSignature } from './internal-signature';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The body bytes as received, once read (the signature covers them). */
      rawBody?: Buffer;
    }
  }
}

function notSigned(): ApiError {
  return new ApiError(401, 'unauthorized', 'Request was not signed by the gateway.');
}

/**
 * The quotas the gateway signed beside the request (contract section 20); without both headers,
 * the contract's defaults (a caller that signs as section 4 states, with no quotas). Undefined:
 * a quotas header that is not the gateway's.
 */
function signedQuotas(key: Buffer, signature: string, value: string | undefined, mac: string | undefined): ServiceQuotaLimits | undefined {
  if (value === undefined && mac === undefined) return DEFAULT_SERVICE_QUOTA_LIMITS;
  if (value === undefined || mac === undefined || !verifyQuotasSignature(key, signature, value, mac)) return undefined;
  return parseQuotasHeader(value);
}

/**
 * Services answer only requests the gateway signed for them (contract section 4): identity,
 * scopes, request id and body are covered, with a key derived for this service, and the
 * signature is at most 60 s old and at most 5 s ahead. The body is read here (it is part of
 * what is signed) and left on `req.rawBody`; a body the gateway would not have sent (over
 * `limitBytes`) cannot be verified and is refused the same way.
 */
export function requireGatewaySignature(secret: string, service: ServiceName, limitBytes: number): RequestHandler {
  const key = serviceSigningKey(secret, service);
  return (req, _res, next) => {
    const header = (name: string): string | undefined => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const workspaceId = header(InternalHeaders.workspaceId);
    const keyId = header(InternalHeaders.keyId);
    const scopes = header(InternalHeaders.scopes);
    const requestId = header(InternalHeaders.requestId);
    const quotasValue = header(InternalHeaders.quotas);
    const quotasMac = header(InternalHeaders.quotasSignature);
    const timestamp = header(InternalHeaders.timestamp);
    const signature = header(InternalHeaders.signature);
    // Refused before the body is read: a request that cannot be the gateway's costs nothing more.
    if (!workspaceId || !keyId || scopes === undefined || requestId === undefined || !signature || !isFreshTimestamp(timestamp)) {
      req.resume();
      return next(notSigned());
    }
    readRawBody(req, limitBytes).then((body) => {
      if (body === 'aborted') return;
      if (body === 'too_large') return next(notSigned());
      const signed = { method: req.method, pathAndQuery: req.originalUrl, workspaceId, keyId, scopes, requestId, bodySha256: bodySha256(body) };
      if (!verifyInternalSignature(key, timestamp, signature, signed)) return next(notSigned());
      const quotas = signedQuotas(key, signature, quotasValue, quotasMac);
      if (!quotas) return next(notSigned());
      req.rawBody = body;
      req.identity = { workspaceId: workspaceId as WorkspaceId, keyId, scopes: scopes === '*' ? null : scopes.split(' ').filter(Boolean), quotas };
      next();
    }, next);
  };
}
