import type { RequestHandler } from 'express';
import { ApiError } from './errors';
import type { ServiceName } from './contract';
import type { WorkspaceId } from './http';
import { readRawBody } from './raw-body';
import { bodySha256, InternalHeaders, isFreshTimestamp, serviceSigningKey, verifyInternalSignature } from './internal-signature';

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
      req.rawBody = body;
      req.identity = { workspaceId: workspaceId as WorkspaceId, keyId, scopes: scopes === '*' ? null : scopes.split(' ').filter(Boolean) };
      next();
    }, next);
  };
}
