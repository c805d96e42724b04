import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ApiError, errorBody } from '@platform/core';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A gateway-made JSON answer on a bare node:http response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders): void {
  const payload = JSON.stringify(body);
  headers['content-type'] = JSON_CONTENT_TYPE;
  headers['content-length'] = Buffer.byteLength(payload);
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
  if (response.status === 204 || response.status === 304) delete headers['content-length'];
  else headers['content-length'] = response.body.length;
  res.writeHead(response.status, headers);
  res.end(response.body);
}
