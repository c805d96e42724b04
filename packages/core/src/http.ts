import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, errorBody, invalidRequest, payloadTooLarge, temporarilyUnavailable } from './errors';
import { requestIdFrom } from './request-id';
import { DEFAULT_VERSION } from './contract';

/** A workspace id that came from an authenticated identity; queries take this type, not a bare string. */
export type WorkspaceId = string & { readonly __brand: 'WorkspaceId' };

/** The caller as established by the gateway's signed headers. */
export interface Identity {
  workspaceId: WorkspaceId;
  keyId: string;
  /** null = unrestricted key. */
  scopes: readonly string[] | null;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      requestId: string;
      identity?: Identity;
    }
  }
}

/** 1 MiB, the contract's body limit. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Sets the request id and echoes it and the served `platform-version` on every response. */
export function platformHeaders(): RequestHandler {
  return (req, res, next) => {
    req.requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('x-request-id', req.requestId);
    res.setHeader('platform-version', DEFAULT_VERSION);
    next();
  };
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * JSON-only bodies (contract section 2): empty means `{}`, anything else must be a JSON object
 * sent as application/json, at most `limitBytes` (413 beyond).
 */
export function jsonBody(limitBytes = MAX_BODY_BYTES): RequestHandler {
  return (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
      req.body = undefined;
      return next();
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limitBytes) {
      req.resume();
      return next(payloadTooLarge(limitBytes));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limitBytes) {
        failed = true;
        next(payloadTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!failed) {
        failed = true;
        next(err);
      }
    });
    req.on('end', () => {
      if (failed) return;
      if (size === 0) {
        req.body = {};
        return next();
      }
      if (!isJsonContentType(req.headers['content-type'])) {
        return next(
          invalidRequest([{ in: 'header', field: 'content-type', code: 'invalid_content_type', message: 'must be application/json' }]),
        );
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
      } catch {
        return next(invalidRequest([{ in: 'body', field: '', code: 'invalid_json', message: 'is not valid JSON' }]));
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        return next(invalidRequest([{ in: 'body', field: '', code: 'invalid_type', message: 'must be a JSON object' }]));
      }
      req.body = parsed;
      next();
    });
  };
}

/** 404 for every route the app does not know. */
export function notFoundHandler(): RequestHandler {
  return (_req, _res, next) => next(new ApiError(404, 'not_found', 'No such endpoint.'));
}

const TRANSIENT_DB_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P03', '53300']);
// Prisma driver adapters (adapter-pg) throw DriverAdapterError with `cause.kind` and the kind as the message.
const TRANSIENT_ADAPTER_KINDS = new Set(['ConnectionClosed', 'DatabaseNotReachable', 'SocketTimeout', 'TooManyConnections']);

/** True for errors that mean a database or Redis is briefly unreachable (answer 503, not 500). */
export function isTransientBackendError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const anyErr = e as { code?: unknown; message?: unknown; cause?: unknown; name?: unknown; kind?: unknown };
    if (typeof anyErr.code === 'string' && TRANSIENT_DB_CODES.has(anyErr.code)) return true;
    if (typeof anyErr.kind === 'string' && TRANSIENT_ADAPTER_KINDS.has(anyErr.kind)) return true;
    const message = typeof anyErr.message === 'string' ? anyErr.message : '';
    if (/ECONNREFUSED|ECONNRESET|Connection terminated|connection timeout|Can't reach database|DatabaseNotReachable|Connection is closed|Stream isn't writeable|the database system is|Query read timeout|timeout exceeded when trying to connect/i.test(message)) return true;
    e = anyErr.cause;
  }
  return false;
}

/** The one error middleware: ApiError as is, body-parser style errors as 400/413, anything else 500 (logged). */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let apiError: ApiError;
    if (err instanceof ApiError) apiError = err;
    else if (isTransientBackendError(err)) {
      logger.warn({ err, request_id: req.requestId }, 'backend unavailable');
      apiError = temporarilyUnavailable();
    } else if ((err as { type?: string }).type === 'entity.too.large') apiError = payloadTooLarge(MAX_BODY_BYTES);
    else {
      logger.error({ err, request_id: req.requestId }, 'unhandled error');
      apiError = new ApiError(500, 'internal_error', 'Something went wrong on our side.');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(apiError.options.headers ?? {})) res.setHeader(name, value);
    res.status(apiError.status).json(errorBody(apiError, req.requestId ?? requestIdFrom(undefined)));
  };
}

/** One JSON log line per request: method, route, status, duration, request id, workspace id. */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info(
        {
          method: req.method,
          route: req.route?.path ? `${req.baseUrl}${req.route.path}` : undefined,
          path: req.path,
          status: res.statusCode,
          duration_ms: Number(process.hrtime.bigint() - start) / 1e6,
          request_id: req.requestId,
          workspace_id: req.identity?.workspaceId,
        },
        'request',
      );
    });
    next();
  };
}
