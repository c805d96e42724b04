import pino, { type Logger } from 'pino';
import { traceLogFields } from '../observability/trace-context';

/**
 * JSON logs on stdout; secrets in headers are never written. With `traceIds` (tracing on), every
 * line written inside a span carries its `trace_id` and `span_id`.
 */
export function createLogger(name: string, level: string = 'info', options: { traceIds?: boolean } = {}): Logger {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['req.headers.authorization', 'headers.authorization', 'token', '*.token', 'secret', '*.secret'],
    ...(options.traceIds ? { mixin: traceLogFields } : {}),
  });
}
export type { Logger };
