import type { IncomingMessage, OutgoingHttpHeaders, RequestListener, ServerResponse } from 'node:http';
import {
  ADMIN_PREFIX,
  ApiError,
  DEFAULT_VERSION,
  forbiddenScope,
  internalError,
  invalidRequest,
  MAX_BODY_BYTES,
  noSuchEndpoint,
  payloadTooLarge,
  rateLimited,
  bodySha256,
  readRawBody,
  requestIdFrom,
  serviceSigningKey,
  signedIdentityHeaders,
  SUPPORTED_VERSIONS,
  temporarilyUnavailable,
  unauthorized,
  type Logger,
  type ReadyBody,
  type RouteMetrics,
} from '@platform/core';
import type { ConsoleAssets } from './console.assets';
import { isConsolePath, serveConsole } from './console.handler';
import { platformIndex } from './platform-index';
import { isDocsPath, serveDocs, type DocsSite } from './docs.handler';
import {
  idempotencyQuotaReached,
  idempotencyScope,
  MAX_STORED_RESPONSE_BYTES,
  parseIdempotencyKey,
  requestInProgress,
  reusedWithDifferentBody,
  storableAnswer,
  takesIdempotencyKey,
  type ClaimOutcome,
  type IdempotencyScope,
  type IdempotencyStore,
} from './idempotency';
import type { KeyActivityRecorder } from './key-activity';
import type { CachedKey, KeyCache } from './key-cache';
import type { GatewayMetrics } from './metrics';
import { forwardedResponseHeaders, type ForwardOutcome, type ForwardRequest, type UpstreamProxy } from './proxy';
import { rateLimitHeaders, type Limiter, type Limits } from './rate-limiter';
import { startRequestSpan, withRequestSpan, type RequestSpan } from './request-spans';
import { sendError, sendJson, sendStored } from './responses';
import { canonicalPath, type RouteTable, type ServiceMatch } from './route-table';
import { bearerToken, hashToken, isTokenFormat } from './tokens';

export interface GatewayHandlerDeps {
  routes: RouteTable;
  keys: KeyCache;
  limiter: Limiter;
  limits: Limits;
  proxy: UpstreamProxy;
  idempotency: IdempotencyStore;
  /** Last use and usage per key, written to the database periodically. */
  activity: KeyActivityRecorder;
  internalSecret: string;
  logger: Logger;
  /** The Express app behind /admin/v1. */
  admin: RequestListener;
  /** Resolves when the database and Redis answer. */
  /** The readiness body; rejects (503) only when the database does not answer (contract section 12). */
  ready: () => Promise<ReadyBody>;
  /** The workspace console's files; undefined when it was not built. */
  console?: ConsoleAssets;
  /** The API reference at /docs: its page and the services' OpenAPI documents. */
  docs?: DocsSite;
  metrics: GatewayMetrics;
  /** Tracing is on: requests to services get spans (request-spans.ts); off, the handler does nothing of it. */
  traced?: boolean;
}

/** On every answer of the gateway's own and every proxied one (contract section 2). */
const NOSNIFF = 'nosniff';

const EMPTY_BODY: Buffer = Buffer.alloc(0);

/** A request that carries body bytes (a declared length above 0, or a chunked body). */
function hasBody(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  return (declared !== undefined && declared !== '0') || req.headers['transfer-encoding'] !== undefined;
}

const INVALID_TOKEN = 'Missing or invalid bearer token.';

function unsupportedVersion(): ApiError {
  return invalidRequest(
    [{ in: 'header', field: 'platform-version', code: 'unsupported_version', message: `supported: ${SUPPORTED_VERSIONS.join(', ')}` }],
    'Unsupported platform-version.',
  );
}

function pathOf(url: string): string {
  const queryAt = url.indexOf('?');
  return queryAt === -1 ? url : url.slice(0, queryAt);
}

