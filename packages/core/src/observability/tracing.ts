import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations, type Instrumentation } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { loadConfig } from '../process/config';
import { tracesUrl, TracingConfig } from './tracing-config';

// This module is imported by each deployable's src/tracing.ts, which its main.ts imports first:
// the instrumentations patch `require`, so they must be in place before pg, ioredis, express and
// undici are loaded. It imports nothing of the platform that loads them.

/** Libraries whose calls become spans (OpenTelemetry's instrumentations). */
export type TracedLibrary = 'http' | 'express' | 'pg' | 'ioredis' | 'undici';

/** A process's tracing, started by startTracing. */
export interface Tracing {
  /** False when no OTLP endpoint is configured: nothing was loaded or patched, no span is ever made. */
  enabled: boolean;
  /** Exports the spans still buffered, then stops; a shutdown step of runProcess. */
  shutdown(): Promise<void>;
}

/** Probes are asked every few seconds and tell nothing about a request: no trace for them. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function sampler(config: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG ?? 1);
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function instrumentation(library: TracedLibrary): Instrumentation {
  switch (library) {
    case 'http':
      return new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '/').split('?')[0]!),
      });
    case 'express':
      // Spans for the route's handlers, not for each of the dozen middlewares every request passes.
      return new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] });
    // Only inside a traced operation: the outbox relay, the pruners and BullMQ poll all the time.
    case 'pg':
      return new PgInstrumentation({ requireParentSpan: true });
    case 'ioredis':
      return new IORedisInstrumentation({ requireParentSpan: true });
    case 'undici':
      return new UndiciInstrumentation({ requireParentforSpans: true });
  }
}

/**
 * Starts OpenTelemetry tracing for a process when its configuration names an OTLP endpoint
 * (TracingConfig, the standard OTEL_* variables): W3C trace context, spans batched to the
 * collector over OTLP/HTTP, and the given libraries instrumented. Otherwise it does nothing.
 */
export function startTracing(options: { defaultServiceName: string; instrument: TracedLibrary[]; env?: NodeJS.ProcessEnv }): Tracing {
  const config = loadConfig(TracingConfig, options.env);
  const url = tracesUrl(config);
  if (!url) return { enabled: false, shutdown: () => Promise.resolve() };

  // A collector that does not answer holds an export (and the shutdown step that flushes) at most this long.
  const exporterOptions = { url, headers: config.OTEL_EXPORTER_OTLP_HEADERS ?? {}, timeoutMillis: 3_000 };
  const exporter = config.OTEL_EXPORTER_OTLP_PROTOCOL === 'http/json' ? new OtlpJsonExporter(exporterOptions) : new OtlpProtobufExporter(exporterOptions);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.OTEL_SERVICE_NAME ?? options.defaultServiceName }),
    sampler: sampler(config),
    // The queue is bounded (2,048 spans by default): a collector that is down costs dropped spans, never memory.
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY })],
  });
  // The SDK's provider registers nothing itself: the global provider, AsyncLocalStorage for the
  // active span across awaits, W3C traceparent/tracestate and baggage.
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  registerInstrumentations({ tracerProvider: provider, instrumentations: options.instrument.map(instrumentation) });
  return { enabled: true, shutdown: () => provider.shutdown() };
}
