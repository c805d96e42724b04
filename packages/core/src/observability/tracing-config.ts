import { z } from 'zod';

/** An unset variable and an empty one mean the same: `OTEL_EXPORTER_OTLP_ENDPOINT=` turns tracing off. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

/** `key=value,key2=value2` with URL-encoded values (the OpenTelemetry spec's format for OTEL_EXPORTER_OTLP_HEADERS). */
const OtlpHeaders = z.string().transform((text, ctx) => {
  const headers: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const name = at > 0 ? pair.slice(0, at).trim() : '';
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
      ctx.addIssue({ code: 'custom', message: 'must be key=value pairs separated by commas' });
      return z.NEVER;
    }
    try {
      headers[name.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      ctx.addIssue({ code: 'custom', message: `the value of ${name} is not URL-encoded` });
      return z.NEVER;
    }
  }
  return headers;
});

export const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * The OpenTelemetry SDK's standard variables the platform honours (every process's config has
 * them, through CommonConfig). Tracing is off unless an OTLP endpoint is set.
 */
export const TracingConfig = z.object({
  /** The collector's base URL; traces go to `<it>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(z.string().url()),
  /** The full URL traces are posted to; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional(z.string().url()),
  /** OTLP over HTTP; gRPC is not shipped (a collector takes both). */
  OTEL_EXPORTER_OTLP_PROTOCOL: optional(
    z.enum(['http/protobuf', 'http/json'], { message: 'must be http/protobuf or http/json (grpc is not supported; collectors take OTLP/HTTP on 4318)' }),
  ).transform((value) => value ?? 'http/protobuf'),
  OTEL_EXPORTER_OTLP_HEADERS: optional(OtlpHeaders),
  /** The service.name of the process's spans; each deployable has its own default (platform-gateway, platform-events, ...). */
  OTEL_SERVICE_NAME: optional(z.string().min(1).max(200)),
  OTEL_TRACES_SAMPLER: optional(z.enum(TRACES_SAMPLERS)).transform((value) => value ?? 'parentbased_always_on'),
  /** The ratio of the `*traceidratio` samplers, 0..1 (default 1). */
  OTEL_TRACES_SAMPLER_ARG: optional(z.coerce.number().min(0).max(1)),
  /** How long finished spans wait to be exported in one batch (ms). */
  OTEL_BSP_SCHEDULE_DELAY: optional(z.coerce.number().int().min(0).max(600_000)).transform((value) => value ?? 5_000),
});
export type TracingConfig = z.infer<typeof TracingConfig>;

/** Where the process posts its spans, or undefined: tracing is off. */
export function tracesUrl(config: Pick<TracingConfig, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'>): string | undefined {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  return `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
}
