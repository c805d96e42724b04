import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, errorBody, internalError, invalidRequest, noSuchEndpoint, payloadTooLarge, temporarilyUnavailable } from './errors';
import { requestIdFrom } from './request-id';
import { DEFAULT_VERSION } from '../contract';
import { readRawBody } from './raw-body';
import type { ServiceQuotaLimits } from '../data/quotas';

/** A workspace id that came from an authenticated identity; queries take this type, not a bare string. */
export type WorkspaceId = string & { readonly __brand: 'WorkspaceId' };

/** The caller as established by the gateway's signed headers. */
export interface Identity {
  workspaceId: WorkspaceId;
  keyId: string;
  /** null = unrestricted key. */
  scopes: readonly string[] | null;
  /** The workspace's quotas in force, as the gateway signed them (contract section 20). */
  quotas: ServiceQuotaLimits;
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
    res.setHeader('x-content-type-options', 'nosniff');
    next();
  };
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** A request body in a `content-encoding` other than identity: 415 (contract section 2). */
export function unsupportedContentEncoding(): ApiError {
  return new ApiError(415, 'unsupported_media_type', 'Request bodies are accepted without content-encoding (identity) only.');
}

/** True when a request declares a body encoding the platform does not accept. */
export function hasContentEncoding(value: string | undefined): boolean {
  return value !== undefined && value.trim().toLowerCase() !== 'identity' && value.trim() !== '';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses a JSON body that must be an object; bytes that are not UTF-8 are refused, never replaced. */
function parseJsonObject(bytes: Buffer): object | ApiError {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return invalidRequest([{ in: 'body', field: '', code: 'invalid_json', message: 'is not valid UTF-8' }]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return invalidRequest([{ in: 'body', field: '', code: 'invalid_json', message: 'is not valid JSON' }]);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return invalidRequest([{ in: 'body', field: '', code: 'invalid_type', message: 'must be a JSON object' }]);
  }
  return parsed;
}

/**
 * JSON-only bodies (contract section 2): empty means `{}`, anything else must be a JSON object
 * sent as application/json without content-encoding, at most `limitBytes` (413 beyond). A body
 * already read (`req.rawBody`, by the signature check) is parsed from there.
 */
export function jsonBody(limitBytes = MAX_BODY_BYTES): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
      req.body = undefined;
      if (req.rawBody === undefined) req.resume();
      return next();
    }
    const declared = Number(req.headers['content-length']);
    if (req.rawBody === undefined && Number.isFinite(declared) && declared > limitBytes) {
      req.resume();
      return next(payloadTooLarge(limitBytes));
    }
    const parse = (bytes: Buffer): void => {
      if (bytes.length === 0) {
        req.body = {};
        return next();
      }
      if (hasContentEncoding(req.headers['content-encoding'])) return next(unsupportedContentEncoding());
      if (!isJsonContentType(req.headers['content-type'])) {
        return next(invalidRequest([{ in: 'header', field: 'content-type', code: 'invalid_content_type', message: 'must be application/json' }]));
      }
      const parsed = parseJsonObject(bytes);
      if (parsed instanceof ApiError) return next(parsed);
      req.body = parsed;
      next();
    };
    if (req.rawBody !== undefined) return parse(req.rawBody);
    // Node acknowledges `Expect: 100-continue` only when told to: after the checks before this one.
    if (/100-continue/i.test(req.headers.expect ?? '')) res.writeContinue();
    readRawBody(req, limitBytes).then((body) => {
      if (body === 'aborted') return;
      if (body === 'too_large') return next(payloadTooLarge(limitBytes));
      parse(body);
    }, next);
  };
}

/** 404 for every route the app does not know. */
export function notFoundHandler(): RequestHandler {
  return (_req, _res, next) => next(noSuchEndpoint());
}

// 40P01 and 40001: PostgreSQL chose this transaction to undo (a deadlock or a serialization
// failure); nothing was written, and the same call again can succeed.
const TRANSIENT_DB_CODES = new Set([
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  '57P01',
  '57P03',
  '53300',
  '40P01',
  '40001',
  // Prisma's "write conflict or deadlock" of an interactive transaction (40P01/40001 wrapped): retry.
  'P2034',
  // lock_not_available: a lock wait past its lock_timeout (quota-lock.ts), under load.
  '55P03',
]);
// Prisma driver adapters (adapter-pg) throw DriverAdapterError with `cause.kind` and the kind as the message.
const TRANSIENT_ADAPTER_KINDS = new Set(['ConnectionClosed', 'DatabaseNotReachable', 'SocketTimeout', 'TooManyConnections']);
// No connection in time (contract section 17). From the process's pool (DATABASE_POOL_TIMEOUT_MS):
// pg-pool's "timeout exceeded when trying to connect" (in the list below; adapter-pg passes it on as
// it is), or Prisma's P2028 when an interactive transaction's maxWait ran out before it got one.
// From PgBouncer, its "pooler error"s (SQLSTATE 08P01, which PostgreSQL also uses for protocol bugs,
// hence by message): no server connection within query_wait_timeout, no room under max_client_conn,
// no server it can log in to.
const NO_CONNECTION_IN_TIME =
  /Unable to start a transaction in the given time|query_wait_timeout|no more connections allowed|pgbouncer cannot connect to server|server login has been failing/;

/** True for errors that mean a database or Redis is briefly unreachable (answer 503, not 500). */
export function isTransientBackendError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const anyErr = e as { code?: unknown; message?: unknown; cause?: unknown; name?: unknown; kind?: unknown; meta?: { driverAdapterError?: unknown } };
    if (typeof anyErr.code === 'string' && TRANSIENT_DB_CODES.has(anyErr.code)) return true;
    if (typeof anyErr.kind === 'string' && TRANSIENT_ADAPTER_KINDS.has(anyErr.kind)) return true;
    const message = typeof anyErr.message === 'string' ? anyErr.message : '';
    if (NO_CONNECTION_IN_TIME.test(message)) return true;
    if (
      /ECONNREFUSED|ECONNRESET|Connection terminated|connection timeout|Can't reach database|DatabaseNotReachable|Connection is closed|Stream isn't writeable|the database system is|Query read timeout|timeout exceeded when trying to connect/i.test(
        message,
      )
    )
      return true;
    // A raw query (P2010) carries the adapter's error in meta, not in cause.
    e = anyErr.cause ?? anyErr.meta?.driverAdapterError;
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
      apiError = internalError();
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
      const routePath = (req.route as { path?: string } | undefined)?.path;
      logger.info(
        {
          method: req.method,
          route: routePath ? `${req.baseUrl}${routePath}` : undefined,
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