/** The client address that failed authentications are counted against. */
function clientIp(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/** Per-request facts for the one log line. */
interface RequestLog {
  start: bigint;
  requestId: string;
  route?: string;
  workspaceId?: string;
  /** The authenticated key: its usage counts the answer. */
  keyId?: string;
  /** Resolved once the request's route is known; the gateway's own answers resolve it at the end. */
  metrics?: RouteMetrics;
  /** Its span, when tracing is on and it goes to a service. */
  span?: RequestSpan;
}

/**
 * The gateway's hot path on bare node:http (contract sections 4-7): service prefixes are
 * authenticated, routed, version- and scope-checked, rate limited, deduplicated by
 * Idempotency-Key when they carry one, and proxied; /admin/v1 goes to
 * Express; /healthz, /readyz, the /console files and the /docs API reference are the gateway's own;
 * anything else is 404.
 */
export function gatewayHandler(deps: GatewayHandlerDeps): RequestListener {
  const { routes, keys, limiter, limits, proxy, idempotency, activity, logger, metrics } = deps;
  // One key per service (contract section 4): a signature made for one service is refused by the others.
  const signingKeys = {
    events: serviceSigningKey(deps.internalSecret, 'events'),
    warehouse: serviceSigningKey(deps.internalSecret, 'warehouse'),
    pipelines: serviceSigningKey(deps.internalSecret, 'pipelines'),
  } as const;
  const logRequests = logger.isLevelEnabled('info');
  const traced = deps.traced === true;

  function logOnFinish(req: IncomingMessage, res: ServerResponse, log: RequestLog): void {
    res.once('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - log.start) / 1e6;
      (log.metrics ?? metrics.own(req.method!, log.route)).observe(res.statusCode, durationMs / 1e3);
      if (log.keyId !== undefined) activity.answered(log.keyId, res.statusCode);
      log.span?.end(res.statusCode, log.workspaceId);
      if (!logRequests) return;
      logger.info(
        {
          method: req.method,
          route: log.route,
          status: res.statusCode,
          duration_ms: durationMs,
          request_id: log.requestId,
          workspace_id: log.workspaceId,
          ...log.span?.ids(),
        },
        'request',
      );
    });
  }

  /** The valid, unexpired, unrevoked key of the request, or the 401 message. */
  async function authenticate(req: IncomingMessage): Promise<CachedKey | string> {
    const token = bearerToken(req.headers.authorization);
    if (!token || !isTokenFormat(token)) return INVALID_TOKEN;
    const found = keys.find(hashToken(token));
    const key = found instanceof Promise ? await found : found;
    if (!key) return INVALID_TOKEN;
    if (key.revokedAt !== null) return 'This API key has been revoked.';
    if (key.expiresAt !== null && key.expiresAt <= Date.now()) return 'This API key has expired.';
    return key;
  }

  async function serviceRequest(req: IncomingMessage, res: ServerResponse, match: ServiceMatch, log: RequestLog): Promise<void> {
    const requestId = log.requestId;
    const headers: Record<string, string> = { 'x-request-id': requestId, 'platform-version': DEFAULT_VERSION, 'x-content-type-options': NOSNIFF };
    log.route = match.route ? `${match.service} ${match.route.key}` : undefined;
    log.metrics = metrics.service(match, req.method!);

    let key: CachedKey | string;
    try {
      key = await authenticate(req);
    } catch (err) {
      logger.warn({ err, request_id: requestId }, 'API key lookup failed');
      return sendError(res, temporarilyUnavailable(), requestId, headers);
    }

    // 1-2. Failed-auth limit per IP (429), else 401; the per-IP bucket's headers describe both.
    if (typeof key === 'string') {
      const ipLimit = await limiter.hit(`ip:${clientIp(req)}:failed-auth`, limits['failed-auth']);
      Object.assign(headers, rateLimitHeaders(ipLimit));
      if (!ipLimit.allowed) metrics.rateLimited('failed-auth');
      return sendError(res, ipLimit.allowed ? unauthorized(key) : rateLimited(), requestId, headers);
    }
    log.workspaceId = key.workspaceId;
    log.keyId = key.id;
    activity.used(key.id);

    // Every authenticated request counts in exactly one bucket, an unknown route in the service's
    // general one; the limit decides only after the checks the contract orders before it.
    const route = match.route;
    const bucket = route ? route.bucket : match.generalBucket;
    const limit = await limiter.hit(`key:${key.id}:${bucket}`, key.rateLimits?.[bucket] ?? limits[bucket]);
    Object.assign(headers, rateLimitHeaders(limit));

    // 3. Unknown route.
    if (!route) return sendError(res, noSuchEndpoint(), requestId, headers);

    // 4. Version: absent = the default; anything unsupported is 400.
    const requested = req.headers['platform-version'];
    let version = DEFAULT_VERSION;
    if (requested !== undefined) {
      if (!SUPPORTED_VERSIONS.includes(requested as string)) return sendError(res, unsupportedVersion(), requestId, headers);
      version = requested as string;
      headers['platform-version'] = version;
    }

    // 5. Scope.
    if (key.scopes !== null && !key.scopes.includes(route.scope)) return sendError(res, forbiddenScope(route.scope), requestId, headers);

    // 6. Rate limit.
    if (!limit.allowed) {
      metrics.rateLimited(bucket);
      return sendError(res, rateLimited(), requestId, headers);
    }

    // 7. Body size by declaration; a chunked body is counted while it is read.
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return sendError(res, payloadTooLarge(MAX_BODY_BYTES), requestId, headers);

    // 8. The body is read whole: the signature covers it. `Expect: 100-continue` is answered only
    // now, after every check that could refuse the request without it.
    let body = EMPTY_BODY;
    if (hasBody(req)) {
      if (/100-continue/i.test(req.headers.expect ?? '')) res.writeContinue();
      const read = await readRawBody(req, MAX_BODY_BYTES);
      if (read === 'too_large') return sendError(res, payloadTooLarge(MAX_BODY_BYTES), requestId, headers);
      // The client left before sending its body.
      if (read === 'aborted') return void res.destroy();
      body = read;
    }
    const hash = body.length === 0 ? undefined : bodySha256(body);

    const target: ForwardRequest = {
      service: match.service,
      path: match.forwardPath,
      requestHeaders: {
        ...signedIdentityHeaders(signingKeys[match.service], {
          method: req.method!,
          pathAndQuery: match.forwardPath,
          workspaceId: key.workspaceId,
          keyId: key.id,
          scopes: key.scopes,
          requestId,
          quotas: key.quotas,
          bodySha256: hash,
        }),
        'platform-version': version,
      },
      responseHeaders: headers,
      body,
    };

    // 9. Idempotency: only requests that carry the key pay for it (two Redis calls).
    const idempotencyKey = req.headers['idempotency-key'];
    if (idempotencyKey !== undefined && takesIdempotencyKey(req.method)) {
      const parsed = parseIdempotencyKey(idempotencyKey);
      if (parsed instanceof ApiError) return sendError(res, parsed, requestId, headers);
      const scope = idempotencyScope(key.workspaceId, req.method!, canonicalPath({ ...match, route }), parsed);
      // The workspace's limit in force (its own value, or the platform default), read with its key.
      return idempotentRequest(req, res, target, scope, key.quotas.idempotency_bytes, hash ?? bodySha256(body), log.span);
    }

    sendFailure(req, res, target, await forward(req, res, target, log.span));
  }

  /** The proxy's forward, inside a client span that the service's spans continue when tracing is on. */
  async function forward(req: IncomingMessage, res: ServerResponse, target: ForwardRequest, span: RequestSpan | undefined): Promise<ForwardOutcome> {
    if (!span) return proxy.forward(req, res, target);
    const upstream = span.upstream(target.service, req.method!, proxy.urlOf(target));
    Object.assign(target.requestHeaders, upstream.headers);
    const outcome = await proxy.forward(req, res, target);
    upstream.end(outcome.ok ? { ok: true, status: outcome.held?.status ?? outcome.status } : { ok: false });
    return outcome;
  }

  /** The answer when the proxy could not deliver the service's own. */
  function sendFailure(req: IncomingMessage, res: ServerResponse, target: ForwardRequest, outcome: ForwardOutcome): void {
    if (outcome.ok) return;
    const requestId = target.requestHeaders['x-request-id']!;
    const headers = target.responseHeaders;
    if (outcome.reason === 'client_gone' || res.headersSent) {
      res.destroy();
      return;
    }
    const error = outcome.error as { code?: string; name?: string; message?: string };
    logger.warn(
      { service: target.service, err: { name: error.name, code: error.code, message: error.message }, request_id: requestId },
      'upstream unavailable',
    );
    sendError(res, temporarilyUnavailable(`The ${target.service} service is briefly unavailable; retry idempotently.`), requestId, headers);
  }

  /**
   * Contract section 7: the first request with a key claims it and runs; its answer (unless 5xx)
   * is stored before the client sees it, so a retry that follows the answer always finds it.
   * Later requests get the stored answer, or 409 while it runs or when their body differs.
   */
  async function idempotentRequest(
    req: IncomingMessage,
    res: ServerResponse,
    target: ForwardRequest,
    scope: IdempotencyScope,
    bytesLimit: number,
    hash: string,
    span: RequestSpan | undefined,
  ): Promise<void> {
    const requestId = target.requestHeaders['x-request-id']!;
    const headers = target.responseHeaders;

    let claimed: ClaimOutcome;
    try {
      claimed = await idempotency.claim(scope, hash, bytesLimit);
    } catch (err) {
      // Without Redis a duplicate cannot be recognised, and running the request unprotected could
      // run it twice; a quick 503 lets the client retry the same key once Redis is back. Requests
      // without a key are unaffected (the rate limiter falls back to memory).
      logger.warn({ err: err instanceof Error ? err.message : err, request_id: requestId }, 'idempotency unavailable: Redis unreachable');
      return sendError(res, temporarilyUnavailable('Idempotency-Key cannot be checked right now; retry with the same key.'), requestId, headers);
    }
    if (claimed.state === 'mismatch') return sendError(res, reusedWithDifferentBody(), requestId, headers);
    if (claimed.state === 'running') return sendError(res, requestInProgress(), requestId, headers);
    if (claimed.state === 'done') return sendStored(res, claimed.response, headers, true);
    if (claimed.state === 'quota') {
      metrics.idempotencyQuotaRefused();
      return sendError(res, idempotencyQuotaReached(bytesLimit, claimed.retryAfterSeconds), requestId, headers);
    }

    const { claim } = claimed;
    const outcome = await forward(req, res, { ...target, holdResponseBytes: MAX_STORED_RESPONSE_BYTES }, span);
    const held = outcome.ok ? outcome.held : undefined;
    // 5xx answers, failures and answers too long to store are not stored: the key is free again.
    // A client that left meanwhile does not matter: the service's answer is stored all the same,
    // and its retry gets it (the ticket scanner that lost the first answer).
    const response = storableAnswer(held);
    try {
      if (response) await idempotency.complete(claim, response);
      else await idempotency.release(claim);
    } catch (err) {
      // A released claim ends with its short TTL (a retry gets 409 with Retry-After until then). An
      // answer that ran is written as soon as Redis is back: a retry must replay it, never run again.
      logger.warn({ err: err instanceof Error ? err.message : err, request_id: requestId }, 'idempotency record not written yet: Redis unreachable');
      if (response)
        idempotency.storeLater(claim, response, () =>
          logger.error({ request_id: requestId }, 'idempotency record dropped: Redis was away too long; a retry with its key runs again'),
        );
    }
    if (held) {
      if (!res.destroyed) sendStored(res, { status: held.status, headers: forwardedResponseHeaders(held.headers, {}), body: held.body }, headers, false);
      return;
    }
    sendFailure(req, res, target, outcome);
  }

  async function ownRequest(req: IncomingMessage, res: ServerResponse, pathname: string, log: RequestLog): Promise<void> {
    const headers: OutgoingHttpHeaders = { 'x-request-id': log.requestId, 'platform-version': DEFAULT_VERSION, 'x-content-type-options': NOSNIFF };
    // Checked only here, after the service prefixes missed: proxied requests never pay for it.
    if (isConsolePath(pathname)) {
      log.route = `${req.method} /console`;
      return serveConsole(deps.console, req, res, pathname, headers, log.requestId);
    }
    if (deps.docs && isDocsPath(pathname)) {
      log.route = `${req.method} /docs`;
      return serveDocs(deps.docs, req, res, pathname, headers, log.requestId);
    }
    const isRead = req.method === 'GET' || req.method === 'HEAD';
    if (isRead && pathname === '/') {
      log.route = 'GET /';
      return sendJson(res, 200, platformIndex(), headers);
    }
    if (isRead && pathname === '/healthz') {
      log.route = 'GET /healthz';
      return sendJson(res, 200, { status: 'ok' }, headers);
    }
    if (isRead && pathname === '/readyz') {
      log.route = 'GET /readyz';
      try {
        return sendJson(res, 200, await deps.ready(), headers);
      } catch (err) {
        return sendError(res, err instanceof ApiError ? err : temporarilyUnavailable('Not ready: the database does not answer.'), log.requestId, headers);
      }
    }
    sendError(res, noSuchEndpoint(), log.requestId, headers);
  }

  return (req, res) => {
    metrics.http.inFlight += 1;
    res.once('close', () => (metrics.http.inFlight -= 1));
    const url = req.url ?? '/';
    const pathname = pathOf(url);
    if (pathname === ADMIN_PREFIX || pathname.startsWith(`${ADMIN_PREFIX}/`)) {
      const start = process.hrtime.bigint();
      res.once('finish', () => {
        // Express leaves the route it matched on the request; the admin API's only 429 is the per-IP failed-auth limit.
        metrics
          .admin(req.method!, ADMIN_PREFIX, (req as { route?: { path?: unknown } }).route?.path)
          .observe(res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
        if (res.statusCode === 429) metrics.rateLimited('failed-auth');
      });
      deps.admin(req, res);
      return;
    }
    const log: RequestLog = { start: process.hrtime.bigint(), requestId: requestIdFrom(req.headers['x-request-id']) };
    logOnFinish(req, res, log);
    const match = routes.match(req.method ?? 'GET', url);
    let handled: Promise<void>;
    if (!match) handled = ownRequest(req, res, pathname, log);
    else if (!traced) handled = serviceRequest(req, res, match, log);
    else {
      const span = (log.span = startRequestSpan(req, match, pathname, log.requestId));
      handled = withRequestSpan(span, () => serviceRequest(req, res, match, log));
    }
    handled.catch((err: unknown) => {
      logger.error({ err, request_id: log.requestId }, 'unhandled error');
      sendError(res, internalError(), log.requestId, {
        'x-request-id': log.requestId,
        'platform-version': DEFAULT_VERSION,
        'x-content-type-options': NOSNIFF,
      });
    });
  };
}
