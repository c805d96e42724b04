import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { acceptsGzip, ApiError, errorBody, MIN_COMPRESSED_BYTES } from '@platform/core';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The body as it goes to this client: gzip-compressed when it is JSON of MIN_COMPRESSED_BYTES
 * or more and the client accepts gzip (contract section 2); `headers` gets its encoding and length.
 * Answers the gateway sends whole are at most about 1 MiB, so compressing in line is bounded.
 */
export function encodedBody(res: ServerResponse, body: Buffer, headers: OutgoingHttpHeaders): Buffer {
  const compressible = body.length >= MIN_COMPRESSED_BYTES && headers['content-encoding'] === undefined && /json/i.test(String(headers['content-type'] ?? ''));
  if (compressible) {
    headers.vary = headers.vary ? `${String(headers.vary)}, Accept-Encoding` : 'Accept-Encoding';
    if (acceptsGzip(res.req?.headers['accept-encoding'])) {
      body = gzipSync(body);
      headers['content-encoding'] = 'gzip';
    }
  }
  headers['content-length'] = body.length;
  return body;
}

/** A gateway-made JSON answer on a bare node:http response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders): void {
  headers['content-type'] = JSON_CONTENT_TYPE;
  const payload = encodedBody(res, Buffer.from(JSON.stringify(body)), headers);
  res.writeHead(status, headers);
  res.end(payload);
}

/** The contract's error body (core `errorBody`) with the error's own headers. */
export function sendError(res: ServerResponse, error: ApiError, requestId: string, headers: OutgoingHttpHeaders): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(error.options.headers ?? {})) headers[name] = value;
  sendJson(res, error.status, errorBody(error, requestId), headers);
}

/**
 * A service's answer that the gateway held or stored, sent whole: its headers with the gateway's
 * own on top, an exact content-length, and `idempotent-replayed: true` on a replay.
 */
export function sendStored(
  res: ServerResponse,
  response: { status: number; headers: OutgoingHttpHeaders; body: Buffer },
  own: Record<string, string>,
  replayed: boolean,
): void {
  const headers: OutgoingHttpHeaders = { ...response.headers, ...own };
  if (replayed) headers['idempotent-replayed'] = 'true';
  // RFC 9110 8.6: no Content-Length on 204 or 304.
  if (response.status === 204 || response.status === 304) {
    delete headers['content-length'];
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  const body = encodedBody(res, response.body, headers);
  res.writeHead(response.status, headers);
  res.end(body);
}
