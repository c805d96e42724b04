import { gzip } from 'node:zlib';
import type { RequestHandler } from 'express';

/** JSON answers of at least this many bytes are gzip-compressed for clients that accept it (contract section 2). */
export const MIN_COMPRESSED_BYTES = 1024;

/** True when an `Accept-Encoding` header accepts gzip (a `gzip` or `*` coding whose q is not 0). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  let wildcard = false;
  for (const part of value.split(',')) {
    const [coding = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') return accepted;
    if (coding === '*') wildcard = accepted;
  }
  return wildcard;
}

function isJson(contentType: unknown): boolean {
  return typeof contentType === 'string' && /^application\/([a-z0-9.+-]*\+)?json\b/i.test(contentType);
}

/**
 * Gzips the JSON answers of an Express app that reach MIN_COMPRESSED_BYTES when the client
 * accepts gzip, and says `Vary: Accept-Encoding` on every answer that could have been.
 */
export function compressJson(): RequestHandler {
  return (req, res, next) => {
    const wantsGzip = acceptsGzip(req.headers['accept-encoding']);
    const send = res.send.bind(res);
    res.send = (body?: unknown) => {
      const bytes = typeof body === 'string' ? Buffer.byteLength(body) : Buffer.isBuffer(body) ? body.length : 0;
      if (bytes < MIN_COMPRESSED_BYTES || !isJson(res.getHeader('content-type')) || res.getHeader('content-encoding') !== undefined) return send(body);
      res.vary('Accept-Encoding');
      if (!wantsGzip) return send(body);
      gzip(body as string | Buffer, (err, zipped) => {
        if (err) return void send(body);
        res.setHeader('content-encoding', 'gzip');
        send(zipped);
      });
      return res;
    };
    next();
  };
}
