import type { IncomingMessage } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapGetter } from '@opentelemetry/api';
import { parseRouteKey, type ServiceName } from '@platform/core';
import type { ServiceMatch } from './route-table';

// The hot path's spans, made by hand: auto-instrumenting node:http and undici would wrap every
// request, socket and listener of the gateway, traced or not. Only built when tracing is on; with it
// off the handler never calls in here (not even to read `traceparent`).

/** The client's trace context, read from node's lower-cased header object. */
const HEADERS: TextMapGetter<IncomingMessage['headers']> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

/** The upstream call of one proxied request: its span, and the `traceparent` it goes out with. */
export interface UpstreamSpan {
  /** traceparent (and tracestate when the client sent one) for the service. */
  headers: Record<string, string>;
  end(outcome: { ok: boolean; status?: number }): void;
}

/** One proxied request's server span. */
export class RequestSpan {
  /** The request's context: the gateway's Redis and database calls, and its log lines, belong to this span. */
  readonly context: Context;

  constructor(
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  /** trace_id and span_id for the request's log line (written after the span's context has gone). */
  ids(): { trace_id: string; span_id: string } {
    const { traceId, spanId } = this.span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  }

  /** The client span of the forward to `service`, a child of this one. */
  upstream(service: ServiceName, method: string, url: string): UpstreamSpan {
    const span = trace
      .getTracer('@platform/gateway')
      .startSpan(
        `${method}`,
        { kind: SpanKind.CLIENT, attributes: { 'http.request.method': method, 'url.full': url, 'platform.service': service } },
        this.context,
      );
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(this.context, span), headers);
    return {
      headers,
      end: ({ ok, status }) => {
        if (status !== undefined) span.setAttribute('http.response.status_code', status);
        if (!ok || (status !== undefined && status >= 500)) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      },
    };
  }

  /** Ends the span with the answer the client got. */
  end(status: number, workspaceId: string | undefined): void {
    if (workspaceId !== undefined) this.span.setAttribute('platform.workspace_id', workspaceId);
    this.span.setAttribute('http.response.status_code', status);
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

/**
 * Starts the server span of a request to a service, continuing the client's W3C `traceparent`
 * when it sent one; it is named by the public route (`POST /events/v0/tickets/:id/validate`).
 */
export function startRequestSpan(req: IncomingMessage, match: ServiceMatch, path: string, requestId: string): RequestSpan {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers, HEADERS);
  const method = req.method!;
  const route = match.route ? `${match.prefix}${parseRouteKey(match.route.key).path}` : `${match.prefix}/*`;
  const span = trace
    .getTracer('@platform/gateway')
    .startSpan(
      `${method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route, 'url.path': path, 'platform.request_id': requestId } },
      parent,
    );
  return new RequestSpan(span, parent);
}

/** Runs `fn` with the request's span active (its Redis and database calls become its children). */
export function withRequestSpan<T>(span: RequestSpan, fn: () => T): T {
  return context.with(span.context, fn);
}
