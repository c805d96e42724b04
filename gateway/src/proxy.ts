import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
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
  'content-length',
  'x-request-id',
  'platform-version',
]);

/** With tracing on, the gateway's own span is the service's parent: the client's trace context is replaced, not doubled. */
const STRIPPED_REQUEST_HEADERS_TRACED = new Set([...STRIPPED_REQUEST_HEADERS, 'traceparent', 'tracestate']);

const STRIPPED_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

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

/**
 * The client's end-to-end headers, minus every `x-platform-*`, plus the gateway's; a flat
 * [name, value, ...] list. The body goes as read (`content-length`, never chunked); without
 * `acceptEncoding` the service answers uncompressed (an answer the gateway stores must suit
 * every client that may later get it replayed).
 */
export function forwardedRequestHeaders(
  req: IncomingMessage,
  added: Record<string, string>,
  acceptEncoding = true,
  stripped: ReadonlySet<string> = STRIPPED_REQUEST_HEADERS,
): string[] {
  const raw = req.rawHeaders;
  const extra = connectionTokens(req.headers.connection);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (stripped.has(name) || name.startsWith('x-platform-') || extra?.has(name)) continue;
    if (!acceptEncoding && name === 'accept-encoding') continue;
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

/** An answer the proxy held back instead of streaming it, so the caller can keep it before the client sees it. */
export interface HeldResponse {
  status: number;
  /** The service's headers as received. */
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Holds a service's answer up to `limitBytes`, reading it to the end even when the client has
 * left. Past the limit it gives up holding: it writes the head and what it has, then streams.
 */
class ResponseHolder extends Writable {
  private chunks: Buffer[] = [];
  private size = 0;
  streaming = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly writeHead: () => void,
    private readonly limitBytes: number,
  ) {
    super();
  }

  body(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.streaming) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      if (this.size <= this.limitBytes) return callback();
      this.streaming = true;
      this.writeHead();
      chunk = this.body();
      this.chunks = [];
    }
    const { res } = this;
    if (res.destroyed) return callback(new Error('client gone'));
    if (res.write(chunk)) return callback();
    const onDrain = (): void => {
      res.off('close', onClose);
      callback();
    };
    const onClose = (): void => {
      res.off('drain', onDrain);
      callback(new Error('client gone'));
    };
    res.once('drain', onDrain).once('close', onClose);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.streaming) this.res.end();
    callback();
  }
}

export interface ForwardRequest {
  service: ServiceName;
  /** Path and query on the service. */
  path: string;
  /** Signed identity, request id and version for the service. */
  requestHeaders: Record<string, string>;
  /** The gateway's own headers on the response. */
  responseHeaders: Record<string, string>;
  /** The request body, read whole (`readBody`): the signature covers it. */
  body: Buffer;
  /**
   * Hold answers up to this many bytes instead of streaming them (the outcome carries them and
   * the caller sends them); longer answers are streamed as usual.
   */
  holdResponseBytes?: number;
}

export type ForwardOutcome = { ok: true; status: number; held?: HeldResponse } | { ok: false; reason: 'unavailable' | 'client_gone'; error: unknown };

export interface ProxyOptions {
  upstreams: Upstreams;
  /** Longer than this without response headers (or between body chunks): 503. */
  timeoutMs: number;
  connectionsPerUpstream?: number;
  /** Tracing is on: the gateway sends its own `traceparent` (ForwardRequest.requestHeaders) instead of the client's. */
  traced?: boolean;
}

/** Streams requests to the services over keep-alive pools and their answers back. */
export class UpstreamProxy {
  private readonly pools: Record<ServiceName, Pool>;
  private readonly timeoutMs: number;
  private readonly upstreams: Upstreams;
  private readonly stripped: ReadonlySet<string>;

  constructor(options: ProxyOptions) {
    this.timeoutMs = options.timeoutMs;
    this.upstreams = options.upstreams;
    this.stripped = options.traced ? STRIPPED_REQUEST_HEADERS_TRACED : STRIPPED_REQUEST_HEADERS;
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
    const holding = target.holdResponseBytes !== undefined;
    // No abort signal per request: once the answer streams, undici stops when the client's
    // response closes; before that, a departed client's request ends at the latest by the timeout.
    try {
      let status = 0;
      let holder: ResponseHolder | undefined;
      let upstreamHeaders: IncomingHttpHeaders = {};
      await this.pools[target.service].stream(
        {
          method: req.method as 'GET',
          path: target.path,
          headers: forwardedRequestHeaders(req, target.requestHeaders, !holding, this.stripped),
          body: target.body.length > 0 ? target.body : null,
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
        },
        ({ statusCode, headers }) => {
          status = statusCode;
          if (target.holdResponseBytes === undefined) {
            res.writeHead(statusCode, forwardedResponseHeaders(headers, target.responseHeaders));
            return res;
          }
          upstreamHeaders = headers;
          const writeHead = (): void => void res.writeHead(statusCode, forwardedResponseHeaders(headers, target.responseHeaders));
          return (holder = new ResponseHolder(res, writeHead, target.holdResponseBytes));
        },
      );
      if (holder && !holder.streaming) return { ok: true, status, held: { status, headers: upstreamHeaders, body: holder.body() } };
      return { ok: true, status };
    } catch (error) {
      if (res.destroyed) return { ok: false, reason: 'client_gone', error };
      return { ok: false, reason: 'unavailable', error };
    }
  }

  /**
   * A request of the gateway's own to a service (no client behind it): the status and the body read
   * whole, with the proxied requests' timeout. Rejects when the service cannot be reached or is slower.
   */
  async call(service: ServiceName, method: 'GET', path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
    const res = await this.pools[service].request({ method, path, headers, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
    return { status: res.statusCode, body: await res.body.text() };
  }

  /** Where a request goes (for its span). */
  urlOf(target: ForwardRequest): string {
    return `${this.upstreams[target.service]}${target.path}`;
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.pools).map((pool) => pool.close()));
  }
}
