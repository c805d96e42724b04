import pino, { type Logger } from 'pino';

/** JSON logs on stdout; secrets in headers are never written. */
export function createLogger(name: string, level: string = 'info'): Logger {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['req.headers.authorization', 'headers.authorization', 'token', '*.token', 'secret', '*.secret'],
  });
}
export type { Logger };
