import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP collector received it. */
export interface ReceivedSpan {
  /** The resource's `service.name`: which process made it. */
  service: string;
  traceId: string;
  spanId: string;
  /** Absent on a trace's root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  links?: { traceId: string; spanId: string }[];
}
interface ExportTraceServiceRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    out[key] = value?.stringValue ?? value?.boolValue ?? (value?.intValue !== undefined ? Number(value.intValue) : value?.doubleValue);
  }
  return out;
}

/** The spans of one OTLP/JSON export request (`POST /v1/traces`, OTEL_EXPORTER_OTLP_PROTOCOL=http/json). */
export function decodeOtlpJson(body: string): ReceivedSpan[] {
  const request = JSON.parse(body) as ExportTraceServiceRequest;
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const name = attributesOf(resourceSpans.resource?.attributes)['service.name'];
    const service = typeof name === 'string' ? name : '';
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
        });
      }
    }
  }
  return spans;
}

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 (what a collector is to the platform), for tests: point
 * OTEL_EXPORTER_OTLP_ENDPOINT at `endpoint` with OTEL_EXPORTER_OTLP_PROTOCOL=http/json. It keeps
 * every span it is sent as JSON; protobuf exports (the default protocol) are accepted and counted,
 * not decoded (the bench's load).
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  let protobufBytes = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests++;
      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/traces') return void res.writeHead(404).end();
      const type = req.headers['content-type'] ?? '';
      if (type.startsWith('application/x-protobuf')) {
        protobufBytes += chunks.reduce((sum, chunk) => sum + chunk.length, 0);
        return void res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      }
      if (!type.startsWith('application/json')) return void res.writeHead(415).end();
      try {
        spans.push(...decodeOtlpJson(Buffer.concat(chunks).toString('utf8')));
      } catch {
        return void res.writeHead(400).end();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
    endpoint,
    /** Every span received so far. */
    spans: (): ReceivedSpan[] => [...spans],
    /** The spans of one trace. */
    trace: (traceId: string): ReceivedSpan[] => spans.filter((span) => span.traceId === traceId),
    /** Export requests of any kind received so far. */
    requests: () => requests,
    /** Bytes of protobuf exports received so far. */
    protobufBytes: () => protobufBytes,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;
