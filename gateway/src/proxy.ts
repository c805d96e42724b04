import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import { Pool } from 'undici';
import type { ServiceName } from '@platform/core';

export type Upstreams = Record<ServiceName, string>;

// Hop-by-hop headers (RFC 9110 7.6.1) and what the gateway replaces: the client's token never
// reaches a service (the signed identity headers do), Host is the upstream's, and undici
// refuses `expect`.
const STRIPPED_REQUEST_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'http2-settings',
  'host',
  'expect',
  'authorization',
  'x-request-id',
  'platform-version',
]);

const STRIPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** Headers named in `Connection: a, b` are hop-by-hop as well. */
function connectionTokens(value: string | undefined): Set<string> | undefined {
  if (!value) return undefined;
  const tokens = value
    .toLowerCase()
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t && t !== 'close' && t !== 'keep-alive');
  return tokens.length > 0 ? new Set(tokens) : undefined;
}

/** The client's end-to-end headers, minus every `x-platform-*`, plus the gateway's; a flat [name, value, ...] list. */
export function forwardedRequestHeaders(req: IncomingMessage, added: Record<string, string>): string[] {
  const raw = req.rawHeaders;
  const extra = connectionTokens(req.headers.connection);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (STRIPPED_REQUEST_HEADERS.has(name) || name.startsWith('x-platform-') || extra?.has(name)) continue;
    out.push(name, raw[i + 1]!);
  }
  for (const name in added) out.push(name, added[name]!);
  return out;
}

/** The service's end-to-end headers with the gateway's own (request id, version, rate limit) on top. */
export function forwardedResponseHeaders(upstream: IncomingHttpHeaders, own: Record<string, string>): OutgoingHttpHeaders {
  const extra = connectionTokens(typeof upstream.connection === 'string' ? upstream.connection : undefined);
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    if (STRIPPED_RESPONSE_HEADERS.has(name) || name.startsWith('x-ratelimit-') || extra?.has(name)) continue;
    out[name] = upstream[name];
  }
  for (const name in own) out[name] = own[name];
  return out;
}

export class PayloadTooLargeError extends Error {
  override name = 'PayloadTooLargeError';
}

/** A request body of undeclared length (chunked), cut off with an error past `limitBytes`. */
function limitedBody(req: IncomingMessage, limitBytes: number): Transform {
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > limitBytes) callback(new PayloadTooLargeError(`body exceeds ${limitBytes} bytes`));
      else callback(null, chunk);
    },
  });
  // pipe (not pipeline): on overflow the client's request stays open so it can still get its 413.
  req.pipe(counter);
  return counter;
}

export interface ForwardRequest {
  service: ServiceName;
  /** Path and query on the service. */
  path: string;
  /** Signed identity, request id and version for the service. */
  requestHeaders: Record<string, string>;
  /** The gateway's own headers on the response. */
  responseHeaders: Record<string, string>;
  bodyLimitBytes: number;
}

export type ForwardOutcome =
  | { ok: true; status: number }
  | { ok: false; reason: 'unavailable' | 'payload_too_large' | 'client_gone'; error: unknown };

export interface ProxyOptions {
  upstreams: Upstreams;
  /** Longer than this without response headers (or between body chunks): 503. */
  timeoutMs: number;
  connectionsPerUpstream?: number;
}

/** Streams requests to the services over keep-alive pools and their answers back. */
export class UpstreamProxy {
  private readonly pools: Record<ServiceName, Pool>;
  private readonly timeoutMs: number;

  constructor(options: ProxyOptions) {
    this.timeoutMs = options.timeoutMs;
    const pool = (origin: string): Pool =>
      new Pool(origin, {
        connections: options.connectionsPerUpstream ?? 128,
        // Shorter than the services' keepAliveTimeout (65 s), so this side closes idle sockets first.
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 60_000,
        connectTimeout: Math.min(options.timeoutMs, 5_000),
      });
    this.pools = { events: pool(options.upstreams.events), warehouse: pool(options.upstreams.warehouse), pipelines: pool(options.upstreams.pipelines) };
  }

  async forward(req: IncomingMessage, res: ServerResponse, target: ForwardRequest): Promise<ForwardOutcome> {
    const declaredLength = req.headers['content-length'];
    let body: IncomingMessage | Transform | null = null;
    if (req.headers['transfer-encoding'] !== undefined) body = limitedBody(req, target.bodyLimitBytes);
    // With a Content-Length, Node's parser delivers exactly that many bytes (checked by the caller).
    else if (declaredLength !== undefined && declaredLength !== '0') body = req;

    // No abort signal per request: once the answer streams, undici stops when the client's
    // response closes; before that, a departed client's request ends at the latest by the timeout.
    try {
      let status = 0;
      await this.pools[target.service].stream(
        {
          method: req.method as 'GET',
          path: target.path,
          headers: forwardedRequestHeaders(req, target.requestHeaders),
          body,
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
        },
        ({ statusCode, headers }) => {
          status = statusCode;
          res.writeHead(statusCode, forwardedResponseHeaders(headers, target.responseHeaders));
          return res;
        },
      );
      return { ok: true, status };
    } catch (error) {
      if (error instanceof PayloadTooLargeError || (error as { cause?: unknown }).cause instanceof PayloadTooLargeError) {
        return { ok: false, reason: 'payload_too_large', error };
      }
      if (res.destroyed) return { ok: false, reason: 'client_gone', error };
      return { ok: false, reason: 'unavailable', error };
    }
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.pools).map((pool) => pool.close()));
  }
}
