import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import { z } from 'zod';

/** A W3C `traceparent` (version 00), as carried in job payloads and outbox rows. */
export const TraceParent = z.string().regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, 'must be a W3C traceparent');
export type TraceParent = z.infer<typeof TraceParent>;

/**
 * The active span's `traceparent`, to carry across a queue or a table; undefined without one
 * (tracing off: no span is ever active).
 */
export function currentTraceparent(): string | undefined {
  const active = trace.getActiveSpan()?.spanContext();
  if (!active || !isSpanContextValid(active)) return undefined;
  const { traceId, spanId, traceFlags } = active;
  const sampled = (traceFlags & Number(TraceFlags.SAMPLED)) !== 0;
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/** The remote span a carried `traceparent` names, to parent or link a span to; undefined when absent or malformed. */
export function spanContextOf(traceparent: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const extracted = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return extracted && isSpanContextValid(extracted) ? extracted : undefined;
}

/** A context whose parent is the carried span (the root context when there is none). */
export function contextOf(traceparent: unknown): Context {
  const parent = spanContextOf(traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/** The `trace_id` and `span_id` of the active span for a log line; none outside a span. */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** What a span of work taken from a queue is: its parent (the same trace) or its links (a trace of its own). */
export interface QueueSpanOptions {
  /** The producer's traceparent: the span continues its trace. Anything but a valid one starts a trace. */
  parent?: unknown;
  /** traceparents the span links to, in a trace of its own (work retried long after what caused it); invalid ones are left out. */
  links?: unknown[];
  attributes?: Attributes;
}

/**
 * Runs `work` in a consumer span of the named tracer (a no-op without tracing): the span is active
 * for it (its database and Redis calls and log lines belong to it), records a thrown error and
 * ends when the work settles.
 */
export function inConsumerSpan<T>(tracer: string, name: string, options: QueueSpanOptions, work: () => Promise<T>): Promise<T> {
  const links: Link[] = [];
  for (const traceparent of options.links ?? []) {
    const linked = spanContextOf(traceparent);
    if (linked) links.push({ context: linked });
  }
  return trace
    .getTracer(tracer)
    .startActiveSpan(name, { kind: SpanKind.CONSUMER, links, attributes: options.attributes }, contextOf(options.parent), async (span) => {
      try {
        return await work();
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        throw err;
      } finally {
        span.end();
      }
    });
}
